// Package store is the seam between a home of voyages and where their
// records and artifacts are kept: the segment log and the artifact pack on
// one machine's disk (Dir, in this package), or a NATS JetStream server a
// crew shares across machines (package store/natsstore). A store that
// passes the conformance suite in package store/storetest is a helm store.
//
// The seam is what a home does with its voyages, no more:
//
//   - a voyage's log appends a commit unit (the events of one change, with
//     the blob records of the small artifacts they stow) only on the tail
//     the writer decided on (Log.AppendIf): two writers on two machines
//     cannot both act on a stale tail, and the loser gets a *ConflictError
//     naming the new tail, decides again, and retries;
//   - it reads a voyage from a sequence number (Log.Scan) and follows what
//     is appended later (Log.Follow);
//   - it keeps large artifacts apart, by their BLAKE3 address, and gives
//     them back checked against it (Artifacts);
//   - it lists its voyages, with a summary each (Store.Voyages, Summary),
//     and with each log's tail, checked as far as the store can without
//     reading the logs (Store.List, Listing);
//   - it gives the voyage's chain head after a record (Log.Head), from
//     what it keeps (a JetStream unit stores the link after its last
//     record) rather than by reading the log, where it can;
//   - it checks everything it holds (Log.Verify);
//   - where it can, it keeps a snapshot of a voyage (Snapshots: a cache
//     of the facade's, at a point of the chain it checks against the log),
//     so that opening a long voyage reads the snapshot and the records
//     after it, not every record.
//
// Records are opaque bytes here; the events they encode are the
// projection package's. Sequence numbers count a voyage's records from 1
// and are the same in every store, so a voyage copied from one store to
// another keeps them, and with them its hash chain.
package store

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/chain"
)

// Record is one record of a voyage's log: its sequence number, from 1, and
// its bytes.
type Record struct {
	Seq  uint64
	Data []byte
}

var (
	// ErrConflict is matched by every *ConflictError.
	ErrConflict = errors.New("store: the voyage's log moved on")
	// ErrNotFound: the store holds no voyage with that id.
	ErrNotFound = errors.New("store: no such voyage")
	// ErrExists: a voyage with that id is in the store already.
	ErrExists = errors.New("store: voyage exists")
	// ErrNoArtifact: the store holds no artifact at that address.
	ErrNoArtifact = errors.New("store: no such artifact")
	// ErrDamaged is matched by every *DamageError, and by the errors of
	// the segment log and the artifact pack that report damage.
	ErrDamaged = errors.New("store: damaged")
	// ErrClosed: the Log or Store was closed.
	ErrClosed = errors.New("store: closed")
	// ErrTooLarge: a unit larger than the store takes in one piece; it
	// was refused whole.
	ErrTooLarge = errors.New("store: unit too large")
)

// ConflictError is AppendIf's answer when the log's last record is not
// the one the writer decided on: nothing was appended. The writer reads
// the records after Expected, decides again on them, and appends after
// Actual.
type ConflictError struct {
	Voyage           string
	Expected, Actual uint64
	// Records, when not empty, are the records after Expected up to
	// Actual, which the store read with the tail and checked against the
	// chain from Expected (most often, the one unit of the writer that
	// came first): the writer decides again on them without reading the
	// log. Empty: read them (Log.Scan).
	Records []Record
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("store: voyage %s: the log moved on: a writer decided on record %d, but the last is %d now; read what was appended and decide again", e.Voyage, e.Expected, e.Actual)
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// DamageError is damage a store found in what it holds: where, and why.
type DamageError struct {
	Voyage string
	Where  string // the file, subject or object holding the damage
	Seq    uint64 // the record, when one is named
	Reason string
}

func (e *DamageError) Error() string {
	s := fmt.Sprintf("store: voyage %s: %s", e.Voyage, e.Where)
	if e.Seq != 0 {
		s += fmt.Sprintf(" record %d", e.Seq)
	}
	return s + ": " + e.Reason
}

func (e *DamageError) Unwrap() error { return ErrDamaged }

// Log is one voyage's log of records. A Log is safe for concurrent use,
// and many Logs, in many processes and on many machines, may have the
// same voyage open.
type Log interface {
	// Last returns the sequence number of the log's last record (0: it
	// has none), as the store holds it now.
	Last(ctx context.Context) (uint64, error)
	// AppendIf appends records as one unit, atomically and durably, if
	// the log's last record is expectLast, and returns the sequence
	// number of the first. Otherwise it appends nothing and returns a
	// *ConflictError. After a crash, all the unit's records are in the
	// log or none of them are; once AppendIf returns, they stay. With no
	// records it only checks the tail. A unit too large for the store is
	// refused whole (ErrTooLarge); every store takes units of 900 KiB.
	AppendIf(ctx context.Context, expectLast uint64, records ...[]byte) (first uint64, err error)
	// Scan calls fn with each record from sequence number from on, in
	// order, up to the last when the scan began; an error from fn stops
	// it and is returned.
	Scan(ctx context.Context, from uint64, fn func(Record) error) error
	// Follow is Scan that goes on with the records appended later, by
	// any writer, until ctx ends (it returns ctx.Err()) or fn errs.
	Follow(ctx context.Context, from uint64, fn func(Record) error) error
	// Head returns the voyage's chain head after record seq (package
	// chain: the link after the records 1 to seq, from the genesis of
	// the voyage's id); seq 0 gives the genesis. seq is the last record
	// of a unit AppendIf appended (a Log may refuse another) and no later
	// than the last record: a store that keeps the link after each unit
	// answers from it without reading the records before. Damage it
	// meets is a *DamageError, or an error matching ErrDamaged.
	Head(ctx context.Context, seq uint64) (chain.Head, error)
	// Verify reads every record and checks it: its checksum and its
	// place in the voyage's hash chain. Damage is a *DamageError, or an
	// error matching ErrDamaged.
	Verify(ctx context.Context) error
	// Close releases the Log. It does not end a Follow in progress.
	Close() error
}

// Artifacts keeps a voyage's large artifacts, each by its BLAKE3 address.
type Artifacts interface {
	// Put stores e (compressing it if need be), durably, and returns the
	// reference the event that names it records. The caller stores an
	// artifact once per voyage: its events say which it holds.
	Put(ctx context.Context, e *artifact.Encoded) (artifact.Ref, error)
	// Get returns the artifact ref names, decompressed and checked
	// against its address: bytes that do not answer it are an error
	// matching ErrDamaged.
	Get(ctx context.Context, ref artifact.Ref) ([]byte, error)
	// Open is Get as a stream of the stored (compressed) bytes, checked
	// as they are read, for copying an artifact to another store.
	Open(ctx context.Context, ref artifact.Ref) (io.ReadCloser, error)
}

// Summary is what a store keeps of a voyage to list it without reading
// its log: the facade's own encoding, opaque here, and the sequence
// number of the last record it describes.
type Summary struct {
	Seq  uint64
	Data []byte
}

// Listing is a voyage as Store.List gives it.
type Listing struct {
	// Summary is the summary the store keeps of the voyage (the zero
	// Summary when it has none), read before Last: a summary of a record
	// after Last describes records the log no longer holds.
	Summary Summary
	// Last is the sequence number of the log's last record (0: none).
	Last uint64
	// Err, when not nil, is why the voyage's tail could not be listed: a
	// *DamageError when the store found that the log lost records it had
	// acknowledged (missing at its front or between others, as far as
	// the store can tell without reading them; or a log the store holds
	// and no longer lists), or the error that kept it from reading the
	// tail.
	Err error
}

// Store holds voyages. It is safe for concurrent use.
type Store interface {
	// Create makes the log of a new voyage (ErrExists if there is one).
	Create(ctx context.Context, voyage string) (Log, error)
	// Open opens the log of a voyage (ErrNotFound if there is none).
	Open(ctx context.Context, voyage string) (Log, error)
	// Voyages lists the store's voyages with their summaries (a voyage
	// with none has the zero Summary).
	Voyages(ctx context.Context) (map[string]Summary, error)
	// List lists the voyages as Voyages does, each with its log's tail,
	// and a voyage whose log the store holds but does not list (with a
	// *DamageError). It reads each summary before the tail, and checks
	// each log as far as it can without reading its records: a store on
	// a server sends a request per voyage at most, and a few for all.
	List(ctx context.Context) (map[string]Listing, error)
	// PutSummary records s as the voyage's summary, unless the summary
	// stored already describes a later record.
	PutSummary(ctx context.Context, voyage string, s Summary) error
	// Artifacts returns the voyage's large artifacts.
	Artifacts(voyage string) Artifacts
	// Close releases the store.
	Close() error
}

// Eraser is implemented by the Artifacts of a store that can make an
// artifact's bytes unreadable for good without removing what it
// acknowledged: a JetStream home keeps each artifact encrypted under a
// key of its own, and erasing destroys the key (package natsstore). A
// shared home calls it when a voyage jettisons an artifact, and when
// compaction erases what was jettisoned or reduced.
type Eraser interface {
	// Erase makes the voyage's copy of the artifact at hash unreadable
	// for good, and reports whether it is: true when it was erased, now
	// or before; false when the store holds it in a form it cannot erase
	// (written by an earlier version, unencrypted), which then stays
	// readable to whoever reads the store. It never touches another
	// voyage's copy.
	Erase(ctx context.Context, hash string) (erased bool, err error)
}

// ErrBadSnapshot is matched by the error of Snapshots.Snapshot for a
// snapshot the store keeps but cannot trust: its head is not the log's
// after its record, or it does not decode. A cache, passed by: the caller
// folds the voyage from its first record, and reports why.
var ErrBadSnapshot = errors.New("store: the voyage's snapshot is not its log's")

// Snapshot is a voyage's snapshot: Data, the facade's encoding of its
// views (opaque here), taken after the records 1 to Head.Seq, whose chain
// head is Head.
type Snapshot struct {
	Head chain.Head
	Data []byte
}

// Snapshots is implemented by a Log that keeps a snapshot of its voyage
// beside its records. A snapshot is a cache: the store keeps one per
// voyage, which the next PutSnapshot replaces, and anyone with the
// store's credentials can replace it too, so the store gives it only once
// it checked its point against the log.
type Snapshots interface {
	// PutSnapshot keeps data as the voyage's snapshot after record seq,
	// replacing the one kept. seq ends a unit that this Log appended or
	// read last; the store records the chain's head there, and where the
	// records after it start. A seq it cannot place is refused, nothing
	// kept (an error: the caller passes by, a cache).
	PutSnapshot(ctx context.Context, seq uint64, data []byte) error
	// Snapshot returns the snapshot kept, its head checked against the
	// log's after its record (a request or two, not a read of the
	// records): a Scan from Head.Seq+1 then reads the records after it
	// alone. None kept: ErrNotFound. One whose head is not the log's,
	// or that does not decode: an error matching ErrBadSnapshot (the
	// caller folds the voyage from its first record). One after the
	// log's last record: a *DamageError, as a summary of a record after
	// the last is (Listing.Summary): evidence that the log lost records
	// it had acknowledged, or that the snapshot was forged. Reading never
	// writes.
	Snapshot(ctx context.Context) (Snapshot, error)
}
