package logbook

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/helmlog/helm/internal/safetext"
)

// Header is what the story says about the voyage before its entries.
type Header struct {
	Intent   string
	Identity string
	// Current is the identity the voyage has after its handoffs (empty,
	// or Identity, when it was never handed off).
	Current     string
	Created     time.Time
	Status      Status    // StatusActive, StatusCompleted, ...
	CompletedAt time.Time // zero while active
	Outcome     Outcome   // the last completion's, while not active
	Summary     string
	// Lifecycle is every change of status, the start first. The story
	// lists it when the voyage was resumed; otherwise Status says it.
	Lifecycle []Change
}

// Change is one change of a voyage's status.
type Change struct {
	Status Status
	At     time.Time
	Who    Who
	Reason string
}

// WriteStory renders the logbook as the story a person reads: the voyage
// header, then each entry with its marks and reading or its action.
//
// Stored text is printed so that it cannot drive the terminal: control
// characters, escape sequences and bidirectional overrides in an intent, a
// label, a reading or an action's result are shown as visible escapes
// (`\x1b[2K\r`). A multi-line reading or summary keeps its lines, indented
// under its first, so that no line of it can pass for an entry of its own.
func WriteStory(w io.Writer, h Header, entries []Entry) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Voyage: %s\n", safetext.Line(h.Intent))
	if h.Current != "" && h.Current != h.Identity {
		fmt.Fprintf(&b, "Identity: %s (handed off; started by %s)\n", safetext.Line(h.Current), safetext.Line(h.Identity))
	} else {
		fmt.Fprintf(&b, "Identity: %s\n", safetext.Line(h.Identity))
	}
	fmt.Fprintf(&b, "Created: %s\n", stamp(h.Created))
	status := string(h.Status)
	if !h.CompletedAt.IsZero() {
		// A completed voyage shows its outcome; "completed" reads as such.
		if h.Outcome != "" {
			status = string(h.Outcome)
		}
		status += " (" + stamp(h.CompletedAt) + ")"
	}
	fmt.Fprintf(&b, "Status: %s\n", safetext.Line(status))
	if h.Summary != "" {
		fmt.Fprintf(&b, "Summary: %s\n", safetext.Block(h.Summary, strings.Repeat(" ", len("Summary: "))))
	}
	if resumed(h.Lifecycle) {
		b.WriteString("Lifecycle:\n")
		for i, c := range h.Lifecycle {
			word := string(c.Status)
			switch {
			case i == 0:
				word = "started"
			case c.Status == StatusActive:
				word = "resumed"
			}
			fmt.Fprintf(&b, "  %s %s by %s", stamp(c.At), safetext.Line(word), safetext.Line(c.Who.Identity))
			if c.Reason != "" {
				fmt.Fprintf(&b, ": %s", safetext.Line(c.Reason))
			}
			b.WriteString("\n")
		}
	}
	owner := h.Identity // the voyage's identity as each entry was recorded
	for _, e := range entries {
		b.WriteString("\n")
		writeEntry(&b, e, owner)
		if e.Kind == EntryHandoff && e.Handoff != nil {
			owner = e.Handoff.To
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func resumed(l []Change) bool {
	for i, c := range l {
		if i > 0 && c.Status == StatusActive {
			return true
		}
	}
	return false
}

// readingIndent puts a reading's further lines under its first.
var readingIndent = strings.Repeat(" ", len("  Reading: "))

// Title returns an entry's kind as its heading names it: "Bearing",
// "Action", "Note", "Judgement", "Policy", "Rechain", "Step" or "Handoff".
func Title(k EntryKind) string {
	switch k {
	case EntryBearing:
		return "Bearing"
	case EntryAction:
		return "Action"
	case EntryNote:
		return "Note"
	case EntryJudgement:
		return "Judgement"
	case EntryPolicy:
		return "Policy"
	case EntryRechain:
		return "Rechain"
	case EntryStep:
		return "Step"
	case EntryHandoff:
		return "Handoff"
	}
	return string(k)
}

// ByLine names who recorded an entry, "bob (reviewer)", when it was not
// owner, the voyage's identity; else it is empty.
func ByLine(w Who, owner string) string {
	if w.Identity == "" || w.Identity == owner {
		return ""
	}
	if w.Role == "" {
		return w.Identity
	}
	return w.Identity + " (" + w.Role + ")"
}

func writeEntry(b *strings.Builder, e Entry, owner string) {
	fmt.Fprintf(b, "── %s %d ── %s", Title(e.Kind), e.N, stamp(e.At))
	if by := ByLine(e.Who, owner); by != "" {
		fmt.Fprintf(b, " · %s", safetext.Line(by))
	}
	b.WriteString("\n")
	switch e.Kind {
	case EntryBearing:
		for _, o := range e.Bearing.Observations {
			fmt.Fprintf(b, "  Mark: %s\n", safetext.Line(o.Label))
		}
		fmt.Fprintf(b, "  Reading: %s\n", safetext.Block(e.Bearing.Reading.Text, readingIndent))
		if n := len(e.Bearing.Reading.History); n > 0 {
			fmt.Fprintf(b, "  (reading challenged %d×; last feedback: %s)\n", n, safetext.Line(e.Bearing.Reading.History[n-1].ChallengedWith))
		}
	case EntryAction:
		fmt.Fprintf(b, "  %s\n", safetext.Line(DescribeAction(e.Action)))
		if e.Action.Why != "" {
			fmt.Fprintf(b, "  Why: %s\n", safetext.Block(e.Action.Why, "       "))
		}
	case EntryNote:
		fmt.Fprintf(b, "  %s\n", safetext.Block(e.Note.Text, "  "))
	case EntryJudgement:
		j := e.Judgement
		fmt.Fprintf(b, "  %s: %d/10 (evidence: %s)\n", safetext.Line(j.Dimension), j.Score, JoinNumbers(j.Evidence))
		if j.Text != "" {
			fmt.Fprintf(b, "  %s\n", safetext.Block(j.Text, "  "))
		}
	case EntryPolicy:
		fmt.Fprintf(b, "  %s\n", safetext.Line(DescribePolicy(e.Policy)))
	case EntryRechain:
		fmt.Fprintf(b, "  %s\n", safetext.Line(DescribeRechain(e.Rechain, e.Who)))
	case EntryStep:
		for _, line := range DescribeStep(e.Step) {
			fmt.Fprintf(b, "  %s\n", safetext.Line(line))
		}
	case EntryHandoff:
		fmt.Fprintf(b, "  %s\n", safetext.Line(DescribeHandoff(e.Handoff, e.Who)))
	}
}

// DescribePolicy says which guard rules a policy entry records:
// "guard rules sha256:3f2a9c1b… from /etc/helm/policy.toml,
// /home/ann/.helm/policy.toml", or "no guard rules" when there were none.
func DescribePolicy(p *PolicyRecord) string {
	if p == nil || p.Digest == "" {
		return "no guard rules"
	}
	s := "guard rules " + p.Digest
	if len(p.Sources) > 0 {
		s += " from " + strings.Join(p.Sources, ", ")
	}
	return s
}

// DescribeRechain says what a rechain entry records: "re-chained onto
// BLAKE3 (was CRC32C at seq 41: 9f2c41d0), by ann: WHY".
func DescribeRechain(r *RechainRecord, who Who) string {
	if r == nil {
		return "re-chained onto BLAKE3"
	}
	s := fmt.Sprintf("re-chained onto BLAKE3 (was CRC32C at seq %d: %s)", r.Seq, r.CRC32C)
	if who.Identity != "" {
		s += ", by " + who.Identity
	}
	if r.Why != "" {
		s += ": " + r.Why
	}
	return s
}

// DescribeHandoff says what a handoff entry records: "identity handed
// off from claude-a to ann, by ann (human): WHY".
func DescribeHandoff(h *Handoff, who Who) string {
	if h == nil {
		return "identity handed off"
	}
	s := fmt.Sprintf("identity handed off from %s to %s", h.From, h.To)
	if who.Identity != "" {
		s += ", by " + who.Identity
		if who.Method != "" {
			s += " (" + who.Method + ")"
		}
	}
	if h.Confirmed {
		s += ", confirmed"
	}
	if h.Why != "" {
		s += ": " + h.Why
	}
	return s
}

// JoinNumbers lists entry numbers as "1, 4, 7".
func JoinNumbers(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, ", ")
}

// DescribeAction renders one action as the story tells it:
// "committed (abc1234)", "created PR #45", ...
// Branch names and error messages in it come from the world as they are:
// WriteStory escapes them for the terminal, and so must other printers.
//
// An undo names the entry it takes back ("closed PR #45 (undoes 3)"), and
// an action undone the entry that took it back ("created PR #45 (undone
// by 5)").
func DescribeAction(a *ActionRecord) string {
	s := describeAction(a)
	if a.Undoes != 0 {
		s += fmt.Sprintf(" (undoes %d)", a.Undoes)
	}
	if a.UndoneBy != 0 {
		s += fmt.Sprintf(" (undone by %d)", a.UndoneBy)
	}
	return s
}

func describeAction(a *ActionRecord) string {
	if a.Status == ActionOutcomeUnknown {
		return a.Kind + ": outcome unknown (intended, no result was recorded)"
	}
	if a.Status == ActionFailed {
		// The first line: a tool's message may run on for pages.
		msg, rest, more := strings.Cut(strings.TrimSpace(a.Error), "\n")
		if more && strings.TrimSpace(rest) != "" {
			msg += " …"
		}
		return a.Kind + " failed: " + msg
	}
	if a.Status == ActionRefused {
		if a.Error != "" { // the guard's verdict: denied, or held for confirmation, by a rule
			return a.Kind + " " + a.Error + " (nothing was run)"
		}
		return a.Kind + " refused by rule " + a.Rule + " (nothing was run)"
	}
	r := ActionResult{}
	if a.Result != nil {
		r = *a.Result
	}
	switch a.Kind {
	case "commit":
		return fmt.Sprintf("committed (%s)", short(r.SHA))
	case "push":
		return fmt.Sprintf("pushed to %s (%s)", r.Branch, short(r.SHA))
	case "create-pull-request":
		return fmt.Sprintf("created PR #%d", r.Number)
	case "merge-pull-request":
		return fmt.Sprintf("merged PR #%d", r.Number)
	case "comment-pull-request":
		return fmt.Sprintf("commented on PR #%d", r.Number)
	case "reply-pull-request":
		return fmt.Sprintf("replied on PR #%d", r.Number)
	case "request-review":
		return fmt.Sprintf("requested review on PR #%d from %s", r.Number, strings.Join(r.Reviewers, ", "))
	case "create-issue":
		return fmt.Sprintf("created issue #%d", r.Number)
	case "close-issue":
		return fmt.Sprintf("closed issue #%d", r.Number)
	case "comment-issue":
		return fmt.Sprintf("commented on issue #%d", r.Number)
	case "reset-commit":
		return fmt.Sprintf("reset %s to %s, taking back a commit", branchOr(r.Branch), short(r.SHA))
	case "revert-commit":
		return fmt.Sprintf("reverted a commit on %s (%s)", branchOr(r.Branch), short(r.SHA))
	case "delete-remote-branch":
		return fmt.Sprintf("deleted remote branch %s", r.Branch)
	case "close-pull-request":
		return fmt.Sprintf("closed PR #%d", r.Number)
	case "delete-comment":
		return fmt.Sprintf("deleted comment %d on #%d", r.CommentID, r.Number)
	case "delete-review-comment":
		return fmt.Sprintf("deleted review comment %d on PR #%d", r.CommentID, r.Number)
	case "remove-review-request":
		return fmt.Sprintf("removed the review request on PR #%d from %s", r.Number, strings.Join(r.Reviewers, ", "))
	case "reopen-issue":
		return fmt.Sprintf("reopened issue #%d", r.Number)
	}
	return a.Kind + " performed"
}

// branchOr names a branch, or HEAD when there is none (detached).
func branchOr(b string) string {
	if b == "" {
		return "HEAD"
	}
	return b
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

func stamp(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}
