package helm

import (
	"path/filepath"

	"github.com/helmlog/helm/segment"
)

// Reaching into a home on disk, for tests that damage or watch its files.

func (h *Home) voyagesDir() string { return filepath.Join(h.dir, "voyages") }

func (h *Home) indexedViews() map[string]VoyageInfo { return h.back.(*disk).indexedViews() }

// segmentLog returns the segment log of a voyage of a home on disk.
func (v *Voyage) segmentLog() *segment.Log { return v.rec.(*diskJournal).log }
