package helm

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/internal/testfs"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/sighting"
)

// statfsFree returns the bytes free on the file system holding dir.
func statfsFree(t testing.TB, dir string) int64 {
	t.Helper()
	var st unix.Statfs_t
	require.NoError(t, unix.Statfs(dir, &st))
	return int64(st.Bavail) * int64(st.Bsize)
}

// filler takes n bytes of the file system at dir, to be given back later.
func filler(t *testing.T, dir string, n int) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	require.NoError(t, os.WriteFile(path, make([]byte, n), 0o600))
	return path
}

// vocabulary for varied text that compresses as prose does.
var vocabulary = strings.Fields(`the a of to in and is it that for on with as was by at be this from
or an are not but have had which were one all their there can has more if will would been also
voyage bearing slate mark sighting logbook artifact segment commit unit record frame checksum
fdatasync preallocation rotation recovery torn tail offset seq writer reader lock process agent
reviewer coder human model identity role method intent summary outcome blocked partial failed
cancelled completed resumed note judged action intended performed push branch pull request issue
comment review merge diff files checks test race vet gofmt module package import struct func
interface error wrap hint path offset disk full space tmpfs page cache journal metadata extent`)

func prose(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		w := vocabulary[r.IntN(len(vocabulary))]
		if r.IntN(9) == 0 {
			fmt.Fprintf(&b, "%s-%d", w, r.IntN(100000))
		} else {
			b.WriteString(w)
		}
	}
	return b.String()
}

// sourceFile returns about n bytes of text that zstd barely compresses
// (random base64 lines, as minified or generated files are): a sighting
// of it goes to the pack.
func sourceFile(r *rand.Rand, n int) string {
	raw := make([]byte, 57)
	var b strings.Builder
	for b.Len() < n {
		for i := range raw {
			raw[i] = byte(r.Uint32())
		}
		b.WriteString(base64.StdEncoding.EncodeToString(raw))
		b.WriteByte('\n')
	}
	return b.String()
}

// usage is what a voyage's files hold.
type usage struct {
	log   int64 // event log data, up to its end
	zeros int64 // preallocated after the log's end
	pack  int64 // the artifact pack
	other int64 // summary, lock
}

func (u usage) data() int64 { return u.log + u.pack }

func voyageUsage(t *testing.T, v *Voyage) usage {
	t.Helper()
	var u usage
	mark := v.segmentLog().Mark()
	err := filepath.WalkDir(v.dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Name() == artifact.PackName:
			u.pack += fi.Size()
		case d.Name() == mark.Segment:
			u.log += mark.End
			u.zeros += fi.Size() - mark.End
		case filepath.Ext(d.Name()) == ".seg":
			u.log += fi.Size() // a sealed segment holds no zeros
		default:
			u.other += fi.Size()
		}
		return nil
	})
	require.NoError(t, err)
	return u
}

// TestFullDiskLosesNothingAcknowledgedAndUsesNearlyAllFreeSpace records
// observations on a 2 MiB tmpfs until the disk is full: context notes of
// 1–2 KiB of varied text (blob records in the event log), every twentieth
// (or fourth) a file-contents sighting of ~40 KiB compressed (a pack
// frame), and a bearing every fifty. It measures the share of the free space the
// voyage's data (event log up to its end, pack) took before the first
// ENOSPC; then, reopened as a fresh process would, with notes alone until
// the next. It checks that every acknowledged observation and bearing is
// on the slate or in the logbook after reopening, none that failed is, and
// the voyage verifies; and that with the filler removed the voyage takes
// writes again.
func TestFullDiskLosesNothingAcknowledgedAndUsesNearlyAllFreeSpace(t *testing.T) {
	tests := []struct {
		name  string
		every int // every so many observations, a file for the pack
	}{
		{"a file every twentieth observation", 20},
		{"a file every fourth observation", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { fillDiskWithVoyage(t, tt.every) })
	}
}

func fillDiskWithVoyage(t *testing.T, every int) {
	ctx := context.Background()
	mnt := testfs.Tmpfs(t, 2<<20)
	fill := filler(t, mnt, 128<<10)
	home := filepath.Join(mnt, "home")
	h, err := Open(home, nil)
	require.NoError(t, err)
	free0 := statfsFree(t, mnt)
	who := logbook.Who{Identity: "fill-agent", Role: "coder", Method: "human"}
	v, err := h.Start(ctx, "fill the disk", OpenWaters, who, nil)
	require.NoError(t, err)
	id := v.ID()
	reopen := func() {
		t.Helper()
		require.NoError(t, v.Close())
		h, err := Open(home, nil)
		require.NoError(t, err)
		v, err = h.Voyage(ctx, id)
		require.NoError(t, err)
	}

	r := rand.New(rand.NewPCG(10, 11))
	acked := map[string]bool{}  // mark keys whose observation returned success
	failed := map[string]bool{} // ... returned an error
	var readings []string       // bearings that returned success
	n := 0
	note := func() (string, error) {
		n++
		m, err := marks.NewContext(fmt.Sprintf("note %d: %s", n, prose(r, 1024+r.IntN(1024))))
		require.NoError(t, err)
		_, err = v.Observe(ctx, m, who, nil)
		return m.Key(), err
	}
	file := func() (string, error) {
		n++
		path := fmt.Sprintf("gen/file-%d.txt", n)
		m, err := marks.NewFileContents(path)
		require.NoError(t, err)
		s := &sighting.Files{Contents: []sighting.FileContents{{Path: path, Content: sighting.TextContent(sourceFile(r, 52<<10))}}}
		_, err = v.Record(ctx, Observation{Mark: m, Sighting: s, ObservedAt: h.now()}, who)
		return m.Key(), err
	}
	// fillUp observes with next until a call fails, taking a bearing every
	// fifty observations, and returns what the voyage holds then.
	fillUp := func(stage string, next func(i int) (string, error)) usage {
		t.Helper()
		var err error
		for i := 0; err == nil; i++ {
			require.Less(t, i, 10000, "the disk never filled")
			var key string
			if key, err = next(i); err != nil {
				failed[key] = true
				break
			}
			acked[key] = true
			if len(acked)%50 == 0 {
				reading := fmt.Sprintf("reading after %d observations: %s", len(acked), prose(r, 200))
				if _, err = v.TakeBearing(ctx, reading, who, nil); err == nil {
					readings = append(readings, reading)
				}
			}
		}
		u := voyageUsage(t, v)
		t.Logf("%s: %d observations acknowledged; log %d + pack %d = %d bytes of the %d free at start: %.1f%% (%d bytes of zeros preallocated after the log's end, %d still free); stopped by: %v",
			stage, len(acked), u.log, u.pack, u.data(), free0, 100*float64(u.data())/float64(free0), u.zeros, statfsFree(t, mnt), err)
		assert.ErrorIs(t, err, syscall.ENOSPC, stage)
		return u
	}
	first := fillUp("notes and files, until the first ENOSPC", func(i int) (string, error) {
		if i%every == every-1 {
			return file()
		}
		return note()
	})
	assert.GreaterOrEqual(t, float64(first.data())/float64(free0), 0.90, "share of the free space used before the first ENOSPC")
	reopen()
	last := fillUp("then, reopened, notes alone", func(int) (string, error) { return note() })
	assert.GreaterOrEqual(t, float64(last.data())/float64(free0), 0.95, "share of the free space used before the log refused notes")
	require.NoError(t, v.Close())

	// A fresh process: every acknowledged observation is there, no failed
	// one is, and the voyage verifies.
	check := func() *Voyage {
		t.Helper()
		h, err := Open(home, nil)
		require.NoError(t, err)
		v, err := h.Voyage(ctx, id)
		require.NoError(t, err)
		have := map[string]bool{}
		for _, o := range v.Slate() {
			have[o.Key] = true
		}
		var got []string
		for _, e := range entriesOf(t, v) {
			if e.Bearing != nil {
				got = append(got, e.Bearing.Reading.Text)
				for _, o := range e.Bearing.Observations {
					have[o.Key] = true
				}
			}
		}
		for k := range acked {
			assert.True(t, have[k], "acknowledged observation %.40s… is lost", k)
		}
		for k := range failed {
			assert.False(t, have[k], "failed observation %.40s… was recorded", k)
		}
		assert.Equal(t, readings, got, "the acknowledged bearings")
		rep, err := h.Verify(ctx, id, nil)
		require.NoError(t, err)
		assert.True(t, rep.OK(), "verify: %v", rep.Problems)
		return v
	}
	require.NoError(t, check().Close())

	// Space freed: the voyage takes notes, files and bearings again.
	require.NoError(t, os.Remove(fill))
	v = check()
	for _, next := range []func() (string, error){note, note, file, note} {
		key, err := next()
		require.NoError(t, err)
		acked[key] = true
	}
	reading := "the disk had room again"
	_, err = v.TakeBearing(ctx, reading, who, nil)
	require.NoError(t, err)
	readings = append(readings, reading)
	require.NoError(t, v.Close())
	require.NoError(t, check().Close())
}
