package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
)

// cloneVoyage makes a voyage of at least events events without paying for
// every TakeBearing: TakeBearing's cost grows with the number of bearings
// already in the voyage (see README), so recording 100k events through the
// API takes hours. It records a template voyage of templateEvents events
// through the public API (the real workload, goroutines sharing it), then
// appends copies of the template's events to a new voyage's log, each copy
// with its artifact hashes renamed so that every copy stows its own
// artifacts. The events are re-encoded with projection.Encode, so they are
// the bytes helm writes, in the same mix. Setup only: the home may be
// NoSync.
func cloneVoyage(ctx context.Context, home *helm.Home, events, templateEvents uint64, goroutines int) (string, uint64, error) {
	tmplID, _, err := buildVoyage(ctx, home, templateEvents, goroutines)
	if err != nil {
		return "", 0, err
	}
	tmplDir := filepath.Join(home.Dir(), "voyages", tmplID)
	tlog, err := segment.Open(filepath.Join(tmplDir, "events"), &segment.Options{NoSync: true})
	if err != nil {
		return "", 0, err
	}
	var tmpl []*projection.Event
	err = tlog.Scan(ctx, 1, func(r segment.Record) error {
		e, err := projection.Decode(r.Data)
		if err != nil {
			return err
		}
		if e.Type != projection.VoyageStarted {
			tmpl = append(tmpl, e)
		}
		return nil
	})
	tlog.Close()
	if err != nil {
		return "", 0, err
	}

	v, err := home.Start(ctx, "bench replay", helm.OpenWaters, who)
	if err != nil {
		return "", 0, err
	}
	id, dir := v.ID(), v.Dir()
	if err := v.Close(); err != nil {
		return "", 0, err
	}
	if err := copyFile(filepath.Join(tmplDir, "artifacts.pack"), filepath.Join(dir, "artifacts.pack")); err != nil && !os.IsNotExist(err) {
		return "", 0, err
	}
	log, err := segment.Open(filepath.Join(dir, "events"), &segment.Options{NoSync: true})
	if err != nil {
		return "", 0, err
	}
	defer log.Close()
	total := log.Last()
	for c := 1; total < events; c++ {
		rename := func(h string) string { return fmt.Sprintf("%s%08x", h[:len(h)-8], c) }
		var batch [][]byte
		for _, e := range tmpl {
			e := cloneEvent(e, rename)
			data, err := projection.Encode(e)
			if err != nil {
				return "", 0, err
			}
			batch = append(batch, data)
			if len(batch) == 256 || total+uint64(len(batch)) >= events {
				if _, err := log.Append(ctx, batch...); err != nil {
					return "", 0, err
				}
				total += uint64(len(batch))
				batch = batch[:0]
				if total >= events {
					break
				}
			}
		}
		if len(batch) > 0 {
			if _, err := log.Append(ctx, batch...); err != nil {
				return "", 0, err
			}
			total += uint64(len(batch))
		}
	}
	return id, total, nil
}

// cloneEvent copies e with every artifact hash it holds renamed.
func cloneEvent(e *projection.Event, rename func(string) string) *projection.Event {
	c := *e
	if e.Artifact != nil {
		a := *e.Artifact
		a.Hash = rename(a.Hash)
		c.Artifact = &a
	}
	if e.Obs != nil {
		o := *e.Obs
		o.Artifact = rename(o.Artifact)
		c.Obs = &o
	}
	if e.Bearing != nil {
		b := *e.Bearing
		b.Observations = append(b.Observations[:0:0], b.Observations...)
		for i := range b.Observations {
			b.Observations[i].Artifact = rename(b.Observations[i].Artifact)
		}
		c.Bearing = &b
	}
	return &c
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
