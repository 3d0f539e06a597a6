package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/projection"
)

func newVoyageForkCmd(a *app) *cobra.Command {
	return leafCmd(a, &cobra.Command{
		Use:   "fork [VOYAGE] --at N INTENT",
		Short: "start a voyage whose history is entries 1..N of another, and print its id",
		Long: `Start a voyage that begins where another stood once its entry N was
recorded: every record of VOYAGE up to that entry's is carried into the
new voyage (with the bytes of the artifacts they stow), which then goes
on independently — a what-if. The fork names its origin, the entry and
the origin's head there (SEQ:HEX); helm voyage show says so, and helm
voyage verify checks the carried records against the origin while this
home holds it. An artifact the origin jettisoned stays jettisoned in the
fork. Without VOYAGE (or --voyage), the voyage commands act on here.
Prints the new voyage's id, as voyage new does; the identity is the
forker's (--as, HELM_IDENTITY, config.toml).`,
		Example: `  helm voyage fork a3b --at 4 "What if we guard the empty input instead"`,
	}, &voyageForkCommand{})
}

// voyageForkCommand forks a voyage.
type voyageForkCommand struct {
	at   int
	kind string
}

func (c *voyageForkCommand) Flags(fs *pflag.FlagSet) {
	fs.IntVar(&c.at, "at", 0, "fork at entry `N` of the voyage's story (required)")
	fs.StringVar(&c.kind, "kind", string(helm.OpenWaters), "the fork's `KIND`: open-waters or resolve-issue")
}

func (c *voyageForkCommand) Run(ctx context.Context, a *app, args []string) error {
	var arg, intent string
	switch len(args) {
	case 1:
		intent = args[0]
	case 2:
		arg, intent = args[0], args[1]
	case 0:
		return usageErrorf(a.cmd, "voyage fork: say what the fork is for (INTENT)")
	default:
		return usageErrorf(a.cmd, "voyage fork: VOYAGE and one INTENT expected, got %d arguments (quote the intent)", len(args))
	}
	if c.at < 1 {
		return usageErrorf(a.cmd, "voyage fork: --at N names the entry the fork is taken at (1 or more; helm log shows the numbers)")
	}
	origin, err := a.voyageIDArg(ctx, arg)
	if err != nil {
		return err
	}
	who, err := a.whoStarts()
	if err != nil {
		return err
	}
	r, err := a.runner("", "")
	if err != nil {
		return err
	}
	ws, wsErr := r.Workspace(ctx)
	opts := startIn("", ws, wsErr)
	opts.ForkOf, opts.ForkAt = origin, c.at
	v, err := a.home.Start(ctx, intent, helm.Kind(c.kind), who, &opts)
	if err != nil {
		return err
	}
	a.voyages = append(a.voyages, v)
	if a.g.json {
		return writeJSON(a.stdout, v.Info())
	}
	_, err = fmt.Fprintln(a.stdout, v.ID())
	return err
}

func newVoyageSalvageCmd(a *app) *cobra.Command {
	return leafCmd(a, &cobra.Command{
		Use:   "salvage VOYAGE [--witness W]...",
		Short: "carry what is intact of a damaged voyage into a new one, and print its id",
		Long: `Carry every record of a damaged voyage up to its first damage (as helm
voyage verify finds it, with the witnesses given) into a new voyage, with
the bytes of every artifact those records stow that are not damaged, and
print the new voyage's id. The new voyage names the damaged one and its
head at the last record carried, and records what was lost and where:
the first damaged record, file, offset and why, how many records and
bytes were not carried, the artifacts whose bytes were damaged (their
events carried, jettisoned in the new voyage). Nothing after the damage
is carried, whatever it says; with witnesses, nothing after the last
witness that still holds. The damaged voyage is only read, and left as
it was. A voyage verify finds no damage in is refused (fork it instead).
What was lost is printed on stderr; --json prints the whole report.`,
		Example: "  helm voyage salvage a3b\n  helm voyage salvage a3b --witness ~/src/widgets",
	}, &voyageSalvageCommand{})
}

// voyageSalvageCommand salvages a damaged voyage.
type voyageSalvageCommand struct{ voyageVerifyCommand }

func (c *voyageSalvageCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) != 1 {
		return usageErrorf(a.cmd, "voyage salvage: one VOYAGE expected (the damaged one), got %d arguments", len(args))
	}
	opts, err := c.options(a)
	if err != nil {
		return err
	}
	from, err := a.voyageIDArg(ctx, args[0])
	if err != nil {
		return err
	}
	who, err := a.whoStarts()
	if err != nil {
		return err
	}
	v, err := a.home.Salvage(ctx, from, who, opts)
	if err != nil {
		return err
	}
	a.voyages = append(a.voyages, v)
	info := v.Info()
	if a.g.json {
		return writeJSON(a.stdout, info)
	}
	if o := info.Salvage; o != nil && o.Lost != nil {
		fmt.Fprintf(a.stderr, "Salvaged voyage %s up to record %d (%s) into voyage %s\nLost: %s\n",
			o.Voyage, o.Seq, entries(info.Counts.Entries), info.ID, printable(lossLine(o.Lost)))
	}
	_, err = fmt.Fprintln(a.stdout, info.ID)
	return err
}

// entries says how many entries: "1 entry", "2 entries".
func entries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}

// lossLine says in one line what a salvage lost.
func lossLine(l *projection.Loss) string {
	var b strings.Builder
	if l.Seq != 0 {
		fmt.Fprintf(&b, "from record %d", l.Seq)
	} else {
		b.WriteString("damage")
	}
	if l.File != "" {
		fmt.Fprintf(&b, " (%s", l.File)
		if l.Offset != 0 {
			fmt.Fprintf(&b, " at offset %d", l.Offset)
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, ": %s; not carried: %s, %s", l.Reason, plural(int(l.Records), "record"), size(l.Bytes))
	if len(l.Artifacts) > 0 {
		short := make([]string, len(l.Artifacts))
		for i, h := range l.Artifacts {
			short[i] = h[:min(len(h), 12)]
		}
		fmt.Fprintf(&b, "; %s damaged: %s", plural(len(l.Artifacts), "artifact"), strings.Join(short, ", "))
	}
	return b.String()
}
