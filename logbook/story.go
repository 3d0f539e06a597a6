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
	Intent      string
	Identity    string
	Created     time.Time
	Status      string    // "active", "completed", ...
	CompletedAt time.Time // zero while active
	Outcome     string    // completed, blocked, failed, partial, cancelled
	Summary     string
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
	fmt.Fprintf(&b, "Identity: %s\n", safetext.Line(h.Identity))
	fmt.Fprintf(&b, "Created: %s\n", stamp(h.Created))
	status := h.Status
	if !h.CompletedAt.IsZero() {
		// A completed voyage shows its outcome; "completed" reads as such.
		if h.Outcome != "" {
			status = h.Outcome
		}
		status += " (" + stamp(h.CompletedAt) + ")"
	}
	fmt.Fprintf(&b, "Status: %s\n", safetext.Line(status))
	if h.Summary != "" {
		fmt.Fprintf(&b, "Summary: %s\n", safetext.Block(h.Summary, strings.Repeat(" ", len("Summary: "))))
	}
	for _, e := range entries {
		b.WriteString("\n")
		writeEntry(&b, e)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// readingIndent puts a reading's further lines under its first.
var readingIndent = strings.Repeat(" ", len("  Reading: "))

func writeEntry(b *strings.Builder, e Entry) {
	switch e.Kind {
	case EntryBearing:
		fmt.Fprintf(b, "── Bearing %d ── %s\n", e.N, stamp(e.At))
		for _, o := range e.Bearing.Observations {
			fmt.Fprintf(b, "  Mark: %s\n", safetext.Line(o.Label))
		}
		fmt.Fprintf(b, "  Reading: %s\n", safetext.Block(e.Bearing.Reading.Text, readingIndent))
		if n := len(e.Bearing.Reading.History); n > 0 {
			fmt.Fprintf(b, "  (reading challenged %d×; last feedback: %s)\n", n, safetext.Line(e.Bearing.Reading.History[n-1].ChallengedWith))
		}
	case EntryAction:
		fmt.Fprintf(b, "── Action %d ── %s\n", e.N, stamp(e.At))
		fmt.Fprintf(b, "  %s\n", safetext.Line(DescribeAction(e.Action)))
	}
}

// DescribeAction renders one action as the story tells it:
// "committed (abc1234)", "created PR #45", ...
// Branch names and error messages in it come from the world as they are:
// WriteStory escapes them for the terminal, and so must other printers.
func DescribeAction(a *ActionRecord) string {
	if a.Status == ActionOutcomeUnknown {
		return a.Kind + ": outcome unknown (intended, no result was recorded)"
	}
	if a.Status == ActionFailed {
		return a.Kind + " failed: " + a.Error
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
	}
	return a.Kind + " performed"
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
