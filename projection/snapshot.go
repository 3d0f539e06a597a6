package projection

import (
	"fmt"
	"maps"
	"slices"

	"github.com/helmlog/helm/logbook"
)

// A snapshot is a State as of some event, encoded so that it loads faster
// than the events that built it fold: opening a long voyage loads the
// newest snapshot and folds only the events after it. It uses the event
// codec's encodings (codec.go) for what it shares with events.
//
//	snapshot := snapshotFormat uvarint(SnapshotVersion)
//	            voyage slate entries(Entries) entries(FailedActions) artifacts
//	voyage   := str(id intent kind identity) time(created) str(status
//	            outcome summary) time(completed_at) uvarint(seq)
//	slate    := list of str(key) observation (ordered by key)
//	entry    := uvarint(n seq) str(kind) time(at) who opt(bearing) opt(action)
//	artifact := str(hash) varint(size stored_size offset) uvarint(blob)
//	            str(derived_from method reason status reduced_to)
//
// A snapshot written by another SnapshotVersion is not read: raise it
// whenever State, or what an event folds into it, changes.

// SnapshotVersion is the version of the snapshot encoding and of the fold
// it captures.
const SnapshotVersion = 1

// snapshotFormat is a snapshot's first byte.
const snapshotFormat = 0x53 // 'S'

// EncodeSnapshot encodes s.
func (s *State) EncodeSnapshot() []byte {
	w := encoder{b: make([]byte, 0, 4096)}
	w.b = append(w.b, snapshotFormat)
	w.uvarint(SnapshotVersion)
	v := &s.Voyage
	w.str(v.ID)
	w.str(v.Intent)
	w.str(v.Kind)
	w.str(v.Identity)
	w.time(v.Created)
	w.str(string(v.Status))
	w.str(string(v.Outcome))
	w.str(v.Summary)
	w.time(v.CompletedAt)
	w.uvarint(v.Seq)

	w.list(false, len(s.Slate))
	for _, k := range slices.Sorted(maps.Keys(s.Slate)) {
		o := s.Slate[k]
		w.str(k)
		w.observation(&o)
	}
	for _, entries := range [][]logbook.Entry{s.Entries, s.FailedActions} {
		if w.list(entries == nil, len(entries)) {
			for i := range entries {
				w.entry(&entries[i])
			}
		}
	}
	w.list(false, len(s.Artifacts))
	for _, h := range slices.Sorted(maps.Keys(s.Artifacts)) {
		a := s.Artifacts[h]
		w.artifactRef(&a.ArtifactRef)
		w.str(a.Reason)
		w.str(string(a.Status))
		w.str(a.ReducedTo)
	}
	return w.b
}

func (w *encoder) entry(e *logbook.Entry) {
	w.uvarint(uint64(e.N))
	w.uvarint(e.Seq)
	w.str(string(e.Kind))
	w.time(e.At)
	w.who(e.Who)
	if w.opt(e.Bearing != nil) {
		w.bearing(e.Bearing)
	}
	if w.opt(e.Action != nil) {
		w.action(e.Action)
	}
}

// Fewest bytes an entry and an artifact take.
const (
	minEntry    = 9  // 2 uvarints, a str, a time, a who (3 strs), 2 opts
	minArtifact = 11 // 7 strs, 3 varints, a uvarint
)

// DecodeSnapshot decodes a snapshot EncodeSnapshot wrote, into a State
// ready for Apply of the events after it. A snapshot of another version,
// or bytes that do not decode, are an error.
func DecodeSnapshot(data []byte) (*State, error) {
	if len(data) == 0 || data[0] != snapshotFormat {
		return nil, fmt.Errorf("decode snapshot: not a snapshot")
	}
	d := decoder{buf: data, off: 1}
	if v := d.uvarint("version"); d.err == nil && v != SnapshotVersion {
		return nil, fmt.Errorf("decode snapshot: version %d, this helm reads %d", v, SnapshotVersion)
	}
	d.str = string(data)
	s := &State{
		Slate:     map[string]logbook.ObservationRecord{},
		Artifacts: map[string]*Artifact{},
		bearings:  map[uint64]*logbook.Bearing{},
		actions:   map[string]*logbook.ActionRecord{},
	}
	v := &s.Voyage
	v.ID = d.string("voyage id")
	v.Intent = d.string("voyage intent")
	v.Kind = d.string("voyage kind")
	v.Identity = d.string("voyage identity")
	v.Created = d.time("voyage created")
	v.Status = Status(d.string("voyage status"))
	v.Outcome = Outcome(d.string("voyage outcome"))
	v.Summary = d.string("voyage summary")
	v.CompletedAt = d.time("voyage completed_at")
	v.Seq = d.uvarint("voyage seq")

	n, _ := d.list("slate", 1+minObservation)
	for range n {
		k := d.string("slate key")
		var o logbook.ObservationRecord
		d.observation(&o)
		s.Slate[k] = o
	}
	s.Entries = d.entries("entries")
	s.FailedActions = d.entries("failed actions")
	n, _ = d.list("artifacts", minArtifact)
	for range n {
		a := &Artifact{}
		d.artifactRef(&a.ArtifactRef)
		a.Reason = d.string("artifact reason")
		a.Status = ArtifactStatus(d.string("artifact status"))
		a.ReducedTo = d.string("artifact reduced_to")
		s.Artifacts[a.Hash] = a
	}
	if d.err == nil && d.off != len(d.buf) {
		d.fail("end", d.off, "%d trailing bytes", len(d.buf)-d.off)
	}
	if d.err != nil {
		return nil, fmt.Errorf("decode snapshot: %w", d.err)
	}
	// The indexes Apply keeps point into the entries, as the fold's do.
	for i := range s.Entries {
		e := &s.Entries[i]
		if e.Bearing != nil {
			s.bearings[e.Seq] = e.Bearing
		}
		if e.Action != nil {
			s.actions[e.Action.ID] = e.Action
		}
	}
	return s, nil
}

func (d *decoder) entries(field string) []logbook.Entry {
	n, isNil := d.list(field, minEntry)
	if isNil {
		return nil
	}
	out := make([]logbook.Entry, n)
	for i := range out {
		e := &out[i]
		at := d.off
		num := d.uvarint("entry n")
		if e.N = int(num); uint64(e.N) != num {
			d.fail("entry n", at, "%d overflows int", num)
		}
		e.Seq = d.uvarint("entry seq")
		e.Kind = logbook.EntryKind(d.string("entry kind"))
		e.At = d.time("entry at")
		e.Who = d.who("entry who")
		if d.opt("entry bearing") {
			e.Bearing = &logbook.Bearing{}
			d.decodeBearing(e.Bearing)
		}
		if d.opt("entry action") {
			e.Action = &logbook.ActionRecord{}
			d.decodeAction(e.Action)
		}
	}
	return out
}
