package helm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
)

// Salvage carries what is intact of the damaged voyage with this id or
// prefix into a new voyage, started by who, and returns it open (its
// VoyageInfo.Salvage says what was carried and what was lost): every
// record up to the first damage that Verify finds (with opts' witnesses:
// a record after the last witness that holds and before one that fails
// cannot be told intact, so the salvage stops at the last that holds),
// ending with the last whole unit's event, and the bytes of every
// artifact those events hold that are not damaged. The new voyage's
// start names the damaged voyage and its head at the last record
// carried, and records what was lost and where (projection.Loss): the
// first damage's record, file, offset and reason, how many records and
// bytes of the log follow the last one carried, and the artifacts whose
// bytes were damaged (their events carried, jettisoned in the new
// voyage with the reason). An event that does not fold ends the salvage
// as damage does: nothing after damage is trusted, so events after it
// are never carried, whatever they say.
//
// The damaged voyage is left untouched: Salvage only reads it. A voyage
// Verify finds no damage in is refused (ErrInvalid: fork it instead), and
// so is one whose damage leaves nothing before it (ErrDamaged).
func (h *Home) Salvage(ctx context.Context, idOrPrefix string, who logbook.Who, opts *VerifyOptions) (*Voyage, error) {
	const op = "salvage"
	if err := checkWho(who); err != nil {
		return nil, &VoyageError{Op: op, Err: err}
	}
	if who.Identity == "" {
		return nil, &VoyageError{Op: op, Err: fmt.Errorf("%w: no identity: the new voyage's identity (Who.Identity) is the salvager's", ErrMissingWho)}
	}
	if err := logbook.ValidateIdentity(who.Identity); err != nil {
		return nil, &VoyageError{Op: op, Err: fmt.Errorf("%w: %v", ErrInvalid, err)}
	}
	from, err := h.Resolve(ctx, idOrPrefix)
	if err != nil {
		return nil, err
	}
	rep, err := h.verify(ctx, from, opts)
	if err != nil {
		return nil, &VoyageError{Op: op, Voyage: from, Err: err}
	}
	if rep.OK() {
		return nil, &VoyageError{Op: op, Voyage: from,
			Err:  fmt.Errorf("%w: verify finds no damage in voyage %s: there is nothing to salvage", ErrInvalid, from),
			Hint: hint.Hint{Kind: hint.Verify, Text: "fork the voyage to carry its records into a new one (StartOptions.ForkOf), or salvage it with the witnesses that show its damage"}}
	}
	s := h.salvagePlan(from, rep)
	if err := h.salvageScan(ctx, s, nil); err != nil {
		return nil, &VoyageError{Op: op, Voyage: from, Err: err}
	}
	if s.upTo == 0 {
		return nil, &VoyageError{Op: op, Voyage: from,
			Err:  fmt.Errorf("%w: nothing of voyage %s can be told intact before its damage (%s)", ErrDamaged, from, s.first.Reason),
			Hint: hint.Hint{Kind: hint.Restore, Text: "restore the voyage's directory from a backup, give an older witness of it (a commit's Helm-Voyage trailer) that the log still matches, or salvage it without witnesses to carry what the log's own checks accept"}}
	}
	for hash, why := range s.damaged {
		s.skip[hash] = fmt.Sprintf("its bytes were damaged in voyage %s: %s", from, why)
	}
	loss := projection.Loss{Seq: s.first.Seq, File: s.first.File, Offset: s.first.Offset, Reason: s.first.Reason,
		Records: s.after, Bytes: s.afterBytes + s.beyond(), Artifacts: slices.Sorted(mapsKeys(s.damaged))}
	if loss.Reason == "" && s.first.Err != nil {
		loss.Reason = s.first.Err.Error()
	}
	o := s.st.Voyage
	id := h.opts.NewID().String()
	start := &projection.Event{Type: projection.VoyageStarted, Who: who,
		Voyage: &projection.VoyageInfo{ID: id, Intent: "Salvage of " + from + ": " + o.Intent, Kind: o.Kind,
			Repo: o.Repo, Dir: o.Dir, Base: o.Base, Branch: o.Branch,
			Salvage: &projection.Origin{Voyage: from, Seq: s.upTo, Head: s.head.Hash.String(), Lost: &loss}}}
	if err := checkText("intent", start.Voyage.Intent); err != nil {
		start.Voyage.Intent = "Salvage of " + from
	}
	if _, err := h.carry(ctx, op, start, from, s.upTo, s.skip, who); err != nil {
		return nil, err
	}
	return h.open(ctx, id)
}

// ReadIntact reads the events of the voyage with this id or prefix up to
// its first damage, as Salvage would carry them (opts' witnesses as
// there), without writing anything: fn is called with each, in order.
// It returns the first damage, nil when Verify finds none (then every
// event was read): the events after it are not read, whatever they say.
// An error is a read that could not be done. A damaged voyage's events
// read this way are not its story: say so wherever they are shown.
func (h *Home) ReadIntact(ctx context.Context, idOrPrefix string, opts *VerifyOptions, fn func(Event) error) (*DamageError, error) {
	const op = "read voyage up to its damage"
	from, err := h.Resolve(ctx, idOrPrefix)
	if err != nil {
		return nil, err
	}
	rep, err := h.verify(ctx, from, opts)
	if err != nil {
		return nil, &VoyageError{Op: op, Voyage: from, Err: err}
	}
	if rep.OK() {
		v, err := h.Voyage(ctx, from)
		if err != nil {
			return nil, err
		}
		defer v.Close()
		for e, err := range v.Events(ctx, 1) {
			if err != nil {
				return nil, err
			}
			if err := fn(e); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}
	s := h.salvagePlan(from, rep)
	if err := h.salvageScan(ctx, s, fn); err != nil {
		return nil, &VoyageError{Op: op, Voyage: from, Err: err}
	}
	d := *s.first
	if d.Voyage == "" {
		d.Voyage = from
	}
	if d.Reason == "" && d.Err != nil {
		d.Reason = d.Err.Error()
	}
	return &d, nil
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// salvage is what a salvage found of a damaged voyage.
type salvage struct {
	from  string
	limit uint64       // no record after it is carried
	first *DamageError // the first damage
	// what the scan found: the last event carried, the chain there, the
	// views there, the records and bytes read after it
	upTo       uint64
	head       chain.Head
	st         projection.State
	after      uint64
	afterBytes int64
	skip       map[string]string // artifacts whose bytes are not carried, with why
	damaged    map[string]string // artifacts whose bytes are damaged, with why
	later      map[string]string // artifacts a readable record after the damage jettisons, with why
}

// salvagePlan reads Verify's report: artifacts whose bytes are damaged
// are left out; damage of a record stops the salvage before it; a
// witness that fails stops it at the last one below that holds (what
// lies between cannot be told intact).
func (h *Home) salvagePlan(from string, rep *VerifyReport) *salvage {
	s := &salvage{from: from, limit: ^uint64(0), skip: map[string]string{}, damaged: map[string]string{}}
	witness := func(p *DamageError) bool {
		for _, w := range rep.Witnesses {
			if w.Problem != "" && w.Problem == p.Reason && w.Head.Seq == p.Seq {
				return true
			}
		}
		return false
	}
	note := func(p *DamageError, limit uint64) {
		if limit < s.limit || s.first == nil {
			s.limit, s.first = min(limit, s.limit), p
		}
	}
	for _, p := range rep.Problems {
		switch {
		case p.Artifact != "":
			s.damaged[p.Artifact] = p.Reason
		case witness(p):
			held := uint64(0)
			for _, w := range rep.Witnesses {
				if w.Problem == "" && w.Malformed == "" && w.Head.Seq < p.Seq {
					held = max(held, w.Head.Seq)
				}
			}
			cp := *p
			cp.Reason = fmt.Sprintf("%s; no record after %d can be told intact (the last witness that holds)", p.Reason, held)
			note(&cp, held)
		case p.Seq > 0:
			note(p, p.Seq-1)
		default:
			note(p, s.limit) // the log's damage as a whole, or a cache's: its records are read up to where they fail
		}
	}
	if s.first == nil {
		s.first = rep.Problems[0]
	}
	return s
}

// salvageScan reads the damaged voyage's records up to the first damage:
// it folds every event, checks the bytes of every artifact the events
// stow, and notes the last event (ending a whole unit) before the damage,
// the chain there, and what follows.
//
// fn, when set, is called with each event carried, in order, once its
// unit is whole (ReadIntact).
func (h *Home) salvageScan(ctx context.Context, s *salvage, fn func(Event) error) error {
	if err := h.salvageHidden(ctx, s); err != nil {
		return err
	}
	var unit []Event // the events of a unit not yet whole (one: a unit ends with its event)
	link := chain.Genesis(s.from)
	var pending []segment.Record // the blob records of the unit being read
	stop := false
	err := h.back.records(ctx, s.from, func(r segment.Record) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		link = r.Link(link)
		if stop || r.Seq > s.limit {
			if !stop {
				s.notCarried(pending) // the blobs of a unit the limit cuts
				pending, stop = nil, true
			}
			s.notCarried([]segment.Record{r})
			s.jettisonedLater(r)
			return nil
		}
		if r.Reclaimed || artifact.IsBlob(r.Data) {
			pending = append(pending, r)
			return nil
		}
		e, err := projection.Decode(r.Data)
		if err == nil {
			err = s.st.Apply(r.Seq, e)
		}
		if err == nil && r.Seq == 1 && e.Type != projection.VoyageStarted {
			err = fmt.Errorf("the first record is a %s event, not the voyage's start", e.Type)
		}
		if err != nil {
			at := r.Seq // the unit's first record
			if len(pending) > 0 {
				at = pending[0].Seq
			}
			s.foldFailed(at, err)
			s.notCarried(append(pending, r))
			pending, stop = nil, true
			return nil
		}
		if a := e.Artifact; a != nil && (e.Type == projection.ArtifactStowed || e.Type == projection.ArtifactReduced) {
			s.checkCopy(ctx, h, a, pending)
		}
		pending = pending[:0]
		s.upTo, s.head = r.Seq, chain.Head{Seq: r.Seq, Hash: link}
		if fn != nil {
			e.Seq = r.Seq
			unit = append(unit[:0], *e)
			return fn(unit[0])
		}
		return nil
	})
	s.notCarried(pending) // blobs no event after them names: a unit cut short
	if err != nil {
		de := damageOf(s.from, err)
		if de == nil {
			return err
		}
		if s.first == nil || s.first.Seq == 0 || de.Seq != 0 && de.Seq < s.first.Seq {
			s.first = de
		}
	}
	for hash, a := range s.st.Artifacts {
		switch {
		case a.Status == projection.Jettisoned:
			s.skip[hash] = "jettisoned in voyage " + s.from
		case a.Status == projection.Stowed && s.later[hash] != "":
			s.skip[hash] = s.later[hash]
		}
	}
	return nil
}

// jettisonedLater notes an artifact a record after the damage jettisons,
// if the record can be read: the salvage does not carry the jettison (it
// cannot be told intact), but does not carry the artifact's bytes
// either, so that a salvage never undoes a jettison. A jettison an agent
// forged there keeps the bytes out of the new voyage only: the damaged
// voyage, left as it is, still holds them, and the reason says where the
// jettison was.
func (s *salvage) jettisonedLater(r segment.Record) {
	if r.Reclaimed || artifact.IsBlob(r.Data) {
		return
	}
	e, err := projection.Decode(r.Data)
	if err != nil || e.Type != projection.ArtifactJettisoned || e.Artifact == nil {
		return
	}
	why := fmt.Sprintf("jettisoned in voyage %s at record %d, after its damage (not carried)", s.from, r.Seq)
	if e.Artifact.Reason != "" {
		why += ": " + e.Artifact.Reason
	}
	if s.later == nil {
		s.later = map[string]string{}
	}
	s.later[e.Artifact.Hash] = why
}

// salvageHidden stops the salvage before the first reclaimed record that
// no artifact event of its run names (a hidden event: the rule of
// stubs), which Verify may not have placed: when the story does not fold
// further on, open fails first and names no record, and the events
// between the stub and that failure (one an agent forged there: a
// jettison, say) would be carried past the damage.
func (h *Home) salvageHidden(ctx context.Context, s *salvage) error {
	var st stubs
	err := h.back.records(ctx, s.from, st.events(s.from, "", func(uint64, *projection.Event) error { return nil }))
	if err != nil && ctx.Err() != nil {
		return err
	}
	if err == nil {
		st.end() // the log's end ends the run
	}
	if len(st.hidden) == 0 {
		return nil
	}
	seq := slices.Min(st.hidden)
	if seq-1 < s.limit {
		s.limit = seq - 1
		if s.first == nil || s.first.Seq == 0 || seq < s.first.Seq {
			s.first = hiddenRecord(s.from, "", seq)
		}
	}
	return nil
}

// notCarried counts records read after the last one carried.
func (s *salvage) notCarried(recs []segment.Record) {
	for _, r := range recs {
		s.after++
		s.afterBytes += int64(max(len(r.Data), r.Len))
	}
}

// foldFailed notes that event seq does not fold: damage, if no earlier
// damage was found.
func (s *salvage) foldFailed(seq uint64, err error) {
	if s.first == nil || s.first.Seq == 0 || seq < s.first.Seq {
		s.first = &DamageError{Voyage: s.from, Seq: seq, Reason: fmt.Sprintf("the unit from record %d does not fold: %v", seq, err), Err: err}
	}
}

// checkCopy checks the bytes of the copy a stow event names: in one of
// the unit's blob records, or where the journal keeps it. Damaged bytes
// are noted, and are not carried.
func (s *salvage) checkCopy(ctx context.Context, h *Home, a *projection.ArtifactRef, blobs []segment.Record) {
	if _, done := s.damaged[a.Hash]; done {
		return
	}
	if a.Blob != 0 {
		for _, b := range blobs {
			if b.Seq == a.Blob && !b.Reclaimed {
				if _, err := artifact.ReadBlob(artifactRef(a), b.Data, s.from); err != nil {
					s.damaged[a.Hash] = err.Error()
				}
			}
		}
		return
	}
	r, err := h.back.storedOf(ctx, s.from, artifactRef(a))
	if err == nil {
		_, err = io.Copy(io.Discard, r)
		r.Close()
	}
	if err != nil && !errors.Is(err, errGone) && damageOf(s.from, err) != nil {
		s.damaged[a.Hash] = err.Error()
	}
}

// beyond counts the bytes of the log from the first damage to its end,
// when the damage names a place in a segment file: the rest of that file
// and the segments after it.
func (s *salvage) beyond() int64 {
	f := s.first
	if f == nil || f.File == "" || f.Offset <= 0 || filepath.Ext(f.File) != ".seg" {
		return 0 // not a place in the log: an artifact's, or a cache's
	}
	fi, err := os.Stat(f.File)
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	n := max(fi.Size()-f.Offset, 0)
	dir, name := filepath.Dir(f.File), filepath.Base(f.File)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return n
	}
	for _, e := range entries {
		if e.Name() > name && strings.HasSuffix(e.Name(), filepath.Ext(name)) {
			if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
				n += info.Size()
			}
		}
	}
	return n
}
