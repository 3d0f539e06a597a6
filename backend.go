package helm

import (
	"context"
	"io"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/segment"
)

// The engine. A home keeps its voyages in a backend, and an open voyage
// reads and writes its records and its artifacts' bytes through a journal
// of that backend. Two backends implement them:
//
//   - disk (disk.go): a directory of this machine's disk, each voyage a
//     segment log (package segment) with an artifact pack beside it, and
//     the caches a writer keeps there: the snapshot (snapshot.go), the
//     listing summary (summary.go) and the home index (index.go);
//     compaction (compact.go) reclaims jettisoned artifacts' bytes;
//   - a shared store (shared.go): package store's seam, a NATS JetStream
//     server in production, whose logs take a unit only on the tail it
//     was decided on (store.Log.AppendIf).
//
// The facade (Home, Voyage and their verbs) talks to these two interfaces
// only, and never asks which backend it holds: every difference between
// the two is a method here, named for what the facade needs of it.

// backend is where a home keeps its voyages.
type backend interface {
	// where names the place in messages: the voyages' directory, or the
	// store's name (OpenStore).
	where() string
	// create makes voyage id and calls first with it open, to write its
	// first events: a voyage whose first fails is left for no one to
	// find (Resolve and List pass it by).
	create(ctx context.Context, id string, first func(*Voyage) error) error
	// open opens voyage id, folding its events into fresh views: from
	// its snapshot, when fromSnapshot and it has one to trust, else from
	// its first event. A voyage that holds no event is an error.
	open(ctx context.Context, id string, fromSnapshot bool) (*Voyage, error)
	// started reports whether the home holds voyage id (a full id) with
	// its start recorded; an error is a voyage it could not look at.
	started(ctx context.Context, id string) (bool, error)
	// ids lists, sorted, the voyages whose id begins with prefix ("" for
	// every one) and whose start was recorded.
	ids(ctx context.Context, prefix string) ([]string, error)
	// list describes every voyage whose status filter matches, as List
	// does: from the cached summaries, and, for a voyage whose summary
	// is stale, from its events.
	list(ctx context.Context, filter StatusFilter) ([]VoyageInfo, error)
	// verifyLog checks every record of voyage id's log into rep, and
	// returns the name of the log for the damage found further on; ok is
	// false when the log is too damaged to open the voyage from (rep says
	// why).
	verifyLog(ctx context.Context, id string, rep *VerifyReport) (name string, ok bool, err error)
	// records calls fn with each record of voyage id's log from the first,
	// without opening the voyage (its views may not fold): for Verify's
	// witness checks, which need the records alone.
	records(ctx context.Context, id string, fn func(segment.Record) error) error
	// storedOf returns a reader of the stored bytes of voyage id's copy
	// ref (not in a blob record), checked against its address as they
	// are read, without opening the voyage (a fork or a salvage carries
	// them): errGone when they were reclaimed.
	storedOf(ctx context.Context, id string, ref artifact.Ref) (io.ReadCloser, error)
}

// journal is one open voyage's records and artifacts' bytes. A journal
// holds the Voyage it serves: the caches it keeps are made from its views.
type journal interface {
	// Scan calls fn with each record whose sequence number is from or
	// more, in order, up to the end of the log as it stands.
	Scan(ctx context.Context, from uint64, fn func(segment.Record) error) error
	// Follow is Scan that goes on with each record appended afterwards,
	// as it is appended, until ctx ends or fn returns an error.
	Follow(ctx context.Context, from uint64, fn func(segment.Record) error) error
	// Dir names the log in messages: its directory, or its place in the
	// store.
	Dir() string

	// begin readies the journal for this handle's changes, once, outside
	// the log's lock: a home on disk records in its home index that the
	// voyage may change. An error refuses the change.
	begin(ctx context.Context) error
	// commit appends the records decide returns as one unit, atomically
	// and durably, on the tail decide read (logTx), and calls applied
	// once the unit is bound to be appended, for the views to take its
	// events in: on disk, under the log's lock, in a group of concurrent
	// commits, before the next decide of the group; in a shared store,
	// once the store took the unit. A shared store that took another
	// writer's unit first returns an *appendError and calls neither.
	commit(ctx context.Context, decide func(logTx) ([][]byte, error), applied func() error) error
	// maxUnit bounds the bytes of records a unit may hold (0: no bound),
	// for an import that appends many records (appendImported).
	maxUnit() int

	// settle readies an artifact to be stowed here: a store that takes
	// artifacts whole reads a streamed one into memory (Settle).
	settle(a *artifact.Encoded) error
	// inline reports whether an artifact is to be a blob record in the
	// log (artifact.Encoded.Inline), rather than stowed (stow): never in
	// a store that erases the artifacts a voyage jettisons, for a record
	// of the log cannot be erased.
	inline(a *artifact.Encoded) bool
	// stow stores the bytes of an artifact too large for a blob record,
	// or a streamed one, and returns where they are; it stores nothing,
	// stored false, when held reports that the voyage holds them. A
	// store that finds artifacts by their address alone returns no
	// Offset: the copy is then named by its event (sharedOffset).
	stow(ctx context.Context, a *artifact.Encoded, held func(hash string) bool) (ref artifact.Ref, stored bool, err error)
	// stowStored stores the stored (compressed) bytes of an imported
	// copy, read from r and checked against its address, and returns
	// where they are (no Offset: as stow); r nil keeps the place of a
	// copy whose bytes were reclaimed.
	stowStored(ctx context.Context, ref artifact.Ref, r io.Reader) (artifact.Ref, error)
	// open returns a reader of the bytes of a copy that is not in a blob
	// record, decompressed and checked against its address as they are
	// read; openStored a reader of its stored bytes, as they are.
	open(ctx context.Context, ref artifact.Ref) (io.ReadCloser, error)
	openStored(ctx context.Context, ref artifact.Ref) (io.ReadCloser, error)
	// check reads such a copy and checks it against its address, for
	// Verify: nil, or the damage found.
	check(ctx context.Context, ref artifact.Ref) *DamageError
	// kept reports whether the bytes of such a copy of an artifact that
	// is no longer stowed (jettisoned, reduced) are still held, for
	// Verify to check: false once they are reclaimed (Compact) or were
	// left out by the archive the voyage was imported from.
	kept(ctx context.Context, ref artifact.Ref) (bool, error)

	// summarize writes the voyage's listing summary (a cache) as its
	// views stand; failing to is no error: listing reads the events.
	summarize(ctx context.Context)
	// compact reclaims the bytes of jettisoned artifacts (Compact).
	compact(ctx context.Context) (CompactReport, error)
	// verify checks, into rep, what the journal keeps beside the log (a
	// snapshot), once the voyage was folded from every event (Verify).
	verify(ctx context.Context, rep *VerifyReport)
	// status reports what the journal knows of its log beyond the
	// events: a torn tail, the cuts made, the writes.
	status() StorageInfo
	// head returns the chain's head (package chain) after the last record
	// of the log as this handle last saw it.
	head(ctx context.Context) (chain.Head, error)
	// close writes the caches a writer keeps, if this handle changed the
	// voyage, and releases the journal.
	close(ctx context.Context) error
}

// logTx is what a commit's decide reads the log through: the tail it
// decides on, and the records up to it.
type logTx interface {
	Last() uint64
	Scan(from uint64, fn func(segment.Record) error) error
}

// appendError is a shared store's refusal or failure of a unit that was
// decided: the views have not taken its events in.
type appendError struct{ err error }

func (e *appendError) Error() string { return e.err.Error() }
func (e *appendError) Unwrap() error { return e.err }

// sharedOffset is the Offset of a copy whose store found it by its
// address alone and gave no place for it (journal.stow): a name for the
// copy, from the sequence number of the event that stored it, that no
// pack's frame offset is (2^62 and above; a pack's first frame follows
// its magic), so that a voyage imported into a shared store and stowing
// more there never names two copies alike.
func sharedOffset(seq uint64) int64 { return int64(1<<62 | seq) }
