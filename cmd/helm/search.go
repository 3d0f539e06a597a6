package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/search"
)

func newSearchCmd(a *app) *cobra.Command {
	return leafCmd(a, &cobra.Command{
		Use:   "search [--mark KEY] [--pr N] [--issue N] [--who ID] [TEXT]",
		Short: "find entries across voyages: by mark, pull request, issue, identity or text",
		Long: `Find the logbook entries of every voyage that match, one line each, oldest
first: the time, the voyage, the entry's number, its kind, who recorded
it, and what matched. Every criterion given must match:

  --mark KEY   bearings that sealed a mark whose key is KEY or starts with
               it (helm slate list shows keys: github-pr:octo/widgets#45 ...)
  --pr N       actions on pull request N, bearings that looked at it, and
               entries whose text mentions #N
  --issue N    the same for issue N
  --who ID     what identity ID recorded
  TEXT         readings (challenged ones and their feedback too), notes,
               judgements, actions (their line, why, error, message, title
               and body) and voyages' intents and reasons, ignoring case

A hit on a voyage's intent has kind "voyage", one on the reason of a change
of its status (a completion's summary) kind "status"; neither has a number.
helm search reads every voyage of the home.`,
		Example: "  helm search --pr 42\n  helm search --who bob \"null check\"\n  helm search --mark github-issue:octo/widgets#42 --json",
	}, &searchCommand{})
}

type searchCommand struct {
	mark, who string
	pr, issue int
}

func (c *searchCommand) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.mark, "mark", "", "bearings that sealed a mark whose key is or starts with `KEY`")
	fs.IntVar(&c.pr, "pr", 0, "entries about pull request `N`")
	fs.IntVar(&c.issue, "issue", 0, "entries about issue `N`")
	fs.StringVar(&c.who, "who", "", "entries recorded by identity `ID`")
}

func (c *searchCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 1 {
		return usageErrorf(a.cmd, "search: one TEXT expected, got %d arguments (quote the text)", len(args))
	}
	q := search.Query{Mark: c.mark, PR: c.pr, Issue: c.issue, Who: c.who}
	if len(args) == 1 {
		q.Text = args[0]
	}
	switch {
	case c.pr < 0:
		return usageErrorf(a.cmd, "search: --pr %d is not a pull request's number", c.pr)
	case c.issue < 0:
		return usageErrorf(a.cmd, "search: --issue %d is not an issue's number", c.issue)
	case strings.TrimSpace(q.Mark) == "" && q.PR == 0 && q.Issue == 0 && strings.TrimSpace(q.Who) == "" && strings.TrimSpace(q.Text) == "":
		return usageErrorf(a.cmd, "search: nothing to search for: give --mark KEY, --pr N, --issue N, --who ID or TEXT")
	}
	if q.Who != "" {
		if err := logbook.ValidateIdentity(q.Who); err != nil {
			return usageErrorf(a.cmd, "search: --who %q: %v", q.Who, err)
		}
	}
	h, err := a.openHome()
	if err != nil {
		return err
	}
	hits, err := search.Run(ctx, h, &q)
	var unreadable *helm.ListError
	if err != nil && !errors.As(err, &unreadable) {
		return err
	}
	// Voyages that could not be read do not hide the others' hits: print
	// them, then report the rest (exit 1).
	if perr := printHits(a, hits); perr != nil {
		return perr
	}
	return err
}

func printHits(a *app, hits []search.Hit) error {
	if a.g.json {
		if hits == nil {
			hits = []search.Hit{}
		}
		return writeJSON(a.stdout, hits)
	}
	if len(hits) == 0 {
		_, err := fmt.Fprintln(a.stderr, "no entry matches")
		return err
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	for _, hit := range hits {
		n := "-"
		if hit.N > 0 {
			n = fmt.Sprint(hit.N)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", stamp(hit.At), short(hit.Voyage), n, hit.Kind, printable(hit.Who.Identity), printable(hit.Text))
	}
	return tw.Flush()
}
