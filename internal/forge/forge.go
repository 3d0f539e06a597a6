// Package forge is the adversary of helm's tamper tests: it knows the
// segment format (segment/format.go) and rewrites an event log the way a
// recorded agent with write access to the home could — editing a
// record's bytes or dropping the last units — then recomputes every
// checksum the format keeps (frame header CRCs, the CRC32C chain of frame
// sums, the segments' seeds and WATERMARK's slots), so that the log
// checks out on its own. Only a witness held outside the home can then
// tell.
//
// It writes format 2 (and reads format-2 frames in format-3 segments).
// Everything that knows the bytes is in this one file, so that a format
// that adds to a WATERMARK slot (a BLAKE3 link) extends it here.
package forge

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

const (
	headerSize      = 72
	frameHeaderSize = 24
	lastInUnit      = 1 << 31
	watermarkName   = "WATERMARK"
	watermarkSlot   = 512
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// frame is one frame of a segment file as found: where, and its fields.
type frame struct {
	file   string
	offset int
	seq    uint64
	idx    uint32
	data   []byte
}

// segmentFile is one segment file's bytes.
type segmentFile struct {
	path string
	b    []byte
}

// Log is an event log directory read whole into memory.
type Log struct {
	dir    string
	segs   []*segmentFile
	frames []frame
}

// Open reads the event log in dir (a voyage's events directory).
func Open(dir string) (*Log, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.seg"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	l := &Log{dir: dir}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		if len(b) < headerSize || string(b[:8]) != "HELMSEG\n" {
			return nil, fmt.Errorf("forge: %s is no format-2 segment", name)
		}
		if v := binary.LittleEndian.Uint32(b[8:]); v != 2 && v != 3 {
			return nil, fmt.Errorf("forge: %s is format %d; forge writes format 2", name, v)
		}
		s := &segmentFile{path: name, b: b}
		l.segs = append(l.segs, s)
		for off := headerSize; off+frameHeaderSize <= len(b); {
			n := int(binary.LittleEndian.Uint32(b[off+4:]))
			seq := binary.LittleEndian.Uint64(b[off+8:])
			if n == 0 && seq == 0 {
				break // preallocated zeros: the end of the log
			}
			data := b[off+frameHeaderSize : off+frameHeaderSize+n]
			l.frames = append(l.frames, frame{file: name, offset: off, seq: seq, idx: binary.LittleEndian.Uint32(b[off+16:]), data: data})
			off += frameHeaderSize + (n+7)&^7
		}
	}
	if len(l.frames) == 0 {
		return nil, fmt.Errorf("forge: no frames in %s", dir)
	}
	return l, nil
}

// LastSeq is the seq of the log's last record.
func (l *Log) LastSeq() uint64 { return l.frames[len(l.frames)-1].seq }

// Replace replaces the first occurrence of old in any record with new, of
// the same length (the frame keeps its size), and reports the record's seq.
func (l *Log) Replace(old, new string) (uint64, error) {
	if len(old) != len(new) {
		return 0, fmt.Errorf("forge: %q and %q differ in length", old, new)
	}
	for _, f := range l.frames {
		if i := bytes.Index(f.data, []byte(old)); i >= 0 {
			copy(f.data[i:], new)
			return f.seq, nil
		}
	}
	return 0, fmt.Errorf("forge: no record holds %q", old)
}

// DropUnits drops the log's last n commit units: their frames are zeroed,
// as preallocated space after the end of the log is.
func (l *Log) DropUnits(n int) error {
	cut := len(l.frames)
	for ; n > 0; n-- {
		cut-- // the last frame of the unit to drop
		for cut > 0 && l.frames[cut-1].idx&lastInUnit == 0 {
			cut--
		}
		if cut <= 0 {
			return fmt.Errorf("forge: the log has fewer units than that")
		}
	}
	for _, f := range l.frames[cut:] {
		s := l.seg(f.file)
		clear(s.b[f.offset : f.offset+frameHeaderSize+(len(f.data)+7)&^7])
	}
	l.frames = l.frames[:cut]
	return nil
}

func (l *Log) seg(path string) *segmentFile {
	for _, s := range l.segs {
		if s.path == path {
			return s
		}
	}
	panic("forge: no segment " + path)
}

// Write recomputes every checksum — each segment's seed and header CRC,
// each frame's sum (the CRC32C chain) and header CRC, and both WATERMARK
// slots (at the log's last seq) — and writes the log back.
func (l *Log) Write() error {
	first := l.segs[0].b
	sum := crc32.Checksum(first[32:64], castagnoli) // the seed: CRC32C(log id)
	var last frame
	var lastSum uint32
	for _, s := range l.segs {
		binary.LittleEndian.PutUint32(s.b[24:], sum)
		binary.LittleEndian.PutUint32(s.b[68:], crc32.Checksum(s.b[:68], castagnoli))
		for _, f := range l.frames {
			if f.file != s.path {
				continue
			}
			if f.idx&(1<<30) != 0 {
				return fmt.Errorf("forge: record %d is a stub (format 3); forge writes format 2", f.seq)
			}
			sum = crc32.Update(sum, castagnoli, f.data)
			h := s.b[f.offset:]
			binary.LittleEndian.PutUint32(h[20:], sum)
			binary.LittleEndian.PutUint32(h[0:], crc32.Checksum(h[4:24], castagnoli))
			last, lastSum = f, sum
		}
	}
	for _, s := range l.segs {
		if err := os.WriteFile(s.path, s.b, 0o600); err != nil {
			return err
		}
	}
	var slot [32]byte
	copy(slot[:], "HELMWMK\n")
	binary.LittleEndian.PutUint64(slot[8:], last.seq)
	binary.LittleEndian.PutUint64(slot[16:], firstSeq(last.file))
	binary.LittleEndian.PutUint32(slot[24:], lastSum)
	binary.LittleEndian.PutUint32(slot[28:], crc32.Checksum(slot[:28], castagnoli))
	wm := make([]byte, 2*watermarkSlot)
	copy(wm, slot[:])
	copy(wm[watermarkSlot:], slot[:])
	return os.WriteFile(filepath.Join(l.dir, watermarkName), wm, 0o600)
}

// firstSeq is the first seq of a segment, from its name.
func firstSeq(path string) uint64 {
	var n uint64
	fmt.Sscan(strings.TrimLeft(strings.TrimSuffix(filepath.Base(path), ".seg"), "0"), &n)
	return n
}
