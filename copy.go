package helm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/policy"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
)

// ErrDiverged: another home's copy of a voyage is not the first records
// of this one: each holds events the other does not (two writers recorded
// in two homes), or the copy is ahead.
var ErrDiverged = errors.New("the copies of the voyage diverged")

// CopyReport says what Copy did.
type CopyReport struct {
	Voyage string `json:"voyage"`
	// Created is true when the other home did not hold the voyage.
	Created bool `json:"created"`
	// Records is how many records the copy holds now; Appended how many
	// of them Copy appended (0: the copy was up to date).
	Records  uint64 `json:"records"`
	Appended uint64 `json:"appended"`
}

// Copy copies the voyage with this id or prefix to the home dst (a home
// on disk or a shared store, see OpenStore), with every artifact's bytes,
// in the form Export writes and Import reads: everything is
// checked on arrival (every event, folded; every artifact, against its
// BLAKE3 address; the digest of the whole) before dst records any of it.
//
// A voyage dst holds already is brought up to date: when its events are
// this voyage's first, the records after them are appended on the tail
// they were checked against: in one unit on disk; in a shared store, in
// units it takes, each ending with an event, so that a copy cut off part
// way is a shorter voyage the next Copy brings up to date. A copy that
// diverged, or is
// ahead, is an error matching ErrDiverged and is left as it is; so is
// a copy to which another writer appended while it was brought up to date.
func (h *Home) Copy(ctx context.Context, idOrPrefix string, dst *Home) (CopyReport, error) {
	src, err := h.Voyage(ctx, idOrPrefix)
	if err != nil {
		return CopyReport{}, err
	}
	defer src.Close()
	rep := CopyReport{Voyage: src.ID()}
	rep.Created = !dst.holds(ctx, rep.Voyage)
	pr, pw := io.Pipe()
	exported := make(chan error, 1)
	go func() {
		err := src.exportArchive(ctx, pw)
		pw.CloseWithError(err)
		exported <- err
	}()
	v, n, err := dst.importArchive(ctx, pr, true, nil)
	pr.CloseWithError(errCopied) // an update found up to date reads no further
	if xerr := <-exported; err != nil {
		if xerr != nil && !errors.Is(xerr, errCopied) {
			return rep, xerr // the source could not be read: that says why
		}
		return rep, err
	}
	defer v.Close()
	rep.Records, rep.Appended = v.Info().Seq, n
	return rep, nil
}

// errCopied stops the export of a Copy whose import needs no more of it.
var errCopied = errors.New("the copy needs no more of the archive")

// updateFrom brings the voyage the home holds up to date with the
// archive im reads the rest of (Copy), and returns it open with how many
// records it appended.
func (h *Home) updateFrom(ctx context.Context, ar *archiveReader, im *importer) (*Voyage, uint64, error) {
	const op = "copy voyage"
	// Folded from the log, not a snapshot: the status the curations
	// appended are checked against is the log's (checkCopiedCurations).
	v, err := h.back.open(ctx, im.hdr.VoyageID, false)
	if err != nil {
		return nil, 0, err
	}
	after, err := v.prefixOf(ctx, im)
	if err == nil && after == im.last() {
		return v, 0, nil // up to date
	}
	if err == nil {
		err = v.checkCopiedCurations(ctx, op, im, after)
	}
	if err == nil {
		im.after = after
		err = ar.readArtifacts(ctx, im, copyStower{ctx, v.rec})
	}
	if err == nil {
		err = im.appendTo(ctx, v, after, func(last uint64) error {
			return fmt.Errorf("%w: the copy in %s does not end at record %d now: a writer appended to it meanwhile; copy again to see whether it diverged", ErrDiverged, h.where(), last)
		})
	}
	if err == nil {
		err = v.refresh(ctx)
	}
	if err != nil {
		v.Close()
		var ve *VoyageError
		if errors.As(err, &ve) {
			return nil, 0, err
		}
		return nil, 0, v.fail(op, err, hint.Hint{})
	}
	return v, im.last() - after, nil
}

// checkCopiedCurations refuses a copy that would append to a voyage
// closed for good an event no writer records on it (ErrVoyageCompleted:
// the agent's own home, a cache there forged, let it write one), or a
// curation (a jettison, a reduction) the home's rules refuse
// (ErrRefused), as they would refuse it made here: the agent curates its
// closed voyage in a home of its own, under rules it wrote there, and
// copies it back. The copy is refused as a whole; a refused curation is
// recorded.
func (v *Voyage) checkCopiedCurations(ctx context.Context, op string, im *importer, after uint64) error {
	v.mu.Lock()
	status := projection.NormalStatus(v.st.Voyage.Status, v.st.Voyage.Outcome)
	v.mu.Unlock()
	rules := policy.WithDefaults(v.home.opts.Policy)
	for _, e := range im.events {
		if e.Seq <= after {
			continue
		}
		if status.Final() && !afterClose[e.Type] {
			return &VoyageError{Op: op, Voyage: v.id,
				Err:  fmt.Errorf("%w: record %d of the voyage copied is a %s event after the voyage closed (%s), which no writer records: nothing was copied", ErrVoyageCompleted, e.Seq, e.Type, status),
				Hint: hint.Hint{Kind: hint.Verify, Text: "verify the voyage in the home copied from (helm's own writers refuse that write): its log or a cache beside it was edited"}}
		}
		kind, hash := "", ""
		switch {
		case e.Type == projection.VoyageCompleted && e.Completion != nil:
			status = projection.NormalStatus(projection.StatusCompleted, e.Completion.Outcome)
		case e.Type == projection.VoyageResumed:
			status = projection.StatusActive
		case e.Type == projection.ArtifactJettisoned && e.Artifact != nil:
			kind, hash = curateJettison, e.Artifact.Hash
		case e.Type == projection.ArtifactReduced && e.Artifact != nil && e.Artifact.DerivedFrom != "":
			kind, hash = curateReduce, e.Artifact.DerivedFrom
		}
		if kind == "" {
			continue
		}
		reqs := PolicyRequests(kind, logbook.ActionTarget{Args: []string{hash}}, e.Who)
		for i := range reqs {
			reqs[i].Status = string(status)
		}
		verdict := rules.CheckAll(reqs)
		if verdict.Decision == policy.Allow {
			continue
		}
		// The refusal is recorded, as a curation's here is, under who
		// made the curation copied.
		w := e.Who
		if w.Role == "" {
			w.Role = "unknown"
		}
		if w.Method == "" {
			w.Method = "unknown"
		}
		params, err := json.Marshal(map[string]any{"artifact": hash, "copied_record": e.Seq})
		if err != nil {
			return err
		}
		refused := &projection.Event{Type: projection.ActionRefused, Who: w, Action: &logbook.ActionRecord{
			ID: v.home.opts.NewID().String(), Kind: kind, Params: params, Why: "copied from another home", Rule: verdict.RuleName(), Error: refusalText(verdict),
		}}
		recorded := "the refusal is recorded"
		if _, err := v.commit(ctx, op, func(*projection.State, stower) ([]*projection.Event, error) { return []*projection.Event{refused}, nil }); err != nil {
			recorded = "the refusal could not be recorded: " + err.Error()
		}
		return &VoyageError{Op: op, Voyage: v.id,
			Err: fmt.Errorf("%w: record %d of the voyage copied is a %s of artifact %s by %s (method %s) on the %s voyage, which this home's rules refuse: %s; nothing was copied, %s",
				ErrRefused, e.Seq, kind, hash, e.Who.Identity, orDash(e.Who.Method), status, refusalText(verdict), recorded),
			Hint: hint.Hint{Kind: hint.Policy, Text: "copy the voyage from a home where no such curation was made; a person curates it here"}}
	}
	return nil
}

// afterClose are the events a writer records on a voyage closed for
// good: curation and its refusals, the outcome of an action intended
// before the close, a tool step's result, a judgement, the worktree's
// removal, a change of the rules, a move onto the stored chain.
var afterClose = map[projection.Type]bool{
	projection.ArtifactJettisoned: true, projection.ArtifactReduced: true, projection.ActionRefused: true,
	projection.ActionPerformed: true, projection.ActionFailed: true, projection.StepFinished: true,
	projection.Judged: true, projection.WorktreeRemoved: true, projection.PolicyChanged: true,
	projection.PolicyAdopted: true, projection.ChainRechained: true,
}

// prefixOf checks that the voyage's events are the first of those im
// read, in their stored form but for where their artifacts' bytes lie,
// and returns the voyage's last record; otherwise ErrDiverged. It notes
// where the voyage holds the copies its events stored (im.held).
func (v *Voyage) prefixOf(ctx context.Context, im *importer) (uint64, error) {
	at := make(map[uint64]*projection.Event, len(im.events))
	for _, e := range im.events {
		at[e.Seq] = e
	}
	last := v.Info().Seq
	if last > im.last() {
		return 0, fmt.Errorf("%w: the copy in %s holds record %d, the voyage copied ends at record %d", ErrDiverged, v.home.where(), last, im.last())
	}
	events := 0
	im.held = map[uint64]int64{}
	err := v.rec.Scan(ctx, 1, eventsOf(v.id, v.rec.Dir(), func(seq uint64, e *projection.Event) error {
		events++
		if a := e.Artifact; a != nil && a.Blob == 0 && (e.Type == projection.ArtifactStowed || e.Type == projection.ArtifactReduced) {
			im.held[seq] = a.Offset // where this home holds the copy (an event naming it again names it so)
		}
		want, ok := at[seq]
		if !ok {
			return fmt.Errorf("%w: record %d of the copy in %s is a %s event, of the voyage copied a blob", ErrDiverged, seq, v.home.where(), e.Type)
		}
		a, b, err := copyForm(e), copyForm(want), error(nil)
		if a == nil || b == nil {
			err = fmt.Errorf("event %d cannot be encoded", seq)
		} else if !bytes.Equal(a, b) && e.Type == want.Type {
			err = fmt.Errorf("%w: event %d differs: the copy in %s and the voyage copied hold two different %s events there", ErrDiverged, seq, v.home.where(), e.Type)
		} else if !bytes.Equal(a, b) {
			err = fmt.Errorf("%w: event %d differs: the copy in %s holds a %s event there, the voyage copied a %s event", ErrDiverged, seq, v.home.where(), e.Type, want.Type)
		}
		return err
	}))
	if err != nil {
		return 0, err
	}
	for _, e := range im.events {
		if e.Seq <= last {
			events--
		}
	}
	if events != 0 {
		return 0, fmt.Errorf("%w: the copy in %s and the voyage copied number their first %d records differently", ErrDiverged, v.home.where(), last)
	}
	return last, nil
}

// copyForm is e's stored form but for its sequence number and the
// offset of its artifact's bytes, which differ from home to home.
func copyForm(e *projection.Event) []byte {
	c := *e
	c.Seq, c.V = 0, 0
	if c.Artifact != nil {
		a := *c.Artifact
		a.Offset = 0
		c.Artifact = &a
	}
	b, err := projection.EncodeJSON(&c)
	if err != nil {
		return nil
	}
	return b
}

// appendImported appends records, the records after record after, which
// the log must end at (else moved says so, given the record it expected
// to end at); events names the records that are events by sequence
// number (the others are blobs): as one unit in a home on disk; in a
// shared store, in units it takes (journal.maxUnit), each ending with an event,
// so that a copy left part way (the store refused or lost a later unit)
// is a voyage that ends where one of its events does, which copying again
// brings up to date.
//
// stubs names, by sequence number, blob records whose bytes are gone (a
// jettisoned artifact's, which an archive leaves out): a journal that
// holds stubs (a home on disk, a log of format 4: stubber) appends each
// as one, by its length and digest, so that the chain is the archive's;
// any other appends the record records holds in its place (an empty blob
// record), and the chain differs from that record on.
func (v *Voyage) appendImported(ctx context.Context, records [][]byte, after uint64, events map[uint64]bool, stubs map[uint64]segment.Record, moved func(last uint64) error) error {
	for _, unit := range unitsOf(records, after, events, v.rec.maxUnit()) {
		if s, ok := v.rec.(stubber); ok && holdsStub(stubs, after, len(unit)) {
			done, err := s.appendStubbed(ctx, after, unit, stubs)
			if errors.Is(err, segment.ErrConflict) {
				return moved(after)
			}
			if err != nil {
				return err
			}
			if done {
				after += uint64(len(unit))
				continue
			}
		}
		err := v.rec.commit(ctx, func(tx logTx) ([][]byte, error) {
			if tx.Last() != after {
				return nil, moved(after)
			}
			return unit, nil
		}, func() error { return nil })
		if err != nil {
			if after != 0 && v.rec.maxUnit() != 0 && !errors.Is(err, ErrDiverged) {
				// A journal that takes records in bounded units keeps those
				// it took: the copy is a shorter voyage.
				err = fmt.Errorf("%w (the copy in %s holds the voyage up to record %d: copy again to bring it up to date)", err, v.home.where(), after)
			}
			return err
		}
		after += uint64(len(unit))
	}
	return nil
}

// stubber is a journal that appends a record as a stub, by its length
// and digest (segment.Log.AppendRecords): a home on disk.
type stubber interface {
	// appendStubbed appends records after record after as one unit, those
	// stubs names by sequence number as stubs; done false, and nothing
	// appended, when the log holds no stubs (it goes on in a format older
	// than 4). A log that does not end at after is a segment.ErrConflict.
	appendStubbed(ctx context.Context, after uint64, records [][]byte, stubs map[uint64]segment.Record) (done bool, err error)
}

// holdsStub reports whether stubs names one of the n records after
// record after.
func holdsStub(stubs map[uint64]segment.Record, after uint64, n int) bool {
	for seq := range stubs {
		if seq > after && seq <= after+uint64(n) {
			return true
		}
	}
	return false
}

// unitsOf splits records, the records after record after, into units of
// at most max bytes (0: one unit), each ending with an event (events names
// them by sequence number): an event is not parted from the blob records
// before it. An event larger than a unit, with its blobs, is a unit of its
// own, which the store may refuse.
func unitsOf(records [][]byte, after uint64, events map[uint64]bool, max int) [][][]byte {
	if max == 0 {
		return [][][]byte{records}
	}
	var units [][][]byte
	start, end := 0, 0    // the unit being made, up to its last event
	size, pending := 0, 0 // its bytes; those of the records after its last event
	for i := range records {
		pending += len(records[i]) + perRecord
		if !events[after+uint64(i)+1] {
			continue
		}
		if size > 0 && size+pending > max {
			units = append(units, records[start:end])
			start, size = end, 0
		}
		size, pending, end = size+pending, 0, i+1
	}
	if end > start {
		units = append(units, records[start:end])
	}
	return units
}
