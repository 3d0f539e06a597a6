package view

import (
	"context"
	"encoding/json"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

// The artifacts of a voyage, listed (artifact list, the artifact_list
// tool) and counted (voyage show, voyage_show).

// ArtifactRow is one artifact as artifact list --json and the
// artifact_list tool give it: its index entry, the kind and label of the
// mark that recorded it, and where it is stored.
type ArtifactRow struct {
	helm.ArtifactInfo
	Kind  string `json:"kind,omitempty"`
	Mark  string `json:"mark,omitempty"`
	Where string `json:"where"`
}

// ArtifactRows describes infos, artifacts of v, as artifact list does.
func ArtifactRows(ctx context.Context, v *helm.Voyage, infos []helm.ArtifactInfo) ([]ArtifactRow, error) {
	labels, err := observationLabels(ctx, v)
	if err != nil {
		return nil, err
	}
	kinds, err := observationKinds(ctx, v)
	if err != nil {
		return nil, err
	}
	rows := []ArtifactRow{}
	for _, info := range infos {
		where := "pack"
		if info.Blob != 0 {
			where = "log"
		}
		rows = append(rows, ArtifactRow{ArtifactInfo: info, Kind: kinds[info.Hash], Mark: labels[info.Hash], Where: where})
	}
	return rows, nil
}

// observationKinds maps each artifact hash to the kind of the mark that
// recorded it.
func observationKinds(ctx context.Context, v *helm.Voyage) (map[string]string, error) {
	out := map[string]string{}
	add := func(o logbook.ObservationRecord) {
		var m struct {
			Kind string `json:"kind"`
		}
		if json.Unmarshal(o.Mark, &m) == nil && m.Kind != "" {
			out[o.Artifact] = m.Kind
		}
	}
	if err := eachObservation(ctx, v, add); err != nil {
		return nil, err
	}
	for _, o := range v.Slate() {
		add(o)
	}
	for a, err := range v.Artifacts(ctx, nil) {
		if err != nil {
			return nil, err
		}
		if a.DerivedFrom != "" {
			out[a.Hash] = "summary"
		}
	}
	return out, nil
}

// Totals count a voyage's artifacts, and the sizes of those
// stowed: their sightings' and what storing them takes.
type Totals struct {
	Count      int   `json:"count"`
	Size       int64 `json:"size"`
	StoredSize int64 `json:"stored_size"`
}

// TotalsOf counts v's artifacts, reading the index a page at a time (the
// index of a long voyage is streamed, never held whole).
func TotalsOf(ctx context.Context, v *helm.Voyage) (Totals, error) {
	var t Totals
	for art, err := range v.Artifacts(ctx, nil) {
		if err != nil {
			return t, err
		}
		t.Count++
		if art.Status == logbook.ArtifactStowed {
			t.Size += art.Size
			t.StoredSize += art.StoredSize
		}
	}
	return t, nil
}
