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
	"github.com/helmlog/helm/internal/searchindex"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/search"
)

func newSearchCmd(a *app) *cobra.Command {
	return leafCmd(a, &cobra.Command{
		Use:   "search [--mark KEY] [--pr N] [--issue N] [--who ID] [--in entries|sightings] [--limit N] [--scan] [WORDS...]",
		Short: "find entries and sightings across voyages: by words, mark, pull request, issue or identity",
		Long: `Find what every voyage recorded that matches, one line each, oldest first:
the time, the voyage, the entry's number, its kind, who recorded it, and
what matched. Every criterion given must match:

  WORDS        every word (letters and digits, case ignored) in one entry
               — readings (challenged ones and their feedback too), notes,
               judgements, actions (their line, why, error, message, title
               and body), voyages' intents and reasons — or inside one
               sighting: a file's contents, a command's output, a web
               page's text, any stowed artifact
  --in WHERE   look for WORDS only in "entries" or only in "sightings"
  --mark KEY   bearings that sealed a mark whose key is KEY or starts with
               it (helm slate list shows keys: github-pr:octo/widgets#45 ...)
  --pr N       actions on pull request N, bearings that looked at it, and
               entries whose text mentions #N
  --issue N    the same for issue N
  --who ID     what identity ID recorded (or observed, for a sighting)

A hit inside a sighting has kind "sighting": its line names the mark it was
a sighting of and shows the words in a short, redacted stretch of its text;
its number is the bearing that sealed it ("-" while on the slate). A hit on
a voyage's intent has kind "voyage", one on the reason of a change of its
status (a completion's summary) kind "status"; neither has a number.

WORDS are found through the home's content index, which helm complete keeps
and helm search --reindex brings up to date; a voyage the index does not
cover as it is now is read whole (search says how many), so nothing is
missed, only slower. Every hit is checked against the voyage's log: content
jettisoned since is never shown. --scan ignores the index. Searching never
writes; --reindex writes only the index (then searches, if asked to).

Exit status: 0 when something matched; 1 when nothing did ("helm: search:
no entry matches", as grep exits 1), or a voyage could not be read; 2 bad
usage. --reindex alone exits 0 once the index is up to date.`,
		Example: "  helm search --pr 42\n  helm search --who bob null check\n  helm search --in sightings \"connection refused\"\n  helm search --reindex\n  helm search --mark github-issue:octo/widgets#42 --json",
	}, &searchCommand{})
}

type searchCommand struct {
	mark, who, in string
	pr, issue     int
	limit         int
	scan, reindex bool
	all           bool
}

// searchLimit is how many hits helm search prints unless told otherwise.
const searchLimit = 20

func (c *searchCommand) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.mark, "mark", "", "bearings that sealed a mark whose key is or starts with `KEY`")
	fs.IntVar(&c.pr, "pr", 0, "entries about pull request `N`")
	fs.IntVar(&c.issue, "issue", 0, "entries about issue `N`")
	fs.StringVar(&c.who, "who", "", "entries recorded by identity `ID`")
	fs.StringVar(&c.in, "in", "", "look for WORDS only in `entries` or only in `sightings`")
	fs.IntVar(&c.limit, "limit", searchLimit, "print at most `N` hits (0: all)")
	fs.BoolVar(&c.scan, "scan", false, "read every voyage whole for WORDS, ignoring the content index")
	fs.BoolVar(&c.reindex, "reindex", false, "bring the content index up to date with the voyages' logs (writes the index only)")
	fs.BoolVar(&c.all, "all", false, "with --reindex: rebuild the whole index from the logs")
}

func (c *searchCommand) Run(ctx context.Context, a *app, args []string) error {
	q := search.Query{Mark: c.mark, PR: c.pr, Issue: c.issue, Who: c.who, Words: strings.Join(args, " "), In: search.Where(c.in), Limit: c.limit, NoIndex: c.scan}
	criteria := strings.TrimSpace(q.Mark) != "" || q.PR != 0 || q.Issue != 0 || strings.TrimSpace(q.Who) != "" || strings.TrimSpace(q.Words) != ""
	switch {
	case c.pr < 0:
		return usageErrorf(a.cmd, "search: --pr %d is not a pull request's number", c.pr)
	case c.issue < 0:
		return usageErrorf(a.cmd, "search: --issue %d is not an issue's number", c.issue)
	case c.limit < 0:
		return usageErrorf(a.cmd, "search: --limit %d is not a number of hits", c.limit)
	case c.in != "" && c.in != string(search.InEntries) && c.in != string(search.InSightings):
		return usageErrorf(a.cmd, "search: --in %q: words are looked for in \"entries\" or \"sightings\"", c.in)
	case c.in != "" && strings.TrimSpace(q.Words) == "":
		return usageErrorf(a.cmd, "search: --in %s narrows WORDS: give the words to find", c.in)
	case c.all && !c.reindex:
		return usageErrorf(a.cmd, "search: --all goes with --reindex (it rebuilds the whole index)")
	case !criteria && !c.reindex:
		return usageErrorf(a.cmd, "search: nothing to search for: give WORDS, --mark KEY, --pr N, --issue N or --who ID")
	}
	if strings.TrimSpace(q.Words) != "" && len(searchindex.Words(q.Words)) == 0 {
		return usageErrorf(a.cmd, "search: words %q hold no word (letters or digits)", q.Words)
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
	if c.reindex {
		rep, err := search.Reindex(ctx, h, &search.ReindexOptions{All: c.all})
		var unreadable *helm.ListError
		if err != nil && !errors.As(err, &unreadable) {
			return err
		}
		fmt.Fprintf(a.stderr, "helm: search: indexed %s (%s of text); %s already current\n",
			plural(rep.Indexed, "voyage"), size(rep.Bytes), plural(rep.Current, "voyage"))
		if err != nil || !criteria {
			return err // the voyages it could not read: exit 1
		}
	}
	res, err := search.Find(ctx, h, &q)
	var unreadable *helm.ListError
	if err != nil && !errors.As(err, &unreadable) {
		return err
	}
	// Voyages that could not be read do not hide the others' hits: print
	// them, then report the rest (exit 1).
	if perr := printHits(a, res.Hits); perr != nil {
		return perr
	}
	if res.More {
		fmt.Fprintf(a.stderr, "helm: search: more hits than the %d shown (--limit N shows more, --limit 0 all)\n", q.Limit)
	}
	if res.IndexErr != nil {
		fmt.Fprintf(a.stderr, "helm: search: the content index could not be read (%s): every voyage was read whole\nTry: helm search --reindex --all\n", printable(res.IndexErr.Error()))
	} else if res.Scanned > 0 && !q.NoIndex {
		fmt.Fprintf(a.stderr, "helm: search: %s read whole: the content index does not cover them as they are now\nTry: helm search --reindex\n", plural(res.Scanned, "voyage"))
	}
	if err == nil && len(res.Hits) == 0 {
		return errNoMatch
	}
	return err
}

// errNoMatch is a search that found nothing: exit 1, as grep's.
var errNoMatch = errors.New("search: no entry matches")

// reindexVoyage brings the content index up to date with voyage id after
// a command changed it (completed it, jettisoned or reduced an artifact):
// with onlyCovered, only if the index holds it already (so that it
// forgets what the voyage no longer stows). The index is derived data: a
// failure leaves searches reading the voyage whole, and is a warning.
func reindexVoyage(ctx context.Context, a *app, id string, onlyCovered bool) {
	h, err := a.openHome()
	if err == nil {
		_, err = search.Reindex(ctx, h, &search.ReindexOptions{Voyages: []string{id}, OnlyCovered: onlyCovered})
	}
	if err != nil {
		fmt.Fprintf(a.stderr, "helm: warning: the content index was not brought up to date (searches read voyage %s whole until it is): %s\nTry: helm search --reindex\n", short(id), printable(err.Error()))
	}
}

func printHits(a *app, hits []search.Hit) error {
	if a.g.json {
		if hits == nil {
			hits = []search.Hit{}
		}
		return writeJSON(a.stdout, hits)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	for _, hit := range hits {
		n := "-"
		if hit.N > 0 {
			n = fmt.Sprint(hit.N)
		}
		text := hit.Text
		if hit.Kind == search.KindSighting {
			text = hit.Mark + "  " + hit.Snippet
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", stamp(hit.At), short(hit.Voyage), n, hit.Kind, printable(hit.Who.Identity), printable(text))
	}
	return tw.Flush()
}
