package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm/chain"
)

func newVoyageRechainCmd(a *app) *cobra.Command {
	return leafCmd(a, &cobra.Command{
		Use:   "rechain [VOYAGE] --why TEXT",
		Short: "move a voyage an older helm wrote onto the BLAKE3 chain, saying why",
		Long: `Move a voyage whose event log an older helm wrote onto the BLAKE3 chain.
An older log stores only a CRC32C chain, which detects accidents, not
edits: anyone who can write the home can recompute it. From the rechain
on, the log stores the BLAKE3 chain's links and every open checks them.

The rechain is recorded: an entry of the story saying who moved it, why,
and where the CRC32C chain ended (its last seq and sum). The chain's
definition does not change, so the head printed afterwards commits to the
whole history, the old records included: hold it somewhere the home's
writers cannot reach (a commit, a pull request, a chat) and any later
edit of those records is found by helm voyage verify --witness. It cannot
prove that no one edited them before the rechain.

Like compaction it changes no story, so a completed voyage may be
rechained too. A voyage on the BLAKE3 chain already (every voyage this
helm started), or in a shared store, is refused: exit 2.`,
		Example: `  helm voyage rechain a3b --why "witness its history from now on"`,
	}, &voyageRechainCommand{})
}

// voyageRechainCommand moves an older voyage onto the BLAKE3 chain.
type voyageRechainCommand struct{ why string }

func (c *voyageRechainCommand) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.why, "why", "", "why the voyage is rechained, as `TEXT` (recorded)")
}

// rechainJSON is the --json form of voyage rechain.
type rechainJSON struct {
	Voyage string     `json:"voyage"`
	Head   chain.Head `json:"head"`
	Since  uint64     `json:"chain_since"`
}

func (c *voyageRechainCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 1 {
		return usageErrorf(a.cmd, "voyage rechain: one VOYAGE at most, got %q", args)
	}
	if strings.TrimSpace(c.why) == "" {
		return usageErrorf(a.cmd, "voyage rechain: say why with --why TEXT (it is recorded)")
	}
	arg := firstArg(args)
	v, err := a.openVoyageArg(ctx, arg)
	if err != nil {
		return err
	}
	who, err := a.who(ctx, v, true)
	if err != nil {
		return err
	}
	id := v.ID()
	head, err := a.home.Rechain(ctx, id, who, c.why)
	if err != nil {
		return err
	}
	if a.g.json {
		return writeJSON(a.stdout, rechainJSON{Voyage: id, Head: head, Since: head.Seq})
	}
	_, err = fmt.Fprintf(a.stdout, "Voyage %s rechained: its log stores the BLAKE3 chain from seq %d on, and its head commits to the whole history\nHead: %s\n", id, head.Seq, head)
	return err
}
