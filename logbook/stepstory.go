package logbook

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// DescribeStep renders an agent's step as the story tells it, a line a
// person reads and, under it, the guard's decision, the call's result and
// what it cost, each on a line of its own:
//
//	prompt: fix the failing test
//	Bash: go test ./...
//	→ ok (1.2s)
//	Edit internal/x.go (+3 −1)
//	denied by "no rm -rf" (policy.toml:3): recursive deletes need a person
//	subagent started: Explore (voyage 1a2b3c4d)
//	session ended (logout)
//
// A long text (a multi-line prompt, an edit's diff, an output) shows its
// first line here; the whole is the entry's evidence. The lines are not
// escaped: WriteStory escapes them for the terminal, and so must other
// printers.
func DescribeStep(s *Step) []string {
	if s == nil {
		return []string{"step"}
	}
	var out []string
	switch s.Kind {
	case StepPrompt:
		out = append(out, "prompt: "+firstLine(s.Text))
	case StepTool:
		out = append(out, describeCall(s))
	case StepPermission:
		out = append(out, "permission asked for "+describeCall(s))
	case StepNotification:
		out = append(out, "notification: "+firstLine(s.Text))
	case StepCompaction:
		out = append(out, "compaction"+paren(s.Text))
	case StepSubagent:
		word := "started"
		if s.Result != nil {
			word = "stopped"
		}
		line := "subagent " + word
		if t := firstLine(s.Text); t != "" {
			line += ": " + t
		}
		if s.Voyage != "" {
			line += " (voyage " + short8(s.Voyage) + ")"
		}
		out = append(out, line)
	case StepMessage:
		out = append(out, "message: "+firstLine(s.Text))
	case StepSession:
		switch {
		case s.Result != nil:
			out = append(out, "session ended"+paren(s.Text))
		case s.Text == "resume":
			out = append(out, "session resumed")
		default:
			out = append(out, "session started"+paren(s.Text))
		}
	default:
		out = append(out, string(s.Kind)+": "+firstLine(s.Text))
	}
	if d := describeDecision(s.Decision); d != "" {
		out = append(out, d)
	}
	if s.Result != nil && (s.Kind == StepTool || s.Kind == StepPermission) {
		out = append(out, describeResult(s.Result))
	}
	if u := describeUsage(s.Usage); u != "" {
		out = append(out, u)
	}
	return out
}

// describeCall names a tool call: "Bash: go test ./...", or, for an edit
// whose text is a diff, "Edit path (+3 −1)".
func describeCall(s *Step) string {
	tool := s.Tool
	if tool == "" {
		tool = "tool"
	}
	if plus, minus, path, ok := diffStat(s.Text); ok {
		if p := inputPath(s.Input); p != "" {
			path = p
		}
		return fmt.Sprintf("%s %s (+%d −%d)", tool, path, plus, minus)
	}
	text := firstLine(s.Text)
	if text == "" {
		text = inputPath(s.Input)
	}
	if text == "" {
		return tool
	}
	return tool + ": " + text
}

// describeDecision says what the guard decided, when it was not a plain
// allow: `denied by "no rm -rf" (policy.toml:3): REASON`.
func describeDecision(d *StepDecision) string {
	if d == nil || d.Verdict == "allow" && d.Rule == "" {
		return ""
	}
	word := map[string]string{"allow": "allowed", "deny": "denied", "ask": "held for a person", "block": "held"}[d.Verdict]
	if word == "" {
		word = d.Verdict
	}
	if d.Rule != "" {
		word += " by " + d.Rule
	}
	if r := firstLine(d.Reason); r != "" {
		word += ": " + r
	}
	return word
}

// describeResult says how a call ended: "→ ok (1.2s)", "→ failed (0.3s):
// FIRST LINE", with where a long output was stowed.
func describeResult(r *StepResult) string {
	s := "→ ok"
	if r.Failed {
		s = "→ failed"
	}
	if r.Duration > 0 {
		s += " (" + r.Duration.Round(time.Millisecond).String() + ")"
	}
	if r.Failed {
		if line := firstLine(r.Output); line != "" {
			s += ": " + line
		}
	}
	if r.Artifact != "" {
		s += ", output in artifact " + short8(r.Artifact)
	}
	return s
}

// describeUsage says what a step cost: "usage: claude-sonnet-4, 1200 in,
// 300 out, 5000 cached tokens, $0.0123, model 2.1s".
func describeUsage(u *Usage) string {
	if u == nil || *u == (Usage{}) {
		return ""
	}
	parts := []string{}
	if u.Model != "" {
		parts = append(parts, u.Model)
	}
	tokens := fmt.Sprintf("%d in, %d out", u.InputTokens, u.OutputTokens)
	if c := u.CacheReadTokens + u.CacheWriteTokens; c > 0 {
		tokens += fmt.Sprintf(", %d cache", c)
	}
	parts = append(parts, tokens+" tokens")
	if u.CostUSD > 0 {
		parts = append(parts, fmt.Sprintf("$%.4f", u.CostUSD))
	}
	if u.Duration > 0 {
		parts = append(parts, "model "+u.Duration.Round(time.Millisecond).String())
	}
	return "usage: " + strings.Join(parts, ", ")
}

// diffStat counts a unified diff's added and removed lines, and names
// the file its "+++" line names; ok is false when text is no diff.
func diffStat(text string) (plus, minus int, path string, ok bool) {
	if !strings.HasPrefix(text, "--- ") && !strings.HasPrefix(text, "diff ") && !strings.HasPrefix(text, "@@ ") {
		return 0, 0, "", false
	}
	for line := range strings.SplitSeq(text, "\n") {
		switch {
		case strings.HasPrefix(line, "+++ "):
			path = strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(line, "+++ ")), "b/")
		case strings.HasPrefix(line, "--- "):
			if path == "" {
				path = strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(line, "--- ")), "a/")
			}
		case strings.HasPrefix(line, "+"):
			plus++
		case strings.HasPrefix(line, "-"):
			minus++
		}
	}
	return plus, minus, path, true
}

// inputPath returns the file a tool's input names (file_path, path,
// notebook_path, url), if it names one.
func inputPath(input json.RawMessage) string {
	if len(input) == 0 {
		return ""
	}
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	for _, k := range []string{"file_path", "notebook_path", "path", "url"} {
		if s, ok := in[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// firstLine returns the first line of s, with " …" when more follows.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	line, rest, more := strings.Cut(s, "\n")
	line = strings.TrimSpace(line)
	if more && strings.TrimSpace(rest) != "" {
		line += " …"
	}
	return line
}

func paren(s string) string {
	if s = firstLine(s); s == "" {
		return ""
	}
	return " (" + s + ")"
}

func short8(s string) string {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}
