package segment

import (
	"os"
	"path/filepath"
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
	flips := 0
	for bit := unitOff * 8; bit < dataEnd*8; bit++ {
		b := append([]byte(nil), intact...)
		b[bit/8] ^= 1 << (bit % 8)
		require.NoError(t, os.WriteFile(path, b, 0o600))
		before := readTree(t, dir)
		_, verr := Verify(ctx, dir, nil)
		require.ErrorIs(t, verr, ErrCorrupt, "Verify: flip of bit %d (offset %d)", bit, bit/8)
		if bit%4 == 0 { // Open and a first commit: every fourth bit, for time
			l, oerr := Open(dir, &Options{NoSync: true})
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
			l, err := Open(dir, &Options{NoSync: true, Identity: "voyage-a"})
			if deep[tc.name] && err == nil {
				l.Close()
			} else {
				check("Open", err)
			}
			_, err = OpenScan(dir, &Options{NoSync: true, Identity: "voyage-a"}, func(Record) error { return nil })
			check("OpenScan", err)
			rep, err := Verify(ctx, dir, &Options{Identity: "voyage-a"})
			check("Verify", err)
			assert.NotNil(t, rep.Problem)
			assert.Equal(t, before, readTree(t, dir), "reading modified the log")
		})
	}
}
