//go:build unix

package replay_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/replay"
)

// hangBound is how long a read may take before the test calls it a hang:
// generous, never a timing assertion.
const hangBound = 60 * time.Second

// The recorded agent hands a replay a copied voyage directory in which a
// segment is a FIFO (a named pipe nobody writes): a replay reads files,
// and must refuse what is not one, naming it, rather than wait forever
// for a writer (or read what a writer it controls streams in).
func TestAttackReplayRefusesAFIFOAsASegment(t *testing.T) {
	for _, tc := range []struct {
		name  string
		which func(segs []string) string
	}{
		{"the last segment", func(segs []string) string { return segs[len(segs)-1] }},
		{"the first segment", func(segs []string) string { return segs[0] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := exportEveryForm(t, false)
			segs, err := filepath.Glob(filepath.Join(x.copied, "events", "*.seg"))
			require.NoError(t, err)
			require.NotEmpty(t, segs)
			fifo := tc.which(segs)
			require.NoError(t, os.Remove(fifo))
			require.NoError(t, syscall.Mkfifo(fifo, 0o600))
			before := hashTreeNoFIFO(t, filepath.Dir(x.copied))

			done := make(chan error, 1)
			go func() {
				_, err := replay.Open(context.Background(), x.copied)
				done <- err
			}()
			select {
			case err = <-done:
			case <-time.After(hangBound):
				// Unblock the reader stuck in open(2) so the test ends.
				if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
				<-done
				t.Fatalf("replay of a directory holding a FIFO %s hung: it waits for a writer", fifo)
			}
			require.Error(t, err, "a FIFO is not a segment")
			t.Logf("refused: %v", err)
			assert.Contains(t, err.Error(), filepath.Base(fifo))
			assert.Equal(t, before, hashTreeNoFIFO(t, filepath.Dir(x.copied)), "reading wrote")
		})
	}
}

// hashTreeNoFIFO is hashTree that does not open a FIFO (it would block).
func hashTreeNoFIFO(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil || d.IsDir():
			out[p] = ""
			return err
		case d.Type()&os.ModeNamedPipe != 0:
			out[p] = "fifo"
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[p] = string(data)
		return nil
	}))
	return out
}

// The agent's copied voyage directory holds symlinks that lead out of
// it: a segment that is a link to a device that never ends (/dev/zero)
// or to a file elsewhere, an events/ that is a link to another voyage's
// log. A replay reads what the links lead to, never past what a
// segment can hold, and writes nothing: it refuses a device, and reads
// another voyage's log as that voyage (its events name it), not as the
// directory's.
func TestAttackReplayOfADirectoryWithSymlinksOut(t *testing.T) {
	x := exportEveryForm(t, false)
	y := exportEveryForm(t, false)
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, dir string)
		check func(t *testing.T, src *replay.Source, err error)
	}{
		{"a segment linked to /dev/zero", func(t *testing.T, dir string) {
			segs, err := filepath.Glob(filepath.Join(dir, "events", "*.seg"))
			require.NoError(t, err)
			require.NoError(t, os.Remove(segs[0]))
			require.NoError(t, os.Symlink("/dev/zero", segs[0]))
		}, func(t *testing.T, _ *replay.Source, err error) {
			require.Error(t, err, "a device is not a segment")
		}},
		{"events/ linked to another voyage's log", func(t *testing.T, dir string) {
			require.NoError(t, os.RemoveAll(filepath.Join(dir, "events")))
			require.NoError(t, os.Symlink(filepath.Join(y.home, "voyages", y.id, "events"), filepath.Join(dir, "events")))
		}, func(t *testing.T, src *replay.Source, err error) {
			if err != nil {
				return // refused: fine
			}
			require.NotEmpty(t, src.Events)
			assert.Equal(t, y.id, src.Events[0].Voyage.ID, "the events say whose they are")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "copy")
			require.NoError(t, os.CopyFS(dir, os.DirFS(x.copied)))
			tc.plant(t, dir)
			before := hashTreeNoFIFO(t, filepath.Join(y.home, "voyages", y.id))
			done := make(chan struct{})
			var src *replay.Source
			var err error
			go func() {
				defer close(done)
				src, err = replay.Open(context.Background(), dir)
			}()
			select {
			case <-done:
			case <-time.After(hangBound):
				t.Fatalf("replay of %s hung", dir)
			}
			if err != nil {
				t.Logf("refused: %v", err)
			}
			tc.check(t, src, err)
			assert.Equal(t, before, hashTreeNoFIFO(t, filepath.Join(y.home, "voyages", y.id)), "reading wrote where a link led")
		})
	}
}
