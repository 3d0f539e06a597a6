package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/logbook"
)

func newCompleteCmd(a *app) *cobra.Command {
	c := leafCmd(a, &cobra.Command{
		Use:   "complete [--summary TEXT] [--outcome completed|blocked|failed|partial|cancelled]",
		Short: "complete the voyage with an outcome and a summary",
		Long: `Complete the voyage; its status becomes the outcome. Nothing more is
observed, taken or performed on it afterwards, unless it is blocked or
partial and resumed (helm voyage resume); its logbook stays readable with
helm log. A blocked or partial voyage may also be completed with another
outcome directly (without --voyage: the only active, else the only blocked
or partial voyage).

Every outcome needs a summary: what came of the voyage. Without --summary,
helm asks for it when standard input is a terminal, and refuses otherwise.`,
		Example: `  helm complete --summary "Fixed null check in widget init. PR #45 merged."
  helm complete --outcome blocked --summary "Waiting on the upstream fix."`,
	}, &completeCommandLeaf{})
	fixedValues(c, "outcome", outcomeNames()...)
	return c
}

func outcomeNames() []string {
	var names []string
	for _, o := range logbook.Outcomes() {
		names = append(names, string(o))
	}
	return names
}

type completeCommandLeaf struct {
	summary, outcome string
	summarySet       bool
}

func (c *completeCommandLeaf) Flags(fs *pflag.FlagSet) {
	fs.Func("summary", "what came of the voyage, as `TEXT` (asked for on a terminal when not given)", func(s string) error {
		c.summary, c.summarySet = s, true
		return nil
	})
	fs.StringVar(&c.outcome, "outcome", string(logbook.OutcomeCompleted), "how it ended, `OUTCOME`: completed, blocked, failed, partial or cancelled")
}

func (c *completeCommandLeaf) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 0 {
		return usageErrorf(a.cmd, "complete: unexpected arguments %q (quote the summary: --summary \"TEXT\")", args)
	}
	if c.summarySet && strings.TrimSpace(c.summary) == "" {
		return usageErrorf(a.cmd, "complete: --summary is empty: say what came of the voyage")
	}
	if !slices.Contains(logbook.Outcomes(), logbook.Outcome(c.outcome)) {
		return usageErrorf(a.cmd, "complete: outcome %q is not one of %s", c.outcome, strings.Join(outcomeNames(), ", "))
	}
	v, who, err := a.completableVoyage(ctx)
	if err != nil {
		return err
	}
	if !c.summarySet {
		if !isTerminal(a.stdin) {
			return &usageError{
				Err: fmt.Errorf("complete: no summary for voyage %s: completing a voyage is final, and every outcome records what came of it; standard input is not a terminal to ask on",
					short(v.ID())),
				Hint: "helm " + commandLine(a.args) + ` --summary "TEXT"`,
			}
		}
		fmt.Fprintf(a.stderr, "Completing voyage %s (%s) as %s.\nSummary (what came of it; an empty line cancels): ",
			short(v.ID()), printable(v.Info().Intent), printable(c.outcome))
		line, err := readLine(ctx, a.stdin)
		if err != nil {
			return err
		}
		if c.summary = strings.TrimSpace(line); c.summary == "" {
			return &usageError{
				Err:  fmt.Errorf("complete: no summary given: voyage %s stays active", short(v.ID())),
				Hint: "helm " + commandLine(a.args) + ` --summary "TEXT"`,
			}
		}
	}
	if err := v.Complete(ctx, logbook.Outcome(c.outcome), c.summary, who); err != nil {
		return err
	}
	reindexVoyage(ctx, a, v.ID(), false) // a finished voyage's words, off the per-event path
	info := v.Info()
	// The head after the completion: a witness of the whole voyage, to
	// paste where the recorded party cannot rewrite it. The voyage is
	// completed whether or not it has one.
	head, herr := v.Head(ctx)
	if herr != nil {
		fmt.Fprintf(a.stderr, "helm: complete: voyage %s has no head to print: %s\n", short(v.ID()), printable(herr.Error()))
	}
	if a.g.json {
		out := completedJSON{VoyageInfo: info}
		if herr == nil {
			out.Head = &head
		}
		return writeJSON(a.stdout, out)
	}
	var b strings.Builder
	switch info.Status {
	case logbook.StatusCompleted:
		fmt.Fprintf(&b, "Voyage %s completed\n", short(v.ID()))
	case logbook.StatusBlocked, logbook.StatusPartial:
		fmt.Fprintf(&b, "Voyage %s is %s (helm voyage resume continues it)\n", short(v.ID()), info.Status)
	default:
		fmt.Fprintf(&b, "Voyage %s completed: %s\n", short(v.ID()), info.Status)
	}
	if herr == nil {
		fmt.Fprintf(&b, "Head:    %s\n", head)
	}
	if info.Summary != "" {
		fmt.Fprintf(&b, "Summary: %s\n", block(info.Summary, "         "))
	}
	_, err = fmt.Fprint(a.stdout, b.String())
	return err
}

// completedJSON is the --json form of complete: the voyage as voyage
// show describes it, and its head after the completion.
type completedJSON struct {
	helm.VoyageInfo
	Head *chain.Head `json:"head,omitempty"`
}

// completableVoyage opens the voyage to complete: the resolved one when
// it is active, blocked or partial (--voyage, HELM_VOYAGE, the only
// active one, else the only blocked or partial one), and who completes it.
func (a *app) completableVoyage(ctx context.Context) (*helm.Voyage, logbook.Who, error) {
	v, err := a.openVoyage(ctx)
	var usage *usageError
	if errors.Is(err, helm.ErrNoVoyage) && errors.As(err, &usage) {
		v, err = a.openVoyageAmong(ctx, helm.ListOpen, "open", nil)
	}
	if err != nil {
		return nil, logbook.Who{}, err
	}
	if err := view.TakesChanges(v); err != nil && !errors.Is(err, helm.ErrVoyagePaused) {
		return nil, logbook.Who{}, err
	}
	who, err := a.who(ctx, v, false)
	return v, who, err
}

// isTerminal reports whether r is a terminal a person types on. It asks
// the terminal driver (golang.org/x/term) rather than checking for a
// character device: /dev/null is one too, and a script or an agent that
// runs helm with stdin from /dev/null must be refused, not prompted.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// readLine reads one line from r; a signal (ctx) ends the wait.
func readLine(ctx context.Context, r io.Reader) (string, error) {
	type result struct {
		line string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		line, err := bufio.NewReader(r).ReadString('\n')
		if errors.Is(err, io.EOF) {
			err = nil // what was typed before end of input (Ctrl-D) is the answer
		}
		done <- result{line, err}
	}()
	select {
	case res := <-done:
		if res.err != nil {
			return "", fmt.Errorf("complete: read the summary: %w", res.err)
		}
		return res.line, nil
	case <-ctx.Done():
		return "", fmt.Errorf("complete: waiting for the summary: %w", ctx.Err())
	}
}
