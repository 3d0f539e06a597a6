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

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/internal/homeindex"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
)

// Voyage is an open voyage: its event log and the views folded from it.
// A Voyage is safe for concurrent use by several goroutines, and several
// processes may have the same voyage open: each change first folds in the
// events others appended, then checks its rules, under the log's lock
// (commit.go).
type Voyage struct {
	home *Home
	id   string
	dir  string
	log  *segment.Log   // nil in a shared home
	pack *artifact.Pack // nil in a shared home
	// rec reads the log: log, or remote in a shared home (shared.go).
	rec    recordLog
	remote *remote
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
	summarySeq uint64 // the Seq the summary file was last written at

	snapSeq  uint64         // the seq of the voyage's snapshot as this Voyage read or wrote it (snapshot.go)
	snapFile *os.File       // the snapshot the views were opened from, while sections of it are pending (v.mu)
	sorted   []ArtifactInfo // the artifact index by hash, as of sortedAt (v.mu)
	sortedAt uint64

	idxMu  sync.Mutex
	idx    *homeindex.Writer // this handle's session in the home index (index.go)
	idxOff bool              // the index could not be written: it was removed
}

// open opens the voyage id, folding its events into fresh views (after
// its snapshot, when it has one to trust). Opening reads: it writes
// nothing (see segment.Open).
func (h *Home) open(id string) (*Voyage, error) {
	return h.openVoyage(context.Background(), id, true)
}

// openVoyage opens the voyage id, from its snapshot if fromSnapshot and it
// has one to trust, else from its first event.
func (h *Home) openVoyage(ctx context.Context, id string, fromSnapshot bool) (*Voyage, error) {
	var v *Voyage
	var err error
	events := filepath.Join(h.voyagesDir(), id, "events")
	if h.shared != nil {
		v, err = h.openShared(ctx, id)
		events = fmt.Sprintf("voyage %s in %s", id, h.sharedAt)
	} else {
		dir := filepath.Join(h.voyagesDir(), id)
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrNoVoyage, id, err)
		}
		v, err = h.openDir(dir, id, fromSnapshot)
	}
	if err != nil {
		return nil, err
	}
	if v.st.Voyage.Seq == 0 && h.shared != nil {
		// Not damage: the store made the voyage, and the start (an
		// import, a push) stopped before its first unit was appended.
		// Listing leaves it out, and a push of that voyage takes it over.
		v.Close()
		return nil, fmt.Errorf("%w: %s in %s: its start wrote no event (a start, import or push stopped part way: push the voyage again)", ErrNoVoyage, id, h.sharedAt)
	}
	if v.st.Voyage.Seq == 0 {
		v.Close()
		return nil, &VoyageError{Op: "open", Voyage: id,
			Err: &DamageError{Voyage: id, File: events, Reason: "the event log holds no events, not even the voyage's start",
				Err: fmt.Errorf("%s holds no events, not even the voyage's start: it was emptied or removed", events)},
			Hint: Hint{HintRestore, "restore the voyage's directory from a backup, or remove it"}}
	}
	return v, nil
}

// openDir opens the voyage id whose directory is dir.
func (h *Home) openDir(dir, id string, fromSnapshot bool) (*Voyage, error) {
	v := &Voyage{home: h, id: id, dir: dir, pack: artifact.NewPack(dir, &artifact.PackOptions{NoSync: h.opts.NoSync})}
	events := filepath.Join(dir, "events")
	v.applyRecord = eventsOf(id, events, v.applyEvent)
	opts := &segment.Options{
		SegmentSize: h.opts.SegmentSize, NoSync: h.opts.NoSync, Identity: id,
		NoRetain: true, // projection.Decode shares nothing with the record
	}
	if fromSnapshot && h.openFromSnapshot(v, opts) {
		return v, nil
	}
	// Opening the log folds its events into fresh views as it reads them:
	// the check of the log and the replay are one pass.
	log, err := segment.OpenScan(events, opts, v.applyRecord)
	if err != nil {
		return nil, v.fail("open", err, Hint{})
	}
	v.log, v.rec = log, log
	return v, nil
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

// Dir returns the voyage's directory ("" for a voyage of a shared store:
// see OpenStore).
func (v *Voyage) Dir() string { return v.dir }

// Cuts reports the torn tails that this voyage's first change cut off
// the end of its log (a crashed writer's unacknowledged final write); the
// cut bytes are saved beside the segment.
func (v *Voyage) Cuts() []Cut {
	var out []Cut
	if v.log == nil {
		return nil // a shared store's appends are whole or absent
	}
	for _, c := range v.log.Cuts() {
		out = append(out, *cutOf(&c))
	}
	return out
}

// WriteStats counts what a Voyage handle's commits wrote since it was
// opened: concurrent writers on one handle share commit units and
// fdatasyncs, and Records/Syncs says how well they were grouped.
type WriteStats struct {
	Units   uint64 // commit units appended (one per group of commits)
	Records uint64 // log records in them (events, and small sightings' blobs)
	Syncs   uint64 // fdatasyncs that made them durable
}

// WriteStats returns what this handle's commits wrote.
func (v *Voyage) WriteStats() WriteStats {
	if v.remote != nil {
		n := v.remote.units.Load()
		return WriteStats{Units: n, Records: v.remote.records.Load(), Syncs: n}
	}
	s := v.log.Stats()
	return WriteStats{Units: s.Units, Records: s.Records, Syncs: s.Syncs}
}

// Torn reports a torn final write found when the voyage was opened, which
// its next change will cut (nil if none).
func (v *Voyage) Torn() *Cut {
	if v.log == nil {
		return nil
	}
	return cutOf(v.log.Torn())
}

// Close brings the voyage's listing summary up to date, if this Voyage
// changed the voyage (only writers write caches), and releases its files.
func (v *Voyage) Close() error {
	v.mu.Lock()
	stale := v.wrote && v.broken == nil && v.st.Voyage.Seq != 0 && v.st.Voyage.Seq != v.summarySeq
	v.mu.Unlock()
	if v.remote != nil {
		if stale {
			v.putSharedSummary()
		}
		return v.remote.Close()
	}
	if stale && v.summaryStale() {
		v.writeSummary()
	}
	// The index's view first: it folds what others appended, which may
	// need a section still in the snapshot read, closed by writeSnapshot.
	idx := v.viewForIndex()
	v.writeSnapshot() // and closes the snapshot read
	err := v.log.Close()
	if perr := v.pack.Close(); err == nil {
		err = perr
	}
	v.closeIndex(idx)
	return err
}

// Refresh folds in the events other processes appended since the views
// were last brought up to date. Changes do this by themselves; a reader
// that keeps a Voyage open calls it to see what others recorded.
func (v *Voyage) Refresh(ctx context.Context) error {
	if err := v.refresh(ctx); err != nil {
		return v.fail("refresh", err, Hint{})
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

// Info describes the voyage: its intent, identity, status and outcome.
func (v *Voyage) Info() VoyageInfo {
	v.mu.Lock()
	defer v.mu.Unlock()
	return voyageInfo(v.st.Voyage)
}

// Slate returns the observations gathered since the last bearing, ordered
// by mark key.
func (v *Voyage) Slate() []ObservationRecord {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.st.SlateList()
}

// Logbook returns the story's entries in order, entry i numbered i+1.
// A failed action keeps its entry (status ActionFailed), as does a
// refused one (ActionRefused) and an intended action with no outcome
// (ActionOutcomeUnknown).
func (v *Voyage) Logbook() []Entry {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.loadView(projection.SectionEntries)
	return cloneEntries(v.st.Entries)
}

// LogbookLen returns how many entries the story holds.
func (v *Voyage) LogbookLen() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.st.Counts().Entries
}

// LogbookCounts counts the story's entries: all of them, and of each
// kind (LogbookCounts). It costs the
// same however long the voyage: the counts are kept as events fold, and
// a snapshot holds them, so a voyage opened from one need not read its
// entries.
func (v *Voyage) LogbookCounts() LogbookCounts {
	v.mu.Lock()
	defer v.mu.Unlock()
	c := v.st.Counts()
	return LogbookCounts{Entries: c.Entries, Bearings: c.Bearings, Actions: c.Actions, OutcomeUnknown: c.OutcomeUnknown,
		Failed: c.Failed, Refused: c.Refused, Notes: c.Notes, Judgements: c.Judgements}
}

// LogbookCounts counts a voyage's logbook entries: all of them, the
// bearings, the actions (refused ones apart) and among them those whose
// outcome is unknown and those that failed, the refused actions, the
// notes and the judgements.
type LogbookCounts struct {
	Entries        int `json:"entries"`
	Bearings       int `json:"bearings"`
	Actions        int `json:"actions"`
	OutcomeUnknown int `json:"outcome_unknown"`
	Failed         int `json:"failed"`
	Refused        int `json:"refused"`
	Notes          int `json:"notes"`
	Judgements     int `json:"judgements"`
}

// LogbookPage returns the story's entries numbered first to first+n-1
// (the numbers the story shows, from 1), fewer at the story's end: its
// cost is that of the entries it returns, however long the voyage.
func (v *Voyage) LogbookPage(first, n int) []Entry {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.loadView(projection.SectionEntries)
	return cloneEntries(page(v.st.Entries, first-1, n))
}

// page returns s[from:from+n], clipped to s.
func page[T any](s []T, from, n int) []T {
	from = min(max(from, 0), len(s))
	return s[from : from+min(max(n, 0), len(s)-from)]
}

// entryPage is how many entries Entries copies at a time.
const entryPage = 256

// Entries yields the story's entries in order, as Logbook returns them,
// copying a page of entries at a time instead of the whole story: a
// caller that stops early pays for what it read. Entries appended while
// it runs are yielded too.
func (v *Voyage) Entries() iter.Seq[Entry] {
	return func(yield func(Entry) bool) {
		for from := 1; ; from += entryPage {
			p := v.LogbookPage(from, entryPage)
			for _, e := range p {
				if !yield(e) {
					return
				}
			}
			if len(p) < entryPage {
				return
			}
		}
	}
}

// FailedActions returns the actions that failed before entry numbers
// were stored in events: helm then took them out of the story, and the
// story keeps the numbers it showed. An action that fails now keeps its
// entry in the story (Logbook).
func (v *Voyage) FailedActions() []Entry {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.loadView(projection.SectionFailed)
	return cloneEntries(v.st.FailedActions)
}

// Artifacts returns the artifact index, ordered by hash.
func (v *Voyage) Artifacts() []ArtifactInfo {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.loadView(projection.SectionArtifacts)
	return slices.Clone(v.sortedArtifacts())
}

// ArtifactsAfter returns up to n artifacts of the index, ordered by hash,
// those whose hash sorts after the hash after ("" for the first): a page
// costs what it returns once the index is sorted, which happens once per
// change of the voyage. While the index is still in the snapshot the
// voyage was opened from, a page is read from the part of it that holds
// the page, and the index is not loaded.
func (v *Voyage) ArtifactsAfter(after string, n int) []ArtifactInfo {
	v.mu.Lock()
	defer v.mu.Unlock()
	if page, served, err := v.st.ArtifactsAfter(after, n); served && err == nil {
		out := make([]ArtifactInfo, len(page))
		for i := range page {
			out[i] = artifactInfo(&page[i])
		}
		return out
	}
	v.loadView(projection.SectionArtifacts)
	all := v.sortedArtifacts()
	i, found := slices.BinarySearchFunc(all, after, func(a ArtifactInfo, h string) int { return strings.Compare(a.Hash, h) })
	if found {
		i++
	}
	return slices.Clone(page(all, i, n))
}

// ArtifactInfo returns the index entry of the artifact hash names (a full
// hash, found at once, or an unambiguous prefix of at least 4 digits).
func (v *Voyage) ArtifactInfo(hash string) (ArtifactInfo, error) {
	v.mu.Lock()
	a, err := v.findArtifact(hash, v.logScan(context.Background()))
	v.mu.Unlock()
	if err != nil {
		return ArtifactInfo{}, v.fail("find artifact "+hash, err, Hint{})
	}
	return artifactInfo(&a), nil
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

func cloneEntries(in []Entry) []Entry {
	out := slices.Clone(in)
	for i := range out {
		if b := out[i].Bearing; b != nil {
			c := *b
			c.Observations = slices.Clone(b.Observations)
			c.Reading.History = slices.Clone(b.Reading.History)
			out[i].Bearing = &c
		}
		if a := out[i].Action; a != nil {
			c := *a
			if a.Inverse != nil {
				inv := *a.Inverse
				c.Inverse = &inv
			}
			out[i].Action = &c
		}
		if n := out[i].Note; n != nil {
			c := *n
			out[i].Note = &c
		}
		if j := out[i].Judgement; j != nil {
			c := *j
			c.Evidence = slices.Clone(j.Evidence)
			out[i].Judgement = &c
		}
	}
	return out
}

// entryAt returns a copy of the entry recorded by the event at seq.
func (v *Voyage) entryAt(seq uint64) (Entry, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e, ok := v.st.EntryBySeq(seq) // one recorded since the snapshot, most often
	if !ok && v.st.Pending()&projection.SectionEntries != 0 {
		v.loadView(projection.SectionEntries)
		e, ok = v.st.EntryBySeq(seq)
	}
	if !ok {
		return Entry{}, fmt.Errorf("voyage %s: entry just recorded is not in the logbook view", v.id)
	}
	return cloneEntries([]Entry{e})[0], nil
}
