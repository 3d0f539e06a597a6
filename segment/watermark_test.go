package segment

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The case that used to lose data: the last acknowledged unit's bytes end
// in a run of zeros that crosses a sector boundary, so a flipped bit
// anywhere in the frame made it look like a write whose last sectors never
// landed, and the next open cut it. With the watermark every flip of every
// bit of that unit is damage: Open and Verify refuse it, nothing is cut,
// nothing is written.
func TestEveryFlipOfTheLastAcknowledgedUnitIsDamageEvenWhenItEndsInZeros(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openT(t, dir, &Options{NoSync: true})
	for i := 0; i < 3; i++ {
		_, err := l.Append(ctx, payload(i, 100))
		require.NoError(t, err)
	}
	l.mu.Lock()
	unitOff := l.w.p.off
	l.mu.Unlock()
	// A record whose data ends in zeros from before the next sector
	// boundary to its end.
	boundary := (unitOff/sectorSize + 1) * sectorSize
	for boundary-unitOff-frameHeaderSize < 150 {
		boundary += sectorSize
	}
	n := int(boundary-unitOff-frameHeaderSize) + 200
	data := payload(7, n)
	clear(data[n-300:])
	_, err := l.Append(ctx, data)
	require.NoError(t, err)
	l.mu.Lock()
	dataEnd := l.w.p.off
	l.mu.Unlock()
	require.NoError(t, l.Close())
	require.Greater(t, dataEnd, boundary)

	path := filepath.Join(dir, segmentName(1))
	intact, err := os.ReadFile(path)
	require.NoError(t, err)
	// The flip that used to be taken for a torn write: in the data, whose
	// zeros cross the sector boundary.
	probe := append([]byte(nil), intact[unitOff:dataEnd]...)
	probe[frameHeaderSize+1] ^= 1
	require.True(t, zeroedSectorFrame(unitOff, probe), "test setup: the unit looks torn by the sector heuristic")
	// Every bit in the full run; under -short, every bit of a byte inside
	// each field of the frame (frameFieldOffsets), of the bytes either
	// side of the sector boundary the zeros cross and of the unit's last
	// two bytes (its zeros and padding), and every 61st bit besides (a
	// prime stride: every bit position of a byte comes up).
	var keep []int64
	for _, off := range append(frameFieldOffsets(unitOff), boundary-1, boundary, dataEnd-2, dataEnd-1) {
		for b := range int64(8) {
			keep = append(keep, off*8+b)
		}
	}
	flips := 0
	for _, bit := range sweep(unitOff*8, dataEnd*8-1, 61, keep...) {
		b := append([]byte(nil), intact...)
		b[bit/8] ^= 1 << (bit % 8)
		require.NoError(t, os.WriteFile(path, b, 0o600))
		before := readTree(t, dir)
		_, verr := Verify(ctx, dir, nil)
		require.ErrorIs(t, verr, ErrCorrupt, "Verify: flip of bit %d (offset %d)", bit, bit/8)
		if bit%4 == 0 { // Open and a first commit: every fourth bit, for time
			l, oerr := Open(ctx, dir, &Options{NoSync: true})
			if oerr == nil {
				_, cerr := l.Commit(ctx, func(*Tx) ([][]byte, error) { return nil, nil })
				assert.ErrorIs(t, cerr, ErrCorrupt, "commit after flip of bit %d", bit)
				assert.Empty(t, l.Cuts(), "flip of bit %d: an acknowledged unit was cut", bit)
				l.Close()
			} else {
				assert.ErrorIs(t, oerr, ErrCorrupt, "open: flip of bit %d", bit)
			}
			assert.Equal(t, before, readTree(t, dir), "flip of bit %d: the log was modified", bit)
		}
		flips++
	}
	require.NoError(t, os.WriteFile(path, intact, 0o600))
	t.Logf("%d flips of the last unit (offsets %d..%d, sector boundary at %d): all detected", flips, unitOff, dataEnd, boundary)
}

// Every way the files of a log can go missing, be rolled back or be taken
// from another log is a *CorruptionError naming the place, from Open,
// OpenScan and Verify, and nothing is modified.
func TestDamageMatrix(t *testing.T) {
	t.Parallel()
	build := func(t *testing.T, dir, identity string) (snapshot string) {
		l := openT(t, dir, &Options{SegmentSize: 600, NoSync: true, Identity: identity})
		for i := 0; i < 40; i++ {
			_, err := l.Append(ctx, payload(i, 60))
			require.NoError(t, err)
			if i == 30 {
				snapshot = t.TempDir()
				copyDir(t, dir, snapshot)
			}
		}
		require.NoError(t, l.Close())
		return snapshot
	}
	src := t.TempDir()
	old := build(t, src, "voyage-a")
	other := t.TempDir()
	build(t, other, "voyage-b")
	segs, err := listSegments(OSFS{}, src)
	require.NoError(t, err)
	require.Greater(t, len(segs), 4)
	first, mid, last := segmentName(segs[0]), segmentName(segs[len(segs)/2]), segmentName(segs[len(segs)-1])
	preLast := segmentName(segs[len(segs)-2])

	// Found by OpenScan and Verify, which read every segment; Open reads
	// the headers and the last segment.
	deep := map[string]bool{"middle segment deleted": true, "sealed segment truncated": true}
	for _, tc := range []struct {
		name   string
		damage func(dir string)
		file   string // the file the error names
		reason string
	}{
		{"first segment deleted", func(d string) { os.Remove(filepath.Join(d, first)) }, first, "first segment (seq 1) is missing"},
		{"middle segment deleted", func(d string) { os.Remove(filepath.Join(d, mid)) }, mid, "is missing"},
		{"last segment deleted", func(d string) { os.Remove(filepath.Join(d, last)) }, preLast, "was acknowledged"},
		{"all segments deleted", func(d string) {
			for _, s := range segs {
				os.Remove(filepath.Join(d, segmentName(s)))
			}
		}, last, "segments were deleted"},
		{"last segment rolled back", func(d string) {
			b, err := os.ReadFile(filepath.Join(old, segmentName(segs[len(segs)-1])))
			if err != nil { // the snapshot's last segment is an earlier one
				entries, _ := listSegments(OSFS{}, old)
				b, _ = os.ReadFile(filepath.Join(old, segmentName(entries[len(entries)-1])))
				os.Remove(filepath.Join(d, last))
				os.WriteFile(filepath.Join(d, segmentName(entries[len(entries)-1])), b, 0o600)
				return
			}
			os.WriteFile(filepath.Join(d, last), b, 0o600)
		}, "", "acknowledged"},
		{"whole log rolled back but the watermark", func(d string) {
			for _, s := range segs {
				os.Remove(filepath.Join(d, segmentName(s)))
			}
			entries, _ := os.ReadDir(old)
			for _, e := range entries {
				if e.Name() != watermarkName {
					b, _ := os.ReadFile(filepath.Join(old, e.Name()))
					os.WriteFile(filepath.Join(d, e.Name()), b, 0o600)
				}
			}
		}, "", "acknowledged"},
		{"first segment from another log", func(d string) {
			b, _ := os.ReadFile(filepath.Join(other, first))
			os.WriteFile(filepath.Join(d, first), b, 0o600)
		}, first, "another log"},
		{"middle segment from another log", func(d string) {
			b, _ := os.ReadFile(filepath.Join(other, mid))
			os.WriteFile(filepath.Join(d, mid), b, 0o600)
		}, mid, "another log"},
		{"sealed segment truncated", func(d string) {
			p := filepath.Join(d, mid)
			fi, _ := os.Stat(p)
			os.Truncate(p, fi.Size()-20)
		}, mid, "was acknowledged"},
		{"watermark deleted", func(d string) { os.Remove(filepath.Join(d, watermarkName)) }, watermarkName, "WATERMARK is missing"},
		{"watermark damaged", func(d string) {
			p := filepath.Join(d, watermarkName)
			b, _ := os.ReadFile(p)
			b[10] ^= 1
			b[watermarkSlot+10] ^= 1
			os.WriteFile(p, b, 0o600)
		}, watermarkName, "WATERMARK is damaged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "log")
			copyDir(t, src, dir)
			tc.damage(dir)
			before := readTree(t, dir)
			check := func(what string, err error) {
				t.Helper()
				var ce *CorruptionError
				require.ErrorAs(t, err, &ce, what)
				if tc.file != "" {
					assert.Equal(t, tc.file, ce.File, "%s: %v", what, err)
				}
				assert.Contains(t, ce.Reason, tc.reason, what)
				assert.Equal(t, dir, ce.Dir, what)
			}
			l, err := Open(ctx, dir, &Options{NoSync: true, Identity: "voyage-a"})
			if deep[tc.name] && err == nil {
				l.Close()
			} else {
				check("Open", err)
			}
			_, err = OpenScan(ctx, dir, &Options{NoSync: true, Identity: "voyage-a"}, func(Record) error { return nil })
			check("OpenScan", err)
			rep, err := Verify(ctx, dir, &Options{Identity: "voyage-a"})
			check("Verify", err)
			assert.NotNil(t, rep.Problem)
			assert.Equal(t, before, readTree(t, dir), "reading modified the log")
		})
	}
}

// Each CLI command is a new process with a new Log: the watermark's two
// slots must still alternate, so that one damaged slot leaves the other
// one unit behind, not at the log's first commit.
func TestWatermarkSlotsAlternateAcrossLogs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i := 0; i < 6; i++ {
		l := openT(t, dir, &Options{NoSync: true})
		_, err := l.Append(ctx, payload(i, 40))
		require.NoError(t, err)
		require.NoError(t, l.Close())
	}
	path := filepath.Join(dir, watermarkName)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	s0, ok0 := decodeWatermark(b[0:])
	s1, ok1 := decodeWatermark(b[watermarkSlot:])
	require.True(t, ok0 && ok1)
	assert.ElementsMatch(t, []uint64{5, 6}, []uint64{s0.last, s1.last}, "the last two commits")

	// Damage the newest slot: the watermark falls back one unit, and the
	// next commit overwrites the damaged slot.
	newest := 0
	if s1.last > s0.last {
		newest = 1
	}
	b[newest*watermarkSlot+9] ^= 1
	require.NoError(t, os.WriteFile(path, b, 0o600))
	w, _, err := readWatermark(OSFS{}, dir)
	require.NoError(t, err)
	assert.Equal(t, uint64(5), w.last)
	l := openT(t, dir, &Options{NoSync: true})
	_, err = l.Append(ctx, payload(7, 40))
	require.NoError(t, err)
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	s, ok := decodeWatermark(b[newest*watermarkSlot:])
	require.True(t, ok, "the damaged slot was written next")
	assert.Equal(t, uint64(7), s.last)
}

// Deleting LOCK while writers run does not let two of them write at once:
// writers also lock the directory, which cannot be deleted from under
// them. (Several Logs on one directory exclude each other as processes do:
// each has its own open files.)
func TestDeletingLOCKDoesNotLetTwoWritersIn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const writers, each = 4, 150
	stop := make(chan struct{})
	deleted := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				deleted <- n
				return
			default:
				if os.Remove(filepath.Join(dir, "LOCK")) == nil {
					n++
				}
			}
		}
	}()
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < each; j++ { // a Log per append, as the CLI opens one per command
				l, err := Open(ctx, dir, &Options{NoSync: true, SegmentSize: 8 << 10})
				if !assert.NoError(t, err) {
					return
				}
				_, err = l.Append(ctx, payload(i*1000+j, 50+j%40))
				assert.NoError(t, err)
				assert.NoError(t, l.Close())
			}
		}()
	}
	wg.Wait()
	close(stop)
	t.Logf("LOCK deleted %d times while %d writers appended %d records each", <-deleted, writers, each)
	rep, err := Verify(ctx, dir, nil)
	require.NoError(t, err)
	assert.Equal(t, uint64(writers*each), rep.Records)
}

// A mark stays unchanged only while the log's files are as they were.
func TestChangedSeesFilesAddedRemovedOrDamaged(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	l := openT(t, src, &Options{NoSync: true, SegmentSize: 600})
	for i := 0; i < 20; i++ {
		_, err := l.Append(ctx, payload(i, 60))
		require.NoError(t, err)
	}
	m := l.Mark()
	require.NoError(t, l.Close())
	require.NotEmpty(t, m.Sealed)
	for _, tc := range []struct {
		name   string
		damage func(dir string)
		want   bool
	}{
		{"intact", func(string) {}, false},
		{"a segment after the mark's", func(d string) {
			os.WriteFile(filepath.Join(d, segmentName(999)), []byte("junk"), 0o600)
		}, true},
		{"a sealed segment gone", func(d string) { os.Remove(filepath.Join(d, m.Sealed[0].Name)) }, true},
		{"WATERMARK gone", func(d string) { os.Remove(filepath.Join(d, watermarkName)) }, true},
		{"WATERMARK emptied", func(d string) { os.WriteFile(filepath.Join(d, watermarkName), nil, 0o600) }, true},
		{"WATERMARK slots damaged", func(d string) {
			p := filepath.Join(d, watermarkName)
			b, _ := os.ReadFile(p)
			b[9] ^= 1
			b[watermarkSlot+9] ^= 1
			os.WriteFile(p, b, 0o600)
		}, true},
		{"a byte of the last unit flipped", func(d string) {
			p := filepath.Join(d, m.Segment)
			b, _ := os.ReadFile(p)
			b[m.Unit+frameHeaderSize+3] ^= 1
			os.WriteFile(p, b, 0o600)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "log")
			copyDir(t, src, dir)
			tc.damage(dir)
			changed, err := Changed(dir, m)
			require.NoError(t, err)
			assert.Equal(t, tc.want, changed)
		})
	}
}
