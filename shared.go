package helm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/segment"
	"github.com/helmlog/helm/store"
)

// A shared home: its voyages are in a store that a crew shares across
// machines (a NATS JetStream server, package store/jetstream), through the
// seam of package store; its directory on this machine keeps only what is
// this machine's (the guard rules, the identities' GitHub logins). Every
// verb works as on a home on disk, with these differences:
//
//   - a change decides on the views as the store's tail stands, and
//     appends its unit only on that tail (store.Log.AppendIf); the views
//     take its events in once it is appended: when another writer came
//     between, the change folds what it appended and decides again;
//   - a large artifact is kept by its address (store.Artifacts), and the
//     Offset its event records is the one the store returned (store.Dir's
//     pack frame), or, from a store that returns none, a name for the copy
//     made from the sequence number of that event (sharedOffset), which
//     tells its stored copies apart as a pack's frame offsets do;
//   - opening folds the voyage from its first event (there is no snapshot
//     to start from), and listing reads the summaries the store keeps;
//   - compaction, which reclaims bytes of a disk, is refused.

// OpenStore opens the home whose voyages st holds. dir is this machine's
// directory for the home (it holds the guard rules, PolicyFile, and the
// identities' GitHub logins) and where names the store in messages (its
// URL). The caller closes st once done with the home.
func OpenStore(dir string, st store.Store, where string, opts *Options) (*Home, error) {
	h, err := Open(dir, opts)
	if err != nil {
		return nil, err
	}
	h.shared, h.sharedAt = st, where
	return h, nil
}

// Store names the store that holds the home's voyages ("" for a home
// whose voyages are on this machine's disk, in Dir).
func (h *Home) Store() string { return h.sharedAt }

// recordLog is what a Voyage reads its log through: the segment log of a
// home on disk, or a shared store's log.
type recordLog interface {
	Scan(ctx context.Context, from uint64, fn func(segment.Record) error) error
	Follow(ctx context.Context, from uint64, fn func(segment.Record) error) error
	// Dir names the log in messages: its directory, or its place in the
	// store.
	Dir() string
	Close() error
}

// logTx is what a commit's decide reads the log through: the tail it
// decides on, and the records up to it.
type logTx interface {
	Last() uint64
	Scan(from uint64, fn func(segment.Record) error) error
}

// commitLog appends the records decide returns as one unit: for a home on
// disk under the log's lock, in a group of concurrent commits; for a
// shared one, on the tail decide read, or not at all (*appendError).
func (v *Voyage) commitLog(ctx context.Context, decide func(logTx) ([][]byte, error)) error {
	if v.remote != nil {
		return v.remote.commit(ctx, decide, func() uint64 {
			v.mu.Lock()
			defer v.mu.Unlock()
			return v.st.Voyage.Seq
		})
	}
	_, err := v.log.Commit(ctx, func(tx *segment.Tx) ([][]byte, error) { return decide(tx) })
	return err
}

// remote is a voyage's log and large artifacts in a shared store.
type remote struct {
	id    string
	log   store.Log
	arts  store.Artifacts
	where string

	mu      sync.Mutex // one commit of this handle at a time
	known   uint64     // the last record the store is known to hold (mu)
	units   atomic.Uint64
	records atomic.Uint64
}

func (r *remote) Scan(ctx context.Context, from uint64, fn func(segment.Record) error) error {
	return r.log.Scan(ctx, from, recordsOf(fn))
}

func (r *remote) Follow(ctx context.Context, from uint64, fn func(segment.Record) error) error {
	return r.log.Follow(ctx, from, recordsOf(fn))
}

func (r *remote) Dir() string  { return r.where }
func (r *remote) Close() error { return r.log.Close() }

func recordsOf(fn func(segment.Record) error) func(store.Record) error {
	return func(rec store.Record) error { return fn(segment.Record{Seq: rec.Seq, Data: rec.Data}) }
}

// appendError is a shared store's refusal or failure of a unit that was
// decided: the views have not taken its events in.
type appendError struct{ err error }

func (e *appendError) Error() string { return e.err.Error() }
func (e *appendError) Unwrap() error { return e.err }

// commit decides on the tail the store was last known to have (seen:
// the last record the views hold, if later), and appends the unit on it:
// with one writer, that is the tail, and a commit costs one request; when
// another writer came first, the store's *ConflictError says where the
// tail is, for the next attempt to fold up to.
func (r *remote) commit(ctx context.Context, decide func(logTx) ([][]byte, error), seen func() uint64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	last := max(r.known, seen())
	var records [][]byte
	for fresh := false; ; fresh = true {
		var err error
		records, err = decide(&remoteTx{ctx: ctx, r: r, last: last})
		if err == nil && len(records) > 0 {
			break
		}
		// A refusal, or nothing to append, is only as good as the tail
		// it was decided on: decide again if the store has more.
		if !fresh {
			if now, lerr := r.log.Last(ctx); lerr == nil && now > last {
				r.known, last = now, now
				continue
			}
		}
		return err
	}
	if _, err := r.log.AppendIf(ctx, last, records...); err != nil {
		var ce *store.ConflictError
		if errors.As(err, &ce) {
			if held := seen(); ce.Actual < held {
				reason := fmt.Sprintf("the store's log ends at record %d, but this handle read up to record %d from it: the store lost records it had acknowledged", ce.Actual, held)
				return &DamageError{Voyage: r.id, File: r.where, Seq: ce.Actual + 1, Reason: reason,
					Err: fmt.Errorf("%w: %s: %s", ErrDamaged, r.where, reason)}
			}
			r.known = ce.Actual
		}
		return &appendError{err}
	}
	r.known = last + uint64(len(records))
	r.units.Add(1)
	r.records.Add(uint64(len(records)))
	return nil
}

// remoteTx reads the records up to the tail a commit decides on.
type remoteTx struct {
	ctx  context.Context
	r    *remote
	last uint64
}

func (t *remoteTx) Last() uint64 { return t.last }

func (t *remoteTx) Scan(from uint64, fn func(segment.Record) error) error {
	if from > t.last {
		return nil
	}
	err := t.r.Scan(t.ctx, from, func(rec segment.Record) error {
		if rec.Seq > t.last {
			return errFound
		}
		return fn(rec)
	})
	if errors.Is(err, errFound) {
		return nil
	}
	return err
}

// conflictPause waits a little before a change decides again, a random
// part of a bound that doubles after each conflict up to 64 ms, so that
// writers that keep meeting on one voyage fall out of step; false if ctx
// ended.
//
// The first conflict of a change costs no pause: it decided on the tail
// last known, and learnt the store's.
func conflictPause(ctx context.Context, attempt int) bool {
	if attempt == 0 {
		return ctx.Err() == nil
	}
	d := time.Duration(rand.Int64N(int64(time.Millisecond) << min(attempt-1, 6)))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// sharedVoyage returns the Voyage of id whose log is log, its views
// empty.
func (h *Home) sharedVoyage(id string, log store.Log) *Voyage {
	where := fmt.Sprintf("voyage %s in %s", id, h.sharedAt)
	r := &remote{id: id, log: log, arts: h.shared.Artifacts(id), where: where}
	v := &Voyage{home: h, id: id, remote: r, rec: r}
	v.applyRecord = eventsOf(id, where, v.applyEvent)
	return v
}

// createShared makes voyage id in the store and writes its first events
// with first. A start that fails after the store made the voyage leaves
// a voyage with no events, which listing leaves out.
func (h *Home) createShared(ctx context.Context, id string, first func(*Voyage) error) error {
	log, err := h.shared.Create(ctx, id)
	if errors.Is(err, store.ErrExists) {
		// A start that failed before its first event left the voyage
		// empty: this one takes it over, and its AppendIf on the empty
		// tail lets one writer in, whoever else tries.
		if l, oerr := h.shared.Open(ctx, id); oerr == nil {
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
	v := h.sharedVoyage(id, log)
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

// openShared opens voyage id of the store, folding its events.
func (h *Home) openShared(ctx context.Context, id string) (*Voyage, error) {
	log, err := h.shared.Open(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s in %s", ErrNoVoyage, id, h.sharedAt)
	}
	if err != nil {
		return nil, &VoyageError{Op: "open", Voyage: id, Err: err}
	}
	v := h.sharedVoyage(id, log)
	if err := log.Scan(ctx, 1, recordsOf(v.applyRecord)); err != nil {
		log.Close()
		return nil, v.fail("open", err, Hint{})
	}
	return v, nil
}

// holds reports whether the home holds voyage id with its events: a
// shared store may hold one whose start failed before its first event,
// which Resolve leaves out (startedShared) and a new start (an import)
// takes over.
func (h *Home) holds(id string) bool {
	got, err := h.Resolve(id)
	return err == nil && got == id
}

// sharedLast returns the last record of voyage id in the store: 0 when
// its start wrote no event.
func (h *Home) sharedLast(ctx context.Context, id string) (uint64, error) {
	log, err := h.shared.Open(ctx, id)
	if err != nil {
		return 0, err
	}
	defer log.Close()
	return log.Last(ctx)
}

// startedShared keeps, of ids (voyages of the store), those whose start
// was recorded: a voyage with no events is not there for Resolve, as
// listing leaves it out. One with a summary was started; only the
// others' logs are asked.
func (h *Home) startedShared(ctx context.Context, ids []string, sums map[string]store.Summary) ([]string, error) {
	var out []string
	for _, id := range ids {
		if sums[id].Seq == 0 {
			last, err := h.sharedLast(ctx, id)
			if errors.Is(err, store.ErrNotFound) || err == nil && last == 0 {
				continue
			}
			if err != nil {
				return nil, &VoyageError{Op: "find voyage", Voyage: id, Err: err}
			}
		}
		out = append(out, id)
	}
	return out, nil
}

// sharedIDs lists the voyages of the store, sorted.
func (h *Home) sharedIDs(ctx context.Context) ([]string, map[string]store.Summary, error) {
	all, err := h.shared.Voyages(ctx)
	if err != nil {
		return nil, nil, &VoyageError{Op: "list voyages", Err: err}
	}
	ids := make([]string, 0, len(all))
	for id := range all {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, all, nil
}

// sharedSummary returns the voyage view of id from the summary the store
// keeps, when it describes the log's last record, else from its events.
// A voyage with no events (its start failed) is errNotStarted. A voyage
// whose log lost records the store had acknowledged is damage, whatever
// its summary says: the store found it (l.Err), or the summary, read
// before the tail, describes a record after the log's last.
func (h *Home) sharedSummary(ctx context.Context, id string, l store.Listing) (VoyageInfo, error) {
	if l.Err != nil {
		err := l.Err
		if d := damageOf(id, err); d != nil {
			err = d
		}
		return VoyageInfo{}, &VoyageError{Op: "list voyages", Voyage: id, Err: err}
	}
	sum, last := l.Summary, l.Last
	if sum.Seq > last {
		where := fmt.Sprintf("voyage %s in %s", id, h.sharedAt)
		reason := fmt.Sprintf("the store's summary of the voyage describes record %d, but its log ends at record %d: the store lost records it had acknowledged", sum.Seq, last)
		return VoyageInfo{}, &DamageError{Voyage: id, File: where, Seq: last + 1, Reason: reason,
			Err: fmt.Errorf("%w: %s: %s", ErrDamaged, where, reason)}
	}
	if last == 0 {
		return VoyageInfo{}, errNotStarted
	}
	var s summaryFile
	if sum.Seq == last && json.Unmarshal(sum.Data, &s) == nil && s.Version == summaryVersion && s.Voyage.ID == id && s.Voyage.Seq == last {
		return voyageInfo(s.Voyage), nil
	}
	v, err := h.openShared(ctx, id)
	if err != nil {
		return VoyageInfo{}, err
	}
	defer v.Close()
	return v.Info(), nil
}

// errNotStarted is a shared voyage whose start wrote no event: listing
// leaves it out, as a home on disk leaves out a start that crashed.
var errNotStarted = fmt.Errorf("%w: its start wrote no event", ErrNoVoyage)

// listShared is List for a shared home: the summaries the store keeps,
// checked against each log's tail as the store lists it (store.List).
func (h *Home) listShared(ctx context.Context, filter StatusFilter) ([]VoyageInfo, error) {
	all, err := h.shared.List(ctx)
	if err != nil {
		return nil, &VoyageError{Op: "list voyages", Err: err}
	}
	ids := make([]string, 0, len(all))
	for id := range all {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	read, unreadable, err := readEach(ctx, ids, 16, func(id string) (VoyageInfo, error) {
		return h.sharedSummary(ctx, id, all[id])
	})
	if err != nil {
		return nil, err
	}
	return listed(nil, read, unreadable, filter)
}

// putSharedSummary gives the store the voyage's summary, at Close after
// a change. Failing to is not an error for the caller: listing reads the
// events of a voyage whose summary is stale.
func (v *Voyage) putSharedSummary() {
	v.mu.Lock()
	info := v.st.Voyage
	v.mu.Unlock()
	data, err := json.Marshal(summaryFile{Version: summaryVersion, Voyage: info})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), summaryTimeout)
	defer cancel()
	if v.home.shared.PutSummary(ctx, v.id, store.Summary{Seq: info.Seq, Data: data}) == nil {
		v.mu.Lock()
		v.summarySeq = info.Seq
		v.mu.Unlock()
	}
}

// summaryTimeout bounds how long closing a voyage waits for its store to
// take its summary: a cache, which the next writer's close or a listing
// makes good.
const summaryTimeout = 10 * time.Second

// verifyShared is Verify for a voyage of a shared store: the store checks
// every record and its place in the chain, then the events are folded
// and every stowed artifact is read back and checked against its address.
func (h *Home) verifyShared(ctx context.Context, id string) (*VerifyReport, error) {
	rep := &VerifyReport{Voyage: id, Events: LogReport{Store: h.sharedAt}}
	log, err := h.shared.Open(ctx, id)
	if err != nil {
		return nil, &VoyageError{Op: "verify", Voyage: id, Err: err}
	}
	err = log.Verify(ctx)
	log.Close()
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		rep.Problems = append(rep.Problems, problem(id, h.sharedAt, err))
		return rep, nil
	}
	v, err := h.openShared(ctx, id)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		rep.Problems = append(rep.Problems, problem(id, h.sharedAt, err))
		return rep, nil
	}
	defer v.Close()
	rep.Events.Records = v.Info().Seq
	rep.Events.LastSeq = rep.Events.Records
	v.verifyPolicies(ctx, rep)
	return rep, v.verifyArtifacts(ctx, rep)
}

// remoteStower stores an archive's artifacts in a shared store (Import).
type remoteStower struct {
	ctx context.Context
	r   *remote
}

// StowStored reads a copy's stored bytes whole, checks them against its
// address and puts them in the store.
func (s remoteStower) StowStored(seq uint64, ref artifact.Ref, src io.Reader) (artifact.Ref, error) {
	stored, err := io.ReadAll(src)
	if err != nil {
		return artifact.Ref{}, err
	}
	if _, err := artifact.Expand(ref, stored, s.r.where); err != nil {
		return artifact.Ref{}, err
	}
	r, err := s.r.arts.Put(s.ctx, &artifact.Encoded{Hash: ref.Hash, Size: ref.Size, Compressed: stored})
	if err != nil {
		return artifact.Ref{}, err
	}
	ref.Offset = r.Offset // where the store put it, if it says (store.Dir)
	if ref.Offset == 0 {
		ref.Offset = sharedOffset(seq)
	}
	return ref, nil
}

// StowReclaimed keeps a jettisoned copy's place: a shared store holds no
// bytes for it.
func (s remoteStower) StowReclaimed(seq uint64, ref artifact.Ref) (artifact.Ref, error) {
	ref.Offset = sharedOffset(seq)
	return ref, nil
}

// sharedOffset is the Offset a shared store's large artifact records: a
// name for the copy, from the sequence number of the event that stored it,
// that no pack's frame offset is (2^62 and above), so that a voyage
// imported into a shared store and stowing more there never names two
// copies alike.
func sharedOffset(seq uint64) int64 { return int64(1<<62 | seq) }

// openStored opens the stored (compressed) bytes of a copy that is not
// in a blob record: in the pack, or in a shared store.
func (v *Voyage) openStored(ctx context.Context, ref artifact.Ref) (io.ReadCloser, error) {
	if v.remote != nil {
		return v.remote.arts.Open(ctx, ref)
	}
	r, err := v.pack.OpenStored(ref)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(r), nil
}
