package actions

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/internal/witnessline"
	"github.com/helmlog/helm/runner"
)

// Witnesses: a voyage gives every action that leaves text in the world
// the trailer line naming it at the head of its chain when the intent was
// recorded (chain.Trailer: "Helm-Voyage: <voyage id> <SEQ>:<HEX>"),
// through its Witness method, before Perform. The action carries it out
// of the home, where the recorded party cannot rewrite it:
//
//	commit, revert-commit    a git trailer on the commit
//	create-pull-request,     the last line of the body, after a blank line
//	create-issue, comments,
//	reply-pull-request
//	merge-pull-request       the merge commit's message (merge and squash;
//	                         a rebase writes no commit message)
//
// The line is not a parameter: the intent records the action as the
// caller asked for it, so undo and replay see what was asked, and the
// result records the line written (ActionResult.Witness). An action given
// no line (a dry run, a caller that is no voyage) writes none.

// witness holds the trailer line a voyage gave the action; the actions
// that write text into the world embed it.
type witness struct{ line string }

// Witness sets the line the action writes where it leaves text: the
// trailer naming the voyage at the head of its chain.
func (w *witness) Witness(line string) { w.line = line }

// signed returns s with the witness line at its end, after a blank line
// (s as it is when there is no witness).
func (w *witness) signed(s string) string {
	if w.line == "" {
		return s
	}
	s = strings.TrimRight(s, " \t\r\n")
	if s == "" {
		return w.line
	}
	return s + "\n\n" + w.line
}

// utf8Commit are the git options before a command that makes a commit
// (commit, revert, an amend): the commit is UTF-8 with no encoding
// header, whatever i18n.commitEncoding the repository sets. A commit
// labelled with another encoding keeps helm's UTF-8 bytes, but git log
// (and any reader that honours the label) transcodes them, and the
// witness reads as something else.
var utf8Commit = []string{"-c", "i18n.commitEncoding=UTF-8"}

// committing returns git's arguments for a command that makes a commit:
// utf8Commit, then args.
func committing(args ...string) []string { return append(slices.Clone(utf8Commit), args...) }

// trailerArgs are the arguments that make git commit append the witness
// as a trailer, with git's own trailer handling (after the message's own
// trailers, whatever they say); checkTrailer then checks the commit git
// made.
func (w *witness) trailerArgs() []string {
	if w.line == "" {
		return nil
	}
	return []string{"--trailer", w.line}
}

// checkTrailer checks the commit sha as git stored it (git cat-file, no
// transcoding): it carries no encoding header other than UTF-8, its
// message holds exactly one Helm-Voyage line naming the voyage or not
// parsing (witnessline's rule, which verify reads by), and that line is
// the witness, as the message's last.
// A commit-msg or post-commit hook, a trailer alias or an encoding in the
// repository's configuration could otherwise have dropped, rewritten,
// doubled or hidden it, and the commit would go unwitnessed, or witness
// falsely, without anyone knowing.
func (w *witness) checkTrailer(ctx context.Context, r *runner.Runner, sha string) error {
	if w.line == "" {
		return nil
	}
	out, err := r.Git(ctx, "cat-file", "commit", sha)
	if err != nil {
		return fmt.Errorf("read back commit %s for its %s trailer: %w", shortSHA(sha), chain.TrailerKey, err)
	}
	header, msg, _ := strings.Cut(string(out), "\n\n")
	for line := range strings.Lines(header) {
		if enc, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "encoding "); ok && !isUTF8(enc) {
			return fmt.Errorf("commit %s was made, but git labelled its message %s (the repository's i18n.commitEncoding, or a hook): a reader that honours the label reads another text, so it witnesses nothing", shortSHA(sha), enc)
		}
	}
	_, value, _ := strings.Cut(w.line, ":")
	voyage, _, _ := chain.ParseTrailerValue(value)
	var lines []string
	for line, value := range witnessline.Lines(msg) {
		if v, _, err := chain.ParseTrailerValue(value); err != nil || v == voyage {
			lines = append(lines, line)
		}
	}
	last := strings.TrimRight(msg, "\n")
	if i := strings.LastIndexByte(last, '\n'); i >= 0 {
		last = last[i+1:]
	}
	switch {
	case last != w.line:
		return fmt.Errorf("commit %s was made, but its message does not end with the witness %q (a commit-msg hook or the repository's trailer configuration changed it): it witnesses nothing", shortSHA(sha), w.line)
	case len(lines) != 1:
		return fmt.Errorf("commit %s was made, but its message holds %d %s lines naming the voyage or not parsing, not only the witness %q (a hook added them): it witnesses nothing for sure", shortSHA(sha), len(lines), chain.TrailerKey, w.line)
	}
	return nil
}

// isUTF8 reports whether enc, a commit's encoding header, names UTF-8 as
// git reads it.
func isUTF8(enc string) bool {
	return strings.EqualFold(enc, "UTF-8") || strings.EqualFold(enc, "UTF8")
}
