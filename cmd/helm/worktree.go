package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

// voyageCurrentCommand says which voyage a command would act on, and why.
type voyageCurrentCommand struct{}

func (*voyageCurrentCommand) Flags(*pflag.FlagSet) {}

// currentVoyage is the --json form of voyage current.
type currentVoyage struct {
	Voyage helm.VoyageInfo `json:"voyage"`
	Why    string          `json:"why"`
}

func (*voyageCurrentCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 0 {
		return usageErrorf(a.cmd, "voyage current takes no arguments, got %q", args)
	}
	id, why, err := a.chooseVoyage(ctx, helm.ListActive, "active", nil)
	if err != nil {
		return err
	}
	v, err := a.home.Voyage(ctx, id)
	if err != nil {
		return err
	}
	a.voyages = append(a.voyages, v)
	info := v.Info()
	if a.g.json {
		return writeJSON(a.stdout, currentVoyage{Voyage: info, Why: why})
	}
	_, err = fmt.Fprintf(a.stdout, "%s  %s\n  (%s)\n", info.ID, printable(info.Intent), printable(why))
	return err
}

// voyageCleanCommand removes the worktree of a voyage that is no longer
// active; without --force, only one that holds nothing removing it would
// lose (helm.Voyage.RemoveWorktree looks).
type voyageCleanCommand struct{ force bool }

func (c *voyageCleanCommand) Flags(fs *pflag.FlagSet) {
	fs.BoolVar(&c.force, "force", false, "remove the worktree whatever it holds: changed, untracked and ignored files, commits no branch keeps (they are lost)")
}

func (c *voyageCleanCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 1 {
		return usageErrorf(a.cmd, "voyage clean: one VOYAGE at most, got %q", args)
	}
	if len(args) == 1 {
		if a.g.voyage != "" && a.g.voyage != args[0] {
			return usageErrorf(a.cmd, "voyage clean: the voyage is given both as --voyage %s and as %s; give it one way", a.g.voyage, args[0])
		}
		a.g.voyage = args[0]
	}
	v, err := a.openVoyageAmong(ctx, helm.ListAll, "finished voyage with a worktree", func(i helm.VoyageInfo) bool {
		return i.Worktree != "" && i.WorktreeRemoved.IsZero() && i.Status != logbook.StatusActive
	})
	if err != nil {
		return err
	}
	info := v.Info()
	switch {
	case info.Worktree == "":
		return usageErrorf(a.cmd, "voyage clean: voyage %s has no worktree of its own", short(info.ID))
	case !info.WorktreeRemoved.IsZero():
		return usageErrorf(a.cmd, "voyage clean: the worktree of voyage %s was removed at %s", short(info.ID), stamp(info.WorktreeRemoved))
	case info.Status == logbook.StatusActive:
		return &usageError{Err: fmt.Errorf("voyage clean: voyage %s is active: its worktree is in use", short(info.ID)),
			Hint: "helm --voyage " + short(info.ID) + ` complete --summary "TEXT", first`}
	}
	who, err := a.who(ctx, v, false)
	if err != nil {
		return err
	}
	git, err := a.runner(who.Identity, "")
	if err != nil {
		return err
	}
	if err := v.RemoveWorktree(ctx, who, &helm.RemoveWorktreeOptions{Force: c.force, Git: git}); err != nil {
		var held *helm.WorktreeError
		if errors.As(err, &held) {
			return &hinted{Err: err, Hint: keepWorkHint(info.ID, held)}
		}
		return err
	}
	if a.g.json {
		return writeJSON(a.stdout, v.Info())
	}
	_, err = fmt.Fprintf(a.stdout, "Removed the worktree %s of voyage %s (branch %s kept)\n", printable(info.Worktree), short(info.ID), printable(info.Branch))
	return err
}

// keepWorkHint is the Try line of a worktree clean refused: how to keep
// what it listed, or force.
func keepWorkHint(id string, held *helm.WorktreeError) string {
	var keep []string
	if held.Unkept > 0 {
		keep = append(keep, "git -C "+commandLine([]string{held.Path})+" branch NAME "+held.Head[:min(len(held.Head), 12)]+" (keeps the commits)")
	}
	if len(held.Modified)+len(held.Untracked) > 0 {
		keep = append(keep, "commit the files listed")
	}
	if len(held.Ignored) > 0 {
		keep = append(keep, "move the ignored files you need out of it")
	}
	return strings.Join(keep, ", ") + "; or helm voyage clean " + short(id) + " --force (loses what is listed)"
}
