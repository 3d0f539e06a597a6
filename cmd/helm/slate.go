package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm/cmd/helm/internal/markkind"
	"github.com/helmlog/helm/logbook"
)

func newSlateCmd(a *app) *cobra.Command {
	erase := group(a, &cobra.Command{
		Use:   "erase MARK-KIND ARGS...",
		Short: "take one mark off the slate",
		Long: `Take a mark off the slate. The mark is named with the same kind,
arguments and flags that observed it.`,
		Example: "  helm slate erase rust-project .",
	})
	for _, k := range markkind.Kinds {
		erase.AddCommand(markCompletions(k, leafCmd(a, &cobra.Command{
			Use:     k.Name + " " + k.Args,
			Short:   k.Summary,
			Example: "  helm slate erase " + k.Example,
		}, &slateEraseCommand{kind: k})))
	}
	c := group(a, &cobra.Command{
		Use:     "slate list | erase MARK-KIND ARGS... | clear",
		Short:   "list, erase or clear the observations gathered since the last bearing",
		Example: "  helm slate list --json",
	})
	c.AddCommand(
		leafCmd(a, &cobra.Command{
			Use: "list [VOYAGE]", Short: "list the observations on the slate",
			Example: "  helm slate list",
		}, &slateListCommand{}),
		erase,
		leafCmd(a, &cobra.Command{
			Use: "clear", Short: "wipe the slate without taking a bearing",
			Example: "  helm slate clear",
		}, &slateClearCommand{}),
	)
	return c
}

// slateListCommand lists the slate.
type slateListCommand struct{}

func (*slateListCommand) Flags(*pflag.FlagSet) {}

func (*slateListCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 1 {
		return usageErrorf(a.cmd, "slate list: one VOYAGE at most, got %d arguments %q", len(args), args)
	}
	v, err := a.openReadVoyage(ctx, firstArg(args))
	if err != nil {
		return err
	}
	slate := v.Slate()
	if a.g.json {
		if slate == nil {
			slate = []logbook.ObservationRecord{}
		}
		return writeJSON(a.stdout, slate)
	}
	if len(slate) == 0 {
		fmt.Fprintf(a.stdout, "The slate of voyage %s is empty.\n", short(v.ID()))
		return nil
	}
	fmt.Fprintf(a.stdout, "Slate of voyage %s: %s\n", short(v.ID()), plural(len(slate), "observation"))
	for _, o := range slate {
		fmt.Fprintf(a.stdout, "  %s  (artifact %s, observed %s)\n", printable(o.Label), short(o.Artifact), stamp(o.ObservedAt))
	}
	return nil
}

// slateEraseCommand takes one mark off the slate.
type slateEraseCommand struct {
	kind *markkind.Kind
	p    markkind.Params
}

func (c *slateEraseCommand) Flags(fs *pflag.FlagSet) {
	if c.kind.Flags != nil {
		c.kind.Flags(fs, &c.p)
	}
}

func (c *slateEraseCommand) Run(ctx context.Context, a *app, args []string) error {
	v, who, err := a.activeVoyage(ctx, false)
	if err != nil {
		return err
	}
	m, err := a.buildMark(ctx, c.kind, &c.p, args)
	if err != nil {
		return err
	}
	if err := v.Erase(ctx, m.Key(), who); err != nil {
		return err
	}
	if a.g.json {
		return writeJSON(a.stdout, map[string]string{"voyage": v.ID(), "erased": m.Key(), "label": m.String()})
	}
	_, err = fmt.Fprintf(a.stdout, "Erased %s from the slate of voyage %s\n", printable(m.String()), short(v.ID()))
	return err
}

// slateClearCommand wipes the slate.
type slateClearCommand struct{}

func (*slateClearCommand) Flags(*pflag.FlagSet) {}

func (*slateClearCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 0 {
		return usageErrorf(a.cmd, "slate clear takes no arguments, got %q (to take one mark off, use slate erase)", args)
	}
	v, who, err := a.activeVoyage(ctx, false)
	if err != nil {
		return err
	}
	n := len(v.Slate())
	if err := v.Wipe(ctx, who); err != nil {
		return err
	}
	if a.g.json {
		return writeJSON(a.stdout, map[string]any{"voyage": v.ID(), "wiped": n})
	}
	_, err = fmt.Fprintf(a.stdout, "Wiped the slate of voyage %s (%s)\n", short(v.ID()), plural(n, "observation"))
	return err
}
