package actions

import (
	"context"
	"fmt"
	"strings"

	"github.com/helmlog/helm/chain"
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

// checkTrailer checks that the commit sha's message ends with the
// witness line: a commit-msg hook, or a trailer alias in the repository's
// configuration, could otherwise have dropped or rewritten it, and the
// commit would go unwitnessed without anyone knowing.
func (w *witness) checkTrailer(ctx context.Context, r *runner.Runner, sha string) error {
	if w.line == "" {
		return nil
	}
	out, err := r.Git(ctx, "cat-file", "commit", sha)
	if err != nil {
		return fmt.Errorf("read back commit %s for its %s trailer: %w", shortSHA(sha), chain.TrailerKey, err)
	}
	_, msg, _ := strings.Cut(string(out), "\n\n")
	msg = strings.TrimRight(msg, "\n")
	if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
		msg = msg[i+1:]
	}
	if msg != w.line {
		return fmt.Errorf("commit %s was made, but its message does not end with the witness %q (a commit-msg hook or the repository's trailer configuration changed it): it witnesses nothing", shortSHA(sha), w.line)
	}
	return nil
}
