package helm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
)

// A fork (StartOptions.ForkOf) and a salvage (Home.Salvage) both carry a
// prefix of one voyage's log into a new voyage: the new voyage's first
// record is its own voyage-started event, naming the origin and the
// origin's head at the last record carried (projection.Origin); records
// 2 to that one are the origin's records of the same sequence numbers,
// so that every reference by sequence number (a blob record, a
// challenged bearing) holds as it did. The new log is self-contained: it
// opens, verifies, exports and replays without the origin. What differs
// from the origin's records is where an artifact's bytes are (a pack
// frame's offset is the new pack's) and the bytes that are not carried:
// an artifact jettisoned in the origin (before or after the fork point:
// a jettison is never undone by a fork), one whose bytes the origin no
// longer holds, one whose bytes are damaged. Such an artifact's blob
// record is carried empty and its pack frame as a reclaimed one, as an
// import leaves a jettisoned artifact; one that the carried events still
// hold as stowed is then jettisoned in the new voyage, by its first
// writer, with the reason, so that nothing reads as held that is not.

// errCarried ends a scan of the origin once the prefix is read.
var errCarried = errors.New("the carried records are read")

// emptyBlob is the blob record that keeps the place of an artifact whose
// bytes are not carried (as Import writes one for a jettisoned artifact).
func emptyBlob() []byte { return artifact.BlobRecord(&artifact.Encoded{Compressed: []byte{}}) }

// prefixHead returns the chain's head (package chain) of voyage id's log
// at record upTo: the link a fork records with its origin.
func (h *Home) prefixHead(ctx context.Context, id string, upTo uint64) (chain.Head, error) {
	head := chain.Head{Hash: chain.Genesis(id)}
	err := h.back.records(ctx, id, func(r segment.Record) error {
		if r.Seq > upTo {
			return errCarried
		}
		head = chain.Head{Seq: r.Seq, Hash: r.Link(head.Hash)}
		return nil
	})
	if err != nil && !errors.Is(err, errCarried) {
		return chain.Head{}, err
	}
	if head.Seq != upTo {
		return chain.Head{}, fmt.Errorf("%w: the log of voyage %s ends at record %d, before record %d", ErrDamaged, id, head.Seq, upTo)
	}
	return head, nil
}

// carry makes voyage start.Voyage.ID: its start event, then voyage
// origin's records 2 to upTo, then a jettison by who of each artifact
// the carried events hold as stowed whose bytes were not carried. skip
// names the artifacts whose bytes are not to be carried, with why; carry
// adds to it those whose bytes it found gone or damaged, and returns the
// hashes of the damaged ones. Nothing is written to the origin.
func (h *Home) carry(ctx context.Context, op string, start *projection.Event, origin string, upTo uint64, skip map[string]string, who logbook.Who) (damaged []string, err error) {
	id := start.Voyage.ID
	red, err := h.redactor()
	if err != nil {
		return nil, err
	}
	start.At = h.now()
	redactEvent(red, start)
	first, err := projection.Encode(start)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	var st projection.State
	if err := st.Apply(1, start); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	err = h.back.create(ctx, id, func(v *Voyage) error {
		moved := func(last uint64) error {
			return fmt.Errorf("a writer appended to the new voyage %s after record %d while it was made", id, last)
		}
		batch, size, base := [][]byte{first}, len(first), uint64(0)
		events := map[uint64]bool{1: true}
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			err := v.appendImported(ctx, batch, base, events, nil, moved)
			base += uint64(len(batch))
			batch, size = batch[:0], 0
			return err
		}
		blobAt := map[uint64]int{}   // a blob record's seq -> its place in batch
		offsets := map[int64]int64{} // an origin's copy's offset -> the new one's
		var pendingBlobs []uint64    // the blob records of the unit being read
		seen := uint64(0)            // the last record read
		notCarried := func(hash, why string) {
			if _, ok := skip[hash]; !ok {
				skip[hash] = why
			}
		}
		scanErr := h.back.records(ctx, origin, func(r segment.Record) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			seen = r.Seq
			switch {
			case r.Seq == 1:
				return nil // the origin's start: the new one stands in its place
			case r.Seq > upTo:
				return errCarried
			case r.Reclaimed || artifact.IsBlob(r.Data):
				rec := emptyBlob()
				if !r.Reclaimed {
					rec = bytes.Clone(r.Data)
				}
				blobAt[r.Seq] = len(batch)
				pendingBlobs = append(pendingBlobs, r.Seq)
				batch, size = append(batch, rec), size+len(rec)
				return nil
			}
			e, err := projection.Decode(r.Data)
			if err != nil {
				return fmt.Errorf("%w: record %d of voyage %s: %v", ErrDamaged, r.Seq, origin, err)
			}
			rec := bytes.Clone(r.Data)
			if a := e.Artifact; a != nil && (e.Type == projection.ArtifactStowed || e.Type == projection.ArtifactReduced) {
				ref := *a
				if a.Blob != 0 {
					i, ok := blobAt[a.Blob]
					switch {
					case !ok:
						return fmt.Errorf("%w: event %d of voyage %s names blob record %d, which is not in its unit", ErrDamaged, r.Seq, origin, a.Blob)
					case skip[a.Hash] != "":
						batch[i] = emptyBlob()
					case bytes.Equal(batch[i], emptyBlob()):
						notCarried(a.Hash, "its bytes were reclaimed in voyage "+origin)
					default:
						if _, err := artifact.ReadBlob(artifactRef(a), batch[i], v.rec.Dir()); err != nil {
							damaged = append(damaged, a.Hash)
							notCarried(a.Hash, fmt.Sprintf("its bytes were damaged in voyage %s: %v", origin, err))
							batch[i] = emptyBlob()
						}
					}
				} else if off, ok := offsets[a.Offset]; ok {
					ref.Offset = off
				} else {
					got, lost, err := h.carryCopy(ctx, v, origin, r.Seq, a, skip[a.Hash] != "")
					if err != nil {
						return err
					}
					switch lost {
					case copyGone:
						notCarried(a.Hash, "its bytes were reclaimed in voyage "+origin)
					case copyDamaged:
						damaged = append(damaged, a.Hash)
						notCarried(a.Hash, "its bytes were damaged in voyage "+origin)
					}
					offsets[a.Offset] = got
					ref.Offset = got
				}
				if ref.Offset != a.Offset {
					e.Artifact = &ref
					if rec, err = projection.Encode(e); err != nil {
						return fmt.Errorf("%w: event %d of voyage %s: %v", ErrInvalid, r.Seq, origin, err)
					}
				}
			}
			if err := st.Apply(r.Seq, e); err != nil {
				return fmt.Errorf("%w: event %d of voyage %s does not fold: %v", ErrDamaged, r.Seq, origin, err)
			}
			events[r.Seq] = true
			pendingBlobs = pendingBlobs[:0]
			batch, size = append(batch, rec), size+len(rec)
			if size >= importBatch {
				clear(blobAt)
				return flush()
			}
			return nil
		})
		if scanErr != nil && !errors.Is(scanErr, errCarried) && (seen < upTo || ctx.Err() != nil) {
			return scanErr // damage after the prefix (a salvage's) is no matter here
		}
		if len(pendingBlobs) > 0 {
			return fmt.Errorf("%w: record %d of voyage %s is a blob no event after it names", ErrDamaged, pendingBlobs[0], origin)
		}
		if last := base + uint64(len(batch)); last != upTo && upTo > 1 {
			return fmt.Errorf("%w: the log of voyage %s ends at record %d, before record %d", ErrDamaged, origin, last, upTo)
		}
		if err := flush(); err != nil {
			return err
		}
		// What the carried events hold as stowed and the new voyage does
		// not hold the bytes of is jettisoned there, saying why.
		var tail [][]byte
		tailEvents := map[uint64]bool{}
		for hash, a := range st.Artifacts {
			why, ok := skip[hash]
			if !ok || a.Status != projection.Stowed {
				continue
			}
			e := &projection.Event{Type: projection.ArtifactJettisoned, At: h.now(), Who: who,
				Artifact: &projection.ArtifactRef{Hash: hash, Reason: why}}
			redactEvent(red, e)
			rec, err := projection.Encode(e)
			if err != nil {
				return err
			}
			tail = append(tail, rec)
			tailEvents[base+uint64(len(tail))] = true
		}
		// The new voyage acts as the one who started it: a handoff the
		// carried records hold (the origin handed to an identity with
		// credentials of its own) is handed back to the starter, so that
		// a fork never lends its forker the identity the origin was
		// handed to (a handoff needs a person; a fork does not).
		if cur := st.Voyage.CurrentIdentity(); who.Identity != "" && cur != who.Identity {
			e := &projection.Event{Type: projection.IdentityHandedOff, At: h.now(), Who: who,
				Handoff: &logbook.Handoff{From: cur, To: who.Identity,
					Why: fmt.Sprintf("voyage %s acts as the one who started it; the records carried from voyage %s had handed it to %s", id, origin, cur)}}
			redactEvent(red, e)
			rec, err := projection.Encode(e)
			if err != nil {
				return err
			}
			tail = append(tail, rec)
			tailEvents[base+uint64(len(tail))] = true
		}
		if len(tail) > 0 {
			return v.appendImported(ctx, tail, base, tailEvents, nil, moved)
		}
		return nil
	})
	if err != nil {
		var ve *VoyageError
		if errors.As(err, &ve) {
			return nil, err
		}
		return nil, &VoyageError{Op: op, Voyage: id, Err: err}
	}
	return damaged, nil
}

// What carryCopy could not carry of a copy.
const (
	copyCarried = iota
	copyGone
	copyDamaged
)

// carryCopy stores in v's journal the stored bytes of the copy a (not in
// a blob record) that voyage origin's event seq stored, and returns its
// offset in v (as copyStower names a copy the journal gives no place
// for). A copy left out (skip), gone from the origin or damaged there
// keeps its place as a reclaimed one, and lost says which.
func (h *Home) carryCopy(ctx context.Context, v *Voyage, origin string, seq uint64, a *projection.ArtifactRef, skip bool) (off int64, lost int, err error) {
	ref := artifactRef(a)
	var src io.ReadCloser
	if !skip {
		src, err = h.back.storedOf(ctx, origin, ref)
		switch {
		case errors.Is(err, errGone):
			lost = copyGone
		case err != nil && damageOf(origin, err) != nil:
			lost = copyDamaged
		case err != nil:
			return 0, 0, err
		}
	}
	stow := copyStower{ctx, v.rec}
	var got artifact.Ref
	if src != nil {
		got, err = stow.stow(seq, ref, src)
		src.Close()
		if err != nil && damageOf(origin, err) != nil {
			lost, src = copyDamaged, nil
		} else if err != nil {
			return 0, 0, err
		}
	}
	if src == nil {
		if got, err = stow.stow(seq, ref, nil); err != nil {
			return 0, 0, err
		}
	}
	return got.Offset, lost, nil
}

// errGone: the bytes of a copy were reclaimed (Compact).
var errGone = errors.New("the copy's bytes were reclaimed")

// checkOrigin checks, for Verify, the records a fork or a salvage carried
// against its origin's, when the home holds the origin: record by record
// (an event as the origin recorded it, but for where its artifact's copy
// is; a blob record as the origin's, or empty where its bytes were not
// carried), and the origin's chain at the last one against the head the
// start recorded. Without the origin, rep.Origin says it could not check.
func (h *Home) checkOrigin(ctx context.Context, id, logName string, info VoyageInfo, rep *VerifyReport) error {
	o := info.Fork
	if o == nil {
		o = info.Salvage
	}
	if o == nil {
		return nil
	}
	held, err := h.back.started(ctx, o.Voyage)
	if err != nil {
		return err
	}
	if !held {
		rep.Origin = fmt.Sprintf("not checked: the origin, voyage %s, is not in %s", o.Voyage, h.where())
		return nil
	}
	damage := func(seq uint64, format string, args ...any) {
		rep.Problems = append(rep.Problems, &DamageError{Voyage: id, File: logName, Seq: seq,
			Reason: fmt.Sprintf(format, args...) + fmt.Sprintf(" (voyage %s carries voyage %s's records up to record %d)", id, o.Voyage, o.Seq)})
	}
	// The carried records' digests, as the origin's would be.
	type carriedRecord struct {
		digest chain.Hash
		empty  bool // a blob record left empty: its bytes were not carried
		event  bool
	}
	var mine []carriedRecord
	err = h.back.records(ctx, id, func(r segment.Record) error {
		switch {
		case r.Seq == 1:
			return nil
		case r.Seq > o.Seq:
			return errCarried
		case r.Reclaimed:
			mine = append(mine, carriedRecord{digest: r.Digest, empty: true})
		case artifact.IsBlob(r.Data):
			mine = append(mine, carriedRecord{digest: chain.Digest(r.Data), empty: bytes.Equal(r.Data, emptyBlob())})
		default:
			d, err := placeless(r.Data)
			if err != nil {
				damage(r.Seq, "record %d does not decode: %v", r.Seq, err)
				return errCarried
			}
			mine = append(mine, carriedRecord{digest: d, event: true})
		}
		return nil
	})
	if err != nil && !errors.Is(err, errCarried) {
		return nil // the log's damage is reported already
	}
	if uint64(len(mine))+1 < o.Seq {
		damage(uint64(len(mine))+2, "the log ends at record %d, before the last record it carried", len(mine)+1)
		return nil
	}
	head := chain.Head{Hash: chain.Genesis(o.Voyage)}
	differ := uint64(0)
	err = h.back.records(ctx, o.Voyage, func(r segment.Record) error {
		if r.Seq > o.Seq {
			return errCarried
		}
		head = chain.Head{Seq: r.Seq, Hash: r.Link(head.Hash)}
		if r.Seq == 1 || differ != 0 {
			return nil
		}
		m := mine[r.Seq-2]
		switch {
		case r.Reclaimed:
			if m.event || !m.empty && m.digest != r.Digest {
				differ = r.Seq
			}
		case artifact.IsBlob(r.Data):
			if m.event || !m.empty && m.digest != chain.Digest(r.Data) {
				differ = r.Seq
			}
		default:
			d, err := placeless(r.Data)
			if err != nil || !m.event || d != m.digest {
				differ = r.Seq
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errCarried) {
		if ctx.Err() != nil {
			return err
		}
		if head.Seq < o.Seq {
			rep.Origin = fmt.Sprintf("not checked beyond record %d: the origin, voyage %s, cannot be read further: %v", head.Seq, o.Voyage, err)
			return nil
		}
	}
	if differ != 0 {
		damage(differ, "record %d is not voyage %s's record %d: the carried records were changed", differ, o.Voyage, differ)
	}
	if head.Seq < o.Seq {
		damage(0, "the origin's log ends at record %d, before record %d", head.Seq, o.Seq)
	} else if head.Hash.String() != o.Head {
		damage(0, "the origin's chain at record %d is %s, not the head %d:%s the start recorded", o.Seq, head, o.Seq, o.Head)
	}
	if differ == 0 && head.Seq == o.Seq && head.Hash.String() == o.Head {
		rep.Origin = fmt.Sprintf("checked against voyage %s up to record %d", o.Voyage, o.Seq)
	}
	return nil
}

// placeless returns the digest of an event record as it would be
// wherever its artifact's copy is: with the copy's offset cleared, since
// a fork's pack places copies anew.
func placeless(rec []byte) (chain.Hash, error) {
	e, err := projection.Decode(rec)
	if err != nil {
		return chain.Hash{}, err
	}
	if a := e.Artifact; a != nil && a.Blob == 0 {
		ref := *a
		ref.Offset = 0
		e.Artifact = &ref
	}
	b, err := projection.Encode(e)
	if err != nil {
		return chain.Hash{}, err
	}
	return chain.Digest(b), nil
}
