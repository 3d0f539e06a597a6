package helm

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/helmlog/helm/internal/durable"
	"github.com/helmlog/helm/segment"
	"github.com/stretchr/testify/require"
)

// slowFS delays every WriteAt while armed: the window between a commit's
// decide (views already hold the events, v.mu released) and the write of
// its unit is widened.
type slowFS struct {
	durable.OSFS
	armed *atomic.Bool
}

func (s slowFS) OpenFile(name string, flag int, perm os.FileMode) (durable.File, error) {
	f, err := s.OSFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return slowFile{File: f, armed: s.armed}, nil
}

type slowFile struct {
	durable.File
	armed *atomic.Bool
}

func (f slowFile) WriteAt(b []byte, off int64) (int, error) {
	if f.armed.Load() {
		time.Sleep(200 * time.Millisecond)
	}
	return f.File.WriteAt(b, off)
}

// A view that finds a snapshot block damaged folds every event with the
// log's Scan, outside the log's lock. A commit of this handle that has
// applied its events to the views but not yet written them keeps them:
// the fold applies them again, and the commit's own read-back of what it
// just recorded (entryAt) finds it.
func TestAFoldOutsideTheLockKeepsACommitInFlight(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, id := snapshottedVoyage(t)
	dir := filepath.Join(h.voyagesDir(), id)

	v, err := h.Voyage(ctx, id)
	require.NoError(t, err)
	defer v.Close()
	v.mu.Lock()
	require.NotZero(t, v.snapSeq, "opened from the snapshot")
	v.mu.Unlock()
	// The same log, through a file system whose writes can be slowed.
	var armed atomic.Bool
	j := v.rec.(*diskJournal)
	require.NoError(t, j.log.Close())
	j.log, err = segment.Open(ctx, filepath.Join(dir, "events"), &segment.Options{NoSync: true, Identity: id, NoRetain: true, FS: slowFS{armed: &armed}})
	require.NoError(t, err)

	observeNote(t, v, "on the slate")
	start, _ := snapshotBody(t, dir)
	flipAt(t, dir, start) // the first block of the entries

	v.mu.Lock()
	before := v.st.Voyage.Seq
	v.mu.Unlock()
	armed.Store(true)
	done := make(chan error, 1)
	go func() {
		_, err := v.TakeBearing(ctx, "in flight", indexWho, nil)
		done <- err
	}()
	// Wait until the decide has folded the bearing into the views.
	for {
		v.mu.Lock()
		seq := v.st.Voyage.Seq
		v.mu.Unlock()
		if seq > before {
			break
		}
		time.Sleep(time.Millisecond)
	}
	entriesOf(t, v) // reads the damaged block: folds every event, outside the lock
	err = <-done
	armed.Store(false)
	require.NoError(t, v.Refresh(ctx))
	lb := entriesOf(t, v)
	require.Equal(t, "in flight", lb[len(lb)-1].Bearing.Reading.Text, "the bearing is in the log")
	require.NoError(t, err, "the bearing was recorded; its entry must be handed back, not an error")
}
