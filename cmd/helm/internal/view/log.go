package view

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/internal/safetext"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/story"
)

// The story of a voyage: as helm log and the log tool tell it, with the
// evidence under each bearing when asked, or as JSON.

// Log is the JSON form of a voyage's log: the voyage, and its entries
// with who recorded each.
type Log struct {
	Voyage  helm.VoyageInfo `json:"voyage"`
	Entries []logbook.Entry `json:"entries"`
}

// LogOf is the --json form of v's log: the entries of identity who, all
// when who is empty.
func LogOf(ctx context.Context, v *helm.Voyage, who string) (Log, error) {
	entries, err := Entries(ctx, v, nil)
	if err != nil {
		return Log{}, err
	}
	out := Log{Voyage: v.Info(), Entries: entries}
	if who != "" {
		out.Entries = slices.DeleteFunc(out.Entries, func(e logbook.Entry) bool { return e.Who.Identity != who })
	}
	if out.Entries == nil {
		out.Entries = []logbook.Entry{}
	}
	return out, nil
}

// Entries reads the entries of v opts chooses (nil: the story's), all of
// them, or the error that stopped the reading: what helm shows is never
// a story cut short.
func Entries(ctx context.Context, v *helm.Voyage, opts *helm.EntriesOptions) ([]logbook.Entry, error) {
	var out []logbook.Entry
	for e, err := range v.Entries(ctx, opts) {
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// WriteLog writes v's story: whole, or with each bearing's evidence, or
// only the entries of identity who.
func WriteLog(ctx context.Context, w io.Writer, v *helm.Voyage, evidence bool, who string) error {
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
	entries, err := Entries(ctx, v, nil)
	if err != nil {
		return err
	}
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
		if e.Step != nil && evidence {
			if err := writeStepEvidence(ctx, w, v, e.Step); err != nil {
				return err
			}
		}
		if e.Bearing == nil || !evidence {
			continue
		}
		for _, o := range e.Bearing.Observations {
			if _, err := fmt.Fprintf(w, "  Evidence of %s (artifact %s):\n", safetext.Line(o.Label), Short(o.Artifact)); err != nil {
				return err
			}
			if err := renderEvidence(ctx, w, v, o.Artifact, "    "); err != nil {
				return err
			}
		}
	}
	if who != "" && shown == 0 {
		_, err := fmt.Fprintf(w, "\n(no entries by %s)\n", safetext.Line(who))
		return err
	}
	return nil
}

// renderEvidence writes the sighting stored under hash, or what became of
// it.
func renderEvidence(ctx context.Context, w io.Writer, v *helm.Voyage, hash, indent string) error {
	info, err := FindArtifactInfo(ctx, v, hash)
	if err != nil {
		return err
	}
	if info.Status != logbook.ArtifactStowed {
		_, err := fmt.Fprintf(w, "%s%s\n", indent, GoneText(info))
		return err
	}
	sk, err := skimSighting(ctx, v, hash)
	if err != nil {
		return err
	}
	defer sk.Close()
	return renderSighting(w, sk, indent)
}

// stepEvidenceMax is the most of a step's stowed output --evidence
// prints: the artifact holds it whole (helm artifact show).
const stepEvidenceMax = 64 << 10

// writeStepEvidence writes what a step holds beyond its story line: the
// whole of a text longer than its first line (a prompt, an edit's diff),
// and a call's output, inline or from the artifact it was stowed in.
func writeStepEvidence(ctx context.Context, w io.Writer, v *helm.Voyage, s *logbook.Step) error {
	if t := strings.TrimRight(s.Text, "\n"); strings.Contains(t, "\n") {
		if _, err := fmt.Fprintf(w, "  Text:\n    %s\n", safetext.Block(t, "    ")); err != nil {
			return err
		}
	}
	r := s.Result
	if r == nil || s.Kind != logbook.StepTool && s.Kind != logbook.StepPermission {
		return nil
	}
	out := r.Output
	if r.Artifact != "" {
		rc, err := v.OpenArtifact(ctx, r.Artifact)
		if err != nil {
			_, err = fmt.Fprintf(w, "  Output (artifact %s): %s\n", Short(r.Artifact), safetext.Line(err.Error()))
			return err
		}
		b, err := io.ReadAll(io.LimitReader(rc, stepEvidenceMax+1))
		rc.Close()
		if err != nil {
			return fmt.Errorf("read the output of step %s (artifact %s): %w", s.ID, Short(r.Artifact), err)
		}
		out = string(b)
		if len(b) > stepEvidenceMax {
			out = string(b[:stepEvidenceMax]) + fmt.Sprintf("\n… (the first %d KiB; helm artifact show %s prints it all)", stepEvidenceMax>>10, Short(r.Artifact))
		}
		_, err = fmt.Fprintf(w, "  Output (artifact %s):\n", Short(r.Artifact))
		if err != nil {
			return err
		}
	} else if out == "" {
		return nil
	} else if _, err := io.WriteString(w, "  Output:\n"); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "    %s\n", safetext.Block(strings.TrimRight(out, "\n"), "    "))
	return err
}
