package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
)

func newLogCmd(a *app) *cobra.Command {
	return leafCmd(a, &cobra.Command{
		Use:   "log [VOYAGE] [--who ID] [--evidence] [--json] [--follow] [--until-damage]",
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
the completion, and {"entry":…} for each entry (again when it changes).

--until-damage tells what can still be read of a DAMAGED voyage (one
helm voyage verify finds damaged, which no other command reads): the
story up to the last whole unit before the first damage, between two
lines that begin "DAMAGED: shown up to seq N", the first saying where
the damage is and why. Nothing after the damage is shown, whatever it
says. It exits 1 even so: a story cut short is not the voyage's story,
and a script must not take it for one (helm voyage salvage carries what
is shown into a new voyage). A voyage verify finds intact is told whole,
exit 0. With --json, {"voyage":…, "entries":[…], "damaged":{…}}.

On a terminal the story goes through a pager (HELM_PAGER, then PAGER,
then less with LESS=FRX; --no-pager or PAGER=cat for none; --follow never
pages), its headings are coloured (NO_COLOR=1 for none) and its times read
"2 minutes ago" (--absolute for RFC 3339 in UTC). Output to a pipe or a
file is always plain, with absolute times in UTC.`,
		Example: "  helm --voyage a3b log\n  helm log --evidence\n  helm log --who bob\n  helm log --follow\n  helm log --until-damage a3b",
	}, &logCommandLeaf{})
}

type logCommandLeaf struct {
	evidence    bool
	follow      bool
	untilDamage bool
	who         string
}

func (c *logCommandLeaf) Flags(fs *pflag.FlagSet) {
	fs.BoolVar(&c.evidence, "evidence", false, "print each bearing's sightings under it")
	fs.BoolVar(&c.follow, "follow", false, "keep printing each entry as it is recorded, until the voyage is completed")
	fs.StringVar(&c.who, "who", "", "show only the entries of identity `ID`")
	fs.BoolVar(&c.untilDamage, "until-damage", false, "tell what can still be read of a damaged voyage, up to its first damage, clearly marked (exit 1 when damaged)")
}

func (c *logCommandLeaf) Run(ctx context.Context, a *app, args []string) error {
	if c.untilDamage {
		if c.follow || c.evidence || c.who != "" {
			return usageErrorf(a.cmd, "log --until-damage tells the story alone: not with --follow, --evidence or --who")
		}
		return logUntilDamage(ctx, a, args)
	}
	if len(args) > 1 {
		return usageErrorf(a.cmd, "log: one VOYAGE at most, got %d arguments %q", len(args), args)
	}
	v, err := a.openReadVoyage(ctx, firstArg(args))
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
	// On a terminal: paged, coloured, times relative (terminal.go).
	style := logStyle(a.colour(), !a.g.absolute, a.now())
	return a.page(style, func(w io.Writer) error { return view.WriteLog(ctx, w, v, c.evidence, c.who) })
}

// untilDamageJSON is the --json form of `helm log --until-damage`.
type untilDamageJSON struct {
	Voyage  projection.VoyageView `json:"voyage"`
	Entries []logbook.Entry       `json:"entries"`
	// Damaged is the first damage, nil when the voyage is intact; Shown
	// the seq of the last event shown.
	Damaged *helm.DamageError `json:"damaged,omitempty"`
	Shown   uint64            `json:"shown_up_to_seq"`
}

// logUntilDamage tells the story of a voyage up to its first damage
// (Home.ReadIntact), between two DAMAGED lines when it is damaged, and
// then fails (exit 1): a story cut short is not the voyage's story.
func logUntilDamage(ctx context.Context, a *app, args []string) error {
	if len(args) > 1 {
		return usageErrorf(a.cmd, "log --until-damage: one VOYAGE at most, got %d arguments %q", len(args), args)
	}
	id, err := a.readVoyageID(ctx, firstArg(args))
	if err != nil {
		return err
	}
	var st projection.State
	var last uint64
	damage, err := a.home.ReadIntact(ctx, id, nil, func(e helm.Event) error {
		last = e.Seq
		return st.Apply(e.Seq, &e)
	})
	if err != nil {
		return err
	}
	entries := st.Entries
	if entries == nil {
		entries = []logbook.Entry{}
	}
	if a.g.json {
		st.Voyage.Seq = last
		if err := writeJSON(a.stdout, untilDamageJSON{Voyage: st.Voyage, Entries: entries, Damaged: damage, Shown: last}); err != nil {
			return err
		}
	} else {
		var b strings.Builder
		banner := ""
		if damage != nil {
			banner = fmt.Sprintf("DAMAGED: shown up to seq %d; ", last)
			fmt.Fprintf(&b, "%sthe first damage is %s\n\n", banner, printable(damageLine(damage)))
		}
		v := st.Voyage
		h := logbook.Header{Intent: v.Intent, Identity: v.Identity, Created: v.Created,
			Status: logbook.Status(projection.NormalStatus(v.Status, v.Outcome)), CompletedAt: v.CompletedAt,
			Outcome: logbook.Outcome(v.Outcome), Summary: v.Summary}
		for _, t := range v.Lifecycle {
			h.Lifecycle = append(h.Lifecycle, logbook.Change{Status: logbook.Status(t.Status), At: t.At, Who: t.Who, Reason: t.Reason})
		}
		if err := logbook.WriteStory(&b, h, entries); err != nil {
			return err
		}
		if damage != nil {
			fmt.Fprintf(&b, "\n%snothing recorded after it is shown (voyage %s)\n", banner, id)
		}
		if _, err := io.WriteString(a.stdout, b.String()); err != nil {
			return err
		}
	}
	if damage == nil {
		return nil
	}
	return &hinted{Err: fmt.Errorf("voyage %s is damaged: its story is shown up to seq %d, before the first damage", id, last),
		Hint: "helm voyage salvage " + id + "   # carries what is shown into a new voyage"}
}

// damageLine says where a damage is and why, in one line.
func damageLine(d *helm.DamageError) string {
	var b strings.Builder
	if d.Seq != 0 {
		fmt.Fprintf(&b, "at record %d", d.Seq)
	} else {
		b.WriteString("in the voyage as a whole")
	}
	if d.File != "" {
		fmt.Fprintf(&b, " (%s", d.File)
		if d.Offset != 0 {
			fmt.Fprintf(&b, " at offset %d", d.Offset)
		}
		b.WriteString(")")
	}
	reason := d.Reason
	if reason == "" && d.Err != nil {
		reason = d.Err.Error()
	}
	return b.String() + ": " + reason
}
