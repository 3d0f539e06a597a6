package projection

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"slices"
	"strings"
	"unsafe"

	"github.com/helmlog/helm/logbook"
)

// A snapshot is a State as of some event, encoded so that it loads faster
// than the events that built it fold: opening a long voyage loads the
// newest snapshot and folds only the events after it. It uses the event
// codec's encodings (codec.go) for what it shares with events.
//
// It is laid out so that opening reads only its head — the voyage, the
// slate, the logbook's counts, and where the rest is — and the long
// parts (the logbook's entries, the failed actions, the artifact index)
// are read when something first needs them (State.Load), block by block,
// each block checked against its own CRC-32C:
//
//	snapshot := snapshotFormat uvarint(SnapshotVersion) u32(len(head))
//	            head u32(crc(head)) block...
//	head     := voyage slate counts section(entries)
//	            section(failed actions) section(artifacts)
//	voyage   := str(id intent kind identity) time(created) str(parent
//	            repo dir base branch worktree session status outcome
//	            summary)
//	            time(completed_at worktree_removed) list of transition
//	            list of str(crew)
//	            uvarint(seq) time(last_at) policy
//	            str(current) list of entry(handoffs) origin(fork)
//	            origin(salvage)
//	transition := str(status) time(at) who str(reason)
//	slate    := list of str(key) observation (ordered by key)
//	counts   := uvarint(entries bearings actions outcome_unknown notes
//	            judgements failed refused steps stored_n) list of
//	            str(legacy)
//	            (legacy: the actions intended before entry numbers were
//	            stored whose outcome is not recorded)
//	section  := list of blockref (a nil list: the State's was nil)
//	blockref := uvarint(len count) u32(crc(block)) str(first)
//	block    := entry... | artifact...  (count of them; len bytes)
//	entry    := uvarint(n seq) str(kind) time(at) who opt(bearing)
//	            opt(action str(why rule) uvarint(undoes undone_by)
//	            inverse) opt(str(note text))
//	            opt(judgement) opt(policy) opt(rechain) opt(step)
//	            opt(handoff)
//	policy   := str(digest) list of str(source)
//	rechain  := uvarint(seq) str(crc32c why)
//	handoff  := str(from to why) opt(confirmed)
//	step     := as the event codec writes it (codec.go)
//	artifact := str(hash) varint(size stored_size offset) uvarint(blob)
//	            str(derived_from method reason status reduced_to)
//
// u32 is little-endian. The blocks follow the head in the order its
// sections list them. Artifacts are ordered by hash, and a block's first
// is the hash of its first artifact, so a page of the index ordered by
// hash is read from the blocks it spans (State.ArtifactsAfter); an
// entries block's first is empty.
//
// A snapshot written by another SnapshotVersion is not read: raise it
// whenever State, or what an event folds into it, changes.

// SnapshotVersion is the version of the snapshot encoding and of the fold
// it captures. Version 1 was one block, checked as a whole by its reader;
// version 2 had no lifecycle, crew, notes, judgements or refused actions;
// version 3 no worktree removal; version 4 no undo (entries undone, and
// how to undo them); version 5 no policy (the voyage's, and policy
// entries); version 6 no rechain entries; version 7 no agents' steps nor
// the session a voyage records; version 8 no handoffs (the voyage's
// current identity, and handoff entries) nor fork or salvage origin.
const SnapshotVersion = 9

// snapshotFormat is a snapshot's first byte.
const snapshotFormat = 0x53 // 'S'

// blockSize is about how many bytes a block holds: small enough that a
// page of the artifact index reads little, large enough that a section's
// block list stays short. Tests encode with smaller blocks
// (encodeSnapshot), so that a section spans several.
const blockSize = 64 << 10

// Sections names the parts of a State that a snapshot stores apart from
// its head.
type Sections uint8

// The sections of a snapshot.
const (
	SectionEntries   Sections = 1 << iota // State.Entries
	SectionFailed                         // State.FailedActions
	SectionArtifacts                      // State.Artifacts
	AllSections      = SectionEntries | SectionFailed | SectionArtifacts
)

// ErrSnapshotSection reports a section of a snapshot that does not check
// out when it is read, after its head was: the State is as it was, and the
// snapshot cannot be trusted — fold the events from the first instead.
var ErrSnapshotSection = errors.New("a section of the snapshot does not check out")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// counts are the logbook's counts, kept as events fold so that they are
// known without the entries.
type counts struct {
	bearings, actions, unknown, notes, judgements, failed, refused, steps int
}

// LogbookCounts counts the logbook's entries: all of them, the bearings,
// the actions (refused ones apart), the actions whose outcome is
// unknown, the failed actions among those in the story, the refused
// actions, the notes, the judgements and the agents' steps.
type LogbookCounts struct {
	Entries, Bearings, Actions, OutcomeUnknown, Failed, Refused, Notes, Judgements, Steps int
}

// lazy is what a State opened from a snapshot has not read yet.
type lazy struct {
	r        io.ReaderAt
	pending  Sections
	sections [3]section // by bit of Sections
}

type section struct {
	isNil  bool
	count  int // elements in all blocks
	blocks []blockRef
}

// bytes is the length of the section's blocks.
func (s *section) bytes() int {
	n := 0
	for _, b := range s.blocks {
		n += b.len
	}
	return n
}

type blockRef struct {
	off   int64 // in the snapshot
	len   int
	count int
	crc   uint32
	first string
}

func bit(s Sections) int {
	switch s {
	case SectionEntries:
		return 0
	case SectionFailed:
		return 1
	}
	return 2
}

// Pending returns the sections not read from the snapshot yet.
func (s *State) Pending() Sections {
	if s.lazy == nil {
		return 0
	}
	return s.lazy.pending
}

// Counts returns the logbook's counts, without reading its entries.
func (s *State) Counts() LogbookCounts {
	n := len(s.Entries)
	if s.Pending()&SectionEntries != 0 {
		n += s.lazy.sections[bit(SectionEntries)].count
	}
	c := &s.counts
	return LogbookCounts{Entries: n, Bearings: c.bearings, Actions: c.actions, OutcomeUnknown: c.unknown,
		Failed: c.failed, Refused: c.refused, Notes: c.notes, Judgements: c.judgements, Steps: c.steps}
}

// Needs returns the pending sections that folding e reads or changes.
// A bearing or an intended action is appended after the pending entries
// without reading them (Entries holds those recorded since the
// snapshot), as is the outcome or the challenge of one of those; the
// outcome or challenge of an older one, a failed action, and an undo
// (which names the entry it undoes), need them.
// Likewise a stowed artifact goes into Artifacts, which holds those
// stowed since the snapshot while the index is pending; a reduction or a
// jettison changes an entry it may not hold, and needs the index.
func (s *State) Needs(e *Event) Sections {
	p := s.Pending()
	if p == 0 {
		return 0
	}
	var need Sections
	switch e.Type {
	case ArtifactReduced, ArtifactJettisoned:
		need = SectionArtifacts
	case ReadingChallenged:
		if e.Challenge == nil || s.bearings[e.Challenge.Bearing] == nil {
			need = SectionEntries
		}
	case ActionIntended:
		if e.Action != nil && e.Action.Undoes != 0 {
			need = SectionEntries // it names the entry it undoes
		}
	case ActionPerformed:
		if a := e.Action; a == nil || s.actions[a.ID] == nil || s.actions[a.ID].Undoes != 0 {
			need = SectionEntries // an undo marks the entry it undoes
		}
	case ActionFailed:
		if e.Action == nil || s.actions[e.Action.ID] == nil || s.legacy[e.Action.ID] {
			need = SectionEntries | SectionFailed
		}
	case StepFinished:
		if e.Step == nil || s.steps[keyOf(e.Step)] == nil {
			need = SectionEntries // the call was recorded before the snapshot
		}
	}
	return need & p
}

// EncodeSnapshot encodes s. Sections still pending are copied from the
// snapshot s was opened from, block by block, once checked: an error
// (matching ErrSnapshotSection) says one does not check out. An artifact
// index with artifacts stowed since is read first, to be written whole.
func (s *State) EncodeSnapshot() ([]byte, error) {
	return s.encodeSnapshot(blockSize)
}

// encodeSnapshot is EncodeSnapshot with blocks of about block bytes.
func (s *State) encodeSnapshot(block int) ([]byte, error) {
	if s.Pending()&SectionArtifacts != 0 && len(s.Artifacts) > 0 {
		if err := s.Load(SectionArtifacts); err != nil {
			return nil, err
		}
	}
	var body encoder
	var refs [3]section
	for _, sec := range []Sections{SectionEntries, SectionFailed, SectionArtifacts} {
		ref, err := s.encodeSection(sec, &body, block)
		if err != nil {
			return nil, err
		}
		refs[bit(sec)] = ref
	}

	var h encoder
	v := &s.Voyage
	h.str(v.ID)
	h.str(v.Intent)
	h.str(v.Kind)
	h.str(v.Identity)
	h.time(v.Created)
	for _, x := range []string{v.Parent, v.Repo, v.Dir, v.Base, v.Branch, v.Worktree, v.Session} {
		h.str(x)
	}
	h.str(string(v.Status))
	h.str(string(v.Outcome))
	h.str(v.Summary)
	h.time(v.CompletedAt)
	h.time(v.WorktreeRemoved)
	if h.list(v.Lifecycle == nil, len(v.Lifecycle)) {
		for _, t := range v.Lifecycle {
			h.str(string(t.Status))
			h.time(t.At)
			h.who(t.Who)
			h.str(t.Reason)
		}
	}
	if h.list(v.Crew == nil, len(v.Crew)) {
		for _, id := range v.Crew {
			h.str(id)
		}
	}
	h.uvarint(v.Seq)
	h.time(v.LastAt)
	h.policy(&v.Policy)
	h.str(v.Current)
	if h.list(v.Handoffs == nil, len(v.Handoffs)) {
		for i := range v.Handoffs {
			h.entry(&v.Handoffs[i])
		}
	}
	h.origin(v.Fork)
	h.origin(v.Salvage)
	h.list(false, len(s.Slate))
	for _, k := range slices.Sorted(maps.Keys(s.Slate)) {
		o := s.Slate[k]
		h.str(k)
		h.observation(&o)
	}
	c := s.Counts()
	h.uvarint(uint64(c.Entries))
	h.uvarint(uint64(c.Bearings))
	h.uvarint(uint64(c.Actions))
	h.uvarint(uint64(c.OutcomeUnknown))
	h.uvarint(uint64(c.Notes))
	h.uvarint(uint64(c.Judgements))
	h.uvarint(uint64(c.Failed))
	h.uvarint(uint64(c.Refused))
	h.uvarint(uint64(c.Steps))
	h.uvarint(uint64(s.storedN))
	legacy := slices.Sorted(maps.Keys(s.legacy))
	if h.list(false, len(legacy)) {
		for _, id := range legacy {
			h.str(id)
		}
	}
	for _, ref := range refs {
		if h.list(ref.isNil, len(ref.blocks)) {
			for _, b := range ref.blocks {
				h.uvarint(uint64(b.len))
				h.uvarint(uint64(b.count))
				h.b = binary.LittleEndian.AppendUint32(h.b, b.crc)
				h.str(b.first)
			}
		}
	}

	w := encoder{b: make([]byte, 0, 16+len(h.b)+len(body.b))}
	w.b = append(w.b, snapshotFormat)
	w.uvarint(SnapshotVersion)
	w.b = binary.LittleEndian.AppendUint32(w.b, uint32(len(h.b)))
	w.b = append(w.b, h.b...)
	w.b = binary.LittleEndian.AppendUint32(w.b, crc32.Checksum(h.b, castagnoli))
	w.b = append(w.b, body.b...)
	return w.b, nil
}

// encodeSection appends section sec's blocks of about block bytes to body
// and returns their list (offsets relative to body).
func (s *State) encodeSection(sec Sections, body *encoder, block int) (section, error) {
	var out section
	entries := s.Entries
	if s.Pending()&sec != 0 {
		src := s.lazy.sections[bit(sec)]
		out = section{isNil: src.isNil, count: src.count}
		for _, b := range src.blocks {
			data, err := s.lazy.read(b)
			if err != nil {
				return section{}, err
			}
			b.off = int64(len(body.b))
			body.b = append(body.b, data...)
			out.blocks = append(out.blocks, b)
		}
		if sec != SectionEntries || entries == nil {
			return out, nil
		}
		// The entries recorded since follow those of the old snapshot.
		out.isNil = false
	} else if sec == SectionEntries {
		out.isNil = entries == nil
	}
	start := len(body.b)
	cut := func(first string, count int) {
		if count == 0 {
			return
		}
		data := body.b[start:]
		out.blocks = append(out.blocks, blockRef{off: int64(start), len: len(data), count: count,
			crc: crc32.Checksum(data, castagnoli), first: first})
		out.count += count
		start = len(body.b)
	}
	switch sec {
	case SectionEntries, SectionFailed:
		if sec == SectionFailed {
			entries = s.FailedActions
			out.isNil = entries == nil
		}
		n := 0
		for i := range entries {
			body.entry(&entries[i])
			if n++; len(body.b)-start >= block {
				cut("", n)
				n = 0
			}
		}
		cut("", n)
	case SectionArtifacts:
		n, first := 0, ""
		for _, h := range slices.Sorted(maps.Keys(s.Artifacts)) {
			a := s.Artifacts[h]
			if n == 0 {
				first = a.Hash
			}
			body.artifact(a)
			if n++; len(body.b)-start >= block {
				cut(first, n)
				n = 0
			}
		}
		cut(first, n)
	}
	return out, nil
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
		w.str(e.Action.Why)
		w.str(e.Action.Rule)
		w.uvarint(uint64(e.Action.Undoes))
		w.uvarint(uint64(e.Action.UndoneBy))
		w.inverse(e.Action.Inverse)
	}
	if w.opt(e.Note != nil) {
		w.str(e.Note.Text)
	}
	if j := e.Judgement; w.opt(j != nil) {
		w.judgement(j)
	}
	if p := e.Policy; w.opt(p != nil) {
		w.policy(p)
	}
	if r := e.Rechain; w.opt(r != nil) {
		w.rechain(r)
	}
	if st := e.Step; w.opt(st != nil) {
		w.step(st)
	}
	if h := e.Handoff; w.opt(h != nil) {
		w.handoff(h)
	}
}

func (w *encoder) artifact(a *Artifact) {
	w.artifactRef(&a.ArtifactRef)
	w.str(a.Reason)
	w.str(string(a.Status))
	w.str(a.ReducedTo)
}

// Fewest bytes an entry, an artifact, a block's reference and a
// transition take.
const (
	minTransition = 6  // 2 strs, a time, a who
	minEntry      = 15 // 2 uvarints, a str, a time, a who (3 strs), 8 opts
	minArtifact   = 11 // 7 strs, 3 varints, a uvarint
	minBlockRef   = 7  // 2 uvarints, a u32, a str
)

// DecodeSnapshot decodes a whole snapshot EncodeSnapshot wrote, into a
// State ready for Apply of the events after it. A snapshot of another
// version, or bytes that do not decode, are an error.
func DecodeSnapshot(data []byte) (*State, error) {
	s, end, err := openSnapshot(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	if end != int64(len(data)) {
		return nil, fmt.Errorf("decode snapshot: %d trailing bytes", int64(len(data))-end)
	}
	if err := s.Load(AllSections); err != nil {
		return nil, err
	}
	return s, nil
}

// OpenSnapshot reads the head of the snapshot that r holds (size bytes):
// the State it returns has its voyage, slate and counts, and reads the
// rest from r when it is first needed (Load; Apply loads what an event
// needs). r must stay readable, and unchanged, until Pending is zero.
func OpenSnapshot(r io.ReaderAt, size int64) (*State, error) {
	s, _, err := openSnapshot(r, size)
	return s, err
}

// openSnapshot reads the head and returns the state and where the last
// block ends.
func openSnapshot(r io.ReaderAt, size int64) (*State, int64, error) {
	var pre [1 + binary.MaxVarintLen64 + 4]byte
	n, err := r.ReadAt(pre[:min(int64(len(pre)), size)], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, fmt.Errorf("decode snapshot: %w", err)
	}
	if n == 0 || pre[0] != snapshotFormat {
		return nil, 0, fmt.Errorf("decode snapshot: not a snapshot")
	}
	d := decoder{buf: pre[:n], off: 1}
	if v := d.uvarint("version"); d.err == nil && v != SnapshotVersion {
		return nil, 0, fmt.Errorf("decode snapshot: version %d, this helm reads %d", v, SnapshotVersion)
	}
	if d.err != nil || d.off+4 > n {
		return nil, 0, fmt.Errorf("decode snapshot: its head is cut short")
	}
	headLen := int64(binary.LittleEndian.Uint32(pre[d.off:]))
	headAt := int64(d.off) + 4
	if headLen > size-headAt-4 {
		return nil, 0, fmt.Errorf("decode snapshot: its head of %d bytes runs past its end", headLen)
	}
	buf := make([]byte, headLen+4)
	if _, err := r.ReadAt(buf, headAt); err != nil {
		return nil, 0, fmt.Errorf("decode snapshot: %w", err)
	}
	head := buf[:headLen]
	if crc32.Checksum(head, castagnoli) != binary.LittleEndian.Uint32(buf[headLen:]) {
		return nil, 0, fmt.Errorf("decode snapshot: its head's checksum does not match")
	}
	s, end, err := decodeHead(head, r, headAt+headLen+4, size)
	if err != nil {
		return nil, 0, fmt.Errorf("decode snapshot: %w", err)
	}
	return s, end, nil
}

func decodeHead(head []byte, r io.ReaderAt, off, size int64) (*State, int64, error) {
	d := decoder{buf: head, str: string(head)}
	s := &State{
		Slate:     map[string]logbook.ObservationRecord{},
		Artifacts: map[string]*Artifact{},
		bearings:  map[uint64]*logbook.Bearing{},
		actions:   map[string]*logbook.ActionRecord{},
		steps:     map[stepKey]*logbook.Step{},
		legacy:    map[string]bool{},
	}
	v := &s.Voyage
	v.ID = d.string("voyage id")
	v.Intent = d.string("voyage intent")
	v.Kind = d.string("voyage kind")
	v.Identity = d.string("voyage identity")
	v.Created = d.time("voyage created")
	v.Parent = d.string("voyage parent")
	v.Repo = d.string("voyage repo")
	v.Dir = d.string("voyage dir")
	v.Base = d.string("voyage base")
	v.Branch = d.string("voyage branch")
	v.Worktree = d.string("voyage worktree")
	v.Session = d.string("voyage session")
	v.Status = Status(d.string("voyage status"))
	v.Outcome = Outcome(d.string("voyage outcome"))
	v.Summary = d.string("voyage summary")
	v.CompletedAt = d.time("voyage completed_at")
	v.WorktreeRemoved = d.time("voyage worktree_removed")
	if n, isNil := d.list("voyage lifecycle", minTransition); !isNil {
		v.Lifecycle = make([]Transition, n)
		for i := range v.Lifecycle {
			t := &v.Lifecycle[i]
			t.Status = Status(d.string("transition status"))
			t.At = d.time("transition at")
			t.Who = d.who("transition who")
			t.Reason = d.string("transition reason")
		}
	}
	if n, isNil := d.list("voyage crew", minString); !isNil {
		v.Crew = make([]string, n)
		for i := range v.Crew {
			v.Crew[i] = d.string("voyage crew")
		}
	}
	v.Seq = d.uvarint("voyage seq")
	v.LastAt = d.time("voyage last_at")
	v.Policy = d.policy()
	v.Current = d.string("voyage current identity")
	if n, isNil := d.list("voyage handoffs", minEntry); !isNil {
		v.Handoffs = make([]logbook.Entry, n)
		for i := range v.Handoffs {
			d.entry(&v.Handoffs[i])
		}
	}
	v.Fork = d.origin("voyage fork")
	v.Salvage = d.origin("voyage salvage")

	n, _ := d.list("slate", 1+minObservation)
	for range n {
		k := d.string("slate key")
		var o logbook.ObservationRecord
		d.observation(&o)
		s.Slate[k] = o
	}
	entries := d.count("entries count")
	s.counts.bearings = d.count("bearings count")
	s.counts.actions = d.count("actions count")
	s.counts.unknown = d.count("outcome_unknown count")
	s.counts.notes = d.count("notes count")
	s.counts.judgements = d.count("judgements count")
	s.counts.failed = d.count("failed count")
	s.counts.refused = d.count("refused count")
	s.counts.steps = d.count("steps count")
	s.storedN = d.count("stored entry number")
	n, _ = d.list("legacy actions", minString)
	for range n {
		s.legacy[d.string("legacy action")] = true
	}
	l := &lazy{r: r, pending: AllSections}
	for i, sec := range []Sections{SectionEntries, SectionFailed, SectionArtifacts} {
		ref := &l.sections[i]
		var nb int
		nb, ref.isNil = d.list("section", minBlockRef)
		for range nb {
			at := d.off
			b := blockRef{off: off, len: d.count("block len"), count: d.count("block count")}
			if d.off+4 > len(d.buf) {
				d.fail("block crc", d.off, "head ends")
				break
			}
			b.crc = binary.LittleEndian.Uint32(d.buf[d.off:])
			d.off += 4
			b.first = d.string("block first")
			minSize := minArtifact
			if sec != SectionArtifacts {
				minSize = minEntry
			}
			if int64(b.len) > size-off || b.count > b.len/minSize || b.count == 0 {
				d.fail("block", at, "a block of %d elements in %d bytes at %d does not fit a snapshot of %d bytes", b.count, b.len, off, size)
				break
			}
			off += int64(b.len)
			ref.count += b.count
			ref.blocks = append(ref.blocks, b)
		}
		if ref.isNil && sec == SectionArtifacts {
			ref.isNil = false // the index is a map: nil and empty are one
		}
	}
	if d.err == nil && l.sections[0].count != entries {
		d.fail("entries count", 0, "the head counts %d entries, its blocks %d", entries, l.sections[0].count)
	}
	if d.err == nil && d.off != len(d.buf) {
		d.fail("end", d.off, "%d trailing bytes in the head", len(d.buf)-d.off)
	}
	if d.err != nil {
		return nil, 0, d.err
	}
	s.lazy = l
	return s, off, nil
}

// count reads a uvarint that counts something held in memory.
func (d *decoder) count(field string) int {
	at := d.off
	u := d.uvarint(field)
	if u > uint64(len(d.buf))*8+1<<30 || int(u) < 0 {
		d.fail(field, at, "%d is out of range", u)
		return 0
	}
	return int(u)
}

// read reads block b and checks it.
func (l *lazy) read(b blockRef) ([]byte, error) {
	data := make([]byte, b.len)
	if err := l.readSpan(data, []blockRef{b}); err != nil {
		return nil, err
	}
	return data, nil
}

// readSpan reads the consecutive blocks bs into buf, which holds them
// exactly, and checks each.
func (l *lazy) readSpan(buf []byte, bs []blockRef) error {
	if _, err := l.r.ReadAt(buf, bs[0].off); err != nil {
		return fmt.Errorf("%w: the block at offset %d: %v", ErrSnapshotSection, bs[0].off, err)
	}
	for _, b := range bs {
		data := buf[b.off-bs[0].off:][:b.len]
		if crc32.Checksum(data, castagnoli) != b.crc {
			return fmt.Errorf("%w: the block at offset %d: its checksum does not match", ErrSnapshotSection, b.off)
		}
	}
	return nil
}

// spanSize is about how many bytes of blocks a section's decoder reads at
// once.
const spanSize = 1 << 20

// spans calls fn with the blocks of ref read and checked, a span of
// consecutive blocks at a time, in a buffer reused from span to span.
func (l *lazy) spans(ref *section, fn func(b blockRef, data []byte) error) error {
	var buf []byte
	for bs := ref.blocks; len(bs) > 0; {
		n, size := 1, bs[0].len
		for n < len(bs) && size+bs[n].len <= spanSize {
			size += bs[n].len
			n++
		}
		if cap(buf) < size {
			buf = make([]byte, max(size, min(spanSize, ref.bytes())))
		}
		buf = buf[:size]
		if err := l.readSpan(buf, bs[:n]); err != nil {
			return err
		}
		for _, b := range bs[:n] {
			if err := fn(b, buf[b.off-bs[0].off:][:b.len]); err != nil {
				return err
			}
		}
		bs = bs[n:]
	}
	return nil
}

// Load reads the sections of which that are pending from the snapshot s
// was opened from. A section that does not check out is an error
// matching ErrSnapshotSection, and leaves s as it was.
func (s *State) Load(which Sections) error {
	which &= s.Pending()
	if which == 0 {
		return nil
	}
	l := s.lazy
	// Decode everything first, then set it: a failure changes nothing.
	var entries, failed []logbook.Entry
	var arts map[string]*Artifact
	// About one distinct string (a reading, a hash) per entry.
	n := 0
	for _, sec := range []Sections{SectionEntries, SectionFailed} {
		if which&sec != 0 {
			n += l.sections[bit(sec)].count
		}
	}
	in := interner{strs: make(map[string]string, n), raws: map[string]json.RawMessage{}}
	for _, sec := range []Sections{SectionEntries, SectionFailed, SectionArtifacts} {
		if which&sec == 0 {
			continue
		}
		ref := &l.sections[bit(sec)]
		var err error
		switch sec {
		case SectionEntries:
			entries, err = l.entries(ref, &in)
		case SectionFailed:
			failed, err = l.entries(ref, &in)
		case SectionArtifacts:
			arts, err = l.artifacts(ref)
		}
		if err != nil {
			return err
		}
	}
	if which&SectionEntries != 0 {
		// The indexes Apply keeps point into the entries, as the fold's
		// do; an action intended since the snapshot is indexed already,
		// and wins over an older one of the same id, as in the fold.
		since := map[string]bool{}
		for id := range s.actions {
			since[id] = true
		}
		for i := range entries {
			e := &entries[i]
			if e.Bearing != nil {
				s.bearings[e.Seq] = e.Bearing
			}
			if e.Action != nil && e.Action.Status != logbook.ActionRefused && !since[e.Action.ID] {
				s.actions[e.Action.ID] = e.Action
			}
			if e.Step != nil && isOpen(e.Step) {
				if _, later := s.steps[keyOf(e.Step)]; !later {
					s.steps[keyOf(e.Step)] = e.Step
				}
			}
		}
		if s.Entries != nil {
			entries = append(entries, s.Entries...)
		}
		s.Entries = entries
	}
	if which&SectionFailed != 0 {
		s.FailedActions = failed
	}
	if which&SectionArtifacts != 0 {
		// Those stowed since the snapshot replace what it held.
		for h, a := range s.Artifacts {
			arts[h] = a
		}
		s.Artifacts = arts
	}
	if l.pending &^= which; l.pending == 0 {
		s.lazy = nil
	}
	return nil
}

// entries decodes an entries section. Its strings are interned: the
// same identities, roles, marks and hashes recur on entry after entry,
// and no block is kept alive by a string of it.
func (l *lazy) entries(ref *section, in *interner) ([]logbook.Entry, error) {
	if ref.isNil {
		return nil, nil
	}
	out := make([]logbook.Entry, ref.count)
	i := 0
	err := l.spans(ref, func(b blockRef, data []byte) error {
		// A view of the reused buffer, not a copy: with intern set, every
		// string decoded is a copy of its own (interner.str).
		d := decoder{buf: data, str: frozen(data), intern: in}
		for range b.count {
			d.entry(&out[i])
			i++
		}
		return d.end(b)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// artifacts decodes the artifact index. Its strings (hashes, mostly:
// each held once) share the section's bytes, read for them alone.
func (l *lazy) artifacts(ref *section) (map[string]*Artifact, error) {
	out := make(map[string]*Artifact, ref.count)
	slab := make([]Artifact, ref.count)
	if len(ref.blocks) == 0 {
		return out, nil
	}
	first, last := ref.blocks[0], ref.blocks[len(ref.blocks)-1]
	data := make([]byte, last.off+int64(last.len)-first.off)
	if err := l.readSpan(data, ref.blocks); err != nil {
		return nil, err
	}
	str := frozen(data)
	i := 0
	for _, b := range ref.blocks {
		at := b.off - first.off
		d := decoder{buf: data[at:][:b.len], str: str[at:][:b.len]}
		for range b.count {
			a := &slab[i]
			i++
			d.artifact(a)
			out[a.Hash] = a
		}
		if err := d.end(b); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// frozen returns b as a string without copying it. Either b is never
// written again (a buffer read for the string alone, which the string
// keeps alive), or no string made from it outlives the next write (a
// decoder that interns).
func frozen(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// end checks that the decoder read block b whole, and no further.
func (d *decoder) end(b blockRef) error {
	if d.err == nil && d.off != len(d.buf) {
		d.fail("end", d.off, "%d trailing bytes", len(d.buf)-d.off)
	}
	if d.err != nil {
		return fmt.Errorf("%w: the block at offset %d: %v", ErrSnapshotSection, b.off, d.err)
	}
	return nil
}

// ArtifactsAfter returns up to n entries of the artifact index ordered by
// hash, those whose hash sorts after after, read from the snapshot's
// blocks while the index is pending (served reports that), merged with
// those stowed since: a page reads the blocks it spans, not the index.
// Once the index is loaded, it returns served false and the caller pages
// the map.
func (s *State) ArtifactsAfter(after string, n int) (page []Artifact, served bool, err error) {
	if s.Pending()&SectionArtifacts == 0 {
		return nil, false, nil
	}
	var since []string
	for h := range s.Artifacts {
		if h > after {
			since = append(since, h)
		}
	}
	slices.Sort(since)
	since = since[:min(len(since), n)]
	// n of the snapshot's, past those stowed since, then the n first of both.
	var old []Artifact
	blocks := s.lazy.sections[bit(SectionArtifacts)].blocks
	// The last block whose first hash is not after after holds the next.
	i, _ := slices.BinarySearchFunc(blocks, after, func(b blockRef, h string) int { return strings.Compare(b.first, h) })
	for i = max(i-1, 0); i < len(blocks) && len(old) < n; i++ {
		data, err := s.lazy.read(blocks[i])
		if err != nil {
			return nil, true, err
		}
		d := decoder{buf: data, str: string(data)}
		for range blocks[i].count {
			var a Artifact
			d.artifact(&a)
			if d.err == nil && a.Hash > after && len(old) < n && s.Artifacts[a.Hash] == nil {
				old = append(old, a)
			}
		}
		if err := d.end(blocks[i]); err != nil {
			return nil, true, err
		}
	}
	for len(page) < n && (len(old) > 0 || len(since) > 0) {
		if len(since) == 0 || len(old) > 0 && old[0].Hash < since[0] {
			page, old = append(page, old[0]), old[1:]
		} else {
			page, since = append(page, *s.Artifacts[since[0]]), since[1:]
		}
	}
	return page, true, nil
}

// Artifact returns the index entry of the artifact stored under hash, nil
// when the index holds none. While the index is pending it reads one block
// of the snapshot, the one whose hashes span hash (the blocks are ordered
// by hash and the head holds each one's first), unless hash was stowed
// since: a point lookup costs a block, not the index. A block that does
// not check out is an error matching ErrSnapshotSection, and leaves s as
// it was. The entry is the caller's to read, not to change.
func (s *State) Artifact(hash string) (*Artifact, error) {
	if a := s.Artifacts[hash]; a != nil || s.Pending()&SectionArtifacts == 0 {
		return a, nil
	}
	blocks := s.lazy.sections[bit(SectionArtifacts)].blocks
	// The last block whose first hash is not after hash.
	i, found := slices.BinarySearchFunc(blocks, hash, func(b blockRef, h string) int { return strings.Compare(b.first, h) })
	if !found {
		i--
	}
	if i < 0 {
		return nil, nil
	}
	data, err := s.lazy.read(blocks[i])
	if err != nil {
		return nil, err
	}
	d := decoder{buf: data, str: string(data)}
	var hit *Artifact
	for range blocks[i].count {
		var a Artifact
		d.artifact(&a)
		if d.err == nil && a.Hash == hash {
			hit = &a
		}
	}
	if err := d.end(blocks[i]); err != nil {
		return nil, err
	}
	return hit, nil
}

func (d *decoder) artifact(a *Artifact) {
	d.artifactRef(&a.ArtifactRef)
	a.Reason = d.string("artifact reason")
	a.Status = ArtifactStatus(d.string("artifact status"))
	a.ReducedTo = d.string("artifact reduced_to")
}

func (d *decoder) entry(e *logbook.Entry) {
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
		e.Action.Why = d.string("entry action why")
		e.Action.Rule = d.string("entry action rule")
		e.Action.Undoes = d.entryRef("entry action undoes")
		e.Action.UndoneBy = d.entryRef("entry action undone_by")
		e.Action.Inverse = d.inverse()
	}
	if d.opt("entry note") {
		e.Note = &logbook.Note{Text: d.string("entry note text")}
	}
	if d.opt("entry judgement") {
		e.Judgement = d.judgement()
	}
	if d.opt("entry policy") {
		p := d.policy()
		e.Policy = &p
	}
	if d.opt("entry rechain") {
		r := d.rechain()
		e.Rechain = &r
	}
	if d.opt("entry step") {
		e.Step = &logbook.Step{}
		d.step(e.Step)
	}
	if d.opt("entry handoff") {
		h := d.handoff()
		e.Handoff = &h
	}
}

// interner holds one copy of each string and raw value decoded, for
// sections whose values recur.
type interner struct {
	strs map[string]string
	raws map[string]json.RawMessage
}

func (in *interner) str(s string) string {
	if c, ok := in.strs[s]; ok {
		return c
	}
	c := strings.Clone(s)
	in.strs[c] = c
	return c
}

// raw returns the one copy of p; its capacity is its length, so that an
// append to it never writes into a neighbour.
func (in *interner) raw(p []byte) json.RawMessage {
	if c, ok := in.raws[string(p)]; ok {
		return c
	}
	c := json.RawMessage(bytes.Clone(p))
	c = c[:len(c):len(c)]
	in.raws[string(c)] = c
	return c
}
