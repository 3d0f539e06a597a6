package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/helmlog/helm"
)

// Form is the form of what a replay reads, found by reading it (never by
// its name): Recorded, Archive or VoyageDir.
type Form string

// The forms a replay reads.
const (
	// Recorded is a recording's events: JSON lines as WriteEvents writes
	// them.
	Recorded Form = "recording"
	// Archive is the archive Home.Export writes (jsonl form)
	// (helm.Home.Export), checked as an import checks it.
	Archive Form = "export archive"
	// VoyageDir is a voyage's directory, in a home or copied out of one,
	// read without writing (helm.ReadVoyageDir).
	VoyageDir Form = "voyage directory"
)

// Accepted says which forms a replay reads, for errors.
const Accepted = "a voyage directory (voyages/ID of a home, or a copy of one), an archive Home.Export writes (jsonl), or a recording's .jsonl events"

// Source is what a replay read from a path: a voyage's events, their form,
// and, for a voyage directory, a torn final write it left in place.
type Source struct {
	Path   string
	Form   Form
	Events []helm.Event
	// Torn is a torn final write of a voyage directory's log (nil: none):
	// reported, never cut; Events are those before it.
	Torn *helm.Cut
}

// Open reads the events at path, whatever form helm gave them (Form):
// a voyage directory, an export archive (its chain, digest and artifacts
// checked as an import checks them), or a recording's events. The form
// is found by reading the path, not by its name. Reading writes nothing:
// no lock, no cache, no repair. An error names path and says which forms
// are read.
func Open(ctx context.Context, path string) (*Source, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w (a replay reads %s)", path, err, Accepted)
	}
	src := &Source{Path: path}
	if fi.IsDir() {
		if st, err := os.Stat(filepath.Join(path, "events")); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("replay %s: %w: a directory without an events/ log is not a voyage directory (a replay reads %s)", path, helm.ErrInvalid, Accepted)
		}
		src.Form = VoyageDir
		src.Events, src.Torn, err = helm.ReadVoyageDir(ctx, path)
		if err != nil {
			return nil, fmt.Errorf("replay %s (%s): %w", path, src.Form, err)
		}
		return src, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w", path, err)
	}
	defer f.Close()
	form, err := sniff(f)
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w", path, err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		return nil, fmt.Errorf("replay %s: %w", path, err)
	}
	src.Form = form
	if form == Archive {
		src.Events, err = helm.ReadArchive(ctx, bufio.NewReader(f), nil)
	} else {
		src.Events, err = ReadEvents(f)
	}
	if err != nil {
		return nil, fmt.Errorf("replay %s (%s): %w", path, form, err)
	}
	if len(src.Events) == 0 {
		return nil, fmt.Errorf("replay %s: %w: it holds no events (a replay reads %s)", path, helm.ErrInvalid, Accepted)
	}
	return src, nil
}

// sniff tells an archive from a recording by its first line: an
// archive's header has "helm_export", a recording's event a "type".
func sniff(f *os.File) (Form, error) {
	br := bufio.NewReaderSize(f, 64<<10)
	line, err := br.ReadSlice('\n')
	if err != nil && !errors.Is(err, bufio.ErrBufferFull) && len(line) == 0 {
		return "", fmt.Errorf("%w: it is empty (a replay reads %s)", helm.ErrInvalid, Accepted)
	}
	line = bytes.TrimSpace(line)
	var first struct {
		Export *int    `json:"helm_export"`
		Type   *string `json:"type"`
	}
	if bytes.HasPrefix(line, []byte(`{"helm_export":`)) {
		return Archive, nil
	}
	if json.Unmarshal(line, &first) == nil {
		switch {
		case first.Export != nil:
			return Archive, nil
		case first.Type != nil:
			return Recorded, nil
		}
	}
	return "", fmt.Errorf("%w: line 1 is neither an export archive's header nor an event (a replay reads %s)", helm.ErrInvalid, Accepted)
}
