package helm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
)

// VerifyReport is what Verify checked and what it found damaged.
type VerifyReport struct {
	Voyage    string         `json:"voyage"`
	Events    segment.Report `json:"events"`
	Artifacts int            `json:"artifacts_checked"`
	Skipped   int            `json:"artifacts_skipped"` // jettisoned or reduced: no bytes to check
	Problems  []string       `json:"problems,omitempty"`
}

// OK reports whether nothing was found damaged.
func (r *VerifyReport) OK() bool { return len(r.Problems) == 0 }

// Verify checks the voyage with this id or prefix: every record of its
// event log (checksums, and the chain that links records) and every stowed
// artifact against its BLAKE3 address. Unlike Voyage.Verify it works on a
// voyage too damaged to open, reporting where the damage is. Damage is
// reported in the report; the error is for a check that could not run.
func (h *Home) Verify(ctx context.Context, idOrPrefix string) (*VerifyReport, error) {
	id, err := h.Resolve(idOrPrefix)
	if err != nil {
		return nil, err
	}
	rep := &VerifyReport{Voyage: id}
	eventsDir := filepath.Join(h.voyagesDir(), id, "events")
	if _, err := os.Stat(eventsDir); err != nil {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%s: %v: the voyage's event log is gone", eventsDir, err))
		return rep, nil
	}
	if rep.Events, err = segment.Verify(ctx, eventsDir, &segment.Options{Identity: id}); err != nil {
		rep.Problems = append(rep.Problems, err.Error())
	}
	if len(rep.Problems) > 0 {
		return rep, nil // the artifact index is built from the events
	}
	v, err := h.Voyage(ctx, id)
	if err != nil {
		rep.Problems = append(rep.Problems, err.Error())
		return rep, nil
	}
	defer v.Close()
	return rep, v.verifyArtifacts(ctx, rep)
}

// Verify checks every record of the voyage's event log and every stowed
// artifact against its BLAKE3 address.
func (v *Voyage) Verify(ctx context.Context) (*VerifyReport, error) {
	rep := &VerifyReport{Voyage: v.id}
	var err error
	if rep.Events, err = segment.Verify(ctx, v.log.Dir(), &segment.Options{Identity: v.id}); err != nil {
		rep.Problems = append(rep.Problems, err.Error())
	}
	if err := v.Refresh(ctx); err != nil {
		rep.Problems = append(rep.Problems, err.Error())
	}
	return rep, v.verifyArtifacts(ctx, rep)
}

// verifyArtifacts checks every stowed artifact: those in the pack one by
// one, those in blob records in one pass over the log.
func (v *Voyage) verifyArtifacts(ctx context.Context, rep *VerifyReport) error {
	blobs := map[uint64]projection.Artifact{}
	for _, a := range v.Artifacts() {
		if err := ctx.Err(); err != nil {
			return err
		}
		switch {
		case a.Status != projection.Stowed:
			rep.Skipped++
		case a.Blob != 0:
			blobs[a.Blob] = a
		default:
			rep.Artifacts++
			if _, err := v.pack.Load(artifactRef(&a.ArtifactRef)); err != nil {
				rep.Problems = append(rep.Problems, fmt.Sprintf("artifact %s: %v", a.Hash, err))
			}
		}
	}
	if len(blobs) == 0 {
		return nil
	}
	err := v.log.Scan(ctx, 1, func(r segment.Record) error {
		a, ok := blobs[r.Seq]
		if !ok {
			return nil
		}
		delete(blobs, r.Seq)
		rep.Artifacts++
		if _, err := artifact.ReadBlob(artifactRef(&a.ArtifactRef), r.Data, v.log.Dir()); err != nil {
			rep.Problems = append(rep.Problems, fmt.Sprintf("artifact %s: %v", a.Hash, err))
		}
		return nil
	})
	if err != nil {
		rep.Problems = append(rep.Problems, err.Error())
	}
	for _, a := range blobs { // named records that the log does not hold
		rep.Artifacts++
		_, err := artifact.ReadBlob(artifactRef(&a.ArtifactRef), nil, v.log.Dir())
		rep.Problems = append(rep.Problems, fmt.Sprintf("artifact %s: %v", a.Hash, err))
	}
	return nil
}
