package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/segment"
	"github.com/helmlog/helm/store"
)

// Dir is a store on one machine's disk, for tests of a shared home that
// need no server: each voyage in root/voyages/ID, its records in a segment
// log, events/, and its large artifacts in a pack beside it. It passes the
// suite (TestDirConforms), and tests may damage its files as an attacker
// with the store's credentials could. A home on disk keeps its voyages
// itself (its snapshots, home index and compaction need the segment log),
// so no program uses a Dir. Many processes may use one Dir at once: the
// log's writers serialize on its lock file.
type Dir struct {
	root string
	opts DirOptions
}

// DirOptions tune a Dir.
type DirOptions struct {
	// NoSync skips fsync and fdatasync: for tests only.
	NoSync bool
	// SegmentSize is the size of the log's segment files (0: the
	// segment package's default).
	SegmentSize int64
}

// OpenDir returns the store under root (a home directory). It touches
// nothing until a voyage is created.
func OpenDir(root string, opts *DirOptions) *Dir {
	d := &Dir{root: root}
	if opts != nil {
		d.opts = *opts
	}
	return d
}

const summaryFile = "store-summary"

func (d *Dir) voyageDir(voyage string) (string, error) {
	if voyage == "" || voyage != filepath.Base(voyage) || voyage == "." || voyage == ".." {
		return "", fmt.Errorf("store: %q is not a voyage id", voyage)
	}
	return filepath.Join(d.root, "voyages", voyage), nil
}

func (d *Dir) logOptions(voyage string) *segment.Options {
	return &segment.Options{Identity: voyage, NoSync: d.opts.NoSync, SegmentSize: d.opts.SegmentSize}
}

// Create makes the voyage's directory and its log.
func (d *Dir) Create(ctx context.Context, voyage string) (store.Log, error) {
	dir, err := d.voyageDir(voyage)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("%w: %s", store.ErrExists, dir)
		}
		return nil, err
	}
	return d.open(ctx, voyage, dir)
}

// Open opens the voyage's log.
func (d *Dir) Open(ctx context.Context, voyage string) (store.Log, error) {
	dir, err := d.voyageDir(voyage)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", store.ErrNotFound, voyage, err)
	}
	return d.open(ctx, voyage, dir)
}

func (d *Dir) open(ctx context.Context, voyage, dir string) (store.Log, error) {
	l, err := segment.Open(ctx, filepath.Join(dir, "events"), d.logOptions(voyage))
	if err != nil {
		return nil, damaged(err)
	}
	return &dirLog{voyage: voyage, dir: dir, log: l, opts: d.logOptions(voyage)}, nil
}

// Voyages lists the voyage directories and their summaries.
func (d *Dir) Voyages(ctx context.Context) (map[string]store.Summary, error) {
	entries, err := os.ReadDir(filepath.Join(d.root, "voyages"))
	if errors.Is(err, os.ErrNotExist) {
		return map[string]store.Summary{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := make(map[string]store.Summary, len(entries))
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		s, err := readSummary(e.Name(), filepath.Join(d.root, "voyages", e.Name(), summaryFile))
		if err != nil {
			return nil, err
		}
		out[e.Name()] = s
	}
	return out, nil
}

// List lists the voyage directories with their summaries, then opens
// each log to read its tail: opening a segment log checks its bounds,
// watermark and tail, as a home on disk does.
func (d *Dir) List(ctx context.Context) (map[string]store.Listing, error) {
	sums, err := d.Voyages(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]store.Listing, len(sums))
	for id, sum := range sums {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		listing := store.Listing{Summary: sum}
		l, err := d.Open(ctx, id)
		if err == nil {
			listing.Last, err = l.Last(ctx)
			l.Close()
		}
		listing.Err = err
		out[id] = listing
	}
	return out, nil
}

// summaryMu serializes the read-compare-write of summaries in a process;
// processes race benignly (the rename is atomic, and a summary is a
// cache of the log).
var summaryMu sync.Mutex

// PutSummary writes the summary file of the voyage, atomically.
func (d *Dir) PutSummary(ctx context.Context, voyage string, s store.Summary) error {
	dir, err := d.voyageDir(voyage)
	if err != nil {
		return err
	}
	summaryMu.Lock()
	defer summaryMu.Unlock()
	path := filepath.Join(dir, summaryFile)
	if old, err := readSummary(voyage, path); err == nil && old.Seq > s.Seq {
		return nil
	}
	data := fmt.Appendf(nil, "%d\n", s.Seq)
	data = append(data, s.Data...)
	// A summary is a cache of the log: written whole (through a file of
	// its own, renamed over the old one), but not synced.
	f, err := os.CreateTemp(dir, summaryFile+".*.tmp")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

func readSummary(voyage, path string) (store.Summary, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return store.Summary{}, nil
	}
	if err != nil {
		return store.Summary{}, err
	}
	head, rest, ok := bytes.Cut(data, []byte("\n"))
	seq, err := strconv.ParseUint(string(head), 10, 64)
	if !ok || err != nil {
		return store.Summary{}, &store.DamageError{Voyage: voyage, Where: path, Reason: "the summary does not begin with the number of the record it describes"}
	}
	return store.Summary{Seq: seq, Data: rest}, nil
}

// Artifacts returns the voyage's pack.
func (d *Dir) Artifacts(voyage string) store.Artifacts {
	dir, err := d.voyageDir(voyage)
	if err != nil {
		return badArtifacts{err}
	}
	return &pack{p: artifact.NewPack(dir, &artifact.PackOptions{NoSync: d.opts.NoSync})}
}

// Close does nothing: a Dir holds nothing open.
func (d *Dir) Close() error { return nil }

// dirLog is a voyage's segment log.
type dirLog struct {
	voyage, dir string
	log         *segment.Log
	opts        *segment.Options
}

func (l *dirLog) Last(ctx context.Context) (uint64, error) {
	// Another process may have appended: read the tail as a writer would.
	var last uint64
	_, err := l.log.Commit(ctx, func(tx *segment.Tx) ([][]byte, error) {
		last = tx.Last()
		return nil, nil
	})
	return last, damaged(err)
}

func (l *dirLog) AppendIf(ctx context.Context, expectLast uint64, records ...[]byte) (uint64, error) {
	first, err := l.log.AppendIf(ctx, expectLast, records...)
	var ce *segment.ConflictError
	if errors.As(err, &ce) {
		return 0, &store.ConflictError{Voyage: l.voyage, Expected: ce.Expected, Actual: ce.Actual}
	}
	return first, damaged(err)
}

func (l *dirLog) Scan(ctx context.Context, from uint64, fn func(store.Record) error) error {
	return damaged(l.log.Scan(ctx, from, func(r segment.Record) error { return fn(store.Record{Seq: r.Seq, Data: r.Data}) }))
}

func (l *dirLog) Follow(ctx context.Context, from uint64, fn func(store.Record) error) error {
	return damaged(l.log.Follow(ctx, from, func(r segment.Record) error { return fn(store.Record{Seq: r.Seq, Data: r.Data}) }))
}

// Head computes the chain from the records: the segment log of this
// store keeps no head to answer from.
func (l *dirLog) Head(ctx context.Context, seq uint64) (chain.Head, error) {
	h := chain.Head{Hash: chain.Genesis(l.voyage)}
	if seq == 0 {
		return h, nil
	}
	err := l.log.Scan(ctx, 1, func(r segment.Record) error {
		if r.Reclaimed {
			return fmt.Errorf("store: voyage %s, %s: record %d was reclaimed: its chain cannot be computed", l.voyage, l.dir, r.Seq)
		}
		h = chain.Head{Seq: r.Seq, Hash: chain.Link(h.Hash, r.Seq, r.Data)}
		if r.Seq == seq {
			return errHead
		}
		return nil
	})
	switch {
	case errors.Is(err, errHead):
		return h, nil
	case err == nil:
		return chain.Head{}, fmt.Errorf("store: voyage %s, %s: no head after record %d: the log ends at record %d", l.voyage, l.dir, seq, h.Seq)
	}
	return chain.Head{}, damaged(err)
}

// errHead stops Head's scan at its record.
var errHead = errors.New("the head is found")

func (l *dirLog) Verify(ctx context.Context) error {
	_, err := segment.Verify(ctx, l.log.Dir(), l.opts)
	return damaged(err)
}

func (l *dirLog) Close() error { return l.log.Close() }

// damaged makes the segment log's and the pack's damage match store.ErrDamaged
// too, and their closed logs store.ErrClosed.
func damaged(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, segment.ErrCorrupt), errors.Is(err, artifact.ErrDamaged):
		return fmt.Errorf("%w: %w", store.ErrDamaged, err)
	case errors.Is(err, segment.ErrClosed):
		return fmt.Errorf("%w: %w", store.ErrClosed, err)
	}
	return err
}

// pack is a voyage's artifact pack.
type pack struct{ p *artifact.Pack }

func (p *pack) Put(ctx context.Context, e *artifact.Encoded) (artifact.Ref, error) {
	return p.p.Stow(e)
}

func (p *pack) Get(ctx context.Context, ref artifact.Ref) ([]byte, error) {
	data, err := p.p.Load(ref)
	return data, damaged(err)
}

func (p *pack) Open(ctx context.Context, ref artifact.Ref) (io.ReadCloser, error) {
	r, err := p.p.OpenStored(ref)
	if err != nil {
		return nil, damaged(err)
	}
	return io.NopCloser(r), nil
}

type badArtifacts struct{ err error }

func (b badArtifacts) Put(context.Context, *artifact.Encoded) (artifact.Ref, error) {
	return artifact.Ref{}, b.err
}
func (b badArtifacts) Get(context.Context, artifact.Ref) ([]byte, error) { return nil, b.err }
func (b badArtifacts) Open(context.Context, artifact.Ref) (io.ReadCloser, error) {
	return nil, b.err
}

// The voyage's snapshot (store.Snapshots) is the file store-snapshot in
// its directory: "HELMDSN1", the head's JSON on one line, the data. A
// cache: written without fsync (a torn one does not decode), checked
// against the log's head, computed from its records, when read.
const (
	snapshotFile  = "store-snapshot"
	snapshotMagic = "HELMDSN1"
)

// PutSnapshot keeps data as the voyage's snapshot after record seq.
func (l *dirLog) PutSnapshot(ctx context.Context, seq uint64, data []byte) error {
	if seq == 0 {
		return fmt.Errorf("store: voyage %s: no snapshot after record 0", l.voyage)
	}
	h, err := l.Head(ctx, seq)
	if err != nil {
		return err
	}
	hj, err := json.Marshal(h)
	if err != nil {
		return err
	}
	b := append(append(append([]byte(snapshotMagic), hj...), '\n'), data...)
	tmp := filepath.Join(l.dir, snapshotFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(l.dir, snapshotFile))
}

// Snapshot reads the voyage's snapshot and checks its head against the
// log's.
func (l *dirLog) Snapshot(ctx context.Context) (store.Snapshot, error) {
	path := filepath.Join(l.dir, snapshotFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return store.Snapshot{}, fmt.Errorf("%w: voyage %s keeps no snapshot (%s)", store.ErrNotFound, l.voyage, path)
	}
	if err != nil {
		return store.Snapshot{}, err
	}
	rest, ok := bytes.CutPrefix(b, []byte(snapshotMagic))
	line, data, found := bytes.Cut(rest, []byte("\n"))
	var h chain.Head
	if !ok || !found || json.Unmarshal(line, &h) != nil || h.Seq == 0 {
		return store.Snapshot{}, fmt.Errorf("%w: voyage %s, %s: not a snapshot of this version", store.ErrBadSnapshot, l.voyage, path)
	}
	last, err := l.Last(ctx)
	if err != nil {
		return store.Snapshot{}, err
	}
	if h.Seq > last {
		return store.Snapshot{}, &store.DamageError{Voyage: l.voyage, Where: path, Seq: last + 1,
			Reason: fmt.Sprintf("the voyage's snapshot was taken after record %d, but its log ends at record %d: the log lost records it had acknowledged, or the snapshot was forged", h.Seq, last)}
	}
	logs, err := l.Head(ctx, h.Seq)
	if err != nil {
		return store.Snapshot{}, err
	}
	if logs != h {
		return store.Snapshot{}, fmt.Errorf("%w: voyage %s, %s: its head %s is not the log's, %s", store.ErrBadSnapshot, l.voyage, path, h, logs)
	}
	return store.Snapshot{Head: h, Data: data}, nil
}
