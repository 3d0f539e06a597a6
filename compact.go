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
	// Artifacts counts the stored copies of jettisoned artifacts whose
	// bytes were reclaimed: LogRecords blob records in the event log and
	// the rest pack frames.
	Artifacts  int `json:"artifacts"`
	LogRecords int `json:"log_records"`
	// LogBytes is what the event log's segment files shrank by; PackBytes
	// the compressed bytes punched out of the pack file (the disk space
	// freed there is that, less the parts of the file-system blocks it
	// shares with the frames around it).
	LogBytes  int64 `json:"log_bytes"`
	PackBytes int64 `json:"pack_bytes"`
	// Kept counts jettisoned blob records in segments written by the
	// first format of the log, which are never rewritten.
	Kept int `json:"kept"`
}

// Compact reclaims the bytes of the voyage's jettisoned artifacts: their
// blob records in the event log become stubs that keep their place in the
// log's chain (Verify still checks every record), and their pack frames
// are punched out. Nothing else changes: the views, the story and every
// entry number read the same before and after, and an artifact still
// stowed is never touched. A copy stowed before a jettison and stowed
// again later is reclaimed; the live copy is kept.
//
// Compact is a writer: other changes wait for it, and lose nothing. A
// crash leaves every file as it was or as compacted, both whole; compact
// again to finish. A voyage with damage is refused, untouched; so is one
// of a shared store, which keeps every record (ErrInvalid).
func (v *Voyage) Compact(ctx context.Context) (CompactReport, error) { return v.rec.compact(ctx) }

// compact is Compact on disk.
func (j *diskJournal) compact(ctx context.Context) (CompactReport, error) {
	v := j.v
	op := "compact"
	rep := CompactReport{Voyage: v.id}
	if err := v.refresh(ctx); err != nil {
		return rep, v.fail(op, err, hint.Hint{})
	}
	// Every copy ever stowed, up to the views' seq; the live ones are the
	// current copies of artifacts that are not jettisoned. Copies stowed
	// after asOf (by another process meanwhile) are not looked at.
	v.mu.Lock()
	if err := v.loadSections(projection.SectionArtifacts, v.logScan(ctx)); err != nil {
		v.mu.Unlock()
		return rep, v.fail(op, err, hint.Hint{})
	}
	asOf := v.st.Voyage.Seq
	liveBlob, livePack := map[uint64]bool{}, map[int64]bool{}
	for _, a := range v.st.Artifacts {
		if a.Status == projection.Jettisoned {
			continue
		}
		if a.Blob != 0 {
			liveBlob[a.Blob] = true
		} else {
			livePack[a.Offset] = true
		}
	}
	v.mu.Unlock()
	dropBlob := map[uint64]bool{}
	var dropPack []artifact.Ref
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
			dropBlob[ref.Blob] = true
		case ref.Blob == 0 && ref.StoredSize > 0 && !livePack[ref.Offset] && !seenPack[ref.Offset]:
			seenPack[ref.Offset] = true
			dropPack = append(dropPack, artifactRef(ref))
		}
		return nil
	}))
	if err != nil && err != errFound {
		return rep, v.fail(op, err, hint.Hint{})
	}
	if len(dropBlob) > 0 {
		r, err := j.log.Reclaim(ctx, func(r segment.Record) bool {
			return r.Seq <= asOf && dropBlob[r.Seq] && artifact.IsBlob(r.Data)
		})
		rep.LogRecords, rep.LogBytes, rep.Kept = r.Records, r.Bytes, r.Skipped
		if err != nil {
			return rep, v.fail(op, err, hint.Hint{})
		}
	}
	frames, n, err := j.reclaimPack(ctx, dropPack)
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
