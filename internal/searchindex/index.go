package searchindex

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/helmlog/helm/internal/durable"
)

// maxSegments is how many segments a write leaves before it merges: a
// query reads every segment's dictionary, so few segments keep it fast;
// merging all but the largest keeps a write's cost near the new data's.
const maxSegments = 8

const manifestHeader = "helm-search-index 1"

// AfterSegment, when set (by tests only), is called by Write between the
// new segment's file and the manifest that names it: a test's writer
// process exits there to crash mid-indexing.
var AfterSegment func()

// Index is an opened index: its segments, and which segment owns each
// voyage. Opening reads; nothing of Index writes.
type Index struct {
	dir   string
	segs  []*openSeg
	owner map[string]owned
}

type openSeg struct {
	name string
	size int64
	f    *os.File
	seg  *Segment
}

type owned struct {
	seg int
	seq uint64
}

// Open opens the index in dir. No directory or no MANIFEST is an empty
// index (it vouches for nothing). A MANIFEST or segment that does not
// decode is an error matching ErrMalformed: the caller vouches for
// nothing then.
func Open(dir string) (*Index, error) {
	ix := &Index{dir: dir, owner: map[string]owned{}}
	names, sizes, err := readManifest(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return ix, nil
	}
	if err != nil {
		return nil, err
	}
	n := 0
	for i, name := range names {
		s, err := openSegment(dir, name, sizes[i])
		if err != nil {
			ix.Close()
			return nil, err
		}
		ix.segs = append(ix.segs, s)
		n += len(s.seg.Voyages())
	}
	ix.owner = make(map[string]owned, n) // sized once: a home's worth of voyages
	for i, s := range ix.segs {
		for _, v := range s.seg.Voyages() {
			ix.owner[v.ID] = owned{seg: i, seq: v.Seq}
		}
	}
	return ix, nil
}

func openSegment(dir, name string, size int64) (*openSeg, error) {
	path := filepath.Join(dir, name)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s, named by the manifest, is missing", ErrMalformed, path)
	}
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && (!st.Mode().IsRegular() || st.Size() != size) {
		err = fmt.Errorf("%w: %s is not the %d-byte file the manifest names", ErrMalformed, path, size)
	}
	var seg *Segment
	if err == nil {
		seg, err = Decode(f, size)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &openSeg{name: name, size: size, f: f, seg: seg}, nil
}

// Close closes the segment files.
func (ix *Index) Close() error {
	var errs []error
	for _, s := range ix.segs {
		errs = append(errs, s.f.Close())
	}
	ix.segs = nil
	return errors.Join(errs...)
}

// Covers returns the seq up to which the index covers voyage id, and
// whether it covers it at all.
func (ix *Index) Covers(id string) (uint64, bool) {
	o, ok := ix.owner[id]
	return o.seq, ok
}

// Find returns the documents holding every word (terms, as Words makes
// them), each of a voyage its segment owns, newest segment first, at most
// limit of them (0: all); more says whether there were more.
func (ix *Index) Find(ctx context.Context, words []string, limit int) (docs []Doc, more bool, err error) {
	if len(words) == 0 {
		return nil, false, nil
	}
	for i := len(ix.segs) - 1; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		seg := ix.segs[i].seg
		var hits []uint32
		for j, w := range words {
			p, err := seg.Postings(w)
			if err != nil {
				return nil, false, fmt.Errorf("%s: %w", filepath.Join(ix.dir, ix.segs[i].name), err)
			}
			if j == 0 {
				hits = p
			} else {
				hits = intersect(hits, p)
			}
			if len(hits) == 0 {
				break
			}
		}
		for _, n := range hits {
			d, err := seg.Doc(n)
			if err != nil {
				return nil, false, fmt.Errorf("%s: %w", filepath.Join(ix.dir, ix.segs[i].name), err)
			}
			if o := ix.owner[d.Voyage]; o.seg != i {
				continue // superseded by a newer segment
			}
			if limit > 0 && len(docs) == limit {
				return docs, true, nil
			}
			docs = append(docs, d)
		}
	}
	return docs, false, nil
}

func intersect(a, b []uint32) []uint32 {
	out := a[:0:0]
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			out = append(out, a[i])
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return out
}

// readManifest reads dir's MANIFEST: the segments' names and sizes.
func readManifest(dir string) ([]string, []int64, error) {
	path := filepath.Join(dir, ManifestName)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	body, sum, ok := bytes.Cut(b, []byte("crc "))
	if !ok || strconv.FormatUint(uint64(checksum(body)), 16)+"\n" != string(sum) {
		return nil, nil, fmt.Errorf("%w: %s: checksum", ErrMalformed, path)
	}
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	if len(lines) == 0 || lines[0] != manifestHeader {
		return nil, nil, fmt.Errorf("%w: %s: not a manifest", ErrMalformed, path)
	}
	var names []string
	var sizes []int64
	for _, l := range lines[1:] {
		name, size, ok := strings.Cut(l, " ")
		n, err := strconv.ParseInt(size, 10, 64)
		if !ok || err != nil || n < 0 || !validName(name) || slices.Contains(names, name) {
			return nil, nil, fmt.Errorf("%w: %s: line %q", ErrMalformed, path, l)
		}
		names, sizes = append(names, name), append(sizes, n)
	}
	return names, sizes, nil
}

// validName reports whether name is a segment's name: 8 digits and
// .seg, nothing that leads out of the directory.
func validName(name string) bool {
	digits, ok := strings.CutSuffix(name, segSuffix)
	if !ok || len(digits) != 8 {
		return false
	}
	_, err := strconv.ParseUint(digits, 10, 32)
	return err == nil && !strings.ContainsAny(digits, "+-")
}

// WriteOptions tune Write.
type WriteOptions struct {
	// Replace drops every segment in force: the new one is the whole
	// index (a full reindex).
	Replace bool
	// Forget rewrites the older segments that cover a voyage the new one
	// covers, without it: its old words leave the disk (after a jettison),
	// rather than being only superseded.
	Forget bool
	// NoSync skips fsync (tests, and homes opened without it).
	NoSync bool
}

// Write adds the segment b holds to the index in dir (created 0700),
// under the writers' lock: the segment file is written and synced, then
// a new MANIFEST naming it is renamed into place. A crash before the
// rename leaves the old index in force (and an orphan segment the next
// write removes). A MANIFEST that does not decode is replaced: what it
// named is dropped, so the voyages it covered are scanned until
// reindexed.
func Write(ctx context.Context, dir string, b *Builder, opts WriteOptions) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	lk, err := lock(ctx, filepath.Join(dir, lockName))
	if err != nil {
		return err
	}
	defer lk.Close()

	names, sizes, err := readManifest(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, ErrMalformed) {
		return err
	}
	if opts.Replace || err != nil {
		names, sizes = nil, nil
	}
	name, size, err := writeSegment(dir, b, opts.NoSync)
	if err != nil {
		return err
	}
	if AfterSegment != nil {
		AfterSegment()
	}
	names, sizes = append(names, name), append(sizes, size)
	if opts.Forget {
		if names, sizes, err = forget(dir, names, sizes, b, opts.NoSync); err != nil {
			return err
		}
	}
	if len(names) > maxSegments {
		if names, sizes, err = merge(dir, names, sizes, opts.NoSync); err != nil {
			return err
		}
	}
	if err := writeManifest(dir, names, sizes, opts.NoSync); err != nil {
		return err
	}
	removeOrphans(dir, names)
	return nil
}

func lock(ctx context.Context, path string) (*durable.Lock, error) {
	lk, err := durable.OpenLock(path)
	if err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	for delay := 100 * time.Microsecond; ; delay = min(2*delay, 50*time.Millisecond) {
		ok, err := lk.TryLock()
		if err != nil {
			lk.Close()
			return nil, fmt.Errorf("search index: lock %s: %w", path, err)
		}
		if ok {
			return lk, nil
		}
		select {
		case <-ctx.Done():
			lk.Close()
			return nil, ctx.Err()
		case <-time.After(delay):
		}
	}
}

// writeSegment writes b as the next segment file, synced.
func writeSegment(dir string, b *Builder, noSync bool) (string, int64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", 0, fmt.Errorf("search index: %w", err)
	}
	next := uint64(1)
	for _, e := range ents {
		if d, ok := strings.CutSuffix(e.Name(), segSuffix); ok {
			if n, err := strconv.ParseUint(d, 10, 32); err == nil && n >= next {
				next = n + 1
			}
		}
	}
	name := fmt.Sprintf("%08d%s", next, segSuffix)
	size, err := writeFile(filepath.Join(dir, name), noSync, func(w *bufio.Writer) (int64, error) { return b.Encode(w) })
	return name, size, err
}

// writeFile writes path whole through a temporary file renamed over it.
func writeFile(path string, noSync bool, write func(*bufio.Writer) (int64, error)) (int64, error) {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, fmt.Errorf("search index: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	n, err := write(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil && !noSync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil && !noSync {
		err = durable.SyncDir(durable.OSFS{}, filepath.Dir(path))
	}
	if err != nil {
		os.Remove(tmp)
		return 0, fmt.Errorf("search index: write %s: %w", path, err)
	}
	return n, nil
}

func writeManifest(dir string, names []string, sizes []int64, noSync bool) error {
	var b strings.Builder
	b.WriteString(manifestHeader + "\n")
	for i, n := range names {
		fmt.Fprintf(&b, "%s %d\n", n, sizes[i])
	}
	body := b.String()
	body += "crc " + strconv.FormatUint(uint64(checksum([]byte(body))), 16) + "\n"
	_, err := writeFile(filepath.Join(dir, ManifestName), noSync, func(w *bufio.Writer) (int64, error) {
		n, err := w.WriteString(body)
		return int64(n), err
	})
	return err
}

// removeOrphans removes the segment files keep does not name: merged
// away, or written by a writer that crashed before its manifest.
func removeOrphans(dir string, keep []string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		n := e.Name()
		if (strings.HasSuffix(n, segSuffix) && !slices.Contains(keep, n)) || strings.HasSuffix(n, segSuffix+".tmp") {
			os.Remove(filepath.Join(dir, n))
		}
	}
}

// merge merges adjacent segments, the pair smallest together first,
// until at most maxSegments/2 remain: a write's cost stays near its own
// data's, amortized (a segment is rewritten each time its size about
// doubles), and a query reads few segments.
func merge(dir string, names []string, sizes []int64, noSync bool) ([]string, []int64, error) {
	names, sizes = slices.Clone(names), slices.Clone(sizes)
	for len(names) > maxSegments/2 {
		best := 0
		for i := range len(names) - 1 {
			if sizes[i]+sizes[i+1] < sizes[best]+sizes[best+1] {
				best = i
			}
		}
		name, size, err := mergePair(dir, names, sizes, best, noSync)
		if err != nil {
			return nil, nil, err
		}
		names = slices.Replace(names, best, best+2, name)
		sizes = slices.Replace(sizes, best, best+2, size)
	}
	return names, sizes, nil
}

// mergePair writes segments i and i+1 as one, keeping of each voyage the
// documents of the segment that owns it in the whole index (a voyage a
// newer segment owns is dropped: those documents were superseded).
func mergePair(dir string, names []string, sizes []int64, i int, noSync bool) (string, int64, error) {
	segs, err := openAll(dir, names, sizes)
	if err != nil {
		return "", 0, err
	}
	defer closeAll(segs)
	owner := map[string]int{}
	for j, s := range segs {
		for _, v := range s.seg.Voyages() {
			owner[v.ID] = j
		}
	}
	b := NewBuilder()
	for _, j := range []int{i, i + 1} {
		if err := copyInto(b, segs[j].seg, func(v string) bool { return owner[v] == j }); err != nil {
			return "", 0, err
		}
	}
	return writeSegment(dir, b, noSync)
}

// forget rewrites each segment that covers a voyage of b (but the last,
// b's own) without that voyage: what a re-indexed voyage no longer
// holds (a jettisoned artifact's words) leaves the disk, not only the
// answers.
func forget(dir string, names []string, sizes []int64, b *Builder, noSync bool) ([]string, []int64, error) {
	segs, err := openAll(dir, names[:len(names)-1], sizes[:len(sizes)-1])
	if err != nil {
		return nil, nil, err
	}
	defer closeAll(segs)
	for i, s := range segs {
		if !slices.ContainsFunc(s.seg.Voyages(), func(c Covered) bool { _, ok := b.vidx[c.ID]; return ok }) {
			continue
		}
		nb := NewBuilder()
		if err := copyInto(nb, s.seg, func(v string) bool { _, ok := b.vidx[v]; return !ok }); err != nil {
			return nil, nil, err
		}
		name, size, err := writeSegment(dir, nb, noSync)
		if err != nil {
			return nil, nil, err
		}
		names[i], sizes[i] = name, size
	}
	return names, sizes, nil
}

func openAll(dir string, names []string, sizes []int64) ([]*openSeg, error) {
	var segs []*openSeg
	for i, n := range names {
		s, err := openSegment(dir, n, sizes[i])
		if err != nil {
			closeAll(segs)
			return nil, err
		}
		segs = append(segs, s)
	}
	return segs, nil
}

func closeAll(segs []*openSeg) {
	for _, s := range segs {
		s.f.Close()
	}
}

// copyInto adds to b the voyages of seg that keep accepts, with their
// documents and terms.
func copyInto(b *Builder, seg *Segment, keep func(voyage string) bool) error {
	for _, v := range seg.Voyages() {
		if keep(v.ID) {
			b.Cover(v.ID, v.Seq)
		}
	}
	renum := make([]int, seg.NumDocs())
	for d := range renum {
		doc, err := seg.Doc(uint32(d))
		if err != nil {
			return err
		}
		renum[d] = -1
		if keep(doc.Voyage) {
			renum[d] = b.Doc(doc.Voyage, doc.Kind, doc.Artifact)
		}
	}
	return seg.terms(func(term string, docs []uint32) error {
		for _, d := range docs {
			if n := renum[d]; n >= 0 {
				b.add(term, uint32(n))
			}
		}
		return nil
	})
}

// add appends doc to term's postings (docs come in ascending order).
func (b *Builder) add(term string, doc uint32) {
	p := b.terms[term]
	if len(p) == 0 || p[len(p)-1] != doc {
		b.terms[term] = append(p, doc)
	}
}
