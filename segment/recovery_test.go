package segment

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// builtLog is what buildLog wrote.
type builtLog struct {
	recs    [][]byte
	lastSeg string // the name of the last segment
	unitOff int64  // where the final unit starts in it
	dataEnd int64  // where its data ends (the file is preallocated beyond)
	// preBatchWatermark is the log's WATERMARK before the final batch.
	preBatchWatermark []byte
}

// buildLog writes a multi-segment log whose final unit is a batch of three
// records.
//
// The final batch was acknowledged: tests that tear it, as a crash during
// its write would, put the watermark back with crashBeforeLastBatch.
func buildLog(t *testing.T, dir string) builtLog {
	var recs [][]byte
	l, err := Open(ctx, dir, &Options{SegmentSize: 700, NoSync: true})
	require.NoError(t, err)
	// Left open, as a crash leaves a log: Close would trim the
	// preallocated tail these tests are about.
	t.Cleanup(func() { l.Close() })
	for i := 0; i < 20; i++ {
		d := payload(i, 30+i)
		_, err := l.Append(ctx, d)
		require.NoError(t, err)
		recs = append(recs, d)
	}
	l.mu.Lock()
	unitOff, lastSeg := l.w.p.off, l.w.name
	l.mu.Unlock()
	wm, err := os.ReadFile(filepath.Join(dir, watermarkName))
	require.NoError(t, err)
	batch := [][]byte{payload(100, 40), payload(101, 5), payload(102, 60)}
	_, err = l.Append(ctx, batch...)
	require.NoError(t, err)
	l.mu.Lock()
	require.Equal(t, lastSeg, l.w.name, "test setup: final batch must share the last segment")
	dataEnd := l.w.p.off
	l.mu.Unlock()
	return builtLog{recs: append(recs, batch...), lastSeg: lastSeg, unitOff: unitOff, dataEnd: dataEnd, preBatchWatermark: wm}
}

// crashBeforeLastBatch puts the WATERMARK of dir (a copy of the log b)
// back to what it was before the final batch was acknowledged.
func crashBeforeLastBatch(t *testing.T, b builtLog, dir string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, watermarkName), b.preBatchWatermark, 0o600))
}

// cutNow runs an empty commit: the first commit of a Log cuts the torn
// tail that Open found.
func cutNow(t *testing.T, l *Log) {
	t.Helper()
	_, err := l.Commit(ctx, func(*Tx) ([][]byte, error) { return nil, nil })
	require.NoError(t, err)
}

// watermarkNow returns a function that puts the log's WATERMARK back as
// it is now: what a crash leaves when the units appended after this point
// were written but their commits never returned (so never acknowledged).
func watermarkNow(t *testing.T, dir string) func() {
	t.Helper()
	path := filepath.Join(dir, watermarkName)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return func() {
		t.Helper()
		require.NoError(t, os.WriteFile(path, b, 0o600))
	}
}

func copyDir(t *testing.T, src, dst string) {
	require.NoError(t, os.MkdirAll(dst, 0o700))
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dst, e.Name()), b, 0o600))
	}
}

func datas(t *testing.T, l *Log) [][]byte {
	var out [][]byte
	for _, r := range readAll(t, l) {
		out = append(out, r.Data)
	}
	return out
}

func TestOpenCutsTornTailAtEveryByteOffsetOfTheLastBatch(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	built := buildLog(t, src)
	recs, lastSeg, unitOff, dataEnd := built.recs, built.lastSeg, built.unitOff, built.dataEnd
	segs, err := listSegments(OSFS{}, src)
	require.NoError(t, err)
	require.Greater(t, len(segs), 2)
	full, err := os.ReadFile(filepath.Join(src, lastSeg))
	require.NoError(t, err)
	require.Greater(t, int64(len(full)), dataEnd, "the last segment is preallocated")

	// Sizes past the data end cut only preallocated zeros: nothing is torn.
	// Every size in the full run; under -short, a sample that cuts inside
	// each field of each of the batch's frames, either side of the data
	// end and at the file's end, with a stride through the data and the
	// zeros.
	var keep []int64
	frame := unitOff
	for _, r := range recs[len(recs)-3:] {
		keep = append(keep, frameFieldOffsets(frame)...)
		frame += int64(frameSize(len(r)))
	}
	require.Equal(t, dataEnd, frame)
	keep = append(keep, dataEnd-1, dataEnd, dataEnd+1, int64(len(full))-1, int64(len(full)))
	work := t.TempDir()
	for _, size := range sweep(unitOff, int64(len(full)), 16, keep...) {
		dir := filepath.Join(work, "d")
		require.NoError(t, os.RemoveAll(dir))
		copyDir(t, src, dir)
		crashBeforeLastBatch(t, built, dir)
		require.NoError(t, os.Truncate(filepath.Join(dir, lastSeg), size))
		before := readTree(t, dir)

		l, err := Open(ctx, dir, &Options{NoSync: true})
		require.NoError(t, err, "size %d", size)
		got := datas(t, l)
		assert.Equal(t, before, readTree(t, dir), "size %d: reading changed the log", size)
		if size >= dataEnd {
			assert.Equal(t, recs, got)
			assert.Nil(t, l.Torn())
			cutNow(t, l)
			assert.Empty(t, l.Cuts())
		} else {
			assert.Equal(t, recs[:len(recs)-3], got, "size %d", size)
			if size > unitOff {
				require.NotNil(t, l.Torn(), "size %d", size)
				assert.Equal(t, unitOff, l.Torn().Offset)
				cutNow(t, l)
				cuts := l.Cuts()
				require.Len(t, cuts, 1, "size %d", size)
				assert.Equal(t, Cut{File: lastSeg, Offset: unitOff, Bytes: size - unitOff,
					SavedTo: filepath.Join(dir, lastSeg) + ".torn-" + itoa(unitOff)}, cuts[0])
				saved, err := os.ReadFile(cuts[0].SavedTo)
				require.NoError(t, err)
				assert.Equal(t, full[unitOff:size], saved)
			}
			// The log continues after the cut.
			first, err := l.Append(ctx, []byte("next"))
			require.NoError(t, err)
			assert.Equal(t, uint64(len(recs)-2), first)
		}
		require.NoError(t, l.Close())
		_, err = Verify(ctx, dir, nil)
		require.NoError(t, err, "size %d", size)
	}
}

func itoa(n int64) string { return fmtInt(n) }

// readTree returns the contents of every file in dir.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = string(b)
	}
	return out
}

func TestEveryBitFlipIsDetected(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	built := buildLog(t, dir)
	lastSeg, dataEnd := built.lastSeg, built.dataEnd
	segs, err := listSegments(OSFS{}, dir)
	require.NoError(t, err)
	type target struct {
		name string
		b    []byte
		data int // bytes of written data: sealed segments are all data, the
		// last one is preallocated after dataEnd (free space: see
		// TestFlipInFreeSpaceIsCutNotCorruption)
	}
	var files []target
	total := 0
	for _, s := range segs {
		b, err := os.ReadFile(filepath.Join(dir, segmentName(s)))
		require.NoError(t, err)
		n := len(b)
		if segmentName(s) == lastSeg {
			n = int(dataEnd)
		}
		files = append(files, target{segmentName(s), b, n})
		total += n * 8
	}
	rng := rand.New(rand.NewSource(1))
	const samples = 2500
	for n := 0; n < samples; n++ {
		bit := rng.Intn(total)
		var f target
		for _, f = range files {
			if bit < f.data*8 {
				break
			}
			bit -= f.data * 8
		}
		path := filepath.Join(dir, f.name)
		flipped := append([]byte(nil), f.b...)
		flipped[bit/8] ^= 1 << (bit % 8)
		require.NoError(t, os.WriteFile(path, flipped, 0o600))

		_, verr := Verify(ctx, dir, nil)
		assert.ErrorIs(t, verr, ErrCorrupt, "Verify missed flip of bit %d in %s", bit, f.name)
		if f.name == lastSeg && n%5 == 0 {
			// Open must refuse too, and must not "repair" by cutting.
			_, oerr := Open(ctx, dir, &Options{NoSync: true})
			assert.ErrorIs(t, oerr, ErrCorrupt, "Open missed flip of bit %d in %s", bit, f.name)
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, flipped, after, "Open modified a corrupt segment")
		}
		require.NoError(t, os.WriteFile(path, f.b, 0o600))
	}
}

func TestOpenRefusesDamageFollowedByValidRecords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openT(t, dir, &Options{NoSync: true})
	for i := 0; i < 5; i++ {
		_, err := l.Append(ctx, payload(i, 100))
		require.NoError(t, err)
	}
	require.NoError(t, l.Close())
	path := filepath.Join(dir, segmentName(1))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	off := fileHeaderSize + frameSize(100) + frameHeaderSize + 10 // inside record 2's data
	b[off] ^= 0xff
	require.NoError(t, os.WriteFile(path, b, 0o600))

	_, err = Open(ctx, dir, nil)
	var ce *CorruptionError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, segmentName(1), ce.File)
	assert.Equal(t, int64(fileHeaderSize+frameSize(100)), ce.Offset)
	assert.Equal(t, uint64(2), ce.Seq)
	assert.Equal(t, corruptHint, ce.Hint, "the hint is data")
	assert.NotContains(t, ce.Error(), ce.Hint, "Error says what failed and where; the hint is left out")
	assert.NotContains(t, ce.Error(), "helm", "a library error names no CLI command")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, b, after, "nothing is truncated")

	rep, err := Verify(ctx, dir, nil)
	require.ErrorIs(t, err, ErrCorrupt)
	require.NotNil(t, rep.Problem)
	assert.Equal(t, uint64(2), rep.Problem.Seq)
}

func TestScanReportsDamageBeforeValidDataButStopsAtTornTail(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openT(t, dir, &Options{NoSync: true})
	for i := 0; i < 3; i++ {
		_, err := l.Append(ctx, payload(i, 64))
		require.NoError(t, err)
	}
	path := filepath.Join(dir, segmentName(1))
	b, err := os.ReadFile(path)
	require.NoError(t, err)

	// A half-written frame at the end (writer mid-write): clean stop.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	frame, _ := appendFrame(nil, 4, 0, true, 0, payload(3, 64))
	_, err = f.Write(frame[:30])
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.Len(t, readAll(t, l), 3)

	// Damage in record 1 followed by valid records: corruption.
	b[fileHeaderSize+frameHeaderSize] ^= 1
	require.NoError(t, os.WriteFile(path, b, 0o600))
	err = l.Scan(ctx, 1, func(Record) error { return nil })
	assert.ErrorIs(t, err, ErrCorrupt)
}

func TestOpenRefusesForeignAndFutureSegmentFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		header func() []byte
		reason string
	}{
		{"foreign", func() []byte { return []byte("PK\x03\x04 this is a zip file, not a segment") }, "not a helm segment file"},
		{"future version", func() []byte {
			h := encodeFileHeader(fileHeader{first: 1})
			binary.LittleEndian.PutUint32(h[8:], formatVersion+1)
			binary.LittleEndian.PutUint32(h[100:], crc32.Checksum(h[:100], castagnoli))
			return h
		}, "format version 5"},
		{"damaged header", func() []byte { h := encodeFileHeader(fileHeader{first: 1}); h[17] ^= 4; return h }, "checksum"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, segmentName(1)), tc.header(), 0o600))
			_, err := Open(ctx, dir, nil)
			var ce *CorruptionError
			require.ErrorAs(t, err, &ce)
			assert.Contains(t, ce.Reason, tc.reason)
			assert.Equal(t, int64(0), ce.Offset)
		})
	}
}

func TestVerifyDetectsReorderedSegmentsViaHashChain(t *testing.T) {
	t.Parallel()
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		l := openT(t, dir, &Options{SegmentSize: 300, NoSync: true})
		for i := 0; i < 10; i++ {
			d := payload(i, 40)
			if dir == b {
				d = payload(i+50, 40)
			}
			_, err := l.Append(ctx, d)
			require.NoError(t, err)
		}
	}
	// Replace a middle segment by the same-numbered one of another log.
	segs, err := listSegments(OSFS{}, a)
	require.NoError(t, err)
	require.Greater(t, len(segs), 2)
	name := segmentName(segs[1])
	src, err := os.Open(filepath.Join(b, name))
	require.NoError(t, err)
	dst, err := os.Create(filepath.Join(a, name))
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	src.Close()
	dst.Close()
	_, err = Verify(ctx, a, nil)
	var ce *CorruptionError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, ce.Reason, "hash chain")
}

// A zero-filled region after the last complete unit used to be a torn write
// (the size grew, the data never landed). With preallocation it is the
// normal end of the log: free space, nothing to cut or save.
func TestZeroFilledTailIsFreeSpaceNotTorn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openT(t, dir, &Options{NoSync: true})
	_, err := l.Append(ctx, []byte("kept"))
	require.NoError(t, err)
	require.NoError(t, l.Close())
	path := filepath.Join(dir, segmentName(1))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(path, fi.Size()+4096))

	rep, err := Verify(ctx, dir, nil)
	require.NoError(t, err)
	assert.Nil(t, rep.Torn)
	l2 := openT(t, dir, &Options{NoSync: true})
	assert.Empty(t, l2.Cuts())
	_, err = l2.Append(ctx, []byte("next"))
	require.NoError(t, err)
	got := datas(t, l2)
	assert.Equal(t, [][]byte{[]byte("kept"), []byte("next")}, got)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), ".torn-")
	}
}

// A crash tears a write in whole sectors: a unit whose frame continues past
// a sector boundary that never reached the disk reads back as a partially
// written frame followed by (preallocated) zeros, with the file size
// unchanged. It is torn: cut, saved, and the complete records are kept.
// The same with a zero header at the unit boundary and the unit's later
// sectors present (the first sector lost) is found by Open's check of the
// free space and cut too.
func TestPartialFrameFollowedByZerosIsTorn(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	l := openT(t, src, &Options{NoSync: true})
	var recs [][]byte
	for i := 0; i < 3; i++ {
		d := payload(i, 100)
		_, err := l.Append(ctx, d)
		require.NoError(t, err)
		recs = append(recs, d)
	}
	l.mu.Lock()
	unitOff := l.w.p.off
	l.mu.Unlock()
	batch := [][]byte{payload(50, 700), payload(51, 900), payload(52, 300)} // spans sectors
	wmBefore, err := os.ReadFile(filepath.Join(src, watermarkName))
	require.NoError(t, err)
	_, err = l.Append(ctx, batch...)
	require.NoError(t, err)
	l.mu.Lock()
	dataEnd := l.w.p.off
	l.mu.Unlock()
	require.NoError(t, l.Close())
	path := filepath.Join(src, segmentName(1))
	full, err := os.ReadFile(path)
	require.NoError(t, err)

	work := t.TempDir()
	try := func(name string, mutate func(b []byte), wantCut bool) {
		dir := filepath.Join(work, "d")
		require.NoError(t, os.RemoveAll(dir))
		copyDir(t, src, dir)
		b := append([]byte(nil), full...)
		mutate(b)
		require.NoError(t, os.WriteFile(filepath.Join(dir, segmentName(1)), b, 0o600))
		if wantCut { // a crash during the batch's write: never acknowledged
			require.NoError(t, os.WriteFile(filepath.Join(dir, watermarkName), wmBefore, 0o600))
		}
		rep, err := Verify(ctx, dir, nil)
		require.NoError(t, err, name)
		assert.Equal(t, wantCut, rep.Torn != nil, name)
		l, err := Open(ctx, dir, &Options{NoSync: true})
		require.NoError(t, err, name)
		defer l.Close()
		cutNow(t, l)
		if wantCut {
			assert.Equal(t, recs, datas(t, l), name)
			require.Len(t, l.Cuts(), 1, name)
			assert.Equal(t, unitOff, l.Cuts()[0].Offset, name)
			saved, err := os.ReadFile(l.Cuts()[0].SavedTo)
			require.NoError(t, err)
			assert.Equal(t, b[unitOff:unitOff+int64(len(saved))], saved, name)
			assert.True(t, allZero(b[unitOff+int64(len(saved)):]), name)
		} else {
			assert.Equal(t, append(append([][]byte(nil), recs...), batch...), datas(t, l), name)
			assert.Empty(t, l.Cuts(), name)
		}
		_, err = l.Append(ctx, []byte("next"))
		require.NoError(t, err, name)
		_, err = Verify(ctx, dir, nil)
		require.NoError(t, err, name)
	}
	n := 0
	for p := (unitOff/sectorSize + 1) * sectorSize; p < dataEnd; p += sectorSize {
		p := p
		// Sectors from p on never landed.
		try(fmt.Sprintf("lost from %d", p), func(b []byte) { clear(b[p:]) }, true)
		// The unit's first sector never landed, later ones did.
		try(fmt.Sprintf("lost first sector up to %d", p), func(b []byte) { clear(b[unitOff:p]) }, true)
		n++
	}
	require.Greater(t, n, 2)
	try("nothing lost", func([]byte) {}, false)
}

// Bits flipped in the free space after the data end are not in any record:
// Verify reports a torn tail (not a Problem) and Open cuts and saves it.
func TestFlipInFreeSpaceIsCutNotCorruption(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	built := buildLog(t, dir)
	recs, lastSeg, dataEnd := built.recs, built.lastSeg, built.dataEnd
	path := filepath.Join(dir, lastSeg)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Greater(t, int64(len(b)), dataEnd+40)
	b[dataEnd+33] ^= 0x10
	require.NoError(t, os.WriteFile(path, b, 0o600))
	rep, err := Verify(ctx, dir, nil)
	require.NoError(t, err)
	require.NotNil(t, rep.Torn)
	assert.Equal(t, dataEnd, rep.Torn.Offset)
	l := openT(t, dir, &Options{NoSync: true})
	assert.Equal(t, recs, datas(t, l))
	assert.NotNil(t, l.Torn())
	cutNow(t, l)
	assert.Len(t, l.Cuts(), 1)
}

func fmtInt(n int64) string { return strconv.FormatInt(n, 10) }
