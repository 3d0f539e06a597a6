package web

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/logbook"
)

// An agent's steps on the voyage page (helm hook, voyage import --from):
// each reads as helm log tells it (logbook.DescribeStep: the prompt, the
// call with its command or diff, the guard's decision, the result, the
// usage), with its whole text and output behind a disclosure as helm log
// --evidence shows them (view.StepEvidenceOf): a diff as a diff, a long
// output read from its artifact up to view.StepEvidenceMax. A step's text
// is the agent's, so it is only ever put in the page by html/template.

// stepView is a step entry's part of its timeline item.
type stepView struct {
	Voyage string // the voyage the step is of
	Kind   logbook.StepKind
	Agent  string
	// Lines are the story's lines under the headline (the item's
	// title): the decision, the result, the usage, each with its class.
	Lines []stepLine
	// Sub is the sub-voyage a subagent step opened or closed.
	Sub string
	// Evidence, behind the disclosure.
	Text     string     // the whole text, when longer than the headline
	Diff     []diffLine // Text as a unified diff, when it is one
	Input    string     // the tool's input, indented JSON
	Output   string
	Failed   bool
	Artifact string // the artifact holding the whole output
	Cut      bool   // Output is the first StepEvidenceMax bytes of it
	Held     bool   // Output is the inline head: the page's budget is spent
	Gone     string // why the artifact cannot be read
	Error    string // why the evidence could not be read
}

// HasEvidence reports whether the disclosure has anything to show.
func (s *stepView) HasEvidence() bool {
	return s.Text != "" || s.Input != "" || s.Output != "" || s.Artifact != "" || s.Error != ""
}

// stepLine is one line of a step's story below its headline.
type stepLine struct {
	Class string // decision, result, usage
	Text  string
}

// diffLine is a line of a unified diff and its class: add, del, hunk
// (@@), file (---, +++, diff), or ctx.
type diffLine struct {
	Class string
	Text  string
}

// stepItem fills it with e's step: its icon, title and mark, and the
// step's view.
func (s *Server) stepItem(ctx context.Context, v *helm.Voyage, e logbook.Entry, it *item, b *budget) {
	st := e.Step
	lines := logbook.DescribeStep(st)
	it.Icon, it.Title = stepIcon(st.Kind), "Step "+itoa(e.N)+": "+lines[0]
	sv := &stepView{Voyage: v.ID(), Kind: st.Kind, Agent: st.Agent}
	for _, l := range lines[1:] {
		class := "decision"
		switch {
		case strings.HasPrefix(l, "→ "):
			class = "result"
		case strings.HasPrefix(l, "usage: "):
			class = "usage"
		}
		sv.Lines = append(sv.Lines, stepLine{Class: class, Text: l})
	}
	if d := st.Decision; d != nil {
		switch d.Verdict {
		case "deny":
			it.Icon, it.Mark = "⊘", "refused"
		case "ask", "block":
			it.Mark = "held"
		}
	}
	if r := st.Result; r != nil && r.Failed && it.Mark == "" {
		it.Icon, it.Mark = "✗", "failed"
	}
	if st.Kind == logbook.StepSubagent && idPattern().MatchString(st.Voyage) && len(st.Voyage) == 36 {
		sv.Sub = st.Voyage
	}
	if len(st.Input) > 0 {
		// Indented as written: the page escapes it, so JSON's own
		// escaping of <, > and & would only hide what the agent sent.
		var x any
		var pretty strings.Builder
		enc := json.NewEncoder(&pretty)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if json.Unmarshal(st.Input, &x) == nil && enc.Encode(x) == nil {
			if in := strings.TrimSuffix(pretty.String(), "\n"); in != "{}" {
				sv.Input = in
			}
		}
	}
	// The text a person reads whole: a prompt or command of several
	// lines, or any edit's diff (its headline is only its stat).
	sv.Text = st.Text
	if isDiff(st.Text) {
		sv.Diff = diffLines(st.Text)
	} else if !strings.Contains(strings.TrimRight(st.Text, "\n"), "\n") {
		sv.Text = ""
	}
	if r := st.Result; r != nil && (st.Kind == logbook.StepTool || st.Kind == logbook.StepPermission) {
		sv.Failed, sv.Output = r.Failed, r.Output
		if hashPattern().MatchString(r.Artifact) {
			sv.Artifact = r.Artifact
			// Read only while the page may still show a whole
			// StepEvidenceMax; what was read is what it takes.
			if b.left < view.StepEvidenceMax {
				sv.Held = true
			} else if ev, err := view.StepEvidenceOf(ctx, v, st); err != nil {
				sv.Error = err.Error()
			} else if ev.ArtifactErr != nil {
				sv.Gone = ev.ArtifactErr.Error()
			} else {
				sv.Output, sv.Cut = ev.Output, ev.Cut
				b.take(int64(len(ev.Output)))
			}
		}
	}
	it.Step = sv
}

// OutputSize is how much of the output the page holds.
func (s *stepView) OutputSize() int { return len(s.Output) }

// stepIcon is the timeline's icon of a kind of step.
func stepIcon(k logbook.StepKind) string {
	switch k {
	case logbook.StepPrompt:
		return "❯"
	case logbook.StepTool:
		return "⚒"
	case logbook.StepPermission:
		return "?"
	case logbook.StepNotification:
		return "🔔"
	case logbook.StepCompaction:
		return "⇲"
	case logbook.StepSubagent:
		return "⑂"
	case logbook.StepMessage:
		return "💬"
	case logbook.StepSession:
		return "◇"
	}
	return "•"
}

// isDiff reports whether text is a unified diff, as the story takes it
// (logbook.DescribeStep gives such a text a line of counts).
func isDiff(text string) bool {
	return strings.HasPrefix(text, "--- ") || strings.HasPrefix(text, "diff ") || strings.HasPrefix(text, "@@ ")
}

// diffLines splits a unified diff into classed lines.
func diffLines(text string) []diffLine {
	var out []diffLine
	for l := range strings.SplitSeq(strings.TrimRight(text, "\n"), "\n") {
		class := "ctx"
		switch {
		case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "), strings.HasPrefix(l, "diff "):
			class = "file"
		case strings.HasPrefix(l, "@@"):
			class = "hunk"
		case strings.HasPrefix(l, "+"):
			class = "add"
		case strings.HasPrefix(l, "-"):
			class = "del"
		}
		out = append(out, diffLine{Class: class, Text: l})
	}
	return out
}

// agentFigures are a voyage's agent totals as the page says them; empty
// when no agent host reported a step.
func agentFigures(a logbook.StepStats) []string {
	if a == (logbook.StepStats{}) {
		return nil
	}
	out := []string{fmt.Sprintf("%s, %s (%d denied, %d failed)", plural(a.Prompts, "prompt"), plural(a.ToolCalls, "tool call"), a.DeniedCalls, a.FailedCalls)}
	if a.InputTokens+a.OutputTokens+a.CacheReadTokens+a.CacheWriteTokens > 0 {
		out = append(out, fmt.Sprintf("tokens: %d in, %d out, %d cache read, %d cache written", a.InputTokens, a.OutputTokens, a.CacheReadTokens, a.CacheWriteTokens))
	}
	if a.CostUSD > 0 {
		out = append(out, fmt.Sprintf("$%.4f", a.CostUSD))
	}
	if a.ModelTime > 0 {
		out = append(out, "model time "+a.ModelTime.Round(time.Millisecond).String())
	}
	return out
}

// agentStats sums the steps of v's entries: the voyage's agent totals.
func agentStats(ctx context.Context, v *helm.Voyage) (logbook.StepStats, error) {
	var a logbook.StepStats
	if v.Info().Counts.Steps == 0 {
		return a, nil
	}
	for e, err := range v.Entries(ctx, nil) {
		if err != nil {
			return a, err
		}
		if e.Step != nil {
			a.Add(e.Step)
		}
	}
	return a, nil
}
