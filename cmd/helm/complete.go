package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
)

func completeCommand() *command {
	return &command{
		name:    "complete",
		summary: "complete the voyage with an outcome and a summary",
		usage:   "complete [--summary TEXT] [--outcome completed|blocked|failed|partial|cancelled]",
		help: `Complete the voyage. Nothing more is observed, taken or performed on it
afterwards; its logbook stays readable with helm log.`,
		example: `helm complete --summary "Fixed null check in widget init. PR #45 merged."`,
		newLeaf: func() leaf { return &completeCommandLeaf{} },
	}
}

type completeCommandLeaf struct{ summary, outcome string }

func (c *completeCommandLeaf) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.summary, "summary", "", "what came of the voyage, as `TEXT`")
	fs.StringVar(&c.outcome, "outcome", string(helm.OutcomeCompleted), "how it ended, `OUTCOME`: completed, blocked, failed, partial or cancelled")
}

func (c *completeCommandLeaf) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 0 {
		return usageErrorf(a.path, "complete: unexpected arguments %q (quote the summary: --summary \"TEXT\")", args)
	}
	v, who, err := a.activeVoyage(ctx, false)
	if err != nil {
		return err
	}
	if err := v.Complete(ctx, helm.Outcome(c.outcome), c.summary, who); err != nil {
		return err
	}
	info := v.Info()
	if a.g.json {
		return writeJSON(a.stdout, info)
	}
	var b strings.Builder
	if info.Outcome == helm.OutcomeCompleted {
		fmt.Fprintf(&b, "Voyage %s completed\n", short(v.ID()))
	} else {
		fmt.Fprintf(&b, "Voyage %s completed: %s\n", short(v.ID()), info.Outcome)
	}
	if info.Summary != "" {
		fmt.Fprintf(&b, "Summary: %s\n", block(info.Summary, "         "))
	}
	_, err = fmt.Fprint(a.stdout, b.String())
	return err
}
