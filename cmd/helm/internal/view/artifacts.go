package view

import (
	"encoding/json"
	"iter"

	"github.com/helmlog/helm"
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
func ArtifactRows(v *helm.Voyage, infos []helm.ArtifactInfo) []ArtifactRow {
	labels := observationLabels(v)
	kinds := observationKinds(v)
	rows := []ArtifactRow{}
	for _, info := range infos {
		where := "pack"
		if info.Blob != 0 {
			where = "log"
		}
		rows = append(rows, ArtifactRow{ArtifactInfo: info, Kind: kinds[info.Hash], Mark: labels[info.Hash], Where: where})
	}
	return rows
}

// observationKinds maps each artifact hash to the kind of the mark that
// recorded it.
func observationKinds(v *helm.Voyage) map[string]string {
	out := map[string]string{}
	add := func(o helm.ObservationRecord) {
		var m struct {
			Kind string `json:"kind"`
		}
		if json.Unmarshal(o.Mark, &m) == nil && m.Kind != "" {
			out[o.Artifact] = m.Kind
		}
	}
	for e := range v.Entries() {
		if e.Bearing != nil {
			for _, o := range e.Bearing.Observations {
				add(o)
			}
		}
	}
	for _, o := range v.Slate() {
		add(o)
	}
	for _, a := range v.Artifacts() {
		if a.DerivedFrom != "" {
			out[a.Hash] = "summary"
		}
	}
	return out
}

// artifactPage is how many artifacts show reads at a time: the index of a
// long voyage is streamed, never held whole.
const artifactPage = 512

// artifacts yields the voyage's artifact index in hash order, a page at a
// time.
func Artifacts(v *helm.Voyage) iter.Seq[helm.ArtifactInfo] {
	return func(yield func(helm.ArtifactInfo) bool) {
		for after := ""; ; {
			p := v.ArtifactsAfter(after, artifactPage)
			for _, a := range p {
				if !yield(a) {
					return
				}
			}
			if len(p) < artifactPage {
				return
			}
			after = p[len(p)-1].Hash
		}
	}
}

// Totals count a voyage's artifacts, and the sizes of those
// stowed: their sightings' and what storing them takes.
type Totals struct {
	Count      int   `json:"count"`
	Size       int64 `json:"size"`
	StoredSize int64 `json:"stored_size"`
}

func TotalsOf(v *helm.Voyage) Totals {
	var t Totals
	for art := range Artifacts(v) {
		t.Count++
		if art.Status == helm.ArtifactStowed {
			t.Size += art.Size
			t.StoredSize += art.StoredSize
		}
	}
	return t
}
