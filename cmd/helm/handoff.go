package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm/logbook"
)

func newVoyageHandoffCmd(a *app) *cobra.Command {
	return leafCmd(a, &cobra.Command{
		Use:   "handoff [VOYAGE] --to ID [--why TEXT]",
		Short: "hand a voyage to another identity from now on",
		Long: `Hand an active voyage to another identity. The handoff is an entry of
the story: who handed it off (--as, --role, --method), from which
identity, to which, and why. From that entry on the voyage's identity is
the new one: helm voyage show and helm voyage list name it, what is
recorded without --as or HELM_IDENTITY is recorded as it, and actions
that reach GitHub use its gh configuration ($HELM_HOME/gh-config/ID/,
set up with helm auth login --as ID). Earlier entries keep the identity
they were recorded with. --as or HELM_IDENTITY still name whoever acts:
an entry recorded as the old identity afterwards is recorded as it, with
the old identity's credentials (credentials never cross identities).

A handoff changes no method: each later entry records the method its
recorder gives. It is guarded as the action "handoff": by default only a
person (method exactly human) hands a voyage off, and an agent's attempt
is refused (exit 4) and recorded. A rule in policy.toml that matches
action = "handoff" decides instead (helm policy check handoff explains);
a rule that asks for confirmation needs --yes.

A voyage that is paused is resumed first; a closed voyage keeps the
identity it closed with (exit 2).`,
		Example: `  helm voyage handoff --to ann --why "taking over the review" --as ann --method human
  helm voyage handoff a3b --to bob-agent --from claude-a --why "new session"`,
	}, &voyageHandoffCommand{})
}

// voyageHandoffCommand hands a voyage to another identity.
type voyageHandoffCommand struct {
	to, from, why string
	yes           bool
}

func (c *voyageHandoffCommand) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.to, "to", "", "the identity `ID` the voyage is handed to")
	fs.StringVar(&c.from, "from", "", "the identity `ID` the voyage is expected to have now: refused if it has another")
	fs.StringVar(&c.why, "why", "", "why the voyage is handed off, as `TEXT` (recorded)")
	fs.BoolVar(&c.yes, "yes", false, "confirm a handoff that a guard rule lets run only when a person agrees")
}

// handoffJSON is the --json form of voyage handoff.
type handoffJSON struct {
	Voyage string        `json:"voyage"`
	Entry  logbook.Entry `json:"entry"`
}

func (c *voyageHandoffCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 1 {
		return usageErrorf(a.cmd, "voyage handoff: one VOYAGE at most, got %q", args)
	}
	if strings.TrimSpace(c.to) == "" {
		return usageErrorf(a.cmd, "voyage handoff: name the identity the voyage is handed to with --to ID")
	}
	v, err := a.openVoyageArg(ctx, firstArg(args))
	if err != nil {
		return err
	}
	who, err := a.who(ctx, v, true)
	if err != nil {
		return err
	}
	id := v.ID()
	e, err := a.home.Handoff(ctx, id, who, logbook.Handoff{To: c.to, From: c.from, Why: c.why, Confirmed: c.yes})
	if err != nil {
		return err
	}
	if a.g.json {
		return writeJSON(a.stdout, handoffJSON{Voyage: id, Entry: e})
	}
	_, err = fmt.Fprintf(a.stdout, "Voyage %s handed off from %s to %s (entry %d)\n", id, printable(e.Handoff.From), printable(e.Handoff.To), e.N)
	return err
}
