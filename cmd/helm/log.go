package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/story"
)

func newLogCmd(a *app) *cobra.Command {
	return leafCmd(a, &cobra.Command{
		Use:   "log [--who ID] [--evidence] [--json]",
		Short: "tell the voyage's story: its bearings and actions",
		Long: `Print the logbook: the voyage, then each bearing (its marks and reading)
and each action, in order. With --json, the voyage and its entries with
who took each one. An entry by another identity than the voyage's names
it (and its role); --who ID shows only that identity's entries, with their
numbers. --evidence prints under each bearing the sightings it sealed (as
helm sighting show does; a jettisoned one as "jettisoned: REASON").`,
		Example: "  helm --voyage a3b log\n  helm log --evidence\n  helm log --who bob",
	}, &logCommandLeaf{})
}

type logCommandLeaf struct {
	evidence bool
	who      string
}

func (c *logCommandLeaf) Flags(fs *pflag.FlagSet) {
	fs.BoolVar(&c.evidence, "evidence", false, "print each bearing's sightings under it")
	fs.StringVar(&c.who, "who", "", "show only the entries of identity `ID`")
}

// logJSON is the --json form of `helm log`.
type logJSON struct {
	Voyage  helm.VoyageInfo `json:"voyage"`
	Entries []helm.Entry    `json:"entries"`
}

func (c *logCommandLeaf) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 0 {
		return usageErrorf(a.cmd, "log takes no arguments (choose the voyage with --voyage ID)")
	}
	v, err := a.openVoyage(ctx)
	if err != nil {
		return err
	}
	if c.who != "" {
		if err := helm.ValidateIdentity(c.who); err != nil {
			return usageErrorf(a.cmd, "log: --who %q: %v", c.who, err)
		}
	}
	if a.g.json {
		return writeJSON(a.stdout, logOf(v, c.who))
	}
	return writeLog(ctx, a.stdout, v, c.evidence, c.who)
}

// logOf is the --json form of v's log: the entries of identity who, all
// when who is empty.
func logOf(v *helm.Voyage, who string) logJSON {
	out := logJSON{Voyage: v.Info(), Entries: v.Logbook()}
	if who != "" {
		out.Entries = slices.DeleteFunc(out.Entries, func(e helm.Entry) bool { return e.Who.Identity != who })
	}
	if out.Entries == nil {
		out.Entries = []helm.Entry{}
	}
	return out
}

// writeLog writes v's story: whole, or with each bearing's evidence, or
// only the entries of identity who.
func writeLog(ctx context.Context, w io.Writer, v *helm.Voyage, evidence bool, who string) error {
	if !evidence && who == "" {
		return story.WriteText(ctx, w, v)
	}
	return writeStoryWithEvidence(ctx, w, v, evidence, who)
}

// writeStoryWithEvidence writes the story with each bearing's sightings
// rendered under its entry (evidence), only the entries of identity who
// when it is set. The story's entries are its blocks after the header,
// one per logbook entry, in order. The sightings are streamed (as
// sighting show streams them), each as it comes.
func writeStoryWithEvidence(ctx context.Context, w io.Writer, v *helm.Voyage, evidence bool, who string) error {
	var text strings.Builder
	if err := story.WriteText(ctx, &text, v); err != nil {
		return err
	}
	entries := v.Logbook()
	blocks := strings.Split(strings.TrimSuffix(text.String(), "\n"), "\n\n")
	if len(blocks) != len(entries)+1 {
		return fmt.Errorf("voyage %s: the story has %d entries, the logbook %d", v.ID(), len(blocks)-1, len(entries))
	}
	if _, err := io.WriteString(w, blocks[0]+"\n"); err != nil {
		return err
	}
	shown := 0
	for i, e := range entries {
		if who != "" && e.Who.Identity != who {
			continue
		}
		shown++
		if _, err := io.WriteString(w, "\n"+blocks[i+1]+"\n"); err != nil {
			return err
		}
		if e.Bearing == nil || !evidence {
			continue
		}
		for _, o := range e.Bearing.Observations {
			if _, err := fmt.Fprintf(w, "  Evidence of %s (artifact %s):\n", printable(o.Label), short(o.Artifact)); err != nil {
				return err
			}
			if err := renderEvidence(ctx, w, v, o.Artifact, "    "); err != nil {
				return err
			}
		}
	}
	if who != "" && shown == 0 {
		_, err := fmt.Fprintf(w, "\n(no entries by %s)\n", printable(who))
		return err
	}
	return nil
}

// renderEvidence writes the sighting stored under hash, or what became of
// it.
func renderEvidence(ctx context.Context, w io.Writer, v *helm.Voyage, hash, indent string) error {
	info, err := findArtifactInfo(v, hash)
	if err != nil {
		return err
	}
	if info.Status != helm.ArtifactStowed {
		_, err := fmt.Fprintf(w, "%s%s\n", indent, goneText(info))
		return err
	}
	sk, err := skimSighting(ctx, v, hash)
	if err != nil {
		return err
	}
	defer sk.Close()
	return renderSighting(w, sk, indent)
}
