package helm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/helmlog/helm/projection"
)

// A voyage's summary.json caches its voyage view for `helm voyage list`,
// so listing costs one small file and two stats per voyage however long
// the voyages are. It is a cache, never the truth: it records a
// fingerprint of the event log (logPrint), and a summary whose fingerprint
// no longer matches is rebuilt from the events.
const summaryName = "summary.json"

type summaryFile struct {
	Voyage projection.Voyage `json:"voyage"`
	Log    logPrint          `json:"log"`
}

// logPrint identifies the state of an event log directory: a new segment
// changes the directory's modification time, an append changes the newest
// segment's size.
type logPrint struct {
	DirModNanos int64  `json:"dir_mod_ns"`
	LastSegment string `json:"last_segment"`
	LastSize    int64  `json:"last_size"`
}

// fingerprint reads the current logPrint of eventsDir. With last == "" it
// finds the newest segment by listing the directory; otherwise it trusts
// that name, which costs two stats and no directory read: if a newer
// segment exists, the directory's modification time tells.
func fingerprint(eventsDir, last string) (logPrint, error) {
	d, err := os.Stat(eventsDir)
	if err != nil {
		return logPrint{}, err
	}
	if last == "" {
		entries, err := os.ReadDir(eventsDir)
		if err != nil {
			return logPrint{}, err
		}
		for _, e := range entries { // sorted by name; names sort by sequence
			if strings.HasSuffix(e.Name(), ".seg") && e.Type().IsRegular() {
				last = e.Name()
			}
		}
		if last == "" {
			return logPrint{}, fmt.Errorf("no segment in %s", eventsDir)
		}
	}
	st, err := os.Stat(filepath.Join(eventsDir, last))
	if err != nil {
		return logPrint{}, err
	}
	return logPrint{DirModNanos: d.ModTime().UnixNano(), LastSegment: last, LastSize: st.Size()}, nil
}

// writeSummary rewrites the voyage's summary. Failing to write a cache is
// not an error for the caller: the next List rebuilds it.
func (v *Voyage) writeSummary() {
	fp, err := fingerprint(v.log.Dir(), "")
	if err != nil {
		return
	}
	v.mu.Lock()
	info := v.st.Voyage
	v.mu.Unlock()
	data, err := json.Marshal(summaryFile{Voyage: info, Log: fp})
	if err != nil {
		return
	}
	tmp := filepath.Join(v.dir, summaryName+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return
	}
	if os.Rename(tmp, filepath.Join(v.dir, summaryName)) == nil {
		v.mu.Lock()
		v.summarySeq = info.Seq
		v.mu.Unlock()
	}
}

func (v *Voyage) summaryStale() bool {
	s, err := readSummary(v.dir)
	if err != nil {
		return true
	}
	fp, err := fingerprint(v.log.Dir(), "")
	info := v.Info()
	if err != nil || fp != s.Log || s.Voyage.Seq != info.Seq {
		return true
	}
	v.mu.Lock()
	v.summarySeq = info.Seq
	v.mu.Unlock()
	return false
}

func readSummary(dir string) (*summaryFile, error) {
	data, err := os.ReadFile(filepath.Join(dir, summaryName))
	if err != nil {
		return nil, err
	}
	var s summaryFile
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// summary returns the voyage view of id from its summary, rebuilding the
// summary from the events when it is missing or stale.
func (h *Home) summary(ctx context.Context, id string) (projection.Voyage, error) {
	dir := filepath.Join(h.voyagesDir(), id)
	if s, err := readSummary(dir); err == nil {
		if fp, err := fingerprint(filepath.Join(dir, "events"), s.Log.LastSegment); err == nil && fp == s.Log {
			return s.Voyage, nil
		}
	}
	v, err := h.Voyage(ctx, id) // rebuilds the summary
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return projection.Voyage{}, fmt.Errorf("%w: %s", ErrNoVoyage, id)
		}
		return projection.Voyage{}, err
	}
	defer v.Close()
	return v.Info(), nil
}
