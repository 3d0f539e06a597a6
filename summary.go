package helm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/helmlog/helm/internal/homeindex"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/internal/durable"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
)

// A voyage's summary.json caches its voyage view for Home.List, so
// listing costs one small file and one small read of the log per
// voyage, however long the voyages are. It is a cache, never the truth: it
// records the log's segment.Mark as of the view it holds, and a summary
// whose log has changed since (segment.Changed) is rebuilt from the
// events.
//
// It is written without fsync, by writers only (Close after a change),
// after the log made durable what it names: a summary lost to a crash,
// torn, or written by another version of helm is ignored and the view
// rebuilt, so it needs none of the log's durability. One that names a seq
// beyond the log's end is not ignored: it is evidence of a rollback
// (evidence.go).
const summaryName = "summary.json"

// summaryVersion is the version of summary.json's form and of the view it
// holds: a summary of any other version (one written before the field
// existed reads as 0) is ignored. Raise it when VoyageView changes.
const summaryVersion = 5 // 1 had no parent, repository, last event, lifecycle or crew; 2 no worktree removal; 3 no session; 4 no current identity, handoffs, fork or salvage

type summaryFile struct {
	Version int                   `json:"version"`
	Voyage  projection.VoyageView `json:"voyage"`
	Log     segment.Mark          `json:"log"`
	// Head is the chain's head at Log.Last (package chain), when the
	// writer had it: what the log was at that seq, not only how far it
	// went. Optional within version 3: a summary without it (written
	// before it existed) says only its seq (evidence.go).
	Head *chain.Head `json:"head,omitempty"`
}

// summarize rewrites the voyage's summary. Failing to write a cache is
// not an error for the caller: the next List rebuilds it.
func (j *diskJournal) summarize(ctx context.Context) {
	v := j.v
	v.mu.Lock()
	info, mark := v.st.Voyage, j.log.Mark()
	v.mu.Unlock()
	if mark.Last != info.Seq {
		return // the log is ahead of these views: let the next open write it
	}
	s := summaryFile{Version: summaryVersion, Voyage: info, Log: mark}
	if head, err := j.cacheHead(ctx); err == nil && head.Seq == mark.Last {
		s.Head = &head
	}
	data, err := json.Marshal(s)
	if err != nil {
		return
	}
	if writeCache(v.dir, summaryName, data) {
		v.mu.Lock()
		v.summarySeq = info.Seq
		v.mu.Unlock()
	}
}

// writeCache writes a cache file (a summary, a snapshot) whole as
// dir/name, without fsync: through a temporary file of its own, as
// several processes may close a voyage at once, renamed over the old one.
// It reports whether it did.
func writeCache(dir, name string, data []byte) bool {
	f, err := os.CreateTemp(dir, name+".*.tmp")
	if err != nil {
		return false
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr != nil || cerr != nil {
		os.Remove(f.Name())
		return false
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, name)); err != nil {
		os.Remove(f.Name())
		return false
	}
	return true
}

// summaryStale reports whether the summary on disk does not describe the
// views as they are; a fresh one is remembered so Close need not rewrite it.
func (j *diskJournal) summaryStale() bool {
	v := j.v
	info := v.Info()
	// One that claims another seq is stale, read from the claim's few
	// fields: a close after a write mostly ends here, without decoding
	// the whole view (the first decode of its types is most of a note
	// process's close).
	if seq, _, ok := summaryClaim(filepath.Join(v.dir, summaryName), v.id); ok && seq != info.Seq {
		return true
	}
	s, err := readSummary(v.dir)
	if err != nil {
		return true
	}
	if s.Voyage.Seq != info.Seq {
		return true
	}
	if changed, err := segment.Changed(j.log.Dir(), s.Log); err != nil || changed {
		return true
	}
	v.mu.Lock()
	v.summarySeq = info.Seq
	v.mu.Unlock()
	return false
}

// readSummary reads a voyage's summary. It is called once per voyage by
// List, so it reads with durable.ReadFileAt: three system calls on unix,
// where os.ReadFile makes six.
func readSummary(dir string) (*summaryFile, error) {
	path := filepath.Join(dir, summaryName)
	var buf [4096]byte
	n, err := durable.ReadFileAt(path, buf[:], 0)
	if err != nil {
		return nil, err
	}
	data := buf[:n]
	if n == len(buf) { // a long intent or summary: read it all
		if data, err = os.ReadFile(path); err != nil {
			return nil, err
		}
	}
	var s summaryFile
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	if s.Version != summaryVersion {
		return nil, fmt.Errorf("%s is version %d of the form, not %d", path, s.Version, summaryVersion)
	}
	return &s, nil
}

// summary returns the voyage view of id from its summary, or from the
// events when the summary is missing, stale, not this voyage's, or short
// of indexed, the seq the home index recorded for it (opening then finds
// whether a cache proves the log rolled back). A read writes no cache:
// the next change to the voyage rewrites its summary.
func (d *disk) summary(ctx context.Context, id string, indexed uint64) (VoyageInfo, error) {
	dir := filepath.Join(d.voyagesDir(), id)
	if s, err := readSummary(dir); err == nil && s.Voyage.ID == id && s.Log.Last >= indexed {
		if changed, err := segment.Changed(filepath.Join(dir, "events"), s.Log); err == nil && !changed {
			return voyageInfo(s.Voyage), nil
		}
	}
	v, err := d.open(ctx, id, true)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return VoyageInfo{}, fmt.Errorf("%w: %s", ErrNoVoyage, id)
		}
		return VoyageInfo{}, err
	}
	defer v.Close()
	return v.Info(), nil
}

// verifyViews compares the views the caches that List trusts hold with
// the voyage's view folded from every event (Verify's): summary.json's,
// and the home index's record of the voyage. List trusts either while the
// log's files are unchanged since it was written, so an edited view is
// what a listing shows; it is damage to report. A cache of an earlier
// seq than the events' says nothing here (List does not trust it: the
// log changed since).
func (j *diskJournal) verifyViews(rep *VerifyReport) {
	v := j.v
	v.mu.Lock()
	want := v.st.Voyage
	v.mu.Unlock()
	path := filepath.Join(v.dir, summaryName)
	if s, err := readSummary(v.dir); err == nil && s.Voyage.ID == v.id && s.Voyage.Seq == want.Seq {
		if d := viewDiff(summaryName, s.Voyage, want); d != "" {
			rep.Problems = append(rep.Problems, &DamageError{Voyage: v.id, File: path, Reason: d})
		}
	}
	index := filepath.Join(j.d.h.dir, homeindex.Name)
	views, err := homeindex.Read(index)
	if err != nil {
		return
	}
	if data, ok := views[v.id]; ok {
		got, _, err := decodeView(data)
		if err != nil || got.ID != v.id || got.Seq != want.Seq {
			return
		}
		// The index keeps the fields a listing shows: compare those.
		indexed, _, err := decodeView(encodeView(want))
		if err != nil {
			return
		}
		if d := viewDiff("the home index", got, indexed); d != "" {
			rep.Problems = append(rep.Problems, &DamageError{Voyage: v.id, File: index, Reason: d})
		}
	}
}

// viewDiff says how the view cache holds differs from want, the events':
// "" when it does not.
func viewDiff(cache string, got, want projection.VoyageView) string {
	fields := func(p projection.VoyageView) map[string]json.RawMessage {
		data, _ := json.Marshal(p)
		var m map[string]json.RawMessage
		json.Unmarshal(data, &m)
		return m
	}
	g, w := fields(got), fields(want)
	keys := make([]string, 0, len(g)+len(w))
	for k := range g {
		keys = append(keys, k)
	}
	for k := range w {
		if _, ok := g[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b string) int { // what a listing shows first
		return cmp.Or(cmp.Compare(fieldRank(a), fieldRank(b)), cmp.Compare(a, b))
	})
	var says, events []string
	for _, k := range keys {
		if !bytes.Equal(g[k], w[k]) {
			says = append(says, k+" "+shown(g[k]))
			events = append(events, shown(w[k]))
		}
	}
	if len(says) == 0 {
		return ""
	}
	return fmt.Sprintf("%s says %s, the events say %s: the cache was edited", cache, strings.Join(says, ", "), strings.Join(events, ", "))
}

func fieldRank(k string) int {
	switch k {
	case "status":
		return 0
	case "outcome":
		return 1
	case "summary":
		return 2
	}
	return 3
}

// shown is a JSON value as the message says it: a string without its
// quotes, a missing one as "nothing".
func shown(v json.RawMessage) string {
	if v == nil {
		return "nothing"
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return strconv.Quote(s)
	}
	return string(v)
}
