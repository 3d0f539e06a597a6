package helm

import (
	"context"
	"fmt"

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

// Verify checks every record of the voyage's event log (checksums, and
// the chain that links records) and every stowed artifact against its
// BLAKE3 address. Damage is reported in the report, not as an error; the
// error is for a check that could not run at all.
func (v *Voyage) Verify(ctx context.Context) (*VerifyReport, error) {
	rep := &VerifyReport{Voyage: v.id}
	events, err := segment.Verify(ctx, v.log.Dir())
	rep.Events = events
	if err != nil {
		rep.Problems = append(rep.Problems, err.Error())
	}
	if err := v.Refresh(ctx); err != nil {
		rep.Problems = append(rep.Problems, err.Error())
	}
	for _, a := range v.Artifacts() {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if a.Status != projection.Stowed {
			rep.Skipped++
			continue
		}
		rep.Artifacts++
		if _, err := v.pack.load(&a.ArtifactRef); err != nil {
			rep.Problems = append(rep.Problems, fmt.Sprintf("artifact %s: %v", a.Hash, err))
		}
	}
	return rep, nil
}
