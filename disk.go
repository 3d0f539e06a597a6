package helm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/internal/durable"
	"github.com/helmlog/helm/internal/homeindex"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
)

// A home on disk: each voyage in a directory of its own under
// DIR/voyages, named by its id, holding its event log (events/, package
// segment), the pack of its large artifacts (artifacts.pack, package
// artifact) and the caches its writers keep (snapshot, summary.json); the
// home index (internal/homeindex) in DIR lets listing read one file.

// disk is the backend of a home on disk.
type disk struct {
	h *Home
	// sweepOnce: the first start removes what crashed starts left.
	sweepOnce sync.Once
}

func (d *disk) voyagesDir() string { return filepath.Join(d.h.dir, "voyages") }

func (d *disk) where() string { return d.voyagesDir() }

// newPrefix names the directory a voyage is built in before it appears
// under its id: a crash while starting leaves such a directory, which
// listing ignores and a later Start removes.
const newPrefix = ".new-"

// create makes the voyage id: its first events are written by first into
// a directory of its own, which is then renamed into place, so that a
// voyage directory always holds its start and a failed start leaves
// nothing behind.
func (d *disk) create(ctx context.Context, id string, first func(*Voyage) error) error {
	vdir := d.voyagesDir()
	mkdir := func(dir string, perm os.FileMode) error { return durable.MkdirAll(durable.OSFS{}, dir, perm) }
	if d.h.opts.NoSync {
		mkdir = os.MkdirAll
	}
	if err := mkdir(vdir, 0o700); err != nil {
		return fmt.Errorf("start voyage: create %s: %w", vdir, err)
	}
	d.sweepOnce.Do(d.removeAbandonedStarts)
	tmp := filepath.Join(vdir, newPrefix+id)
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return fmt.Errorf("start voyage: create %s: %w", tmp, err)
	}
	v, err := d.openDir(ctx, tmp, id, nil)
	if err == nil {
		err = first(v)
		if cerr := v.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil && !d.h.opts.NoSync {
		err = durable.SyncDir(durable.OSFS{}, tmp)
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(vdir, id))
	}
	if err == nil && !d.h.opts.NoSync {
		err = durable.SyncDir(durable.OSFS{}, vdir)
	}
	if err != nil {
		os.RemoveAll(tmp)
		var ve *VoyageError
		if errors.As(err, &ve) {
			return err
		}
		return &VoyageError{Op: "start voyage", Voyage: id, Err: err}
	}
	return nil
}

// abandonedAfter is how old a directory of a start must be before a later
// Start takes it for one that crashed and removes it.
const abandonedAfter = 10 * time.Minute

// removeAbandonedStarts removes what crashed starts left (best effort).
// It reads the voyages directory unsorted, once per Home: reading a home
// of many voyages on every Start made starting O(voyages).
func (d *disk) removeAbandonedStarts() {
	f, err := os.Open(d.voyagesDir())
	if err != nil {
		return
	}
	entries, _ := f.ReadDir(-1)
	f.Close()
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), newPrefix) {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > abandonedAfter {
			os.RemoveAll(filepath.Join(d.voyagesDir(), e.Name()))
		}
	}
}

func (d *disk) open(ctx context.Context, id string, fromSnapshot bool) (*Voyage, error) {
	dir := filepath.Join(d.voyagesDir(), id)
	if err := voyageDirOf(dir); err != nil {
		if le, ok := errors.AsType[*linkedEventsError](err); ok {
			return nil, &VoyageError{Op: "open", Voyage: id,
				Err:  &DamageError{Voyage: id, File: le.path, Reason: "the voyage's events/ is not its own directory", Err: err},
				Hint: hint.Hint{Kind: hint.Restore, Text: "replace the link with the voyage's own events/ directory from a backup, or remove the voyage"}}
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrNoVoyage, id, err)
	}
	cached, snap := readClaimsSnapshot(d.h.dir, dir, id) // before the log: see claims
	if snap != nil && !fromSnapshot {
		snap.f.Close()
		snap = nil
	}
	v, err := d.openDir(ctx, dir, id, snap)
	if err != nil {
		return nil, err
	}
	if v.st.Voyage.Seq == 0 {
		v.Close()
		events := filepath.Join(dir, "events")
		return nil, &VoyageError{Op: "open", Voyage: id,
			Err: &DamageError{Voyage: id, File: events, Reason: "the event log holds no events, not even the voyage's start",
				Err: fmt.Errorf("%s holds no events, not even the voyage's start: it was emptied or removed", events)},
			Hint: hint.Hint{Kind: hint.Restore, Text: "restore the voyage's directory from a backup, or remove it"}}
	}
	// A cache that proves the log went further makes the voyage DAMAGED:
	// no read shows it, no write changes it, and no close rewrites the
	// cache (evidence.go).
	log := v.rec.(*diskJournal).log
	var head *chain.Head
	if log.Chain().Kind == "blake3" {
		// Format 4 stores the head: comparing it costs no read. An older
		// log's would cost a read of the whole log; verify compares it.
		if h, err := log.Head(ctx); err == nil {
			head = &h
		}
	}
	if found := cached.against(log.Last(), head); len(found) > 0 {
		v.Close()
		return nil, evidenceError("open", id, found)
	}
	return v, nil
}

// openDir opens the voyage id whose directory is dir, folding from snap
// (nil: from the first event) when it is one to trust. It takes snap's
// file: the caller does not close it.
func (d *disk) openDir(ctx context.Context, dir, id string, snap *snapshotFile) (*Voyage, error) {
	v := &Voyage{home: d.h, id: id, dir: dir}
	j := &diskJournal{v: v, d: d, pack: artifact.NewPack(dir, &artifact.PackOptions{NoSync: d.h.opts.NoSync})}
	v.rec = j
	events := filepath.Join(dir, "events")
	v.applyRecord = eventsOf(id, events, v.applyEvent)
	opts := &segment.Options{
		SegmentSize: d.h.opts.SegmentSize, NoSync: d.h.opts.NoSync, Identity: id,
		NoRetain: true, // projection.Decode shares nothing with the record
	}
	if snap != nil {
		if log, ok := openFromSnapshot(ctx, v, opts, snap); ok {
			j.log = log
			return v, nil
		}
	}
	// Opening the log folds its events into fresh views as it reads them:
	// the check of the log and the replay are one pass.
	st := stubs{dec: new(projection.Decoder)} // the fold keeps no event
	log, err := segment.OpenScan(ctx, events, opts, st.events(id, events, v.applyEvent))
	if err == nil {
		if err = st.err(id, events); err != nil {
			log.Close()
		}
	}
	if err != nil {
		return nil, v.fail("open", err, hint.Hint{})
	}
	j.log = log
	return v, nil
}

func (d *disk) started(_ context.Context, id string) (bool, error) {
	err := voyageDirOf(filepath.Join(d.voyagesDir(), id))
	_, linked := errors.AsType[*linkedEventsError](err)
	return err == nil || linked, nil // a linked events/ is a damaged voyage
}

// voyageDirOf checks that dir is a voyage's directory of the home: a
// directory itself, not a link. A link the recorded agent planted in the
// home's voyages would have helm read, and write, a voyage kept anywhere
// else as one of the home's (ids, which lists the home, leaves links out
// the same way).
//
// Its events/ must be a directory of its own too, or absent (a start not
// yet made): a link there would have helm read the voyage's record from,
// and append it to, a log kept anywhere else (another voyage's, outside
// the home).
func voyageDirOf(dir string) error {
	fi, err := os.Lstat(dir)
	if err == nil && !fi.IsDir() {
		return fmt.Errorf("%s is not a directory of the home (a link, or a file)", dir)
	}
	if err != nil {
		return err
	}
	events := filepath.Join(dir, "events")
	if fi, err := os.Lstat(events); err == nil && !fi.IsDir() {
		return &linkedEventsError{events}
	}
	return nil
}

// isVoyageID reports whether name is a voyage's id as helm writes it:
// lower case, with its dashes. Other spellings uuid.Parse accepts (upper
// case, braces, urn:uuid:, no dashes) would have a copy of a voyage's
// directory listed as a second voyage, under an id that is not its own.
func isVoyageID[T string | []byte](name T) bool {
	if len(name) != 36 {
		return false
	}
	for i := range 36 {
		switch c := name[i]; i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}

// linkedEventsError is a voyage whose events/ is a link or a file.
type linkedEventsError struct{ path string }

func (e *linkedEventsError) Error() string {
	return e.path + " is not the voyage's own directory of events (a link, or a file)"
}

func (d *disk) ids(_ context.Context, prefix string) ([]string, error) {
	// Unsorted: the callers sort what they return (os.ReadDir's sort of
	// every name was a tenth of a listing).
	f, err := os.Open(d.voyagesDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // no voyage started yet
	}
	var entries []os.DirEntry
	if err == nil {
		entries, err = f.ReadDir(-1)
		f.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("list voyages in %s: %w", d.voyagesDir(), err)
	}
	ids := make([]string, 0, len(entries))
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		if isVoyageID(e.Name()) {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

// list reads the home index, which vouches for the voyages whose writers
// all closed them, for the price of three stats each (vouched). Each of the
// others costs a few small reads (its summary, its directory, its log's
// tail); they are independent, so a few run at once. The voyages'
// directory, read to find the voyages the index does not vouch for, is
// read while the index is read and the stamps are taken.
func (d *disk) list(ctx context.Context, filter StatusFilter) ([]VoyageInfo, error) {
	type found struct {
		seen    []bool   // the index's voyages that have a directory
		unknown []string // voyages the index does not name
		err     error
	}
	index := make(chan *vouchers, 1)
	dir := make(chan found, 1)
	go func() {
		var f found
		// The names, until the index is read: in one buffer.
		var names []byte
		var ends []int
		var v *vouchers
		look := func(name []byte) {
			if i, ok := v.at[string(name)]; ok {
				f.seen[i] = true
			} else if isVoyageID(name) {
				f.unknown = append(f.unknown, string(name))
			}
		}
		f.err = eachDirEntry(d.voyagesDir(), func(name []byte, isDir bool) {
			switch {
			case !isDir:
			case v != nil:
				look(name)
			default:
				names = append(names, name...)
				ends = append(ends, len(names))
			}
			if v == nil && len(index) > 0 {
				v = <-index
				f.seen = make([]bool, len(v.entries))
			}
		})
		if v == nil {
			v = <-index
			f.seen = make([]bool, len(v.entries))
		}
		from := 0
		for _, end := range ends {
			look(names[from:end])
			from = end
		}
		dir <- f
	}()
	v, ok := d.readVouchers()
	index <- &v
	if ok {
		d.stampVouchers(&v)
	}
	f := <-dir
	if errors.Is(f.err, fs.ErrNotExist) {
		return nil, nil // no voyage started yet
	}
	if f.err != nil {
		return nil, fmt.Errorf("list voyages in %s: %w", d.voyagesDir(), f.err)
	}
	rest := f.unknown
	for i, held := range v.held {
		if id := v.entries[i].ID; !held && f.seen[i] && isVoyageID(id) {
			rest = append(rest, id)
		}
	}
	// What the index vouches for, in place. A voyage removed since its
	// writer closed it is not listed: its stamps no longer hold.
	out := v.infos[:0]
	for i := range v.infos {
		switch info := &v.infos[i]; {
		case !v.held[i] || !filter.matches(info.Status):
		case len(out) == i:
			out = out[:i+1] // in its place already: a VoyageInfo is 500 bytes
		default:
			out = append(out, *info)
		}
	}
	clear(v.infos[len(out):])
	var seqs map[string]uint64 // how far the index saw each log go: a summary short of it is not trusted
	if len(rest) > 0 {
		seqs, _ = homeindex.Seqs(filepath.Join(d.h.dir, homeindex.Name))
	}
	read, unreadable, err := readEach(ctx, rest, 4*runtime.GOMAXPROCS(0), func(id string) (VoyageInfo, error) {
		return d.summary(ctx, id, seqs[id])
	})
	if err != nil {
		return nil, err
	}
	return listed(out, read, unreadable, filter)
}

// verifyLog checks the log's files where they are: it works on a voyage
// too damaged to open.
func (d *disk) records(ctx context.Context, id string, fn func(segment.Record) error) error {
	return segment.ScanDir(ctx, filepath.Join(d.voyagesDir(), id, "events"), 1, fn)
}

func (d *disk) storedOf(_ context.Context, id string, ref artifact.Ref) (io.ReadCloser, error) {
	pack := artifact.NewPack(filepath.Join(d.voyagesDir(), id), &artifact.PackOptions{NoSync: true})
	gone, err := pack.Reclaimed(ref)
	if err == nil && gone {
		err = errGone
	}
	var r io.Reader
	if err == nil {
		r, err = pack.OpenStored(ref)
	}
	if err != nil {
		pack.Close()
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{r, pack}, nil
}

func (d *disk) verifyLog(ctx context.Context, id string, rep *VerifyReport) (string, bool, error) {
	eventsDir := filepath.Join(d.voyagesDir(), id, "events")
	if _, err := os.Stat(eventsDir); err != nil {
		rep.Problems = append(rep.Problems, &DamageError{Voyage: id, File: eventsDir, Reason: "the voyage's event log is gone", Err: err})
		return eventsDir, false, nil
	}
	cached := readClaims(d.h.dir, filepath.Dir(eventsDir), id) // before the log: see claims
	srep, err := segment.Verify(ctx, eventsDir, &segment.Options{Identity: id})
	rep.Events = LogReport{Segments: srep.Segments, Records: srep.Records, Reclaimed: srep.Reclaimed, Bytes: srep.Bytes,
		LastSeq: srep.LastSeq, Watermark: srep.Watermark, Torn: cutOf(srep.Torn), Head: srep.Head, Chain: srep.Chain.Kind, Format: srep.Chain.Format}
	if srep.Chain.Kind == "blake3" && srep.Chain.Since > 1 {
		rep.Events.ChainSince = srep.Chain.Since
	}
	if err != nil {
		if d := damageOf(id, err); d != nil {
			rep.Problems = append(rep.Problems, d)
			return eventsDir, false, nil // the artifact index is built from the events
		}
		return eventsDir, false, &VoyageError{Op: "verify", Voyage: id, Err: err}
	}
	// Caches that prove the log went further: the voyage does not open.
	if found := cached.against(srep.LastSeq, &srep.Head); len(found) > 0 {
		rep.Problems = append(rep.Problems, found...)
		return eventsDir, false, nil
	}
	return eventsDir, true, nil
}

// diskJournal is a voyage of a home on disk: its segment log and its
// artifact pack.
type diskJournal struct {
	v    *Voyage
	d    *disk
	log  *segment.Log
	pack *artifact.Pack

	idxMu  sync.Mutex
	idx    *homeindex.Writer // this handle's session in the home index (index.go)
	idxOff bool              // the index could not be written: it was removed

	// rechaining makes commit append through segment.Log.Rechain
	// (Home.Rechain), which tells its decide where the older format's
	// CRC32C chain ends: after record oldEnd, with sum oldSum.
	rechaining bool
	oldEnd     uint64
	oldSum     uint32

	headMu   sync.Mutex
	verified chain.Head // the chain computed from the records, up to verified.Seq (head)
}

func (j *diskJournal) Scan(ctx context.Context, from uint64, fn func(segment.Record) error) error {
	return j.log.Scan(ctx, from, fn)
}

func (j *diskJournal) Follow(ctx context.Context, from uint64, fn func(segment.Record) error) error {
	return j.log.Follow(ctx, from, fn)
}

func (j *diskJournal) Dir() string { return j.log.Dir() }

// commit appends under the log's lock, in a group of concurrent commits
// (segment.Log.Commit): the views take each commit's events in before
// the next one decides.
func (j *diskJournal) commit(ctx context.Context, decide func(logTx) ([][]byte, error), applied func() error) error {
	run := func(tx *segment.Tx) ([][]byte, error) {
		records, err := decide(tx)
		if err == nil {
			err = applied()
		}
		if err != nil {
			return nil, err
		}
		return records, nil
	}
	if j.rechaining {
		_, err := j.log.Rechain(ctx, func(tx *segment.Tx, sum uint32) ([][]byte, error) {
			j.oldEnd, j.oldSum = tx.Last(), sum
			return run(tx)
		})
		return err
	}
	_, err := j.log.Commit(ctx, run)
	return err
}

func (j *diskJournal) maxUnit() int { return 0 }

func (j *diskJournal) appendStubbed(ctx context.Context, after uint64, records [][]byte, stubs map[uint64]segment.Record) (bool, error) {
	recs := make([]segment.Record, len(records))
	for i, d := range records {
		recs[i] = segment.Record{Data: d}
		if s, ok := stubs[after+uint64(i)+1]; ok {
			recs[i] = segment.Record{Reclaimed: true, Len: s.Len, Digest: s.Digest}
		}
	}
	_, err := j.log.AppendRecords(ctx, after, recs...)
	if errors.Is(err, segment.ErrStubFormat) {
		return false, nil
	}
	return err == nil, err
}

// settle leaves a streamed artifact streamed: the pack takes it as it is
// written (artifact.Pack.StowStream).
func (j *diskJournal) settle(*artifact.Encoded) error { return nil }

// inline: a small artifact is a blob record, which Compact reclaims.
func (j *diskJournal) inline(a *artifact.Encoded) bool { return a.Inline() }

// stow writes the artifact to the pack, and makes it durable, before the
// unit naming it is appended: a crash between the two leaves a frame no
// event names, which costs bytes, never a story.
func (j *diskJournal) stow(_ context.Context, a *artifact.Encoded, held func(string) bool) (artifact.Ref, bool, error) {
	if a.Streamed() {
		return j.pack.StowStream(a, held) // its address is known once it is written
	}
	r, err := j.pack.Stow(a)
	return r, err == nil, err
}

func (j *diskJournal) stowStored(_ context.Context, ref artifact.Ref, r io.Reader) (artifact.Ref, error) {
	if r == nil {
		return j.pack.StowReclaimed(ref)
	}
	return j.pack.StowStored(ref, r)
}

func (j *diskJournal) open(_ context.Context, ref artifact.Ref) (io.ReadCloser, error) {
	return j.pack.Open(ref)
}

func (j *diskJournal) openStored(_ context.Context, ref artifact.Ref) (io.ReadCloser, error) {
	r, err := j.pack.OpenStored(ref)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(r), nil
}

func (j *diskJournal) check(_ context.Context, ref artifact.Ref) *DamageError {
	if err := j.pack.Check(ref); err != nil {
		return problem(j.v.id, j.pack.Path(), err)
	}
	return nil
}

// kept: a reclaimed frame keeps its header, its body all zeros.
func (j *diskJournal) kept(_ context.Context, ref artifact.Ref) (bool, error) {
	gone, err := j.pack.Reclaimed(ref)
	return !gone, err
}

func (j *diskJournal) verify(ctx context.Context, rep *VerifyReport) {
	j.verifySnapshot(ctx, rep)
	j.verifyViews(rep)
	// Verify reads every record anyway: a cache's head at the log's last
	// seq is checked against the chain's (a cache beyond the log kept the
	// voyage from opening: verifyLog reported it).
	cached := readClaims(j.d.h.dir, j.v.dir, j.v.id) // before the log: see claims
	head, err := j.head(ctx)
	if err != nil {
		var d *DamageError
		if errors.As(err, &d) {
			rep.Problems = append(rep.Problems, d) // the stored head is not the records'
		}
		return
	}
	rep.Problems = append(rep.Problems, cached.against(head.Seq, &head)...)
}

// head is the chain's head at the log's end as this handle sees it,
// computed from the records: never a stored link alone. The first call
// of a handle reads the log from its genesis (every record, or a stub's
// digest); later ones continue from that verified point over the records
// appended since, read from disk. The result is compared with the head
// the log stores (segment.Log.Head: the last segment's header link, kept
// by WATERMARK too, carried over the segment's records), which anyone
// who can write the home can rewrite: a mismatch is damage, and no head
// is handed out — a head is what witnesses certify.
func (j *diskJournal) head(ctx context.Context) (chain.Head, error) {
	j.headMu.Lock()
	defer j.headMu.Unlock()
	linked := j.log.Chain().Kind == "blake3"
	stored := chain.Head{Seq: j.log.Last()} // an older log stores no link: its head is only computed
	if linked {
		var err error
		if stored, err = j.log.Head(ctx); err != nil {
			return chain.Head{}, err
		}
	}
	h := j.verified
	if h.Seq == 0 {
		h.Hash = chain.Genesis(j.v.id)
	}
	if h.Seq < stored.Seq {
		err := j.log.Scan(ctx, h.Seq+1, func(r segment.Record) error {
			if r.Seq > stored.Seq {
				return errHeadReached
			}
			h = chain.Head{Seq: r.Seq, Hash: r.Link(h.Hash)} // a reclaimed record by the digest its stub keeps
			return nil
		})
		if err != nil && !errors.Is(err, errHeadReached) {
			return chain.Head{}, err
		}
	}
	if h.Seq != stored.Seq {
		// The read stopped short of what the log holds: a record below
		// its end does not check out (a reader takes it for a write in
		// progress).
		events := j.log.Dir()
		return chain.Head{}, &DamageError{Voyage: j.v.id, File: events, Seq: h.Seq + 1,
			Reason: fmt.Sprintf("the chain's head: the records read end at seq %d, the log holds %d: record %d does not check out", h.Seq, stored.Seq, h.Seq+1),
			Err:    fmt.Errorf("voyage %s is damaged: %s: the records read end at seq %d, the log holds %d", j.v.id, events, h.Seq, stored.Seq)}
	}
	if linked && h.Hash != stored.Hash {
		events := j.log.Dir()
		file := lastSegment(events)
		return chain.Head{}, &DamageError{Voyage: j.v.id, File: file, Seq: h.Seq,
			Reason: fmt.Sprintf("the stored chain link at seq %d does not match the records: the log was edited", h.Seq),
			Err: fmt.Errorf("voyage %s is damaged: %s: the stored chain link at seq %d does not match the records: the log was edited (stored %s, the records give %s)",
				j.v.id, file, h.Seq, stored.Hash, h.Hash)}
	}
	j.verified = h
	return h, nil
}

// cacheHead is the head a cache records (summary.json): the one head
// computed, when this handle computed one (continued over what was
// appended since: a few records), else the stored one. A close must not
// cost a read of the whole log; a cache hands out nothing, and one that
// records a stored head that is not the records' is found by verify,
// which compares it with the chain.
func (j *diskJournal) cacheHead(ctx context.Context) (chain.Head, error) {
	j.headMu.Lock()
	computed := j.verified.Seq > 0
	j.headMu.Unlock()
	if computed {
		return j.head(ctx)
	}
	return j.log.Head(ctx)
}

// errHeadReached ends head's read at the stored head's seq.
var errHeadReached = errors.New("the stored head's seq is reached")

// lastSegment names the segment file of the log in dir whose header holds
// the stored link head compares (the last one), or dir if none is found.
func lastSegment(dir string) string {
	names, err := filepath.Glob(filepath.Join(dir, "*.seg"))
	if err != nil || len(names) == 0 {
		return dir
	}
	return names[len(names)-1] // zero-padded first seqs: sorted by name
}

func (j *diskJournal) status() StorageInfo {
	s := j.log.Stats()
	st := StorageInfo{Torn: cutOf(j.log.Torn()), Writes: WriteStats{Units: s.Units, Records: s.Records, Syncs: s.Syncs}}
	for _, c := range j.log.Cuts() {
		st.Cuts = append(st.Cuts, *cutOf(&c))
	}
	return st
}

// close brings the voyage's listing summary up to date, if this handle
// changed the voyage (only writers write caches), records what the voyage
// became in the home index, writes its snapshot when one is due, and
// releases its files.
func (j *diskJournal) close(ctx context.Context) error {
	if j.v.summaryDue() && j.summaryStale() {
		j.summarize(ctx)
	}
	// The index's view first: it folds what others appended, which may
	// need a section still in the snapshot read, closed by writeSnapshot.
	idx := j.viewForIndex(ctx)
	j.writeSnapshot() // and closes the snapshot read
	err := j.log.Close()
	if perr := j.pack.Close(); err == nil {
		err = perr
	}
	j.closeIndex(ctx, idx)
	return err
}
