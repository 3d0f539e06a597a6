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
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

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

// vouchers is what the home index vouches for: every voyage it names
// (infos, in the order it names them; at says where each id is), and
// whether it vouches for it (held): its writers all closed it and its log
// files still have the stamps the last of them recorded ("What a list
// trusts" in docs/design.md).
type vouchers struct {
	entries []homeindex.Entry
	infos   []VoyageInfo
	held    []bool
	at      map[string]int
}

// readVouchers reads the home index: what stampVouchers checks.
func (d *disk) readVouchers() (v vouchers, ok bool) {
	entries, at, err := homeindex.Views(filepath.Join(d.h.dir, homeindex.Name))
	if err != nil {
		return v, false
	}
	return vouchers{entries: entries, infos: make([]VoyageInfo, len(entries)), held: make([]bool, len(entries)), at: at}, true
}

// stampVouchers decodes the views v's index vouches for and takes their
// logs' stamps: those that hold are held. The stamps are most of a
// listing's cost, a few microseconds per voyage in the kernel, and
// independent: a few goroutines per core share them (a stat that waits
// for the disk leaves its core to the others).
func (d *disk) stampVouchers(v *vouchers) {
	sd, err := openStampDir(d.voyagesDir())
	if err != nil {
		return // no voyages: nothing to vouch for
	}
	defer sd.close()
	entries := v.entries
	var next atomic.Int64
	var wg sync.WaitGroup
	const batch = 256
	for range min((len(entries)+batch-1)/batch, 2*runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			rel := make([]byte, 0, 128)
			a := viewArena{ahead: 2 * batch}
			for {
				from := int(next.Add(batch) - batch)
				if from >= len(entries) {
					return
				}
				for i := from; i < min(from+batch, len(entries)); i++ {
					e := &entries[i]
					if e.View == nil {
						continue
					}
					p, fp, err := decodeViewIn(e.View, &a)
					if err != nil || p.ID != e.ID {
						continue
					}
					rel = append(append(rel[:0], e.ID...), "/events/"...)
					// else changed since, by something other than helm: read it
					if v.held[i] = fp.holds(sd, &rel); v.held[i] {
						v.infos[i] = listedInfo(p, &a)
					}
				}
			}
		})
	}
	wg.Wait()
}

// listedInfo is voyageInfo of a view decodeViewIn decoded into a, whose
// slices no one else holds: they are not copied again, and the lifecycle
// (a's scratch) is copied into a's slab.
func listedInfo(p projection.VoyageView, a *viewArena) VoyageInfo {
	life, crew, handoffs := p.Lifecycle, p.Crew, p.Handoffs
	p.Lifecycle, p.Crew, p.Handoffs = nil, nil, nil
	info := voyageInfo(p)
	if len(life) > 0 {
		info.Lifecycle = carve(&a.trans, len(life), a.ahead)
		for i, t := range life {
			info.Lifecycle[i] = Transition{Status: logbook.Status(t.Status), At: t.At, Who: t.Who, Reason: t.Reason}
		}
	}
	info.Crew, info.Handoffs = crew, handoffs
	return info
}

// logPrint is what the home index records of a voyage's log when its
// writer closed it: the stamps (inode number, size, modification and
// change times) of WATERMARK and of the last segment, the two files
// every change helm makes to the log writes, and of the log's directory,
// whose change time moves when a file is added to it, removed or
// renamed. The writers' records say no helm writer changed the voyage
// since; the stamps catch a change made by anything else that wrote,
// replaced, restored, truncated or removed either file, added a file
// (a segment after the last, which open reads) or replaced the whole
// events directory, so that List reads such a
// voyage itself and flags it. A change time cannot be set back by its
// owner (touch -d sets the others), so a stamp holds only for a file no
// one wrote, renamed or touched since. See "What a list trusts" in
// docs/design.md for what it cannot see.
type logPrint struct {
	stamps []namedStamp
	// old: a print of view version 5, of the directory ("") and every
	// file by size and modification time (no inode number, no change
	// time), compared as such.
	old bool
}

type namedStamp struct {
	name string
	fileStamp
}

// fileStamp is one file's stamp (without an inode number or a change
// time where the platform has none).
type fileStamp struct {
	ino          uint64
	size         int64
	mtime, ctime int64 // UnixNano
}

// fingerprint stamps the log in dir: its WATERMARK, its last segment,
// and the directory itself ("" names it), whose change time moves when a
// file in it is added, removed or renamed: a segment dropped in after the
// last one, which open reads, leaves the two files alone.
func fingerprint(dir string) (logPrint, bool) {
	var fp logPrint
	for _, name := range []string{"WATERMARK", filepath.Base(lastSegment(dir)), ""} {
		if filepath.Ext(name) != ".seg" && name != "WATERMARK" && name != "" {
			return logPrint{}, false // no segment: nothing to vouch for
		}
		st, ok := stampFile(filepath.Join(dir, name))
		if !ok {
			return logPrint{}, false
		}
		fp.stamps = append(fp.stamps, namedStamp{name: name, fileStamp: st})
	}
	return fp, true
}

// holds reports whether the log whose directory is rel below sd (ending
// in a slash) still has the stamps; rel is the caller's buffer, which it
// grows. A print of this version without the directory's stamp (an
// earlier build's) vouches for nothing.
func (fp logPrint) holds(sd *stampDir, rel *[]byte) bool {
	if len(fp.stamps) == 0 || !fp.old && !slices.ContainsFunc(fp.stamps, func(s namedStamp) bool { return s.name == "" }) {
		return false
	}
	dir := len(*rel)
	defer func() { *rel = (*rel)[:dir] }()
	for _, s := range fp.stamps {
		if strings.IndexByte(s.name, 0) >= 0 {
			return false // not a name: the kernel would read a shorter one
		}
		*rel = append(append((*rel)[:dir], s.name...), 0)
		st, ok := sd.stamp(*rel)
		switch {
		case !ok:
			return false
		case fp.old:
			if st.mtime != s.mtime || s.name != "" && st.size != s.size {
				return false
			}
		case st != s.fileStamp:
			return false
		}
	}
	return true
}

func appendFingerprint(b []byte, fp logPrint) []byte {
	b = binary.AppendUvarint(b, uint64(len(fp.stamps)))
	for _, s := range fp.stamps {
		b = appendStr(b, s.name)
		b = binary.AppendUvarint(b, s.ino)
		b = binary.AppendVarint(b, s.size)
		b = binary.AppendVarint(b, s.mtime)
		b = binary.AppendVarint(b, s.ctime)
	}
	return b
}

// viewVersion is the first byte of an encoded view: raise it when
// VoyageView changes (a view of another version is not trusted).
// Version 6 changed only the log's print that follows the view (see
// logPrint); a view of version 5 is read still, with its print.
const viewVersion = 6 // 1 had no parent, repository, last event, lifecycle or crew; 2 no worktree removal; 3 no session; 4 no current identity, handoffs, fork or salvage; 5 a print of every log file and the directory by size and modification time

// oldPrintVersion is the view version whose print stamped the log's
// directory and each of its files by size and modification time only.
const oldPrintVersion = 5

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

// decodeView decodes what encodeView and appendFingerprint encoded. The
// view's strings share b's memory (a listing decodes every voyage's view
// from one read of the index, and copying each string was a fifth of
// its time): b must not change afterwards. Every caller decodes a buffer
// it read or encoded for this, and drops it.
func decodeView(b []byte) (p projection.VoyageView, fp logPrint, err error) {
	return decodeViewIn(b, &viewArena{})
}

// viewArena is where decodeViewIn puts the slices of the views it
// decodes: a listing decodes a view per voyage, and a few small
// allocations for each were a tenth of its time. The print and the
// lifecycle are decoded into scratch that the next view reuses (a
// listing copies the lifecycle, and compares the print, before it
// decodes the next); the rest is carved from slabs that no view shares.
type viewArena struct {
	ahead    int // how many more elements a slab takes when it is renewed: 0 for one view
	stamps   []namedStamp
	life     []projection.Transition
	trans    []Transition
	strs     []string
	entries  []logbook.Entry
	handoffs []logbook.Handoff
}

// carve returns n elements of slab's free space, renewing slab (with
// ahead more) when it has too few.
func carve[T any](slab *[]T, n, ahead int) []T {
	if n > cap(*slab)-len(*slab) {
		*slab = make([]T, 0, n+ahead)
	}
	l := len(*slab)
	*slab = (*slab)[:l+n]
	return (*slab)[l : l+n : l+n]
}

// scratch returns buf resized to n, grown if needed.
func scratch[T any](buf *[]T, n int) []T {
	if n > cap(*buf) {
		*buf = make([]T, n)
	}
	*buf = (*buf)[:n]
	return *buf
}

// decodeViewIn is decodeView with the view's slices (and the print's)
// taken from a: see viewArena for how long each lives.
func decodeViewIn(b []byte, a *viewArena) (p projection.VoyageView, fp logPrint, err error) {
	if len(b) == 0 || b[0] != viewVersion && b[0] != oldPrintVersion {
		return p, logPrint{}, errView
	}
	old := b[0] == oldPrintVersion
	b = b[1:]
	str := func() string {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			b = nil
			return ""
		}
		var s string
		if n > 0 {
			s = unsafe.String(&b[k], int(n))
		}
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
		return p, logPrint{}, errView
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
		p.Lifecycle = scratch(&a.life, int(n))
		for i := range p.Lifecycle {
			t := &p.Lifecycle[i]
			t.Status = projection.Status(str())
			t.At = tm()
			t.Who.Identity, t.Who.Role, t.Who.Method, t.Reason = str(), str(), str(), str()
		}
	}
	if n := count(); n > 0 {
		p.Crew = carve(&a.strs, int(n), a.ahead)
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
		p.Handoffs = carve(&a.entries, int(n), a.ahead/8)
		hs := carve(&a.handoffs, int(n), a.ahead/8)
		for i := range p.Handoffs {
			e := &p.Handoffs[i]
			n, seq := uv(), uv()
			e.N, e.Seq, e.Kind = int(n), seq, logbook.EntryHandoff
			if uint64(e.N) != n {
				b = nil
			}
			e.At = tm()
			h := &hs[i]
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
		return p, logPrint{}, errView
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return p, logPrint{}, errView
	}
	b = b[k:]
	vint := func() int64 {
		n, k := binary.Varint(b)
		if k <= 0 {
			b = nil
			return 0
		}
		b = b[k:]
		return n
	}
	fp.stamps = scratch(&a.stamps, int(n))[:0]
	for range n {
		s := namedStamp{name: str()}
		if old {
			s.size, s.mtime = vint(), vint()
		} else {
			s.ino = uv()
			s.size, s.mtime, s.ctime = vint(), vint(), vint()
		}
		if b == nil {
			return p, logPrint{}, errView
		}
		fp.stamps = append(fp.stamps, s)
	}
	fp.old = old
	if len(b) != 0 {
		return p, logPrint{}, errView
	}
	return p, fp, nil
}
