package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm/actions"
)

func newUndoCmd(a *app) *cobra.Command {
	return leafCmd(a, &cobra.Command{
		Use:   "undo N [--dry-run]",
		Short: "take back action N: perform its recorded inverse, linked to it",
		Long: `Take back the action of entry N by performing the inverse recorded with
it, as a new action that links to N: the story then shows N "undone by"
the new entry. The undo goes the way of any action: its intent is
recorded first, the guard rules are checked (as the action it performs),
and GitHub is reached with the identity's own credentials.

  commit                reset the branch to the commit's parent, its
                        changes staged again (git reset --soft); refused
                        while later commits follow it (undo them first).
                        Once the commit is pushed, a revert commit
                        instead (git revert), never a force push
  push                  delete the branch on the remote, when the push
                        created it and nobody pushed to it since
  create-pull-request   close the pull request
  comment-pull-request, comment-issue, reply-pull-request
                        delete the comment
  request-review        remove the review request
  create-issue          close the issue; close-issue: reopen it

A merge has no inverse, nor has a push that moved a branch already on
the remote: helm says so and records nothing. An undo is not undone:
perform the action again instead. Run the undo of a git action where the
action ran (its working tree, on the same branch).`,
		Example: "  helm undo 3 --dry-run\n  helm undo 3 --why \"opened against the wrong base\"",
	}, &undoCommand{})
}

// undoCommand performs the inverse of an entry's action.
type undoCommand struct {
	performing
}

func (c *undoCommand) Flags(fs *pflag.FlagSet) { c.performing.flags(fs) }

func (c *undoCommand) Run(ctx context.Context, a *app, args []string) error {
	n, err := numberArg(a, args, "entry number N (see helm log)")
	if err != nil {
		return err
	}
	v, who, err := a.activeVoyage(ctx, true)
	if err != nil {
		return err
	}
	inv, err := v.Undoable(ctx, n)
	if err != nil {
		return err
	}
	r, err := a.runner(who.Identity, "")
	if err != nil {
		return err
	}
	u, err := actions.FromInverse(ctx, r, inv)
	if errors.Is(err, actions.ErrInvalid) {
		// Recorded by a newer helm, or not by helm's actions.
		return &hinted{Err: err, Hint: "helm log --json, to see what entry " + args[0] + " recorded; take it back by hand"}
	}
	if err != nil {
		return err
	}
	return c.perform(ctx, a, v, who, u, n)
}
