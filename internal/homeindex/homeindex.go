// Package homeindex keeps a home's index: what each voyage's writers left
// it as, so that listing a home reads one file instead of every voyage's.
//
// The index is a journal of small records, appended by writers:
//
//	open(token, id)             a writer is about to change voyage id;
//	                            appended and made durable (fdatasync)
//	                            before its first change
//	close(token, id, seq, view) that writer is done, and the voyage was
//	                            this view at seq (not synced)
//	stale(token, id)            that writer is done, without a view
//
// A voyage's view is trusted only when every writer that opened it has
// closed it: a writer that crashed (kill -9, power loss), or one still
// writing, leaves an open record without a close, and a reader then reads
// that voyage itself. So a record lost to a crash costs a slower list,
// never a wrong one: every change is preceded by a durable open. Of the
// closes, the view with the highest seq wins (each writer brings its views
// up to date before it closes); a stale close distrusts the voyage until a
// writer that opened after it closes with a view.
//
// File layout: an 8-byte magic, the file's size when it was last written
// whole (u64: compaction is due when it has doubled), then records, each
//
//	u32 length of payload | u32 CRC-32C of payload | payload | u32 length again
//
// (the trailing length lets a writer check the last record without
// reading the file). A record that does not check out makes the whole
// index untrusted: Read returns ErrDamaged and readers read every voyage;
// the next writer that notices (the last record is bad, or a compaction
// reads the damage) rebuilds it.
//
// Writers append under a shared lock of index.lock; compaction (rewriting
// the journal as one record per voyage when it has grown) holds it
// exclusively and renames the new file, made durable, over the old.
package homeindex

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"time"
	"unsafe"

	"github.com/helmlog/helm/internal/durable"
)

// Name and LockName are the index's files in the home.
const (
	Name        = "index"
	LockName    = "index.lock"
	WritersName = "index.writers"
)

const magic = "HELMIDX1"

// headerSize is the magic and the size at the last rewrite.
const headerSize = len(magic) + 8

func header(base int) []byte {
	return binary.LittleEndian.AppendUint64([]byte(magic), uint64(base))
}

// ErrDamaged: a record of the index does not check out.
var ErrDamaged = errors.New("home index damaged")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Token identifies one writer's session.
type Token [16]byte

// NewToken returns a random token.
func NewToken() Token {
	var t Token
	rand.Read(t[:])
	return t
}

const (
	kindOpen  = 'o'
	kindClose = 'c'
	kindStale = 's'
)

// record is one decoded record.
type record struct {
	kind  byte
	token Token
	id    string
	seq   uint64
	view  []byte
}

func appendRecord(b []byte, r record) []byte {
	var p []byte
	p = append(p, r.kind)
	p = append(p, r.token[:]...)
	p = binary.AppendUvarint(p, uint64(len(r.id)))
	p = append(p, r.id...)
	if r.kind == kindClose {
		p = binary.AppendUvarint(p, r.seq)
		p = append(p, r.view...)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(p)))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(p, castagnoli))
	b = append(b, p...)
	return binary.LittleEndian.AppendUint32(b, uint32(len(p)))
}

const recordOverhead = 12

// decodeRecord decodes the record at the start of b and returns its size.
func decodeRecord(b []byte) (record, int, error) {
	if len(b) < recordOverhead {
		return record{}, 0, ErrDamaged
	}
	n := int(binary.LittleEndian.Uint32(b))
	if n > len(b)-recordOverhead || binary.LittleEndian.Uint32(b[8+n:]) != uint32(n) {
		return record{}, 0, ErrDamaged
	}
	p := b[8 : 8+n]
	if crc32.Checksum(p, castagnoli) != binary.LittleEndian.Uint32(b[4:]) {
		return record{}, 0, ErrDamaged
	}
	var r record
	if len(p) < 1+len(r.token) {
		return record{}, 0, ErrDamaged
	}
	r.kind = p[0]
	copy(r.token[:], p[1:])
	p = p[1+len(r.token):]
	l, k := binary.Uvarint(p)
	if k <= 0 || l > uint64(len(p)-k) {
		return record{}, 0, ErrDamaged
	}
	if l > 0 {
		// The id shares b's memory: every caller decodes a buffer it
		// read and does not change (a listing decodes every record of
		// the index; copying each id was a third of that).
		r.id = unsafe.String(&p[k], int(l))
	}
	p = p[k+int(l):]
	switch r.kind {
	case kindOpen, kindStale:
		if len(p) != 0 {
			return record{}, 0, ErrDamaged
		}
	case kindClose:
		seq, k := binary.Uvarint(p)
		if k <= 0 {
			return record{}, 0, ErrDamaged
		}
		r.seq, r.view = seq, p[k:]
	default:
		return record{}, 0, ErrDamaged
	}
	return r, n + recordOverhead, nil
}

// voyage is what the records say of one voyage.
type voyage struct {
	id      string
	open    []opened // writers that opened and have not closed
	staleAt int64    // where the last stale close is (-1: none)
	seq     uint64   // the trusted view's seq
	view    []byte   // the trusted view (nil: none)
	highest uint64   // the highest seq any close recorded (see Seqs)
}

// opened is a writer's open record: its token, and where it is.
type opened struct {
	token Token
	at    int64
}

// closeOpen removes t's open record and returns where it was (ok false:
// none).
func (v *voyage) closeOpen(t Token) (at int64, ok bool) {
	for i, o := range v.open {
		if o.token == t {
			v.open = append(v.open[:i], v.open[i+1:]...)
			return o.at, true
		}
	}
	return 0, false
}

// fold reads the records of data (the whole file) into what they say of
// each voyage, in the order the index first names them. A voyage's
// writers are few at a time: their open records are a short list.
func fold(data []byte) ([]voyage, map[string]int, error) {
	if len(data) < headerSize || string(data[:len(magic)]) != magic {
		return nil, nil, fmt.Errorf("%w: not a helm home index", ErrDamaged)
	}
	// A compacted index holds a record of a few hundred bytes per
	// voyage: size the map and the list for that, rather than grow them
	// record by record.
	hint := len(data) / 400
	at := make(map[string]int, hint)
	out := make([]voyage, 0, hint)
	var opens []opened // where the first open record of each voyage goes: one slab, not a slice each
	for off := int64(headerSize); off < int64(len(data)); {
		r, n, err := decodeRecord(data[off:])
		if err != nil {
			return nil, nil, fmt.Errorf("%w: the record at offset %d does not check out", err, off)
		}
		i, ok := at[r.id]
		if !ok {
			i = len(out)
			at[r.id] = i
			out = append(out, voyage{id: r.id, staleAt: -1})
		}
		v := &out[i]
		switch r.kind {
		case kindOpen:
			if v.open == nil {
				if len(opens) == cap(opens) {
					opens = make([]opened, 0, max(hint, 64))
				}
				n := len(opens)
				opens = opens[:n+1]
				v.open = opens[n : n : n+1] // a second open grows it elsewhere
			}
			v.open = append(v.open, opened{token: r.token, at: off})
		case kindStale:
			v.closeOpen(r.token)
			v.staleAt, v.view = off, nil
		case kindClose:
			v.highest = max(v.highest, r.seq)
			at, ok := v.closeOpen(r.token)
			if ok && at > v.staleAt && (v.view == nil || r.seq >= v.seq) {
				v.seq, v.view = r.seq, r.view
			}
		}
		off += int64(n)
	}
	return out, at, nil
}

// Read returns the trusted view of each voyage the index at path knows and
// whose writers have all closed it. A missing index reads as empty, with
// an error matching fs.ErrNotExist; a damaged one is ErrDamaged: nothing
// in it is trusted.
func Read(path string) (map[string][]byte, error) {
	views, _, err := Views(path)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(views))
	for _, v := range views {
		if v.View != nil {
			out[v.ID] = v.View
		}
	}
	return out, nil
}

// Entry is what the index says of a voyage, as Views returns it: its
// trusted view, or nil.
type Entry struct {
	ID   string
	View []byte
}

// Views is Read as a list of every voyage the index names, in the order
// it first names them (View nil for a voyage it does not vouch for), and
// where each id is in it: what listing a home reads, without a map of
// every view.
func Views(path string) ([]Entry, map[string]int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	voyages, at, err := fold(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	out := make([]Entry, len(voyages))
	for i := range voyages {
		v := &voyages[i]
		out[i].ID = v.id
		if len(v.open) == 0 && v.view != nil {
			out[i].View = v.view
		}
	}
	return out, at, nil
}

// Seqs returns, for each voyage the index at path names, the highest seq
// that any writer's close recorded for it, whether or not writers opened
// it since: how far its log went, as the index saw it. A writer closes at
// a seq its log had made durable, so a log that ends below it was rolled
// back or truncated (the caller judges; the index only says). Records
// after one that does not check out are not read: what precedes it was
// written whole, and still says how far the log went. A missing index
// reads as none, with an error matching fs.ErrNotExist.
func Seqs(path string) (map[string]uint64, error) {
	out := map[string]uint64{}
	err := closes(path, func(id string, seq uint64) {
		if seq > out[id] {
			out[id] = seq
		}
	})
	return out, err
}

// SeqOf is Seqs for one voyage: the highest seq a writer's close recorded
// for id, and whether the index names it. It reads the index as Seqs
// does, without a map of every voyage: opening one voyage of a home of
// many costs a read of the index, not a map of the home.
func SeqOf(path, id string) (uint64, bool, error) {
	var high uint64
	found := false
	err := closes(path, func(rid string, seq uint64) {
		if rid == id {
			high, found = max(high, seq), true
		}
	})
	return high, found, err
}

// closes calls f with the voyage and seq of every close record of the
// index at path, up to the first record that does not check out.
func closes(path string, f func(id string, seq uint64)) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if len(data) < headerSize || string(data[:len(magic)]) != magic {
		return fmt.Errorf("%s: %w: not a helm home index", path, ErrDamaged)
	}
	for off := headerSize; off < len(data); {
		r, n, err := decodeRecord(data[off:])
		if err != nil {
			return fmt.Errorf("%s: %w: the record at offset %d does not check out", path, err, off)
		}
		if r.kind == kindClose {
			f(r.id, r.seq)
		}
		off += n
	}
	return nil
}

// Writer appends one writer session's records to a home's index. It
// holds index.writers shared from Open to Close: the index is rebuilt
// from the voyages (after damage, when what it said of writers at work is
// lost) only when no writer session is open, so no writer's changes can
// escape a rebuilt index.
type Writer struct {
	dir     string
	noSync  bool
	token   Token
	session io.Closer
}

// Rebuild is how the index is made anew when damage is found: it returns
// the view and seq of every voyage, read from the voyages themselves.
type Rebuild func() (map[string]View, error)

// View is a voyage's view as the index stores it.
type View struct {
	Seq  uint64
	Data []byte
}

// Open records, durably, that a writer is about to change voyage id, in
// the index of the home dir (created if missing). When the index's last
// record does not check out (a crash tore it), the index is rebuilt
// first with rebuild, if no other writer session is open.
func Open(dir, id string, noSync bool, rebuild Rebuild) (*Writer, error) {
	w := &Writer{dir: dir, noSync: noSync, token: NewToken()}
	if w.tailDamaged() {
		if err := w.rebuild(rebuild); err != nil {
			return nil, err
		}
	}
	session, err := lockFile(filepath.Join(dir, WritersName), false, true)
	if err != nil {
		return nil, err
	}
	w.session = session
	if err := w.append(record{kind: kindOpen, token: w.token, id: id}, !noSync); err != nil {
		session.Close()
		return nil, err
	}
	return w, nil
}

// Close records that the writer is done with voyage id, which was view at
// seq (view nil: unknown, a stale close), and ends the session. Not
// synced: a close lost to a crash leaves the voyage untrusted.
func (w *Writer) Close(id string, seq uint64, view []byte) error {
	r := record{kind: kindClose, token: w.token, id: id, seq: seq, view: view}
	if view == nil {
		r = record{kind: kindStale, token: w.token, id: id}
	}
	err := w.append(r, false)
	w.session.Close()
	return err
}

func (w *Writer) path() string { return filepath.Join(w.dir, Name) }

// append appends r under index.lock shared; sync makes it durable.
func (w *Writer) append(r record, sync bool) error {
	lk, err := lockFile(filepath.Join(w.dir, LockName), false, true)
	if err != nil {
		return err
	}
	defer lk.Close()
	f, err := os.OpenFile(w.path(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("home index: %w", err)
	}
	defer f.Close()
	b := appendRecord(nil, r)
	if st, err := f.Stat(); err == nil && st.Size() == 0 {
		b = append(header(headerSize), b...)
	}
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("home index: append to %s: %w", w.path(), err)
	}
	if sync {
		if err := durable.Datasync(f); err != nil {
			return fmt.Errorf("home index: fdatasync %s: %w", w.path(), err)
		}
	}
	return nil
}

// tailDamaged reports whether the index's last record does not check out
// (a write torn by a crash): two small reads.
func (w *Writer) tailDamaged() bool {
	f, err := os.Open(w.path())
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() <= int64(headerSize) {
		return err == nil && st.Size() > 0 && st.Size() < int64(headerSize)
	}
	var tail [4]byte
	if _, err := f.ReadAt(tail[:], st.Size()-4); err != nil {
		return true
	}
	n := int64(binary.LittleEndian.Uint32(tail[:])) + recordOverhead
	if n > st.Size()-int64(headerSize) {
		return true
	}
	rec := make([]byte, n)
	if _, err := f.ReadAt(rec, st.Size()-n); err != nil {
		return true
	}
	_, _, err = decodeRecord(rec)
	return err != nil
}

// CompactAbove is the size below which the index is never compacted.
// (Tests pass their own to maybeCompact.)
const CompactAbove int64 = 1 << 20

// MaybeCompact rewrites the index as one record per voyage (and the open
// records of writers still at work) once it is past CompactAbove and
// twice its size when it was last rewritten (its header says), and holds
// more than twice what it says; a damaged one is rebuilt with rebuild, if
// no writer session is open. It is a writer's chore, after its Close: a
// stat and a small read, unless compaction is due.
func MaybeCompact(dir string, noSync bool, rebuild Rebuild) error {
	return maybeCompact(dir, noSync, rebuild, CompactAbove)
}

// maybeCompact is MaybeCompact with above in place of CompactAbove.
func maybeCompact(dir string, noSync bool, rebuild Rebuild, above int64) error {
	path := filepath.Join(dir, Name)
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	var h [headerSize]byte
	_, rerr := f.ReadAt(h[:], 0)
	st, serr := f.Stat()
	f.Close()
	if serr != nil || st.Size() < above {
		return nil
	}
	if rerr == nil && string(h[:len(magic)]) == magic && st.Size() < 2*int64(binary.LittleEndian.Uint64(h[len(magic):])) {
		return nil
	}
	w := &Writer{dir: dir, noSync: noSync}
	lk, err := lockFile(filepath.Join(dir, LockName), true, true)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(w.path())
	if err != nil {
		lk.Close()
		return fmt.Errorf("home index: %w", err)
	}
	voyages, _, err := fold(data)
	if err != nil {
		lk.Close()
		return w.rebuild(rebuild)
	}
	defer lk.Close()
	size := headerSize
	for _, v := range voyages {
		size += 2*(recordOverhead+len(v.id)+32) + len(v.view)
		size += len(v.open) * (recordOverhead + len(v.id) + 20)
	}
	if len(data) < 2*size {
		// Mostly live records: not worth rewriting. The header's base
		// becomes this size, so that the index is read again for this
		// only once it has doubled: a home of n voyages whose writers
		// close one after another costs O(n) reads in all, not O(n²).
		// The base only decides when to look; a torn write of it makes a
		// look early or late, no more.
		return w.setBase(len(data))
	}
	out := header(0)
	for _, v := range voyages {
		id := v.id
		if v.highest > v.seq || v.view == nil && v.highest > 0 {
			// A close whose view is no longer trusted still says how far
			// the log went (Seqs): it is kept, as a close of no view that
			// a stale close follows, so that no view is trusted for it.
			t := NewToken()
			out = appendRecord(out, record{kind: kindOpen, token: t, id: id})
			out = appendRecord(out, record{kind: kindClose, token: t, id: id, seq: v.highest})
			out = appendRecord(out, record{kind: kindStale, id: id})
		}
		if v.view != nil {
			t := NewToken()
			out = appendRecord(out, record{kind: kindOpen, token: t, id: id})
			out = appendRecord(out, record{kind: kindClose, token: t, id: id, seq: v.seq, view: v.view})
		} else if v.staleAt >= 0 {
			out = appendRecord(out, record{kind: kindStale, id: id})
		}
		for _, o := range v.open { // writers at work keep their tokens
			out = appendRecord(out, record{kind: kindOpen, token: o.token, id: id})
		}
	}
	return w.replace(out)
}

// setBase writes size as the index's size at its last rewrite, in its
// header. The caller holds the index lock exclusively.
func (w *Writer) setBase(size int) error {
	f, err := os.OpenFile(w.path(), os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("home index: %w", err)
	}
	_, err = f.WriteAt(binary.LittleEndian.AppendUint64(nil, uint64(size)), int64(len(magic)))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("home index %s: write its header: %w", w.path(), err)
	}
	return nil
}

// rebuild makes the index anew from the voyages, when no writer session is
// open (otherwise it leaves the index as it is: readers distrust a damaged
// index, and a later writer rebuilds it).
func (w *Writer) rebuild(rebuild Rebuild) error {
	writers, err := lockFile(filepath.Join(w.dir, WritersName), true, false)
	if err != nil || writers == nil {
		return err
	}
	defer writers.Close()
	lk, err := lockFile(filepath.Join(w.dir, LockName), true, true)
	if err != nil {
		return err
	}
	defer lk.Close()
	views, err := rebuild()
	if err != nil {
		return fmt.Errorf("home index: rebuild: %w", err)
	}
	out := header(0)
	for id, v := range views {
		t := NewToken()
		out = appendRecord(out, record{kind: kindOpen, token: t, id: id})
		out = appendRecord(out, record{kind: kindClose, token: t, id: id, seq: v.Seq, view: v.Data})
	}
	return w.replace(out)
}

// replace writes data as the new index (exclusive lock held): durable
// before any writer appends to it.
func (w *Writer) replace(data []byte) error {
	binary.LittleEndian.PutUint64(data[len(magic):], uint64(len(data)))
	tmp := w.path() + ".tmp"
	if err := writeFileSync(tmp, data, w.noSync); err != nil {
		return fmt.Errorf("home index: %w", err)
	}
	if err := os.Rename(tmp, w.path()); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("home index: %w", err)
	}
	if !w.noSync {
		return durable.SyncDir(durable.OSFS{}, w.dir)
	}
	return nil
}

func writeFileSync(path string, data []byte, noSync bool) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && !noSync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// lockFile takes the lock of the file at path, shared or exclusive. With
// wait it polls until it has it (every holder holds it briefly, or, for
// index.writers shared, only while a rebuild runs); without, it returns
// nil when another holds it.
func lockFile(path string, exclusive, wait bool) (io.Closer, error) {
	lk, err := durable.OpenLock(path)
	if err != nil {
		return nil, fmt.Errorf("home index: %w", err)
	}
	delay := 50 * time.Microsecond
	for {
		var ok bool
		if exclusive {
			ok, err = lk.TryLock()
		} else {
			ok, err = lk.TryRLock()
		}
		if err != nil {
			lk.Close()
			return nil, fmt.Errorf("home index: lock %s: %w", path, err)
		}
		if ok {
			return lk, nil // closing it releases the lock
		}
		if !wait {
			lk.Close()
			return nil, nil
		}
		time.Sleep(delay)
		delay = min(2*delay, 5*time.Millisecond)
	}
}
