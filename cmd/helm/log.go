package main

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
)

func newLogCmd(a *app) *cobra.Command {
	return leafCmd(a, &cobra.Command{
		Use:   "log [--json]",
		Short: "tell the voyage's story: its bearings and actions",
		Long: `Print the logbook: the voyage, then each bearing (its marks and reading)
and each action, in order. With --json, the voyage and its entries with
who took each one.`,
		Example: "  helm --voyage a3b log",
	}, &logCommandLeaf{})
}

type logCommandLeaf struct{}

func (*logCommandLeaf) Flags(*pflag.FlagSet) {}

// logJSON is the --json form of `helm log`.
type logJSON struct {
	Voyage  helm.VoyageInfo `json:"voyage"`
	Entries []helm.Entry    `json:"entries"`
}

func (*logCommandLeaf) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 0 {
		return usageErrorf(a.cmd, "log takes no arguments (choose the voyage with --voyage ID)")
	}
	v, err := a.openVoyage(ctx)
	if err != nil {
		return err
	}
	if a.g.json {
		out := logJSON{Voyage: v.Info(), Entries: v.Logbook()}
		if out.Entries == nil {
			out.Entries = []helm.Entry{}
		}
		return writeJSON(a.stdout, out)
	}
	return v.WriteStory(a.stdout)
}
