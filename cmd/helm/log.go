package main

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/logbook"
)

func newLogCmd(a *app) *cobra.Command {
	return leafCmd(a, &cobra.Command{
		Use:   "log [--who ID] [--evidence] [--json] [--follow]",
		Short: "tell the voyage's story: its bearings and actions",
		Long: `Print the logbook: the voyage, then each bearing (its marks and reading)
and each action, in order. With --json, the voyage and its entries with
who took each one. An entry by another identity than the voyage's names
it (and its role); --who ID shows only that identity's entries, with their
numbers. --evidence prints under each bearing the sightings it sealed (as
helm sighting show does; a jettisoned one as "jettisoned: REASON").

--follow prints the story so far, then each entry as it is recorded, by
any process, until the voyage is completed (it prints the status lines
that changed and exits 0) or you press Ctrl-C (exit 130). An entry that
changes once recorded (a tool call's result arriving, a reading
challenged) is printed again, whole, under its same number. With --json,
--follow prints one JSON object a line: {"voyage":…} first and again at
the completion, and {"entry":…} for each entry (again when it changes).`,
		Example: "  helm --voyage a3b log\n  helm log --evidence\n  helm log --who bob\n  helm log --follow",
	}, &logCommandLeaf{})
}

type logCommandLeaf struct {
	evidence bool
	follow   bool
	who      string
}

func (c *logCommandLeaf) Flags(fs *pflag.FlagSet) {
	fs.BoolVar(&c.evidence, "evidence", false, "print each bearing's sightings under it")
	fs.BoolVar(&c.follow, "follow", false, "keep printing each entry as it is recorded, until the voyage is completed")
	fs.StringVar(&c.who, "who", "", "show only the entries of identity `ID`")
}

func (c *logCommandLeaf) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 0 {
		return usageErrorf(a.cmd, "log takes no arguments (choose the voyage with --voyage ID)")
	}
	v, err := a.openVoyage(ctx)
	if err != nil {
		return err
	}
	if c.who != "" {
		if err := logbook.ValidateIdentity(c.who); err != nil {
			return usageErrorf(a.cmd, "log: --who %q: %v", c.who, err)
		}
	}
	if c.follow {
		return view.FollowLog(ctx, a.stdout, v, view.FollowOptions{Evidence: c.evidence, Who: c.who, JSON: a.g.json})
	}
	if a.g.json {
		l, err := view.LogOf(ctx, v, c.who)
		if err != nil {
			return err
		}
		return writeJSON(a.stdout, l)
	}
	return view.WriteLog(ctx, a.stdout, v, c.evidence, c.who)
}
