package main

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

var who = logbook.Who{Identity: "bench", Role: "coder", Method: "bench"}

// helmDo performs one operation through the public API. A bearing that
// finds the slate empty (possible when goroutines share a voyage: another
// one sealed it first) reports done == false.
func helmDo(ctx context.Context, v *helm.Voyage, op Op) (done bool, err error) {
	if op.Bearing {
		_, err := v.TakeBearing(ctx, op.Reading, who, nil)
		if errors.Is(err, helm.ErrEmptySlate) {
			return false, nil
		}
		return err == nil, err
	}
	_, err = v.Record(ctx, helm.Observation{Mark: op.Mark, Sighting: op.Sighting, ObservedAt: time.Now()}, who)
	return err == nil, err
}

// dirBytes sums the sizes of the files under dir.
func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
