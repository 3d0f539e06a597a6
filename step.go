package helm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
)

// Steps: what an agent host (Claude Code, Gemini CLI, ...) reported at its
// own tool boundary, recorded as entries of the voyage of its session.

// stepOutputInline is the longest tool output a step keeps inline, in
// bytes: a longer one is stowed as an artifact (its text, as evidence)
// and the step keeps its first stepOutputHead bytes. 4 KiB holds a test
// run's summary or a short file, and keeps a long session's log a log of
// steps, not of outputs.
const stepOutputInline = 4 << 10

// stepOutputHead is how much of a stowed output the step keeps inline.
const stepOutputHead = 1 << 10

// stepKinds are the kinds of step Voyage.Step records.
var stepKinds = []logbook.StepKind{logbook.StepPrompt, logbook.StepTool, logbook.StepPermission, logbook.StepNotification,
	logbook.StepCompaction, logbook.StepSubagent, logbook.StepMessage, logbook.StepSession}

// stepVerdicts are the guard's verdicts a step's decision may hold.
var stepVerdicts = []string{"allow", "deny", "ask", "block"}

// errStepEntries: the open call a result names may be among the entries
// the snapshot the views were opened from holds, not read yet.
var errStepEntries = errors.New("the logbook's entries are needed")

// Step records one step an agent host reported: a prompt, a tool call
// (with its input, the guard's decision and, once it ran, its result), a
// permission request, a notification, a compaction, a subagent's start or
// stop (a subagent or session step with a Result is its end), the agent's
// message, or the session's start, resumption or end. who needs a role
// and a method, as every entry does: a hooked session's come from the
// hook's configuration, never from what the agent sent.
//
// A tool step whose Result is set and whose ID names a tool call of the
// same Agent and Session still waiting for its result finishes that call:
// the result (and the usage, summed) is attached to the call's entry, and
// Step returns that entry. Any other step is a new entry.
//
// Everything passes the home's redactor before it is stored: Text, the
// JSON string values of Input, the decision, the result's Output. An
// output longer than 4 KiB is stowed as an artifact holding its text
// (Voyage.OpenArtifact reads it; the bytes are UTF-8 text, not a
// sighting), Result.Artifact names it, and Output keeps its first KiB.
// Result.Artifact is helm's to set: a step that names one is refused.
//
// Only an active voyage takes steps (else the error matches
// ErrVoyageCompleted or ErrVoyagePaused); invalid steps (an unknown kind,
// no agent, text that is not UTF-8, an input that is not JSON, a
// negative count of tokens) match ErrInvalid and record nothing.
func (v *Voyage) Step(ctx context.Context, s logbook.Step, who logbook.Who) (logbook.Entry, error) {
	op := "record " + string(s.Kind) + " step"
	if err := errors.Join(checkStep(&s), checkWho(who)); err != nil {
		return logbook.Entry{}, v.fail(op, err, hint.Hint{})
	}
	s = copyStep(s)
	var long *artifact.Encoded
	if r := s.Result; r != nil && len(r.Output) > stepOutputInline {
		red, err := v.home.redactor()
		if err != nil {
			return logbook.Entry{}, v.fail(op, err, hint.Hint{})
		}
		// Redacted whole, then cut: a secret across the cut is hidden
		// in the head as in the artifact.
		out, _ := red.String(r.Output)
		long = v.prepare(ctx, []byte(out))
		r.Output = head(out, stepOutputHead)
	}
	finishes := s.Kind == logbook.StepTool && s.Result != nil && s.ID != ""
	var at uint64 // the seq of the entry's event
	decide := func(st *projection.State, stow stower) ([]*projection.Event, error) {
		if err := checkActive(st); err != nil {
			return nil, err
		}
		w, err := resolveWho(st, who, true)
		if err != nil {
			return nil, err
		}
		var events []*projection.Event
		if long != nil {
			ev, err := stow(long)
			if err != nil {
				return nil, err
			}
			if ev != nil {
				events = append(events, ev)
			}
			s.Result.Artifact = long.Hash
		}
		at = 0
		if finishes {
			seq, open := st.OpenStep(s.Agent, s.Session, s.ID)
			if !open && st.Pending()&projection.SectionEntries != 0 {
				return nil, errStepEntries
			}
			if open {
				at = seq
				done := &logbook.Step{Kind: s.Kind, Agent: s.Agent, Session: s.Session, ID: s.ID, Result: s.Result, Usage: s.Usage}
				events = append(events, &projection.Event{Type: projection.StepFinished, Step: done})
				return withWho(events, w), nil
			}
		}
		events = append(events, &projection.Event{Type: projection.StepRecorded, Step: &s})
		return withWho(events, w), nil
	}
	seq, err := v.commit(ctx, op, decide)
	if errors.Is(err, errStepEntries) {
		seq, err = v.commitReading(ctx, op, projection.SectionEntries, decide)
	}
	if err != nil {
		return logbook.Entry{}, err
	}
	if at == 0 {
		at = seq
	}
	return v.entryAt(ctx, at)
}

// checkStep checks a step before anything is recorded.
func checkStep(s *logbook.Step) error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...))
	}
	if !slices.Contains(stepKinds, s.Kind) {
		bad("step kind %q is not one of %v", s.Kind, stepKinds)
	}
	if strings.TrimSpace(s.Agent) == "" {
		bad("a step names the agent host that reported it (Step.Agent: claude-code, ...); none was given")
	}
	texts := []struct{ name, val string }{
		{"step agent", s.Agent}, {"step session", s.Session}, {"step id", s.ID}, {"step tool", s.Tool},
		{"step text", s.Text}, {"step voyage", s.Voyage},
	}
	if d := s.Decision; d != nil {
		texts = append(texts, struct{ name, val string }{"decision rule", d.Rule}, struct{ name, val string }{"decision reason", d.Reason})
		if !slices.Contains(stepVerdicts, d.Verdict) {
			bad("decision verdict %q is not one of %v", d.Verdict, stepVerdicts)
		}
	}
	if r := s.Result; r != nil {
		texts = append(texts, struct{ name, val string }{"result output", r.Output})
		if r.Artifact != "" {
			bad("a step's result names no artifact of its own (Result.Artifact): helm stows a long output itself")
		}
		if r.Duration < 0 {
			bad("result duration %v is negative", r.Duration)
		}
	}
	if u := s.Usage; u != nil {
		texts = append(texts, struct{ name, val string }{"usage model", u.Model})
		if u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 || u.CacheWriteTokens < 0 {
			bad("usage counts %d, %d, %d and %d tokens: none may be negative", u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens)
		}
		if math.IsNaN(u.CostUSD) || math.IsInf(u.CostUSD, 0) || u.CostUSD < 0 {
			bad("usage cost %v is not a number of dollars", u.CostUSD)
		}
		if u.Duration < 0 {
			bad("usage duration %v is negative", u.Duration)
		}
	}
	for _, t := range texts {
		if err := checkText(t.name, t.val); err != nil {
			errs = append(errs, err)
		}
	}
	if len(s.Input) > 0 && !json.Valid(s.Input) {
		bad("the step's input is not JSON")
	}
	return errors.Join(errs...)
}

// copyStep returns s with copies of what it points to: the caller's step
// is not changed by redaction or stowing.
func copyStep(s logbook.Step) logbook.Step {
	s.Input = slices.Clone(s.Input)
	if s.Decision != nil {
		d := *s.Decision
		s.Decision = &d
	}
	if s.Result != nil {
		r := *s.Result
		s.Result = &r
	}
	if s.Usage != nil {
		u := *s.Usage
		s.Usage = &u
	}
	return s
}

// head returns the first n bytes of s at most, cut at a rune's start.
func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
