package helm

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/projection"
)

// FuzzDecodeView: a view in the home index is bytes the recorded agent
// can write. Any bytes decode without a panic, the same with a fresh
// arena as with one a listing reuses across views, and a view that
// decodes encodes again to the same view.
func FuzzDecodeView(f *testing.F) {
	at := time.Date(2026, 11, 28, 4, 0, 0, 123, time.UTC)
	view := projection.VoyageView{
		ID: "0b5c3f0e-9a8e-4f0e-8e5e-1c2d3e4f5a6b", Intent: "fix the build", Kind: "open-waters",
		Identity: "agent", Current: "ann", Created: at, Status: "completed", Outcome: "completed",
		Summary: "done", CompletedAt: at.Add(time.Hour), Seq: 42, Parent: "p", Repo: "r", Branch: "b",
		LastAt: at.Add(time.Minute), Crew: []string{"agent", "ann"},
		Lifecycle: []projection.Transition{{Status: "active", At: at}, {Status: "completed", At: at.Add(time.Hour)}},
	}
	fp := logPrint{stamps: []namedStamp{{name: "", fileStamp: fileStamp{ino: 7, size: 4096, mtime: 1, ctime: 2}}, {name: "WATERMARK", fileStamp: fileStamp{ino: 8, size: 64, mtime: 3, ctime: 4}}}}
	whole := appendFingerprint(encodeView(view), fp)
	f.Add(whole)
	f.Add(whole[:len(whole)/2])
	f.Add(append([]byte{oldPrintVersion}, whole[1:]...))
	f.Add([]byte{viewVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, print, err := decodeView(append([]byte(nil), b...))
		shared := &viewArena{ahead: 8}
		_, _, _ = decodeViewIn(append([]byte(nil), b...), shared) // a view before it in the listing
		q, qprint, qerr := decodeViewIn(append([]byte(nil), b...), shared)
		assert.Equal(t, err, qerr)
		if err != nil {
			return
		}
		assert.Equal(t, p, q, "the same view from a fresh arena and a reused one")
		assert.Equal(t, print, qprint)
		again, _, err := decodeView(appendFingerprint(encodeView(p), print))
		require.NoError(t, err, "a view that decodes encodes again")
		assert.Equal(t, p, again)
	})
}
