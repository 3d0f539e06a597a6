package segment

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// segmentBytes encodes a format-2 segment starting at seq 1 holding one
// commit unit per element of units, and returns the offsets of the units
// and the position at the start.
func segmentBytes(units ...[]string) (b []byte, offs []int64, start pos) {
	seed := genesis(formatVersion, LogID{})
	b = encodeFileHeader(fileHeader{first: 1, seed: seed})
	sum, seq := seed, uint64(1)
	for _, u := range units {
		offs = append(offs, int64(len(b)))
		for i, d := range u {
			b, sum = appendFrame(b, seq, uint32(i), i == len(u)-1, sum, []byte(d))
			seq++
		}
	}
	return b, offs, pos{off: fileHeaderSize, next: 1, sum: seed}
}

// statCountFile counts fstats.
type statCountFile struct {
	File
	stats *int
}

func (f statCountFile) Stat() (os.FileInfo, error) {
	*f.stats++
	return f.File.Stat()
}

func openBytes(t *testing.T, b []byte) (File, string, *int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), segmentName(1))
	require.NoError(t, os.WriteFile(path, b, 0o600))
	f, err := OSFS{}.OpenFile(path, os.O_RDONLY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	stats := new(int)
	return statCountFile{File: f, stats: stats}, path, stats
}

func TestFrameScannerReportsWhereAndWhyItStopped(t *testing.T) {
	t.Parallel()
	units := [][]string{{"one"}, {"two", "three"}, {"four"}}
	full, offs, _ := segmentBytes(units...)
	end := int64(len(full))
	cat := func(parts ...[]byte) []byte { // a new array: the cases must not share full's
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	flip := func(off int64) []byte {
		b := cat(full)
		b[off] ^= 0x40
		return b
	}
	// A frame that checks out, chain included, but has the wrong seq.
	sum3 := binary.LittleEndian.Uint32(full[offs[1]+int64(frameSize(3))+20:])
	wrongSeq, _ := appendFrame(nil, 9, 0, true, sum3, []byte("four"))
	for _, tc := range []struct {
		name  string
		bytes []byte
		units int // complete units reported
		want  stop
	}{
		{"the file ends at a unit boundary", full, 3, stop{kind: stopEnd, off: end, size: end}},
		{"preallocated zeros follow", cat(full, make([]byte, 4096)), 3, stop{kind: stopFree, off: end, size: end + 4096}},
		{"a few zero bytes end the file", cat(full, make([]byte, 8)), 3, stop{kind: stopEnd, off: end, size: end + 8}},
		{"the file ends inside a unit", full[:offs[1]+int64(frameSize(3))], 1, stop{kind: stopFrame, off: offs[1] + int64(frameSize(3)), st: frameShort, size: offs[1] + int64(frameSize(3))}},
		{"the file ends inside a frame", full[:end-3], 2, stop{kind: stopFrame, off: offs[2], st: frameShort, size: end - 3}},
		{"a damaged frame header", flip(offs[1] + 9), 1, stop{kind: stopFrame, off: offs[1], st: frameHeader, size: end}},
		{"damaged data", flip(offs[2] + frameHeaderSize + 1), 2, stop{kind: stopFrame, off: offs[2], st: frameBody, size: end}},
		{"a zero header inside a unit", cat(full[:offs[1]+int64(frameSize(3))], make([]byte, 64)), 1, stop{kind: stopFrame, off: offs[1] + int64(frameSize(3)), st: frameZero, size: offs[1] + int64(frameSize(3)) + 64}},
		{"a frame out of sequence", cat(full[:offs[2]], wrongSeq), 2, stop{kind: stopFrame, off: offs[2], st: frameSeq, size: end}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, path, _ := openBytes(t, tc.bytes)
			_, _, p := segmentBytes()
			var s frameScanner
			var got []pos
			var seqs []uint64
			st, err := s.scan(context.Background(), f, path, p, func(recs []Record, end pos) error {
				for _, r := range recs {
					seqs = append(seqs, r.Seq)
				}
				got = append(got, end)
				return nil
			})
			require.NoError(t, err)
			assert.Equal(t, tc.want, st)
			require.Len(t, got, tc.units)
			for i, e := range got {
				if i+1 < len(offs) {
					assert.Equal(t, offs[i+1], e.off, "unit %d ends where the next starts", i)
				}
				assert.Equal(t, offs[i], e.unit)
			}
			n := 0
			for _, u := range units[:tc.units] {
				n += len(u)
			}
			assert.Len(t, seqs, n)
		})
	}
}

// The end of the log costs one small read and no fstat.
func TestFrameScannerProbesTheEndWithOneReadAndNoStat(t *testing.T) {
	t.Parallel()
	full, _, _ := segmentBytes([]string{"one"})
	for _, tc := range []struct {
		name  string
		bytes []byte
		want  stopKind
	}{
		{"free space", append(append([]byte(nil), full...), make([]byte, 4096)...), stopFree},
		{"end of file", full, stopEnd},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, path, stats := openBytes(t, tc.bytes)
			p := pos{off: int64(len(full)), next: 2}
			var s frameScanner
			st, err := s.scan(context.Background(), f, path, p, func([]Record, pos) error {
				t.Fatal("no unit there")
				return nil
			})
			require.NoError(t, err)
			assert.Equal(t, stop{kind: tc.want, off: int64(len(full)), size: -1}, st)
			assert.Zero(t, *stats, "no fstat")
		})
	}
}

// shrinkingFile says it is larger than it is: a writer cut it after the
// scan asked its size.
type shrinkingFile struct {
	File
	by int64
}

func (f shrinkingFile) Stat() (os.FileInfo, error) {
	fi, err := f.File.Stat()
	if err != nil {
		return nil, err
	}
	return sizedInfo{FileInfo: fi, size: fi.Size() + f.by}, nil
}

type sizedInfo struct {
	os.FileInfo
	size int64
}

func (s sizedInfo) Size() int64 { return s.size }

func TestFrameScannerReportsAFileThatShrankWhileRead(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 3*readProbe)
	full, offs, p := segmentBytes([]string{"one"}, []string{big})
	f, path, _ := openBytes(t, full[:offs[1]+readProbe]) // cut inside the big unit
	var s frameScanner
	st, err := s.scan(context.Background(), shrinkingFile{File: f, by: int64(len(full)) - offs[1] - readProbe}, path, p, func([]Record, pos) error { return nil })
	require.NoError(t, err)
	assert.Equal(t, stopShrank, st.kind)
}

func TestFrameScannerPassesOnTheCallersError(t *testing.T) {
	t.Parallel()
	full, _, p := segmentBytes([]string{"one"}, []string{"two"})
	f, path, _ := openBytes(t, full)
	boom := errors.New("enough")
	var s frameScanner
	_, err := s.scan(context.Background(), f, path, p, func([]Record, pos) error { return boom })
	assert.Same(t, boom, err)
}

// judge applies each caller's rules to the same findings.
func TestJudgeAppliesEachCallersRules(t *testing.T) {
	t.Parallel()
	const (
		at  = 1000 // the last complete unit ends here; the next record is seq 5
		bad = 1040 // where a frame failed
	)
	reader, recovery, writer := readerRules, recoveryRules(watermark{}, false), catchUpRules(watermark{}, false)
	acked := recoveryRules(watermark{last: 5}, false)
	failed := func(st decodeStatus, tail tailFacts) finding {
		tail.end = 4096
		return finding{stop: stop{kind: stopFrame, off: bad, st: st, size: 8192}, tail: tail}
	}
	const (
		end = iota
		tornTail
		damage
		ioError
	)
	for _, tc := range []struct {
		name   string
		fd     finding
		r      rules
		want   int
		reason string
	}{
		{"the end of the file", finding{stop: stop{kind: stopEnd, off: at}}, recovery, end, ""},
		{"free space", finding{stop: stop{kind: stopFree, off: at}}, recovery, end, ""},
		{"a file that shrank", finding{stop: stop{kind: stopShrank, off: at}}, reader, ioError, "shrank while reading"},
		{"out of sequence, for a reader", failed(frameSeq, tailFacts{}), reader, damage, "out of sequence"},
		{"valid data after a failure, for a reader", failed(frameHeader, tailFacts{follows: true, followSeq: 9, followOff: 2000}), reader, damage, "a valid record (seq 9) follows at offset 2000"},
		{"a damaged header, for a reader: a write in progress", failed(frameHeader, tailFacts{}), reader, tornTail, ""},
		{"a damaged header, for recovery", failed(frameHeader, tailFacts{}), recovery, damage, "in the last record"},
		{"a damaged header, for the writer", failed(frameHeader, tailFacts{}), writer, damage, "in the last record"},
		{"damaged data ending in zeroed sectors, for recovery", failed(frameBody, tailFacts{sectors: true}), recovery, tornTail, ""},
		{"the file ends inside a unit, for recovery", failed(frameShort, tailFacts{}), recovery, tornTail, ""},
		{"a zero header inside a unit, for recovery", failed(frameZero, tailFacts{}), recovery, tornTail, ""},
		{"the file ends inside an acknowledged unit", failed(frameShort, tailFacts{}), acked, damage, "acknowledged (the watermark is at seq 5)"},
		{"an acknowledged unit, for a reader that knows no watermark", failed(frameShort, tailFacts{}), reader, tornTail, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &cursor{dir: "dir", name: segmentName(1), file: filepath.Join("dir", segmentName(1)), p: pos{off: at, next: 5}}
			tt, err := c.judge(tc.fd, tc.r)
			var ce *CorruptionError
			switch tc.want {
			case end:
				assert.NoError(t, err)
				assert.Nil(t, tt)
			case tornTail:
				require.NoError(t, err)
				require.NotNil(t, tt)
				assert.Equal(t, &torn{off: at, size: 4096, seq: 5, reason: tc.fd.stop.st.String() + " at offset 1040"}, tt)
			case damage:
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, uint64(5), ce.Seq)
				assert.Equal(t, int64(bad), ce.Offset)
				assert.Contains(t, ce.Reason, tc.reason)
				assert.Nil(t, tt)
			case ioError:
				require.Error(t, err)
				assert.False(t, errors.As(err, &ce), "not damage")
				assert.Contains(t, err.Error(), tc.reason)
			}
		})
	}
}

// flakyFS damages the bytes read at one offset of the segment files for
// its first reads there: what a reader sees of a unit a writer is
// writing at that moment, or, read after read, damage on disk.
type flakyFS struct {
	OSFS
	mu      sync.Mutex
	off     int64 // the damaged byte
	damaged int   // reads that still see it damaged (-1: all)
	probes  int   // first reads of a scan (readProbe bytes)
}

type flakyFile struct {
	File
	fs   *flakyFS
	name string
}

func (f *flakyFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	file, err := f.OSFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &flakyFile{File: file, fs: f, name: name}, nil
}

func (f *flakyFile) ReadAt(b []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(b, off)
	if !strings.HasSuffix(f.name, segmentExt) {
		return n, err
	}
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if len(b) == readProbe {
		f.fs.probes++
	}
	if x := f.fs.off - off; x >= 0 && x < int64(n) && f.fs.damaged != 0 {
		b[x] ^= 0xff
		if f.fs.damaged > 0 {
			f.fs.damaged--
		}
	}
	return n, err
}

// A reader holds no lock: what looks like damage is read again, and is
// reported only once two reads find the same.
func TestReaderReadsAgainWhatLooksDamagedUntilTwoReadsAgree(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		damaged int
		wantErr bool
	}{
		{"damage seen once is a write that was in progress", 1, false},
		{"damage seen twice is damage", -1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			w := openT(t, dir, &Options{NoSync: true})
			for i := 0; i < 4; i++ {
				_, err := w.Append(ctx, payload(i, 100))
				require.NoError(t, err)
			}
			// Damage the header of the second unit: valid units follow.
			ffs := &flakyFS{off: fileHeaderSize + int64(frameSize(100)) + 10, damaged: tc.damaged}
			var seqs []uint64
			err := scanDir(ctx, ffs, dir, 1, nil, func(r Record) error {
				seqs = append(seqs, r.Seq)
				return nil
			})
			assert.Equal(t, 2, ffs.probes, "read twice")
			if !tc.wantErr {
				require.NoError(t, err)
				assert.Equal(t, []uint64{1, 2, 3, 4}, seqs)
				return
			}
			var ce *CorruptionError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, uint64(2), ce.Seq)
			assert.Equal(t, []uint64{1}, seqs, "every record before the damage, once")
		})
	}
}

// The writer holds the lock while it reads: nothing changes under it, so
// nothing is read twice, and damage is reported at once.
func TestWriterCatchUpDoesNotReadAgain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	other := openT(t, dir, &Options{NoSync: true})
	_, err := other.Append(ctx, payload(0, 100))
	require.NoError(t, err)
	ffs := &flakyFS{off: -1}
	w := openT(t, dir, &Options{NoSync: true, FS: ffs})
	_, err = w.Append(ctx, payload(1, 100)) // becomes a writer
	require.NoError(t, err)
	_, err = other.Append(ctx, payload(2, 100), payload(3, 100))
	require.NoError(t, err)

	ffs.mu.Lock()
	ffs.off, ffs.damaged, ffs.probes = fileHeaderSize+int64(2*frameSize(100))+10, -1, 0
	ffs.mu.Unlock()
	_, err = w.Append(ctx, payload(4, 100))
	var ce *CorruptionError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, uint64(3), ce.Seq)
	assert.Equal(t, 1, ffs.probes, "read once")
}
