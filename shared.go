package helm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
	"github.com/helmlog/helm/store"
)

// A shared home: its voyages are in a store that a crew shares across
// machines (a NATS JetStream server, package store/natsstore), through the
// seam of package store; its directory on this machine keeps only what is
// this machine's (the guard rules, the identities' GitHub logins). The
// backend shared and its journal (backend.go) implement every verb as on
// a home on disk, with these differences:
//
//   - a change decides on the views as the store's tail stands, and
//     appends its unit only on that tail (store.Log.AppendIf); the views
//     take its events in once it is appended: when another writer came
//     between, the change folds what it appended and decides again;
//   - a large artifact is kept by its address (store.Artifacts), and the
//     Offset its event records is the one the store returned, or, from a
//     store that returns none (JetStream's), a name for the copy
//     made from the sequence number of that event (sharedOffset), which
//     tells its stored copies apart as a pack's frame offsets do;
//   - opening starts from the voyage's snapshot when the store keeps one
//     (store.Snapshots: a writer's Close puts it there, as on disk, once
//     Options.snapshotEvery events were folded since the last; the store
//     checks its head against the log) and folds the events after it, or
//     folds the voyage from its first event; listing reads the summaries
//     the store keeps;
//   - a store that erases (store.Eraser: JetStream keeps each artifact
//     encrypted under a key of its own) takes every artifact, however
//     small, rather than a blob record in the log, which it could never
//     erase; a jettison erases the artifact's copy once it is recorded,
//     and compaction erases what is left to erase (the payloads of
//     reduced artifacts, a jettison whose erasure failed);
//   - compaction is refused by a store that does not erase: it keeps
//     every record and artifact.

// OpenStore opens the home whose voyages st holds. dir is this machine's
// directory for the home (it holds the guard rules, PolicyFile, and the
// identities' GitHub logins) and where names the store in messages (its
// URL). opts may be nil, as for Open. The caller closes st once done with
// the home.
func OpenStore(dir string, st store.Store, where string, opts *Options) (*Home, error) {
	h, err := Open(dir, opts)
	if err != nil {
		return nil, err
	}
	h.back, h.storeName = &shared{h: h, st: st, name: where}, where
	return h, nil
}

// StoreName returns the name of the store that holds the home's voyages,
// as OpenStore was given it (its URL); "" for a home whose voyages are on
// this machine's disk, in Dir.
func (h *Home) StoreName() string { return h.storeName }

// shared is the backend of a home whose voyages are in a store.
type shared struct {
	h    *Home
	st   store.Store
	name string
}

func (s *shared) where() string { return s.name }

// sharedJournal is a voyage's log and large artifacts in a shared store.
type sharedJournal struct {
	v    *Voyage
	s    *shared
	log  store.Log
	arts store.Artifacts
	// eraser is arts, when the store erases artifacts (nil: it keeps
	// every artifact's bytes).
	eraser store.Eraser
	// snaps is log, when the store keeps snapshots (nil: it keeps none).
	snaps store.Snapshots
	where string

	mu    sync.Mutex // one commit of this handle at a time
	known uint64     // the last record the store is known to hold (mu)
	// ahead are records after the tail a decision was taken on, up to
	// known: those the store gave with its conflict
	// (store.ConflictError.Records), or those a decision's read met past
	// its tail (sharedTx.Scan); the next decision folds them without
	// reading them again (mu).
	ahead   []store.Record
	units   atomic.Uint64
	records atomic.Uint64
}

func (j *sharedJournal) Scan(ctx context.Context, from uint64, fn func(segment.Record) error) error {
	return j.log.Scan(ctx, from, recordsOf(fn))
}

func (j *sharedJournal) Follow(ctx context.Context, from uint64, fn func(segment.Record) error) error {
	return j.log.Follow(ctx, from, recordsOf(fn))
}

func (j *sharedJournal) Dir() string { return j.where }

func recordsOf(fn func(segment.Record) error) func(store.Record) error {
	return func(rec store.Record) error { return fn(segment.Record{Seq: rec.Seq, Data: rec.Data}) }
}

// begin: a shared store lists its voyages itself.
func (j *sharedJournal) begin(context.Context) error { return nil }

// commit decides on the tail the store was last known to have (or the
// last record the views hold, if later), and appends the unit on it: with
// one writer, that is the tail, and a commit costs one request; when
// another writer came first, the store's *ConflictError says where the
// tail is, for the next attempt to fold up to.
func (j *sharedJournal) commit(ctx context.Context, decide func(logTx) ([][]byte, error), applied func() error) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	last := max(j.known, j.v.seq())
	var records [][]byte
	for fresh := false; ; fresh = true {
		var err error
		records, err = decide(&sharedTx{ctx: ctx, j: j, last: last})
		if err == nil && len(records) > 0 {
			break
		}
		// A refusal, or nothing to append, is only as good as the tail
		// it was decided on: decide again if the store has more.
		if !fresh {
			if now, lerr := j.log.Last(ctx); lerr == nil && now > last {
				j.known, last = now, now
				continue
			}
		}
		if err == nil {
			err = applied()
		}
		return err
	}
	// What the views hold now was in the store before the append asks
	// for its tail: a tail before it is a loss. Not what they hold after:
	// a refresh of this handle outside the commit (Observe's, Refresh) may
	// fold, meanwhile, records another writer appended after the store
	// answered.
	held := j.v.seq()
	if _, err := j.log.AppendIf(ctx, last, records...); err != nil {
		var ce *store.ConflictError
		if errors.As(err, &ce) {
			if ce.Actual < held {
				reason := fmt.Sprintf("the store's log ends at record %d, but this handle read up to record %d from it: the store lost records it had acknowledged", ce.Actual, held)
				return &DamageError{Voyage: j.v.id, File: j.where, Seq: ce.Actual + 1, Reason: reason,
					Err: fmt.Errorf("%w: %s: %s", ErrDamaged, j.where, reason)}
			}
			j.known = ce.Actual
			if n := len(ce.Records); n > 0 && ce.Records[0].Seq == ce.Expected+1 && ce.Records[n-1].Seq == ce.Actual {
				j.ahead = ce.Records
			}
		}
		return &appendError{err}
	}
	j.known = last + uint64(len(records))
	j.ahead = nil
	j.units.Add(1)
	j.records.Add(uint64(len(records)))
	if err := applied(); err != nil {
		return err
	}
	return j.eraseJettisoned(ctx, records)
}

// eraseJettisoned erases, in a store that erases, the copies of the
// artifacts that the unit's events jettison and that the views, which
// took the unit in, hold jettisoned still: after the unit is appended,
// for an artifact erased before its jettison is recorded would be
// damage. A unit the views did not take in (an import's: they are
// folded once it is whole) erases nothing: its voyage's compaction
// erases what ends jettisoned, never a copy stowed again later. An
// erasure that fails leaves the jettison recorded: the error says so,
// and Compact erases it.
func (j *sharedJournal) eraseJettisoned(ctx context.Context, records [][]byte) error {
	if j.eraser == nil {
		return nil
	}
	var errs []error
	for _, rec := range records {
		if artifact.IsBlob(rec) {
			continue
		}
		e, err := projection.Decode(rec)
		if err != nil || e.Type != projection.ArtifactJettisoned || e.Artifact == nil {
			continue // the unit was checked before it was appended
		}
		j.v.mu.Lock()
		a, err := j.v.artifact(e.Artifact.Hash, j.v.logScan(ctx))
		j.v.mu.Unlock()
		if err == nil && (a == nil || a.Status != projection.Jettisoned) {
			continue
		}
		if _, err := j.eraser.Erase(ctx, e.Artifact.Hash); err != nil {
			errs = append(errs, fmt.Errorf("the jettison of artifact %s is recorded, but its bytes in %s could not be erased yet (compacting the voyage erases them): %w", e.Artifact.Hash, j.s.name, err))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return &erasureError{errors.Join(errs...)}
}

// erasureError is a jettison's erasure that failed once the jettison was
// recorded: the change is recorded, its erasure left to Compact.
type erasureError struct{ err error }

func (e *erasureError) Error() string { return e.err.Error() }
func (e *erasureError) Unwrap() error { return e.err }

// sharedTx reads the records up to the tail a commit decides on.
type sharedTx struct {
	ctx  context.Context
	j    *sharedJournal
	last uint64
}

func (t *sharedTx) Last() uint64 { return t.last }

func (t *sharedTx) Scan(from uint64, fn func(segment.Record) error) error {
	if from > t.last {
		return nil
	}
	// The records the store gave with its conflict, when they are those
	// asked for: the decision folds them without a read.
	if a := t.j.ahead; len(a) > 0 && a[0].Seq <= from && a[len(a)-1].Seq == t.last {
		for _, rec := range a[from-a[0].Seq:] {
			if err := fn(segment.Record{Seq: rec.Seq, Data: rec.Data}); err != nil {
				return err
			}
		}
		return nil
	}
	// Records past the tail met on the way are kept (a few), for the
	// next decision: this one's unit is refused, as it decided before
	// them.
	var beyond []store.Record
	err := t.j.Scan(t.ctx, from, func(rec segment.Record) error {
		if rec.Seq <= t.last {
			return fn(rec)
		}
		if len(beyond) == keepAhead || rec.Reclaimed {
			return errFound
		}
		beyond = append(beyond, store.Record{Seq: rec.Seq, Data: bytes.Clone(rec.Data)})
		return nil
	})
	if len(beyond) > 0 && beyond[0].Seq == t.last+1 && (err == nil || errors.Is(err, errFound)) {
		t.j.ahead = beyond
		t.j.known = max(t.j.known, beyond[len(beyond)-1].Seq)
	}
	if errors.Is(err, errFound) {
		return nil
	}
	return err
}

// keepAhead bounds the records past a decision's tail its read keeps for
// the next decision (sharedTx.Scan).
const keepAhead = 256

// storeUnit bounds the units appendImported appends to a shared store:
// every store takes units of 900 KiB of records (store.Log.AppendIf),
// less what a store adds to each record (counted as perRecord bytes).
const (
	storeUnit = 900 << 10
	perRecord = 16
)

func (j *sharedJournal) maxUnit() int { return storeUnit }

// settle reads a streamed artifact into memory: a shared store takes an
// artifact whole (store.Artifacts).
func (j *sharedJournal) settle(a *artifact.Encoded) error { return a.Settle() }

// inline: in a store that erases, never (a blob record in the log could
// not be erased).
func (j *sharedJournal) inline(a *artifact.Encoded) bool {
	if j.eraser != nil {
		a.Compress()
		return false
	}
	return a.Inline()
}

// stow puts the artifact in the store; the event records the reference
// the store returns (store.Artifacts.Put): a store that finds an artifact
// by where it put it needs its offset; one that finds it by its address
// alone returns none, and the copy is named by its event (sharedOffset).
// The artifact is settled (settle), and the voyage does not hold it.
func (j *sharedJournal) stow(ctx context.Context, a *artifact.Encoded, _ func(string) bool) (artifact.Ref, bool, error) {
	a.Compress()
	r, err := j.arts.Put(ctx, a)
	if err != nil {
		return artifact.Ref{}, false, err
	}
	return artifact.Ref{Hash: a.Hash, Size: a.Size, StoredSize: int64(len(a.Compressed)), Offset: r.Offset}, true, nil
}

// stowStored reads a copy's stored bytes whole, checks them against its
// address and puts them in the store; a reclaimed copy has no bytes in
// it.
func (j *sharedJournal) stowStored(ctx context.Context, ref artifact.Ref, src io.Reader) (artifact.Ref, error) {
	ref.Offset = 0 // where the store puts it, if it says: else named by its event
	if src == nil {
		return ref, nil
	}
	stored, err := io.ReadAll(src)
	if err != nil {
		return artifact.Ref{}, err
	}
	if _, err := artifact.Expand(ref, stored, j.where); err != nil {
		return artifact.Ref{}, err
	}
	r, err := j.arts.Put(ctx, &artifact.Encoded{Hash: ref.Hash, Size: ref.Size, Compressed: stored})
	if err != nil {
		return artifact.Ref{}, err
	}
	ref.Offset = r.Offset
	return ref, nil
}

func (j *sharedJournal) open(ctx context.Context, ref artifact.Ref) (io.ReadCloser, error) {
	data, err := j.arts.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

func (j *sharedJournal) openStored(ctx context.Context, ref artifact.Ref) (io.ReadCloser, error) {
	return j.arts.Open(ctx, ref)
}

func (j *sharedJournal) check(ctx context.Context, ref artifact.Ref) *DamageError {
	if _, err := j.arts.Get(ctx, ref); err != nil {
		return problem(j.v.id, j.where, err)
	}
	return nil
}

// kept: a shared store, which never reclaims, keeps a jettisoned or
// reduced artifact's copy as it was imported, which no export ships; its
// bytes are not checked.
func (j *sharedJournal) kept(context.Context, artifact.Ref) (bool, error) { return false, nil }

// compact erases, in a store that erases, the copies of the voyage's
// jettisoned artifacts and the original payloads of its reduced ones:
// Artifacts counts them (Reduced those of reduced ones), Kept those the
// store holds in a form it cannot erase (stored unencrypted by an earlier
// version, or a blob record in the log). The log is untouched: its
// records, and so its chain, stay as they are. A store that does not
// erase refuses: it keeps every record and artifact.
func (j *sharedJournal) compact(ctx context.Context) (CompactReport, error) {
	v := j.v
	rep := CompactReport{Voyage: v.id}
	if j.eraser == nil {
		return rep, v.fail("compact", fmt.Errorf("%w: the voyage is in %s, which keeps every record and artifact: compaction reclaims the bytes of jettisoned artifacts on this machine's disk only", ErrInvalid, j.s.name),
			hint.Hint{Kind: hint.OtherHome, Text: "pull the voyage into a home on disk and compact it there"})
	}
	if err := v.refresh(ctx); err != nil {
		return rep, v.fail("compact", err, hint.Hint{})
	}
	type gone struct {
		hash    string
		blob    bool
		reduced bool
	}
	var list []gone
	v.mu.Lock()
	err := v.loadSections(projection.SectionArtifacts, v.logScan(ctx))
	if err == nil {
		for h, a := range v.st.Artifacts {
			if a.Status != projection.Stowed {
				list = append(list, gone{h, a.Blob != 0, a.Status == projection.Reduced})
			}
		}
	}
	v.mu.Unlock()
	if err != nil {
		return rep, v.fail("compact", err, hint.Hint{})
	}
	slices.SortFunc(list, func(a, b gone) int { return strings.Compare(a.hash, b.hash) })
	for _, g := range list {
		erased := false
		if !g.blob {
			if erased, err = j.eraser.Erase(ctx, g.hash); err != nil {
				return rep, v.fail("compact", fmt.Errorf("erase artifact %s in %s: %w", g.hash, j.s.name, err), hint.Hint{Text: "compact again once the store answers"})
			}
		}
		switch {
		case !erased:
			rep.Kept++
		case g.reduced:
			rep.Artifacts++
			rep.Reduced++
		default:
			rep.Artifacts++
		}
	}
	return rep, nil
}

// verify: the store checked every record (verifyLog); the voyage was
// folded from them. Its snapshot is checked against them.
func (j *sharedJournal) verify(ctx context.Context, rep *VerifyReport) {
	rep.Events.Records = j.v.Info().Seq
	rep.Events.LastSeq = rep.Events.Records
	j.verifySnapshot(ctx, rep)
}

// head asks the store for the head after the last record this handle
// folded or appended: a JetStream unit stores the link after its last
// record, which the store's Log read (and checked) when the handle folded
// or appended it, so this reads no record.
func (j *sharedJournal) head(ctx context.Context) (chain.Head, error) {
	h, err := j.log.Head(ctx, j.v.seq())
	if err != nil {
		if d := damageOf(j.v.id, err); d != nil {
			err = d
		}
		return chain.Head{}, &VoyageError{Op: "head", Voyage: j.v.id, Err: err}
	}
	return h, nil
}

// status: a shared store's appends are whole or absent (no torn tail, no
// cut); each unit is one request the store makes durable.

func (j *sharedJournal) status() StorageInfo {
	n := j.units.Load()
	return StorageInfo{Writes: WriteStats{Units: n, Records: j.records.Load(), Syncs: n}}
}

// summarize gives the store the voyage's summary. Failing to is not an
// error for the caller: listing reads the events of a voyage whose
// summary is stale.
func (j *sharedJournal) summarize(ctx context.Context) {
	v := j.v
	v.mu.Lock()
	info := v.st.Voyage
	v.mu.Unlock()
	data, err := json.Marshal(summaryFile{Version: summaryVersion, Voyage: info})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, summaryTimeout)
	defer cancel()
	if j.s.st.PutSummary(ctx, v.id, store.Summary{Seq: info.Seq, Data: data}) == nil {
		v.mu.Lock()
		v.summarySeq = info.Seq
		v.mu.Unlock()
	}
}

// summaryTimeout bounds how long giving the store a voyage's summary may
// take: a cache, which the next writer's close or a listing makes good.
const summaryTimeout = 10 * time.Second

func (j *sharedJournal) close(ctx context.Context) error {
	if j.v.summaryDue() {
		j.summarize(ctx)
	}
	j.writeSnapshot(ctx)
	return j.log.Close()
}

// voyage returns the Voyage of id whose log is log, its views empty.
func (s *shared) voyage(id string, log store.Log) *Voyage {
	where := fmt.Sprintf("voyage %s in %s", id, s.name)
	v := &Voyage{home: s.h, id: id}
	arts := s.st.Artifacts(id)
	eraser, _ := arts.(store.Eraser)
	snaps, _ := log.(store.Snapshots)
	v.rec = &sharedJournal{v: v, s: s, log: log, arts: arts, eraser: eraser, snaps: snaps, where: where}
	v.applyRecord = eventsOf(id, where, v.applyEvent)
	return v
}

// create makes voyage id in the store and writes its first events with
// first. A start that fails after the store made the voyage leaves a
// voyage with no events, which listing leaves out.
func (s *shared) create(ctx context.Context, id string, first func(*Voyage) error) error {
	log, err := s.st.Create(ctx, id)
	if errors.Is(err, store.ErrExists) {
		// A start that failed before its first event left the voyage
		// empty: this one takes it over, and its AppendIf on the empty
		// tail lets one writer in, whoever else tries.
		if l, oerr := s.st.Open(ctx, id); oerr == nil {
			if last, lerr := l.Last(ctx); lerr == nil && last == 0 {
				log, err = l, nil
			} else {
				l.Close()
			}
		}
	}
	if err != nil {
		return &VoyageError{Op: "start voyage", Voyage: id, Err: err}
	}
	v := s.voyage(id, log)
	err = first(v)
	if cerr := v.Close(); err == nil {
		err = cerr
	}
	var ve *VoyageError
	if err != nil && !errors.As(err, &ve) {
		err = &VoyageError{Op: "start voyage", Voyage: id, Err: err}
	}
	return err
}

// open folds the voyage from its snapshot, if fromSnapshot and the store
// keeps one it can trust (sharedJournal.fromSnapshot), else from its first
// event.
func (s *shared) open(ctx context.Context, id string, fromSnapshot bool) (*Voyage, error) {
	v, err := s.fold(ctx, id, fromSnapshot)
	if err != nil {
		return nil, err
	}
	if v.st.Voyage.Seq == 0 {
		// Not damage: the store made the voyage, and the start (an
		// import, a push) stopped before its first unit was appended.
		// Listing leaves it out, and a push of that voyage takes it over.
		v.Close()
		return nil, fmt.Errorf("%w: %s in %s: its start wrote no event (a start, import or push stopped part way: push the voyage again)", ErrNoVoyage, id, s.name)
	}
	return v, nil
}

// fold opens voyage id of the store, folding its events: those after its
// snapshot, if fromSnapshot and it has one to trust.
func (s *shared) fold(ctx context.Context, id string, fromSnapshot bool) (*Voyage, error) {
	log, err := s.st.Open(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s in %s", ErrNoVoyage, id, s.name)
	}
	if err != nil {
		return nil, &VoyageError{Op: "open", Voyage: id, Err: err}
	}
	v := s.voyage(id, log)
	if fromSnapshot {
		if err := v.rec.(*sharedJournal).fromSnapshot(ctx); err != nil {
			log.Close()
			return nil, v.fail("open", err, hint.Hint{})
		}
	}
	if err := v.foldNew(v.logScan(ctx)); err != nil { // v is not shared yet: no lock
		log.Close()
		return nil, v.fail("open", err, hint.Hint{})
	}
	return v, nil
}

// started asks the voyage's tail, not the store's whole list; a voyage
// whose start wrote no event is not there.
func (s *shared) started(ctx context.Context, id string) (bool, error) {
	last, err := s.last(ctx, id)
	switch {
	case err == nil:
		return last > 0, nil
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	}
	if d := damageOf(id, err); d != nil {
		err = d // a voyage the store holds, damaged
	}
	return false, &VoyageError{Op: "find voyage", Voyage: id, Err: err}
}

// last returns the last record of voyage id in the store: 0 when its
// start wrote no event.
func (s *shared) last(ctx context.Context, id string) (uint64, error) {
	log, err := s.st.Open(ctx, id)
	if err != nil {
		return 0, err
	}
	defer log.Close()
	return log.Last(ctx)
}

// ids keeps, of the voyages of the store whose id begins with prefix,
// those whose start was recorded: a voyage with no events is not there,
// as listing leaves it out. One with a summary was started; only the
// others' logs are asked.
func (s *shared) ids(ctx context.Context, prefix string) ([]string, error) {
	all, err := s.st.Voyages(ctx)
	if err != nil {
		return nil, &VoyageError{Op: "list voyages", Err: err}
	}
	var out []string
	for id, sum := range all {
		if !strings.HasPrefix(id, prefix) {
			continue
		}
		if sum.Seq == 0 {
			last, err := s.last(ctx, id)
			if errors.Is(err, store.ErrNotFound) || err == nil && last == 0 {
				continue
			}
			if err != nil {
				return nil, &VoyageError{Op: "find voyage", Voyage: id, Err: err}
			}
		}
		out = append(out, id)
	}
	slices.Sort(out)
	return out, nil
}

// summary returns the voyage view of id from the summary the store
// keeps, when it describes the log's last record, else from its events.
// A voyage with no events (its start failed) is errNotStarted. A voyage
// whose log lost records the store had acknowledged is damage, whatever
// its summary says: the store found it (l.Err), or the summary, read
// before the tail, describes a record after the log's last.
func (s *shared) summary(ctx context.Context, id string, l store.Listing) (VoyageInfo, error) {
	if l.Err != nil {
		err := l.Err
		if d := damageOf(id, err); d != nil {
			err = d
		}
		return VoyageInfo{}, &VoyageError{Op: "list voyages", Voyage: id, Err: err}
	}
	sum, last := l.Summary, l.Last
	if sum.Seq > last {
		where := fmt.Sprintf("voyage %s in %s", id, s.name)
		reason := fmt.Sprintf("the store's summary of the voyage describes record %d, but its log ends at record %d: the store lost records it had acknowledged", sum.Seq, last)
		return VoyageInfo{}, &DamageError{Voyage: id, File: where, Seq: last + 1, Reason: reason,
			Err: fmt.Errorf("%w: %s: %s", ErrDamaged, where, reason)}
	}
	if last == 0 {
		return VoyageInfo{}, errNotStarted
	}
	var f summaryFile
	if sum.Seq == last && json.Unmarshal(sum.Data, &f) == nil && f.Version == summaryVersion && f.Voyage.ID == id && f.Voyage.Seq == last {
		return voyageInfo(f.Voyage), nil
	}
	v, err := s.fold(ctx, id, true)
	if err != nil {
		return VoyageInfo{}, err
	}
	defer v.Close()
	return v.Info(), nil
}

// errNotStarted is a shared voyage whose start wrote no event: listing
// leaves it out, as a home on disk leaves out a start that crashed.
var errNotStarted = fmt.Errorf("%w: its start wrote no event", ErrNoVoyage)

// list reads the summaries the store keeps, checked against each log's
// tail as the store lists it (store.List).
func (s *shared) list(ctx context.Context, filter StatusFilter) ([]VoyageInfo, error) {
	all, err := s.st.List(ctx)
	if err != nil {
		return nil, &VoyageError{Op: "list voyages", Err: err}
	}
	ids := make([]string, 0, len(all))
	for id := range all {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	read, unreadable, err := readEach(ctx, ids, 16, func(id string) (VoyageInfo, error) {
		return s.summary(ctx, id, all[id])
	})
	if err != nil {
		return nil, err
	}
	return listed(nil, read, unreadable, filter)
}

// verifyLog has the store check every record and its place in the chain.
func (s *shared) records(ctx context.Context, id string, fn func(segment.Record) error) error {
	log, err := s.st.Open(ctx, id)
	if err != nil {
		return err
	}
	defer log.Close()
	return log.Scan(ctx, 1, recordsOf(fn))
}

func (s *shared) storedOf(ctx context.Context, id string, ref artifact.Ref) (io.ReadCloser, error) {
	return s.st.Artifacts(id).Open(ctx, ref)
}

func (s *shared) verifyLog(ctx context.Context, id string, rep *VerifyReport) (string, bool, error) {
	rep.Events = LogReport{Store: s.name}
	log, err := s.st.Open(ctx, id)
	if err != nil {
		return s.name, false, &VoyageError{Op: "verify", Voyage: id, Err: err}
	}
	err = log.Verify(ctx)
	log.Close()
	if err != nil {
		if ctx.Err() != nil {
			return s.name, false, err
		}
		rep.Problems = append(rep.Problems, problem(id, s.name, err))
		return s.name, false, nil
	}
	return s.name, true, nil
}
