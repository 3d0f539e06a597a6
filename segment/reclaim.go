package segment

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/helmlog/helm/chain"
)

// Reclaimed says what a Reclaim did.
type Reclaimed struct {
	Records  int   // records whose bytes were reclaimed
	Segments int   // segment files rewritten
	Bytes    int64 // bytes the segment files shrank by
	// Skipped counts records drop selected in format-1 segments, which are
	// never rewritten (their chain starts at 0, without the log's id).
	Skipped int
}

// Reclaim frees the bytes of the records drop selects: each becomes a stub
// that keeps its seq and its place in the hash chain (see "Reclaimed
// records" in format.go), and every segment holding one is rewritten
// whole and renamed over the old file. Scans report such a record with
// Reclaimed set and no Data. drop sees every record of the log that is
// not a stub already, in order, and must not retain its Data.
//
// Reclaim is a writer: it takes the writer lock (concurrent Commits wait
// and lose nothing) and honours ctx while it waits. The active segment,
// when it holds a record to drop, is sealed first and a new one started,
// so that only sealed segments are ever rewritten. A crash leaves each
// segment as it was or as rewritten, both of which check out to the same
// chain; a later Reclaim finishes the work. A log with damage is refused
// (a *CorruptionError): nothing is rewritten.
func (l *Log) Reclaim(ctx context.Context, drop func(Record) bool) (Reclaimed, error) {
	var out Reclaimed
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.isClosed() {
		return out, ErrClosed
	}
	if err := l.poisoned(); err != nil {
		return out, err
	}
	err := l.acquire(ctx, func() bool { return ctx.Err() != nil })
	if errors.Is(err, errLockWait) {
		return out, ctx.Err()
	}
	if err != nil {
		return out, err
	}
	defer l.release()
	// Segments are sealed and rewritten below: no fdatasync may run
	// meanwhile, and what earlier commits wrote is made durable first.
	if err := l.syncAll(); err != nil {
		return out, err
	}
	l.smu.Lock()
	defer l.smu.Unlock()
	segs, err := listSegments(l.fs, l.dir)
	if err != nil {
		return out, err
	}
	for _, s := range segs {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if err := l.reclaimSegment(s, drop, &out); err != nil {
			return out, err
		}
	}
	return out, nil
}

// reclaimSegment rewrites segment first with stubs for the records drop
// selects, if it holds any.
func (l *Log) reclaimSegment(first uint64, drop func(Record) bool, out *Reclaimed) error {
	path := filepath.Join(l.dir, segmentName(first))
	active := l.w.f != nil && l.w.first == first
	var (
		data []byte
		err  error
	)
	if active {
		data = make([]byte, l.w.p.off)
		err = readFull(l.w.f, data, 0)
	} else {
		data, err = l.readWhole(path)
	}
	if err != nil {
		return fmt.Errorf("segment: reclaim: read %s: %w", path, err)
	}
	hdr, reason := decodeFileHeader(data)
	if reason != "" {
		return &CorruptionError{Dir: l.dir, File: segmentName(first), Seq: first, Reason: reason, Hint: corruptHint}
	}
	type span struct {
		f      frame
		off, n int
		drop   bool
	}
	var (
		frames []span
		drops  int
		sum    = hdr.seed
	)
	for off := int(hdr.size()); off < len(data); {
		f, n, st := decodeFrame(data[off:], sum)
		if st != frameOK {
			return &CorruptionError{Dir: l.dir, File: segmentName(first), Offset: int64(off), Seq: first + uint64(len(frames)), Hint: corruptHint,
				Reason: st.String() + ": nothing was reclaimed; verify the log"}
		}
		d := !f.stub && drop(Record{Seq: f.seq, Data: f.data})
		if d {
			drops++
		}
		frames = append(frames, span{f: f, off: off, n: n, drop: d})
		sum, off = f.sum, off+n
	}
	if drops == 0 {
		return nil
	}
	if hdr.version < 2 {
		out.Skipped += drops
		return nil
	}
	if active {
		// Only sealed segments are rewritten: seal this one, and let the
		// log go on in a new one, chained from where this one ends.
		if err := l.seal(); err != nil {
			return l.setPoison(err)
		}
		if err := l.createSegment(l.w.p, l.writeVersion(), nil); err != nil {
			return l.setPoison(err)
		}
	}
	// A format-4 segment stays format 4, its stubs keeping the record's
	// BLAKE3 digest; a format-2 one becomes format 3 (stubs with a CRC).
	version := uint32(reclaimedVersion)
	if hdr.version >= 4 {
		version = hdr.version
	}
	buf := encodeFileHeader(fileHeader{version: version, first: hdr.first, seed: hdr.seed, id: hdr.id, link: hdr.link})
	for _, fr := range frames {
		if fr.drop {
			var digest *chain.Hash
			if version >= 4 {
				d := chain.Digest(fr.f.data)
				digest = &d
			}
			buf = appendStub(buf, fr.f, len(fr.f.data), crc32.Checksum(fr.f.data, castagnoli), digest)
		} else {
			buf = append(buf, data[fr.off:fr.off+fr.n]...)
		}
	}
	tmp := path + ".tmp"
	if err := l.fs.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("segment: reclaim: remove %s left by an earlier run: %w", tmp, err)
	}
	f, err := l.fs.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("segment: reclaim: create %s: %w", tmp, err)
	}
	n, err := f.WriteAt(buf, 0)
	if err == nil && n != len(buf) {
		err = fmt.Errorf("short write (%d of %d bytes)", n, len(buf))
	}
	if err == nil {
		err = l.publish(f, tmp, path)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		l.fs.Remove(tmp)
		return fmt.Errorf("segment: reclaim: rewrite %s: %w", path, err)
	}
	l.idx.forget(first)
	out.Records += drops
	out.Segments++
	out.Bytes += int64(len(data) - len(buf))
	return nil
}

// readWhole reads a sealed segment file.
func (l *Log) readWhole(path string) ([]byte, error) {
	f, err := l.fs.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data := make([]byte, fi.Size())
	if err := readFull(f, data, 0); err != nil {
		return nil, err
	}
	return data, nil
}
