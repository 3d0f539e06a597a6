package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/report"
)

func newReportCmd(a *app) *cobra.Command {
	c := leafCmd(a, &cobra.Command{
		Use:   "report [VOYAGE] [--format md|json]",
		Short: "summarise a voyage, in markdown to paste into a pull request",
		Long: `Summarise a voyage: its intent, kind and status, who took part (with
their roles and entries), its lifecycle and duration, its bearings with
their readings (and how often each was challenged), its actions with what
they left (commits, pushed branches, pull requests with their links),
the actions that failed or were refused, its notes, its judgements, its
sub-voyages, and the files changed between the commit it started from and
its last commit, with the lines added and deleted as git counts them.

The default format is markdown, for a pull request's description;
--format json (or --json) prints the same as JSON. git runs in the
directory the voyage started in, or in the current one if that is gone.
The report summarises; helm log tells every entry.

VOYAGE is an id or an unambiguous prefix, as --voyage takes; without
either, the only active voyage.`,
		Example: "  helm report a3b\n  helm report a3b > pr-body.md\n  helm --voyage a3b report --format json",
	}, &reportCommand{})
	fixedValues(c, "format", "md", "json")
	return c
}

type reportCommand struct{ format string }

func (c *reportCommand) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.format, "format", "md", "output `FORMAT`: md (markdown) or json")
}

func (c *reportCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 1 {
		return usageErrorf(a.cmd, "report: one VOYAGE at most, got %d arguments %q", len(args), args)
	}
	switch c.format {
	case "md", "json":
	default:
		return usageErrorf(a.cmd, "report: --format %q is not md or json", c.format)
	}
	if a.g.json && a.cmd.Flags().Changed("format") && c.format != "json" {
		return usageErrorf(a.cmd, "report: --json and --format %s disagree; give one of them", c.format)
	}
	arg := firstArg(args)
	v, err := a.openReadVoyage(ctx, arg)
	if err != nil {
		return err
	}
	h, err := a.openHome()
	if err != nil {
		return err
	}
	r, err := report.Of(ctx, h, v.ID(), &report.Options{DiffStat: a.diffStat})
	if err != nil {
		return err
	}
	if d := r.Diff; d.Missing != "" && d.Base != "" && d.Head != "" {
		fmt.Fprintf(a.stderr, "helm: report: %s\n", printable(d.Missing))
	}
	if len(r.Unreadable) > 0 {
		fmt.Fprintf(a.stderr, "helm: report: %d voyage(s) could not be read, so sub-voyages among them are not listed: %s (helm --voyage ID voyage verify says why)\n",
			len(r.Unreadable), strings.Join(r.Unreadable, ", "))
	}
	if a.g.json || c.format == "json" {
		return writeJSON(a.stdout, r)
	}
	return r.WriteMarkdown(a.stdout)
}

// diffStat lists the files changed between commits base and head, as git
// counts them in dir (the voyage's recorded top directory) or, when dir
// is gone, in the working directory.
func (a *app) diffStat(ctx context.Context, dir, base, head string) ([]report.FileChange, error) {
	r, err := a.runner("", "")
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(dir); dir != "" && err == nil && fi.IsDir() {
		r.Dir = dir
	}
	stats, err := r.DiffStat(ctx, base, head)
	if err != nil {
		return nil, err
	}
	out := make([]report.FileChange, len(stats))
	for i, s := range stats {
		out[i] = report.FileChange{Path: s.Path, From: s.From, Added: s.Added, Deleted: s.Deleted, Binary: s.Binary}
	}
	return out, nil
}

// openVoyageArg opens the voyage a command acting on one voyage names by
// its optional positional VOYAGE (arg) or --voyage; both naming different
// voyages is a usage error. With neither, it resolves the voyage as
// openVoyage does (HELM_VOYAGE, else the only active voyage). It is closed
// when the command ends.
// firstArg is a command's optional positional argument ("" when none).
func firstArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

func (a *app) openVoyageArg(ctx context.Context, arg string) (*helm.Voyage, error) {
	if arg == "" {
		return a.openVoyage(ctx)
	}
	id, err := a.voyageIDArg(ctx, arg)
	if err != nil {
		return nil, err
	}
	h, err := a.openHome()
	if err != nil {
		return nil, err
	}
	v, err := h.Voyage(ctx, id)
	if err != nil {
		return nil, err
	}
	a.voyages = append(a.voyages, v)
	return v, nil
}

// voyageIDArg is the id of the voyage an optional positional VOYAGE
// names, which must agree with --voyage when both are given; without
// VOYAGE, the voyage voyageID chooses. It opens no voyage (verify reads
// one too damaged to open).
func (a *app) voyageIDArg(ctx context.Context, arg string) (string, error) {
	if arg == "" {
		return a.voyageID(ctx)
	}
	h, err := a.openHome()
	if err != nil {
		return "", err
	}
	id, err := resolveVoyage(ctx, h, "VOYAGE", arg)
	if err != nil {
		return "", err
	}
	if a.g.voyage != "" {
		flag, err := resolveVoyage(ctx, h, "--voyage", a.g.voyage)
		if err != nil {
			return "", err
		}
		if flag != id {
			return "", usageErrorf(a.cmd, "%s: --voyage %s and VOYAGE %s name different voyages (%s and %s); give one of them",
				commandName(a.cmd), a.g.voyage, arg, short(flag), short(id))
		}
	}
	return id, nil
}
