package helm

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/helmlog/helm/internal/homeindex"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
)

// The home index (internal/homeindex) lets List read one file, not every
// voyage's: each Voyage that changes its voyage records, durably, that it
// is about to (before its first change), and at Close what the voyage
// became. A voyage whose writers have not all closed — one at work, or one
// that crashed — is read from its own files, as every voyage was before.

// begin records in the home index, once per Voyage, that this handle is
// about to change the voyage. When that cannot be recorded the index is
// removed, so that no reader trusts what it said of this voyage; only
// when that fails too is the change refused.
func (j *diskJournal) begin(ctx context.Context) error {
	j.idxMu.Lock()
	defer j.idxMu.Unlock()
	if j.idx != nil || j.idxOff {
		return nil
	}
	h := j.d.h
	w, err := homeindex.Open(h.dir, j.v.id, h.opts.NoSync, j.d.indexViews(ctx))
	if err == nil {
		j.idx = w
		return nil
	}
	path := filepath.Join(h.dir, homeindex.Name)
	if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		return fmt.Errorf("%w; and removing %s, so that listing reads this voyage itself, failed too: %v (nothing was recorded; check that the home %s can be written)", err, path, rerr, h.dir)
	}
	j.idxOff = true
	return nil
}

// indexClose is what Close records in the home index: the voyage's view,
// taken before the log closes (nil: the index session is closed with a
// stale record).
type indexClose struct {
	w    *homeindex.Writer
	seq  uint64
	view []byte
}

// viewForIndex brings the views up to date with what others appended and
// encodes them, for closeIndex (before the log is closed).
func (j *diskJournal) viewForIndex(ctx context.Context) *indexClose {
	j.idxMu.Lock()
	w := j.idx
	j.idx = nil
	j.idxMu.Unlock()
	if w == nil {
		return nil
	}
	v := j.v
	c := &indexClose{w: w}
	v.mu.Lock()
	broken := v.broken
	v.mu.Unlock()
	if broken == nil && v.refresh(ctx) == nil {
		v.mu.Lock()
		c.view, c.seq = encodeView(v.st.Voyage), v.st.Voyage.Seq
		v.mu.Unlock()
	}
	return c
}

// closeIndex records in the home index what the voyage is now, with the
// stamps of its log's files once the log is closed (closing trims the
// active segment).
func (j *diskJournal) closeIndex(ctx context.Context, c *indexClose) {
	if c == nil {
		return
	}
	if c.view != nil {
		if fp, ok := fingerprint(j.log.Dir()); ok {
			c.view = appendFingerprint(c.view, fp)
		} else {
			c.view = nil
		}
	}
	if c.w.Close(j.v.id, c.seq, c.view) == nil {
		homeindex.MaybeCompact(j.d.h.dir, j.d.h.opts.NoSync, j.d.indexViews(ctx))
	}
}

// indexViews returns what reads every voyage of the home as it is, for a
// rebuild of a damaged index (no writer is at work meanwhile).
func (d *disk) indexViews(ctx context.Context) homeindex.Rebuild {
	return func() (map[string]homeindex.View, error) {
		ids, err := d.ids(ctx, "")
		if err != nil {
			return nil, err
		}
		out := make(map[string]homeindex.View, len(ids))
		for _, id := range ids {
			info, err := d.summary(ctx, id, 0)
			if err != nil {
				// Damaged: listing reads it, and says so. A voyage that a
				// cache proves rolled back loses its record in the rebuilt
				// index (the old one did not check out); its summary and
				// snapshot, which no write touches, remain evidence.
				continue
			}
			view := info.view()
			fp, ok := fingerprint(filepath.Join(d.voyagesDir(), id, "events"))
			if !ok {
				continue
			}
			out[id] = homeindex.View{Seq: info.Seq, Data: appendFingerprint(encodeView(view), fp)}
		}
		return out, nil
	}
}

// indexedViews returns the voyages the home index vouches for; nil when
// there is no index or it is damaged (every voyage is then read itself).
func (d *disk) indexedViews() map[string]VoyageInfo {
	views, err := homeindex.Read(filepath.Join(d.h.dir, homeindex.Name))
	if err != nil {
		return nil
	}
	type vouched struct {
		info VoyageInfo
		fp   logPrint
		ok   bool
	}
	all := make([]vouched, 0, len(views))
	for id, data := range views {
		view, fp, err := decodeView(data)
		if err == nil && view.ID == id {
			all = append(all, vouched{info: voyageInfo(view), fp: fp})
		}
	}
	// The stamps are a few stats per voyage: a few goroutines take them.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(len(all), 4*runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(all); i = int(next.Add(1) - 1) {
				a := &all[i]
				a.ok = a.fp.holds(filepath.Join(d.voyagesDir(), a.info.ID, "events"))
			}
		})
	}
	wg.Wait()
	out := make(map[string]VoyageInfo, len(all))
	for _, a := range all {
		if a.ok { // else changed since, by something other than helm: read it
			out[a.info.ID] = a.info
		}
	}
	return out
}

// logPrint is what the home index records of a voyage's log files when
// its writer closed it: their sizes and modification times. The writers'
// records say no helm writer changed the voyage since; these catch a
// change made by anything else (a file deleted, restored, overwritten,
// damaged), so that List reads such a voyage itself and flags it, at the
// cost of a stat per file (one segment, WATERMARK and the directory, for
// most voyages) instead of reading them.
type logPrint []fileStamp

type fileStamp struct {
	name  string // "" for the directory itself
	size  int64
	mtime int64 // UnixNano
}

// fingerprint stamps the log directory dir and its files.
func fingerprint(dir string) (logPrint, bool) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, false
	}
	fp := logPrint{}
	for _, name := range append([]string{""}, namesOf(entries)...) {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return nil, false
		}
		fp = append(fp, fileStamp{name: name, size: st.Size(), mtime: st.ModTime().UnixNano()})
	}
	return fp, true
}

func namesOf(entries []os.DirEntry) []string {
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && (e.Name() == "WATERMARK" || filepath.Ext(e.Name()) == ".seg") {
			names = append(names, e.Name())
		}
	}
	return names
}

// holds reports whether dir's files still have the stamps (the
// directory's own stamp changes when a file is added, removed or renamed).
func (fp logPrint) holds(dir string) bool {
	if len(fp) == 0 {
		return false
	}
	for _, s := range fp {
		st, err := os.Stat(filepath.Join(dir, s.name))
		if err != nil || st.Size() != s.size && s.name != "" || st.ModTime().UnixNano() != s.mtime {
			return false
		}
	}
	return true
}

func appendFingerprint(b []byte, fp logPrint) []byte {
	b = binary.AppendUvarint(b, uint64(len(fp)))
	for _, s := range fp {
		b = binary.AppendUvarint(b, uint64(len(s.name)))
		b = append(b, s.name...)
		b = binary.AppendVarint(b, s.size)
		b = binary.AppendVarint(b, s.mtime)
	}
	return b
}

// viewVersion is the first byte of an encoded view: raise it when
// VoyageView changes (a view of another version is not trusted).
const viewVersion = 5 // 1 had no parent, repository, last event, lifecycle or crew; 2 no worktree removal; 3 no session; 4 no current identity, handoffs, fork or salvage

// encodeView encodes a voyage view compactly for the home index.
func encodeView(p projection.VoyageView) []byte {
	b := []byte{viewVersion}
	for _, s := range []string{p.ID, p.Intent, p.Kind, p.Identity, string(p.Status), string(p.Outcome), p.Summary} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = appendTime(b, p.Created)
	b = appendTime(b, p.CompletedAt)
	b = binary.AppendUvarint(b, p.Seq)
	for _, s := range []string{p.Parent, p.Repo, p.Dir, p.Base, p.Branch, p.Worktree} {
		b = appendStr(b, s)
	}
	b = appendTime(b, p.LastAt)
	b = appendTime(b, p.WorktreeRemoved)
	b = binary.AppendUvarint(b, uint64(len(p.Lifecycle)))
	for _, t := range p.Lifecycle {
		b = appendStr(b, string(t.Status))
		b = appendTime(b, t.At)
		for _, s := range []string{t.Who.Identity, t.Who.Role, t.Who.Method, t.Reason} {
			b = appendStr(b, s)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(p.Crew)))
	for _, id := range p.Crew {
		b = appendStr(b, id)
	}
	b = appendStr(b, p.Session)
	b = appendStr(b, p.Current)
	b = binary.AppendUvarint(b, uint64(len(p.Handoffs)))
	for _, e := range p.Handoffs {
		b = binary.AppendUvarint(b, uint64(e.N))
		b = binary.AppendUvarint(b, e.Seq)
		b = appendTime(b, e.At)
		var h logbook.Handoff
		if e.Handoff != nil {
			h = *e.Handoff
		}
		confirmed := ""
		if h.Confirmed {
			confirmed = "confirmed"
		}
		for _, s := range []string{e.Who.Identity, e.Who.Role, e.Who.Method, h.From, h.To, h.Why, confirmed} {
			b = appendStr(b, s)
		}
	}
	return appendStr(appendStr(b, originJSON(p.Fork)), originJSON(p.Salvage))
}

// originJSON is a fork's or a salvage's origin in the home index: its
// JSON form, "" for none (both are rare, and small).
func originJSON(o *projection.Origin) string {
	if o == nil {
		return ""
	}
	b, err := json.Marshal(o)
	if err != nil {
		return "" // cannot be: strings and numbers
	}
	return string(b)
}

// parseOrigin reads what originJSON wrote; ok false for what it cannot
// have.
func parseOrigin(s string) (o *projection.Origin, ok bool) {
	if s == "" {
		return nil, true
	}
	o = &projection.Origin{}
	if err := json.Unmarshal([]byte(s), o); err != nil {
		return nil, false
	}
	return o, true
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, 0)
	}
	b = append(b, 1)
	b = binary.AppendVarint(b, t.Unix())
	return binary.AppendUvarint(b, uint64(t.Nanosecond()))
}

var errView = errors.New("not a voyage view of this version")

// decodeView decodes what encodeView and appendFingerprint encoded.
func decodeView(b []byte) (p projection.VoyageView, fp logPrint, err error) {
	if len(b) == 0 || b[0] != viewVersion {
		return p, nil, errView
	}
	b = b[1:]
	str := func() string {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			b = nil
			return ""
		}
		s := string(b[k : k+int(n)])
		b = b[k+int(n):]
		return s
	}
	var status, outcome string
	p.ID, p.Intent, p.Kind, p.Identity, status, outcome, p.Summary = str(), str(), str(), str(), str(), str(), str()
	p.Status, p.Outcome = projection.Status(status), projection.Outcome(outcome)
	tm := func() time.Time {
		if len(b) == 0 {
			b = nil
			return time.Time{}
		}
		set := b[0]
		b = b[1:]
		if set == 0 {
			return time.Time{}
		}
		sec, k := binary.Varint(b)
		if k <= 0 {
			b = nil
			return time.Time{}
		}
		b = b[k:]
		ns, k := binary.Uvarint(b)
		if k <= 0 || ns >= 1e9 {
			b = nil
			return time.Time{}
		}
		b = b[k:]
		return time.Unix(sec, int64(ns)).UTC()
	}
	p.Created, p.CompletedAt = tm(), tm()
	seq, k := binary.Uvarint(b)
	if b == nil || k <= 0 {
		return p, nil, errView
	}
	p.Seq, b = seq, b[k:]
	p.Parent, p.Repo, p.Dir, p.Base, p.Branch, p.Worktree = str(), str(), str(), str(), str(), str()
	p.LastAt = tm()
	p.WorktreeRemoved = tm()
	count := func() uint64 {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)) {
			b = nil
			return 0
		}
		b = b[k:]
		return n
	}
	if n := count(); n > 0 {
		p.Lifecycle = make([]projection.Transition, n)
		for i := range p.Lifecycle {
			t := &p.Lifecycle[i]
			t.Status = projection.Status(str())
			t.At = tm()
			t.Who.Identity, t.Who.Role, t.Who.Method, t.Reason = str(), str(), str(), str()
		}
	}
	if n := count(); n > 0 {
		p.Crew = make([]string, n)
		for i := range p.Crew {
			p.Crew[i] = str()
		}
	}
	p.Session = str()
	uv := func() uint64 {
		n, k := binary.Uvarint(b)
		if k <= 0 {
			b = nil
			return 0
		}
		b = b[k:]
		return n
	}
	p.Current = str()
	if n := count(); n > 0 {
		p.Handoffs = make([]logbook.Entry, n)
		for i := range p.Handoffs {
			e := &p.Handoffs[i]
			n, seq := uv(), uv()
			e.N, e.Seq, e.Kind = int(n), seq, logbook.EntryHandoff
			if uint64(e.N) != n {
				b = nil
			}
			e.At = tm()
			h := &logbook.Handoff{}
			var confirmed string
			e.Who.Identity, e.Who.Role, e.Who.Method, h.From, h.To, h.Why, confirmed = str(), str(), str(), str(), str(), str(), str()
			h.Confirmed = confirmed != ""
			e.Handoff = h
		}
	}
	var okFork, okSalvage bool
	p.Fork, okFork = parseOrigin(str())
	p.Salvage, okSalvage = parseOrigin(str())
	if b == nil || !okFork || !okSalvage {
		return p, nil, errView
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return p, nil, errView
	}
	b = b[k:]
	for range n {
		var s fileStamp
		s.name = str()
		var k1, k2 int
		s.size, k1 = binary.Varint(b)
		if b == nil || k1 <= 0 {
			return p, nil, errView
		}
		s.mtime, k2 = binary.Varint(b[k1:])
		if k2 <= 0 {
			return p, nil, errView
		}
		b = b[k1+k2:]
		fp = append(fp, s)
	}
	if len(b) != 0 {
		return p, nil, errView
	}
	return p, fp, nil
}
