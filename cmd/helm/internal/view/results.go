package view

import (
	"fmt"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/internal/safetext"
	"github.com/helmlog/helm/sighting"
)

// What a change that helm made says of itself, on the command line's
// --json and in a tool's result alike.

// Observed is an observation recorded, as observe --json and the
// observe tool give it.
type Observed struct {
	Voyage     string `json:"voyage"`
	Key        string `json:"key"`
	Label      string `json:"label"`
	Artifact   string `json:"artifact"`
	Size       int64  `json:"size"`
	StoredSize int64  `json:"stored_size"`
	ObservedAt string `json:"observed_at"`
	Out        string `json:"out,omitempty"`
	// Failures are what the sighting records as failed; [] when nothing
	// did.
	Failures []sighting.Failure `json:"failures"`
}

// ObservedOf is the --json form of an observation of v.
func ObservedOf(v *helm.Voyage, o helm.Observed) Observed {
	lo := o.Record
	res := Observed{Voyage: v.ID(), Key: lo.Key, Label: lo.Label, Artifact: lo.Artifact, ObservedAt: Stamp(lo.ObservedAt),
		Size: o.Artifact.Size, StoredSize: o.Artifact.StoredSize, Failures: o.Failures()}
	if res.Failures == nil {
		res.Failures = []sighting.Failure{}
	}
	return res
}

// line is the line observe prints.
func (o Observed) Line() string {
	return fmt.Sprintf("Observed %s (artifact %s, %s)", safetext.Line(o.Label), Short(o.Artifact), Size(o.Size))
}

// DryRun is the --json form of a dry run.
type DryRun struct {
	Voyage string `json:"voyage"`
	Kind   string `json:"kind"`
	DryRun string `json:"dry_run"`
}
