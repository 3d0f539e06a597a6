package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/helmlog/helm/chain"
)

// voyageHeadCommand prints where a voyage's chain stands.
type voyageHeadCommand struct{}

func (*voyageHeadCommand) Flags(*pflag.FlagSet) {}

// headJSON is the --json form of voyage head: the head as package chain
// encodes it ({"seq":N,"hash":"HEX"}), with the voyage's id.
type headJSON struct {
	Voyage string `json:"voyage"`
	Seq    uint64 `json:"seq"`
	Hash   string `json:"hash"`
}

func jsonHead(id string, h chain.Head) headJSON {
	return headJSON{Voyage: id, Seq: h.Seq, Hash: h.Hash.String()}
}

func (*voyageHeadCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 1 {
		return usageErrorf(a.cmd, "voyage head: one VOYAGE at most, got %q", args)
	}
	arg := firstArg(args)
	v, err := a.openReadVoyage(ctx, arg)
	if err != nil {
		return err
	}
	h, err := v.Head(ctx)
	if err != nil {
		return err
	}
	if a.g.json {
		return writeJSON(a.stdout, jsonHead(v.ID(), h))
	}
	_, err = fmt.Fprintln(a.stdout, h)
	return err
}
