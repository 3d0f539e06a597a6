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
	st, err := storyOf(ctx, v)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, st.header+"\n"); err != nil {
		return err
	}
	shown := 0
	for i, e := range st.entries {
		if who != "" && e.Who.Identity != who {
			continue
		}
		shown++
		if err := writeEntry(ctx, w, v, e, st.blocks[i], evidence); err != nil {
			return err
		}
	}
	if who != "" && shown == 0 {
		_, err := fmt.Fprintf(w, "\n(no entries by %s)\n", safetext.Line(who))
		return err
	}
	return nil
}

// told is a voyage's story as the text tells it: its header, and each
// entry with its block of text, in order.
type told struct {
	header  string
	entries []logbook.Entry
	blocks  []string
}

// storyOf reads v's story, after what others appended: the blocks of
// story.WriteText after its header, one per logbook entry.
func storyOf(ctx context.Context, v *helm.Voyage) (told, error) {
	var text strings.Builder
	if err := story.WriteText(ctx, &text, v); err != nil {
		return told{}, err
	}
	entries, err := Entries(ctx, v, nil)
	if err != nil {
		return told{}, err
	}
	blocks := strings.Split(strings.TrimSuffix(text.String(), "\n"), "\n\n")
	if len(blocks) != len(entries)+1 {
		return told{}, fmt.Errorf("voyage %s: the story has %d entries, the logbook %d", v.ID(), len(blocks)-1, len(entries))
	}
	return told{header: blocks[0], entries: entries, blocks: blocks[1:]}, nil
}

// writeEntry writes entry e, told as block, and its evidence when asked.
func writeEntry(ctx context.Context, w io.Writer, v *helm.Voyage, e logbook.Entry, block string, evidence bool) error {
	if _, err := io.WriteString(w, "\n"+block+"\n"); err != nil {
		return err
	}
	if e.Step != nil && evidence {
		if err := writeStepEvidence(ctx, w, v, e.Step); err != nil {
			return err
		}
	}
	if e.Bearing == nil || !evidence {
		return nil
	}
	for _, o := range e.Bearing.Observations {
		if _, err := fmt.Fprintf(w, "  Evidence of %s (artifact %s):\n", safetext.Line(o.Label), Short(o.Artifact)); err != nil {
			return err
		}
		if err := renderEvidence(ctx, w, v, o.Artifact, "    "); err != nil {
			return err
		}
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

// StepEvidenceMax is the most of a step's stowed output the evidence
// holds (helm log --evidence prints it, helm serve shows it): the
// artifact holds it whole (helm artifact show).
const StepEvidenceMax = 64 << 10

// StepEvidence is what a step holds beyond its story line: the whole of a
// text longer than its first line (a prompt, an edit's diff), and a
// call's output, inline or read from the artifact it was stowed in.
type StepEvidence struct {
	// Text is the step's whole text when it runs over more than one
	// line, "" otherwise (its story line shows it all).
	Text string
	// Output is a call's output: inline, or the first StepEvidenceMax
	// bytes of its artifact. Artifact names that artifact, and Cut says
	// the artifact holds more than Output; ArtifactErr is why the
	// artifact could not be read (Output is then the step's inline head).
	Output      string
	Artifact    string
	Cut         bool
	ArtifactErr error
}

// StepEvidenceOf reads s's evidence from v. An artifact that cannot be
// opened (jettisoned, damaged at its start) is said in ArtifactErr; an
// error reading it once opened is returned.
func StepEvidenceOf(ctx context.Context, v *helm.Voyage, s *logbook.Step) (StepEvidence, error) {
	var ev StepEvidence
	if t := strings.TrimRight(s.Text, "\n"); strings.Contains(t, "\n") {
		ev.Text = t
	}
	r := s.Result
	if r == nil || s.Kind != logbook.StepTool && s.Kind != logbook.StepPermission {
		return ev, nil
	}
	ev.Output, ev.Artifact = r.Output, r.Artifact
	if r.Artifact == "" {
		return ev, nil
	}
	rc, err := v.OpenArtifact(ctx, r.Artifact)
	if err != nil {
		ev.ArtifactErr = err
		return ev, nil
	}
	b, err := io.ReadAll(io.LimitReader(rc, StepEvidenceMax+1))
	rc.Close()
	if err != nil {
		return ev, fmt.Errorf("read the output of step %s (artifact %s): %w", s.ID, Short(r.Artifact), err)
	}
	ev.Output, ev.Cut = string(b[:min(len(b), StepEvidenceMax)]), len(b) > StepEvidenceMax
	return ev, nil
}

// writeStepEvidence writes what a step holds beyond its story line
// (StepEvidenceOf).
func writeStepEvidence(ctx context.Context, w io.Writer, v *helm.Voyage, s *logbook.Step) error {
	ev, err := StepEvidenceOf(ctx, v, s)
	if err != nil {
		return err
	}
	if ev.Text != "" {
		if _, err := fmt.Fprintf(w, "  Text:\n    %s\n", safetext.Block(ev.Text, "    ")); err != nil {
			return err
		}
	}
	out := ev.Output
	switch {
	case ev.ArtifactErr != nil:
		_, err := fmt.Fprintf(w, "  Output (artifact %s): %s\n", Short(ev.Artifact), safetext.Line(ev.ArtifactErr.Error()))
		return err
	case ev.Artifact != "":
		if ev.Cut {
			out += fmt.Sprintf("\n… (the first %d KiB; helm artifact show %s prints it all)", StepEvidenceMax>>10, Short(ev.Artifact))
		}
		if _, err := fmt.Fprintf(w, "  Output (artifact %s):\n", Short(ev.Artifact)); err != nil {
			return err
		}
	case out == "":
		return nil
	default:
		if _, err := io.WriteString(w, "  Output:\n"); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(w, "    %s\n", safetext.Block(strings.TrimRight(out, "\n"), "    "))
	return err
}
