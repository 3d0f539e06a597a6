package helm

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/zeebo/blake3"

	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/redact"
	"github.com/helmlog/helm/segment"
)

// ReadArchive reads the events of the archive Export writes (any format
// Import reads) without storing anything anywhere: it checks the archive
// as Import does — its form line by line, every event folded in order,
// every artifact against its BLAKE3 address, the stubs of the records it
// leaves out, the digest in its trailer, and its chain against the head
// its header claims and the witnesses in opts — and returns its events as
// Voyage.Events yields them in the home it was exported from (each with
// its Seq). A jettisoned or reduced artifact's events are there as
// recorded; their left-out bytes are stubs in the chain. An archive that
// fails a check is an error matching ErrInvalid (or ErrDamaged, for a
// chain that does not reach its head or a witness) naming the line.
func ReadArchive(ctx context.Context, r io.Reader, opts *ImportOptions) ([]Event, error) {
	const op = "read archive"
	var o ImportOptions
	if opts != nil {
		o = *opts
	}
	ar := &archiveReader{br: bufio.NewReaderSize(r, 64<<10), sum: blake3.New()}
	im, err := ar.readHead(ctx)
	if err != nil {
		return nil, &VoyageError{Op: op, Voyage: ar.id, Err: err}
	}
	defer im.close()
	id := im.hdr.VoyageID
	if len(o.Witnesses) > 0 && im.hdr.Head == nil {
		return nil, &VoyageError{Op: op, Voyage: id,
			Err: fmt.Errorf("%w: archive line 1: the archive carries no chain (format %d), so witness %s cannot be checked against it", ErrDamaged, im.hdr.Export, o.Witnesses[0])}
	}
	// Checked only: the copies are read and checked, never stored (after
	// is past every record), blob records are linked, not spilled.
	im.witnesses, im.now, im.checkOnly, im.after = o.Witnesses, time.Now(), true, ^uint64(0)
	if im.red, err = redact.New(&redact.Options{Environ: []string{}}); err != nil {
		return nil, &VoyageError{Op: op, Voyage: id, Err: err}
	}
	if err := ar.readEvents(ctx, im); err != nil {
		return nil, &VoyageError{Op: op, Voyage: id, Err: err}
	}
	if err := ar.readArtifacts(ctx, im, copyStower{}); err != nil {
		return nil, &VoyageError{Op: op, Voyage: id, Err: err}
	}
	out := make([]Event, len(im.read))
	for i, e := range im.read {
		out[i] = *e
	}
	return out, nil
}

// ReadVoyageDir reads the events of a voyage directory wherever it lies
// (a home's voyages/ID, or a copy of one taken out of a home) without
// opening it for writing: it takes no lock, creates no file, cuts and
// repairs nothing. The log's checksums and hash chain are verified as
// any read verifies them; damage is an error (a *DamageError), and so is
// a record reclaimed that no artifact event names. A torn final write
// (a copy taken while a write was in progress, or cut short) is not cut:
// the events before it are returned, and the Cut says where it is and how
// many bytes it holds (nil: none).
func ReadVoyageDir(ctx context.Context, dir string) ([]Event, *Cut, error) {
	const op = "read voyage directory"
	id := filepath.Base(filepath.Clean(dir))
	log := filepath.Join(dir, "events")
	if fi, err := os.Stat(log); err != nil || !fi.IsDir() {
		if err == nil {
			err = fmt.Errorf("%s is not a directory", log)
		}
		return nil, nil, &VoyageError{Op: op, Voyage: id, Err: fmt.Errorf("%w: %s is not a voyage directory (no events/ log in it): %v", ErrInvalid, dir, err),
			Hint: hint.Hint{Text: "give a voyage's directory (voyages/ID in a home, or a copy of one)"}}
	}
	var out []Event
	var hidden stubs
	fold := hidden.events(id, log, func(seq uint64, e *projection.Event) error {
		e.Seq = seq
		out = append(out, *e)
		return nil
	})
	cut, err := segment.ScanDirTail(ctx, log, 1, fold)
	if err == nil {
		err = hidden.err(id, log)
	}
	if err != nil {
		if de := damageOf(id, err); de != nil {
			err = de
		}
		return nil, nil, &VoyageError{Op: op, Voyage: id, Err: err}
	}
	if len(out) == 0 {
		return nil, nil, &VoyageError{Op: op, Voyage: id, Err: fmt.Errorf("%w: the event log %s holds no events", ErrDamaged, log)}
	}
	if c := cut; c != nil && c.File != "" && !filepath.IsAbs(c.File) {
		c.File = filepath.Join(log, c.File)
	}
	return out, cutOf(cut), nil
}
