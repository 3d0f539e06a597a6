package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/logbook"
)

func newBearingCmd(a *app) *cobra.Command {
	c := leafCmd(a, &cobra.Command{
		Use:   "bearing --reading TEXT [--observation FILE|-]...",
		Short: "take a bearing: record what the observations meant",
		Long: `Take a bearing: a reading over the observations on the slate, plus any
written earlier with observe --out (or by another tool). The logbook entry
and the wiping of the slate are one atomic change. A bearing records who
took it: identity, role and method (--role/--method, HELM_ROLE/HELM_METHOD,
or config.toml).

"helm bearing challenge N" replaces the reading of bearing N, keeping the
challenged text and the feedback in its history.`,
		Example: `  helm bearing --reading "Widget module has a null check missing in init()." --observation obs.json`,
	}, &bearingTakeCommand{})
	c.AddCommand(leafCmd(a, &cobra.Command{
		Use:     "challenge N --with FEEDBACK --reading TEXT",
		Short:   "challenge the reading of bearing N with feedback and a new reading",
		Example: `  helm bearing challenge 1 --with "The test does hit init()" --reading "Widget init() lacks a null check on reload."`,
	}, &bearingChallengeCommand{}))
	return c
}

// bearingTakeCommand takes a bearing.
type bearingTakeCommand struct {
	reading      string
	observations []string
	source       string
}

// sourceFlag defines --source, and sourceOf reads it.
func sourceFlag(fs *pflag.FlagSet, p *string, what string) {
	fs.StringVar(p, "source", "", "who wrote the "+what+", `agent` or user (default: user when the method is human, else agent)")
}

// sourceOf returns the source given, or the one who's method implies.
func sourceOf(a *app, given string, who logbook.Who) (logbook.Source, error) {
	if s, ok := view.SourceOf(given, who); ok {
		return s, nil
	}
	return "", usageErrorf(a.cmd, "%s: --source %q is not agent or user", commandName(a.cmd), given)
}

func (c *bearingTakeCommand) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.reading, "reading", "", "the reading, `TEXT`: what the observations mean")
	sourceFlag(fs, &c.source, "reading")
	fs.StringArrayVar(&c.observations, "observation", nil, "add the observation JSON in `FILE` (- for stdin; repeatable)")
}

func (c *bearingTakeCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 0 {
		return usageErrorf(a.cmd, "bearing: unexpected arguments %q (quote the reading: --reading \"TEXT\")", args)
	}
	if strings.TrimSpace(c.reading) == "" {
		return usageErrorf(a.cmd, "bearing: --reading TEXT is required: say what the observations mean")
	}
	stdins := 0
	for _, name := range c.observations {
		if name == "-" {
			stdins++
		}
	}
	if stdins > 1 {
		return usageErrorf(a.cmd, "bearing: standard input (--observation -) can be read only once")
	}
	var extra []helm.Observation
	for _, name := range c.observations {
		data, err := a.readInput(name)
		if err != nil {
			return err
		}
		o, err := view.ParseObservation(data, "--observation "+name)
		if err != nil {
			return err
		}
		extra = append(extra, o)
	}
	v, who, err := a.activeVoyage(ctx, true)
	if err != nil {
		return err
	}
	source, err := sourceOf(a, c.source, who)
	if err != nil {
		return err
	}
	e, err := v.TakeBearing(ctx, c.reading, who, &helm.BearingOptions{Observations: extra, Source: source})
	if err != nil {
		return err
	}
	if a.g.json {
		return writeJSON(a.stdout, e)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Bearing %d taken for voyage %s\n", e.N, short(v.ID()))
	writeBearing(&b, e.Bearing)
	_, err = fmt.Fprint(a.stdout, b.String())
	return err
}

func writeBearing(b *strings.Builder, br *logbook.Bearing) {
	for _, o := range br.Observations {
		fmt.Fprintf(b, "  Mark: %s\n", printable(o.Label))
	}
	fmt.Fprintf(b, "  Reading: %s\n", block(br.Reading.Text, "           "))
}

// bearingChallengeCommand challenges a bearing's reading.
type bearingChallengeCommand struct {
	with, reading, source string
}

func (c *bearingChallengeCommand) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.with, "with", "", "the `FEEDBACK` that challenges the reading")
	fs.StringVar(&c.reading, "reading", "", "the new reading, `TEXT`")
	sourceFlag(fs, &c.source, "new reading")
}

func (c *bearingChallengeCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) != 1 {
		return usageErrorf(a.cmd, "bearing challenge: the number N of one bearing expected (see helm log), got %q", args)
	}
	n, err := parseNumber(a, args[0], "N")
	if err != nil {
		return err
	}
	if strings.TrimSpace(c.with) == "" || strings.TrimSpace(c.reading) == "" {
		return usageErrorf(a.cmd, "bearing challenge: both --with FEEDBACK and --reading TEXT are required")
	}
	v, who, err := a.activeVoyage(ctx, true)
	if err != nil {
		return err
	}
	source, err := sourceOf(a, c.source, who)
	if err != nil {
		return err
	}
	e, err := v.Challenge(ctx, n, helm.Challenge{Feedback: c.with, Reading: c.reading, Source: source}, who)
	if err != nil {
		return err
	}
	if a.g.json {
		return writeJSON(a.stdout, e)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Bearing %d challenged on voyage %s\n", e.N, short(v.ID()))
	writeBearing(&b, e.Bearing)
	if h := e.Bearing.Reading.History; len(h) > 0 {
		fmt.Fprintf(&b, "  Was: %s\n", block(h[len(h)-1].Text, "       "))
	}
	_, err = fmt.Fprint(a.stdout, b.String())
	return err
}
