package helm

import (
	"context"
	"fmt"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
)

// CompactReport says what Compact reclaimed.
type CompactReport struct {
	Voyage string `json:"voyage"`
	// Artifacts counts the stored copies whose bytes were reclaimed
	// (jettisoned artifacts', reduced artifacts' original payloads, and
	// older copies of an artifact stowed again): LogRecords blob records
	// in the event log and the rest pack frames.
	Artifacts  int `json:"artifacts"`
	LogRecords int `json:"log_records"`
	// Reduced counts, of Artifacts, the copies of reduced artifacts: the
	// payloads their summaries stand in for.
	Reduced int `json:"reduced"`
	// LogBytes is what the event log's segment files shrank by; PackBytes
	// the compressed bytes punched out of the pack file (the disk space
	// freed there is that, less the parts of the file-system blocks it
	// shares with the frames around it).
	LogBytes  int64 `json:"log_bytes"`
	PackBytes int64 `json:"pack_bytes"`
	// Kept counts blob records of jettisoned or reduced artifacts in
	// segments written by the first format of the log, which are never
	// rewritten; in a shared store that erases, the copies it holds in a
	// form it cannot erase (stored unencrypted by an earlier version, or
	// blob records in its log).
	Kept int `json:"kept"`
}

// Compact reclaims the bytes of the voyage's jettisoned artifacts and the
// original payloads of its reduced ones (their summaries, stowed, stay):
// their blob records in the event log become stubs that keep their place
// in the log's chain (Verify still checks every record), and their pack
// frames are punched out. Nothing else changes: the views, the story and
// every entry number read the same before and after, and an artifact
// still stowed is never touched. A copy stowed before a jettison or a
// reduction and stowed again later is reclaimed; the live copy is kept.
//
// Compact is a writer: other changes wait for it, and lose nothing. A
// crash leaves every file as it was or as compacted, both whole; compact
// again to finish. A voyage with damage is refused, untouched. In a
// shared store that erases artifacts (JetStream's: store.Eraser), Compact
// erases the copies of jettisoned and reduced artifacts instead, and
// leaves the log as it is; a shared store that does not erase keeps every
// record, and refuses (ErrInvalid).
func (v *Voyage) Compact(ctx context.Context) (CompactReport, error) { return v.rec.compact(ctx) }

// compact is Compact on disk.
func (j *diskJournal) compact(ctx context.Context) (CompactReport, error) {
	v := j.v
	op := "compact"
	rep := CompactReport{Voyage: v.id}
	if err := v.refresh(ctx); err != nil {
		return rep, v.fail(op, err, hint.Hint{})
	}
	if err := v.foldFromLog(ctx, op); err != nil { // what is reclaimed is the log's word
		return rep, err
	}
	// Every copy ever stowed, up to the views' seq; the live ones are the
	// current copies of stowed artifacts (neither jettisoned nor reduced).
	// Copies stowed after asOf (by another process meanwhile) are not
	// looked at.
	v.mu.Lock()
	if err := v.loadSections(projection.SectionArtifacts, v.logScan(ctx)); err != nil {
		v.mu.Unlock()
		return rep, v.fail(op, err, hint.Hint{})
	}
	asOf := v.st.Voyage.Seq
	liveBlob, livePack := map[uint64]bool{}, map[int64]bool{}
	reduced := map[string]bool{}
	for h, a := range v.st.Artifacts {
		if a.Status != projection.Stowed {
			reduced[h] = a.Status == projection.Reduced
			continue
		}
		if a.Blob != 0 {
			liveBlob[a.Blob] = true
		} else {
			livePack[a.Offset] = true
		}
	}
	v.mu.Unlock()
	dropBlob := map[uint64]bool{} // true: a reduced artifact's
	var dropPack, dropReduced []artifact.Ref
	seenPack := map[int64]bool{}
	err := j.Scan(ctx, 1, eventsOf(v.id, j.Dir(), func(seq uint64, e *projection.Event) error {
		if seq > asOf {
			return errFound
		}
		if e.Artifact == nil || (e.Type != projection.ArtifactStowed && e.Type != projection.ArtifactReduced) {
			return nil
		}
		ref := e.Artifact
		switch {
		case ref.Blob != 0 && !liveBlob[ref.Blob]:
			dropBlob[ref.Blob] = reduced[ref.Hash]
		case ref.Blob == 0 && ref.StoredSize > 0 && !livePack[ref.Offset] && !seenPack[ref.Offset]:
			seenPack[ref.Offset] = true
			if reduced[ref.Hash] {
				dropReduced = append(dropReduced, artifactRef(ref))
			} else {
				dropPack = append(dropPack, artifactRef(ref))
			}
		}
		return nil
	}))
	if err != nil && err != errFound {
		return rep, v.fail(op, err, hint.Hint{})
	}
	if len(dropBlob) > 0 {
		selected := 0 // of reduced artifacts
		r, err := j.log.Reclaim(ctx, func(r segment.Record) bool {
			red, ok := dropBlob[r.Seq]
			if ok = ok && r.Seq <= asOf && artifact.IsBlob(r.Data); ok && red {
				selected++
			}
			return ok
		})
		rep.LogRecords, rep.LogBytes, rep.Kept = r.Records, r.Bytes, r.Skipped
		// A record kept in a first-format segment was selected too, and
		// may have been a reduced artifact's: then the count is at least.
		rep.Reduced = max(0, selected-r.Skipped)
		if err != nil {
			return rep, v.fail(op, err, hint.Hint{})
		}
	}
	frames, n, err := j.reclaimPack(ctx, dropPack)
	if err == nil && len(dropReduced) > 0 { // told apart to be counted
		var m int64
		var red int
		red, m, err = j.reclaimPack(ctx, dropReduced)
		frames, n, rep.Reduced = frames+red, n+m, rep.Reduced+red
	}
	rep.PackBytes = n
	rep.Artifacts = rep.LogRecords + frames
	if err != nil {
		return rep, v.fail(op, fmt.Errorf("after reclaiming %d records of the event log: %w", rep.LogRecords, err), hint.Hint{})
	}
	return rep, nil
}

// reclaimPack punches the pack frames refs name, under the log's writer
// lock, which serialises the pack's writers.
func (j *diskJournal) reclaimPack(ctx context.Context, refs []artifact.Ref) (frames int, n int64, err error) {
	if len(refs) == 0 {
		return 0, 0, nil
	}
	_, err = j.log.Commit(ctx, func(*segment.Tx) ([][]byte, error) {
		var err error
		frames, n, err = j.pack.Reclaim(refs)
		return nil, err
	})
	return frames, n, err
}
