package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/transcript"
)

func newTranscriptCmd(a *app) *cobra.Command {
	return leafCmd(a, &cobra.Command{
		Use:   "transcript [VOYAGE...|--all] [--since T] [--who ID]",
		Short: "merge voyages and their sub-voyages into one timeline",
		Long: `Print the events of several voyages as one timeline, ordered by time (ties
by voyage id, then by sequence number), one line each: time, voyage,
identity (role), what happened. The voyages named (ids or prefixes;
without any, the voyage --voyage, HELM_VOYAGE or the only active one
names) come with their sub-voyages; --all takes every voyage. Links are
shown: an action names the bearing it followed, a bearing the
observations it sealed, a challenge the bearing it challenged.

--since keeps the events from a time (2026-02-26T17:00:00Z) or from a
while ago (30m); --who keeps one identity's. --json prints one event per
line in the form helm voyage export and helm log --json share
(docs/transcript.md): the event, its voyage id, seq and links.`,
		Example: "  helm transcript a3b\n  helm transcript --all --since 2h --json",
	}, &transcriptCommand{})
}

func newStatsCmd(a *app) *cobra.Command {
	return leafCmd(a, &cobra.Command{
		Use:   "stats [VOYAGE...|--all]",
		Short: "critical steps, parallelism and each identity's part",
		Long: `Print the figures of a voyage and its sub-voyages (chosen as for helm
transcript). A step is an observation, a bearing, an action (intended or
refused) or a note. The main voyage's bearings cut the timeline into
stages; in each, the main voyage's steps and the most steps any one
sub-voyage took are critical:

  critical steps = Σ over stages (main's steps + max over sub-voyages of their steps)

Overhead is total − critical; parallelism is total / critical: 1 when
every step was on the critical path, higher the more steps ran side by
side. Each identity's observations, bearings, actions, failures,
refusals, notes and time active (first to last event) follow, then the
judgements.`,
		Example: "  helm stats a3b\n  helm stats --all --json",
	}, &statsCommand{})
}

// voyageSet is how transcript and stats choose their voyages.
type voyageSet struct {
	all bool
}

func (s *voyageSet) flags(fs *pflag.FlagSet) {
	fs.BoolVar(&s.all, "all", false, "take every voyage of the home")
}

// ids returns the voyages named (with their sub-voyages), nil for all.
func (s *voyageSet) ids(ctx context.Context, a *app, args []string) ([]string, error) {
	switch {
	case s.all && len(args) > 0:
		return nil, usageErrorf(a.cmd, "%s: name voyages or give --all, not both", commandName(a.cmd))
	case s.all:
		return nil, nil
	case len(args) > 0:
		if a.g.voyage != "" {
			return nil, usageErrorf(a.cmd, "%s: voyages given both as arguments and --voyage; give them one way", commandName(a.cmd))
		}
		return args, nil
	}
	id, err := a.readVoyageID(ctx, "")
	if err != nil {
		return nil, err
	}
	return []string{id}, nil
}

type transcriptCommand struct {
	set   voyageSet
	since string
	who   string
}

func (c *transcriptCommand) Flags(fs *pflag.FlagSet) {
	c.set.flags(fs)
	fs.StringVar(&c.since, "since", "", "keep the events from time `T` (RFC 3339) or from a while ago (30m, 2h)")
	fs.StringVar(&c.who, "who", "", "keep the events of identity `ID`")
}

func (c *transcriptCommand) Run(ctx context.Context, a *app, args []string) error {
	h, err := a.openHome()
	if err != nil {
		return err
	}
	opts := &transcript.Options{Who: c.who, Descendants: true}
	if c.since != "" {
		if opts.Since, err = view.ParseSince(c.since, a.now()); err != nil {
			return usageErrorf(a.cmd, "transcript: --since %q: %v", c.since, err)
		}
	}
	if c.who != "" {
		if err := logbook.ValidateIdentity(c.who); err != nil {
			return usageErrorf(a.cmd, "transcript: --who %q: %v", c.who, err)
		}
	}
	ids, err := c.set.ids(ctx, a, args)
	if err != nil {
		return err
	}
	lines, err := transcript.Read(ctx, h, ids, opts)
	if err != nil {
		return err
	}
	if a.g.json {
		return view.WriteJSONLines(a.stdout, lines)
	}
	if len(lines) == 0 {
		_, err := fmt.Fprintln(a.stdout, "No events.")
		return err
	}
	// Long: paged on a terminal (terminal.go).
	return a.page(nil, func(w io.Writer) error { return transcript.Write(w, lines) })
}

type statsCommand struct{ set voyageSet }

func (c *statsCommand) Flags(fs *pflag.FlagSet) { c.set.flags(fs) }

func (c *statsCommand) Run(ctx context.Context, a *app, args []string) error {
	h, err := a.openHome()
	if err != nil {
		return err
	}
	ids, err := c.set.ids(ctx, a, args)
	if err != nil {
		return err
	}
	lines, err := transcript.Read(ctx, h, ids, &transcript.Options{Descendants: true})
	if err != nil {
		return err
	}
	stats := transcript.StatsOf(lines)
	if a.g.json {
		if stats == nil {
			stats = []transcript.Stats{}
		}
		return writeJSON(a.stdout, stats)
	}
	var b strings.Builder
	for i, s := range stats {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "Voyage %s (%s)", short(s.Main), printable(s.Intent))
		if len(s.Subs) > 0 {
			subs := make([]string, len(s.Subs))
			for i, id := range s.Subs {
				subs[i] = short(id)
			}
			fmt.Fprintf(&b, " with %s: %s", plural(len(s.Subs), "sub-voyage"), strings.Join(subs, ", "))
		}
		b.WriteString("\n")
		fmt.Fprintf(&b, "  Stages:          %d\n", s.Stages)
		fmt.Fprintf(&b, "  Steps:           %d total, %d critical, %d overhead\n", s.TotalSteps, s.CriticalSteps, s.Overhead)
		fmt.Fprintf(&b, "  Parallelism:     %.2f (total / critical)\n", s.Parallelism)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  IDENTITY\tROLES\tSTEPS\tOBSERVATIONS\tBEARINGS\tACTIONS\tFAILED\tREFUSED\tNOTES\tACTIVE")
		for _, m := range s.Crew {
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", printable(m.Identity), printable(orNone(strings.Join(m.Roles, ","))),
				m.Steps, m.Observations, m.Bearings, m.Actions, m.Failures, m.Refused, m.Notes, m.Active.Round(time.Second))
		}
		tw.Flush()
		writeAgentStats(&b, s.Agents)
		for _, j := range s.Judgements {
			fmt.Fprintf(&b, "  Judgement %d of %s by %s: %s %d/10\n", j.Entry, short(j.Voyage), printable(j.Judge), printable(j.Dimension), j.Score)
		}
	}
	if len(stats) == 0 {
		b.WriteString("No events.\n")
	}
	_, err = fmt.Fprint(a.stdout, b.String())
	return err
}

// writeAgentStats prints what agent hosts reported (helm hook, voyage
// import --from): prompts, tool calls and what they cost, when there are
// any.
func writeAgentStats(b *strings.Builder, ag logbook.StepStats) {
	if ag == (logbook.StepStats{}) {
		return
	}
	fmt.Fprintf(b, "  Agent steps:     %s, %s (%d denied, %d failed)\n", plural(ag.Prompts, "prompt"), plural(ag.ToolCalls, "tool call"), ag.DeniedCalls, ag.FailedCalls)
	if ag.InputTokens+ag.OutputTokens+ag.CacheReadTokens+ag.CacheWriteTokens > 0 || ag.CostUSD > 0 {
		fmt.Fprintf(b, "  Tokens:          %d in, %d out, %d cache read, %d cache written", ag.InputTokens, ag.OutputTokens, ag.CacheReadTokens, ag.CacheWriteTokens)
		if ag.CostUSD > 0 {
			fmt.Fprintf(b, "; $%.4f", ag.CostUSD)
		}
		if ag.ModelTime > 0 {
			fmt.Fprintf(b, "; model time %s", ag.ModelTime.Round(time.Millisecond))
		}
		b.WriteString("\n")
	}
}

// now is the time by the home's clock (a test's, when it sets one).
func (a *app) now() time.Time {
	if o := a.main.Options; o != nil && o.Clock != nil {
		return o.Clock()
	}
	return time.Now()
}
