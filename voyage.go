package helm

import (
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
)

// Voyage is an open voyage: its event log and the views folded from it.
// A Voyage is safe for concurrent use by several goroutines, and several
// processes may have the same voyage open: each change first folds in the
// events others appended, then checks its rules, under the log's lock.
type Voyage struct {
	home *Home
	id   string
	dir  string // the voyage's directory; "" in a shared store
	// rec is where the voyage's records and artifacts' bytes are kept: a
	// journal of the home's backend (backend.go).
	rec journal
	// applyRecord folds one record of the log into st (events.go).
	applyRecord func(segment.Record) error

	mu     sync.Mutex
	st     projection.State
	broken error // set when a write failed: the views may be ahead of the disk
	// inflight are the events commits of this handle applied to the views
	// but whose units may not be written yet: a fold of the log outside
	// its lock (a damaged snapshot section found by a view) applies them
	// again, so the views do not fall behind a change being recorded.
	inflight   []inflightEvent
	wrote      bool   // this Voyage appended events: it may write caches
	summarySeq uint64 // the Seq the summary was last written at

	snapSeq  uint64         // the seq of the voyage's snapshot as this Voyage read or wrote it (snapshot.go)
	snapFile *os.File       // the snapshot the views were opened from, while sections of it are pending (v.mu)
	sorted   []ArtifactInfo // the artifact index by hash, as of sortedAt (v.mu)
	sortedAt uint64
}

// seq returns the sequence number of the last event the views hold.
func (v *Voyage) seq() uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.st.Voyage.Seq
}

// summaryDue reports whether this handle changed the voyage since its
// listing summary was last written (only writers write caches).
func (v *Voyage) summaryDue() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.wrote && v.broken == nil && v.st.Voyage.Seq != 0 && v.st.Voyage.Seq != v.summarySeq
}

// applyEvent folds the event at seq into the views. The caller holds v.mu
// or owns v exclusively.
func (v *Voyage) applyEvent(seq uint64, e *projection.Event) error {
	if e.Type == projection.VoyageStarted && e.Voyage != nil && e.Voyage.ID != v.id {
		return &segment.CorruptionError{Dir: filepath.Join(v.dir, "events"), Seq: seq,
			Reason: fmt.Sprintf("the log starts voyage %s, but this is voyage %s: it holds another voyage's events", e.Voyage.ID, v.id)}
	}
	return v.st.Apply(seq, e)
}

// ID returns the voyage's id.
func (v *Voyage) ID() string { return v.id }

// Storage describes how the voyage is stored, beyond its events: where,
// and what this handle found and wrote there. It reads nothing.
func (v *Voyage) Storage() StorageInfo {
	st := v.rec.status()
	st.Dir = v.dir
	return st
}

// Head returns where the voyage's tamper-evident chain stands: the seq
// of its last record and the chain's link after it (package chain), as
// this handle last saw the log. A head held outside the home — a commit
// trailer, a pull request body, a line pasted elsewhere — is a witness
// that Home.Verify checks the voyage against.
func (v *Voyage) Head(ctx context.Context) (chain.Head, error) {
	h, err := v.rec.head(ctx)
	if err != nil {
		return chain.Head{}, v.fail("head", err, hint.Hint{})
	}
	return h, nil
}

// StorageInfo is what a Voyage handle knows of how its voyage is stored.
type StorageInfo struct {
	// Dir is the voyage's directory ("" for a voyage of a shared store:
	// see OpenStore).
	Dir string
	// Torn is a torn final write found when the voyage was opened, which
	// its next change will cut (nil if none).
	Torn *Cut
	// Cuts are the torn tails that this handle's first change cut off the
	// end of the log (a crashed writer's unacknowledged final writes); the
	// cut bytes are saved beside the segment.
	Cuts []Cut
	// Writes counts what this handle's commits wrote since it was opened.
	Writes WriteStats
}

// WriteStats counts what a Voyage handle's commits wrote: concurrent
// writers on one handle share commit units and fdatasyncs, and
// Records/Syncs says how well they were grouped.
type WriteStats struct {
	Units   uint64 // commit units appended (one per group of commits)
	Records uint64 // log records in them (events, and small sightings' blobs)
	Syncs   uint64 // fdatasyncs that made them durable
}

// closeTimeout bounds the caches Close writes (the listing summary, the
// snapshot, the home index): the one context the library makes itself,
// as Close takes none. A cache it could not write is rebuilt later.
const closeTimeout = 10 * time.Second

// Close brings the caches a writer keeps up to date, if this Voyage
// changed the voyage (only writers write caches), and releases its files.
func (v *Voyage) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout) // bounded cleanup: the library's one Background (TestLibraryMakesNoContextOfItsOwn)
	defer cancel()
	return v.rec.close(ctx)
}

// Refresh folds in the events other processes appended since the views
// were last brought up to date. Changes do this by themselves; a reader
// that keeps a Voyage open calls it to see what others recorded.
func (v *Voyage) Refresh(ctx context.Context) error {
	if err := v.refresh(ctx); err != nil {
		return v.fail("refresh", err, hint.Hint{})
	}
	return nil
}

// refresh folds in the events appended since. It reads no section of the
// snapshot the events do not need: a caller that reads the whole artifact
// index loads it (loadSections), one that looks an artifact up by hash
// reads a block of it at most (artifact).
func (v *Voyage) refresh(ctx context.Context) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.foldNew(v.logScan(ctx))
}

// Info describes the voyage: its intent, identity, status and outcome,
// and the counts of its story's entries (VoyageInfo.Counts). It reads
// nothing: the views are in memory, and the counts are kept as events
// fold, so a voyage opened from its snapshot need not read its entries.
func (v *Voyage) Info() VoyageInfo {
	v.mu.Lock()
	defer v.mu.Unlock()
	info := voyageInfo(v.st.Voyage)
	c := v.st.Counts()
	info.Counts = LogbookCounts{Entries: c.Entries, Bearings: c.Bearings, Actions: c.Actions, OutcomeUnknown: c.OutcomeUnknown,
		Failed: c.Failed, Refused: c.Refused, Notes: c.Notes, Judgements: c.Judgements, Steps: c.Steps}
	return info
}

// Slate returns the observations gathered since the last bearing, ordered
// by mark key.
func (v *Voyage) Slate() []logbook.ObservationRecord {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.st.SlateList()
}

// LogbookCounts counts a voyage's logbook entries (VoyageInfo.Counts):
// all of them, the bearings, the actions (refused ones apart) and among
// them those whose outcome is unknown and those that failed, the refused
// actions, the notes, the judgements and the steps agents reported
// (Voyage.Step).
type LogbookCounts struct {
	Entries        int `json:"entries"`
	Bearings       int `json:"bearings"`
	Actions        int `json:"actions"`
	OutcomeUnknown int `json:"outcome_unknown"`
	Failed         int `json:"failed"`
	Refused        int `json:"refused"`
	Notes          int `json:"notes"`
	Judgements     int `json:"judgements"`
	Steps          int `json:"steps,omitempty"`
}

// EntriesOptions choose the entries Entries yields.
type EntriesOptions struct {
	// From is the number of the first entry yielded (the number the
	// story shows; 0 and 1 mean the first).
	From int
	// OutsideStory yields, instead of the story's entries, the actions
	// that failed before entry numbers were stored in events: helm then
	// took them out of the story, and the story keeps the numbers it
	// showed. From counts them from 1. An action that fails now keeps its
	// entry in the story, with status ActionFailed.
	OutsideStory bool
}

// entryPage is how many entries Entries copies at a time.
const entryPage = 256

// Entries yields the story's entries in order, entry i numbered i+1. A
// failed action keeps its entry (status ActionFailed), as does a refused
// one (ActionRefused) and an intended action with no outcome
// (ActionOutcomeUnknown). opts may be nil.
//
// It copies a page of entries at a time: a caller that stops early pays
// for what it read, however long the voyage. Entries appended while it
// runs are yielded too. Reading the entries may read the snapshot the
// voyage was opened from, or, if that does not check out, every event:
// should that fail, Entries yields the error (naming the voyage and the
// file) and stops; it never yields a story cut short without one.
func (v *Voyage) Entries(ctx context.Context, opts *EntriesOptions) iter.Seq2[logbook.Entry, error] {
	var o EntriesOptions
	if opts != nil {
		o = *opts
	}
	section := projection.SectionEntries
	if o.OutsideStory {
		section = projection.SectionFailed
	}
	return func(yield func(logbook.Entry, error) bool) {
		for from := max(o.From, 1); ; from += entryPage {
			p, err := v.entries(ctx, section, from-1, entryPage)
			if err != nil {
				yield(logbook.Entry{}, err)
				return
			}
			for _, e := range p {
				if !yield(e, nil) {
					return
				}
			}
			if len(p) < entryPage {
				return
			}
		}
	}
}

// entries returns a copy of n entries of a section's list (the story, or
// the failed actions outside it) from index from on.
func (v *Voyage) entries(ctx context.Context, section projection.Sections, from, n int) ([]logbook.Entry, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.loadView(ctx, section); err != nil {
		return nil, v.fail("read the logbook", err, hint.Hint{})
	}
	list := v.st.Entries
	if section == projection.SectionFailed {
		list = v.st.FailedActions
	}
	return logbook.Clone(page(list, from, n)), nil
}

// page returns s[from:from+n], clipped to s.
func page[T any](s []T, from, n int) []T {
	from = min(max(from, 0), len(s))
	return s[from : from+min(max(n, 0), len(s)-from)]
}

// ArtifactsOptions choose the artifacts Artifacts yields.
type ArtifactsOptions struct {
	// After yields those whose hash sorts after it, for a page that
	// follows one ending there ("": from the first).
	After string
}

// artifactPage is how many artifacts Artifacts copies at a time.
const artifactPage = 256

// Artifacts yields the artifact index, ordered by hash; opts may be nil.
// It copies a page at a time: once the index is sorted, which happens
// once per change of the voyage, a page costs what it holds. While the
// index is still in the snapshot the voyage was opened from, a page is
// read from the part of it that holds the page, and the index is not
// loaded. Should reading it fail, Artifacts yields the error and stops.
func (v *Voyage) Artifacts(ctx context.Context, opts *ArtifactsOptions) iter.Seq2[ArtifactInfo, error] {
	var after string
	if opts != nil {
		after = opts.After
	}
	return func(yield func(ArtifactInfo, error) bool) {
		for {
			p, err := v.artifactsAfter(ctx, after, artifactPage)
			if err != nil {
				yield(ArtifactInfo{}, err)
				return
			}
			for _, a := range p {
				if !yield(a, nil) {
					return
				}
			}
			if len(p) < artifactPage {
				return
			}
			after = p[len(p)-1].Hash
		}
	}
}

// artifactsAfter returns up to n artifacts of the index, ordered by hash,
// those whose hash sorts after the hash after.
func (v *Voyage) artifactsAfter(ctx context.Context, after string, n int) ([]ArtifactInfo, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if page, served, err := v.st.ArtifactsAfter(after, n); served && err == nil {
		out := make([]ArtifactInfo, len(page))
		for i := range page {
			out[i] = artifactInfo(&page[i])
		}
		return out, nil
	}
	if err := v.loadView(ctx, projection.SectionArtifacts); err != nil {
		return nil, v.fail("read the artifact index", err, hint.Hint{})
	}
	all := v.sortedArtifacts()
	i, found := slices.BinarySearchFunc(all, after, func(a ArtifactInfo, h string) int { return strings.Compare(a.Hash, h) })
	if found {
		i++
	}
	return slices.Clone(page(all, i, n)), nil
}

// ArtifactInfo returns the index entry of the artifact hash names (a full
// hash, found at once, or an unambiguous prefix of at least 4 digits),
// whatever its status: one jettisoned or reduced is there too, with who
// did it and when (read from the log).
func (v *Voyage) ArtifactInfo(ctx context.Context, hash string) (ArtifactInfo, error) {
	v.mu.Lock()
	a, err := v.findArtifact(hash, v.logScan(ctx))
	v.mu.Unlock()
	if err != nil {
		return ArtifactInfo{}, v.fail("find artifact "+hash, err, hint.Hint{})
	}
	info := artifactInfo(&a)
	if a.Status != projection.Stowed {
		e, err := v.curatedBy(ctx, a.Hash)
		if err != nil {
			return ArtifactInfo{}, v.fail("find artifact "+hash, err, hint.Hint{})
		}
		if e != nil {
			info.CuratedBy, info.CuratedAt = &e.Who, e.At
		}
	}
	return info, nil
}

// sortedArtifacts returns the index ordered by hash, sorted again only
// when the voyage changed since (v.mu held). The slice is shared: copy
// what is handed out.
func (v *Voyage) sortedArtifacts() []ArtifactInfo {
	if v.sorted == nil || v.sortedAt != v.st.Voyage.Seq {
		v.sorted, v.sortedAt = artifactList(&v.st), v.st.Voyage.Seq
	}
	return v.sorted
}

func artifactList(st *projection.State) []ArtifactInfo {
	out := make([]ArtifactInfo, 0, len(st.Artifacts))
	for _, a := range st.Artifacts {
		out = append(out, artifactInfo(a))
	}
	slices.SortFunc(out, func(a, b ArtifactInfo) int { return strings.Compare(a.Hash, b.Hash) })
	return out
}

// entryAt returns a copy of the entry recorded by the event at seq.
func (v *Voyage) entryAt(ctx context.Context, seq uint64) (logbook.Entry, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e, ok := v.st.EntryBySeq(seq) // one recorded since the snapshot, most often
	if !ok && v.st.Pending()&projection.SectionEntries != 0 {
		if err := v.loadView(ctx, projection.SectionEntries); err != nil {
			return logbook.Entry{}, v.fail("read the entry just recorded", fmt.Errorf("it is recorded, but the logbook could not be read back: %w", err), hint.Hint{})
		}
		e, ok = v.st.EntryBySeq(seq)
	}
	if !ok {
		return logbook.Entry{}, fmt.Errorf("voyage %s: entry just recorded is not in the logbook view", v.id)
	}
	return logbook.Clone([]logbook.Entry{e})[0], nil
}
