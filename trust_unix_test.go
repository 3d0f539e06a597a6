//go:build unix

package helm_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
)

// A FIFO where a voyage's file should be (a summary, WATERMARK, a
// segment) never hangs a read: it is an error or a fallback, at once.
func TestFIFOsInAVoyageNeverHangReads(t *testing.T) {
	for _, name := range []string{"summary.json", filepath.Join("events", "WATERMARK"), filepath.Join("events", "00000000000000000001.seg")} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			h, err := helm.Open(t.TempDir(), fixedOptions())
			require.NoError(t, err)
			v := script(t, h)
			require.NoError(t, v.Close())
			p := filepath.Join(v.Storage().Dir, name)
			require.NoError(t, os.Remove(p))
			require.NoError(t, syscall.Mkfifo(p, 0o600))
			done := make(chan error, 1)
			go func() {
				_, err := h.List(ctx, nil)
				if err == nil {
					var v *helm.Voyage
					if v, err = h.Voyage(ctx, "a3b0fc12"); err == nil {
						v.Close()
					}
				}
				done <- err
			}()
			select {
			case err := <-done:
				t.Logf("%s as a FIFO: %v", name, err)
				if name != "summary.json" { // a cache: the log is read instead
					assert.Error(t, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("a read hung on %s as a FIFO", name)
			}
		})
	}
}
