//go:build unix

package regular

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestOpenNoBlockRefusesAFIFOThatWonTheRace: openRegular looks at a file
// before opening it, but the file may be swapped for a FIFO in between.
// The open itself must then neither block nor hand back the FIFO.
func TestOpenNoBlockRefusesAFIFOThatWonTheRace(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, unix.Mkfifo(fifo, 0o644))
	t.Cleanup(func() { // unblocks a reader, should the test fail
		if f, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
			f.Close()
		}
	})
	tests := []struct {
		name string
		open func(string) (*os.File, error)
		want string
	}{
		{"file", openNoBlock, "not a regular file (FIFO)"},
		{"directory", OpenDir, "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			start := time.Now()
			go func() {
				f, err := tt.open(fifo)
				if err == nil {
					f.Close()
				}
				done <- err
			}()
			select {
			case err := <-done:
				t.Logf("refused in %s", time.Since(start))
				assert.ErrorContains(t, err, tt.want)
				var pe *fs.PathError
				if assert.ErrorAs(t, err, &pe) {
					assert.Equal(t, tt.want, pe.Err.Error(), "said without the path")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("opening a FIFO blocked")
			}
		})
	}
}

// TestOpenNoBlockReadsRegularFilesBlocking: the descriptor handed back is
// an ordinary blocking file.
func TestOpenNoBlockReadsRegularFilesBlocking(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.txt")
	require.NoError(t, os.WriteFile(p, []byte("hello"), 0o644))
	f, err := openNoBlock(p)
	require.NoError(t, err)
	defer f.Close()
	data, err := io.ReadAll(f)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(data))
	flags, err := fcntlFlags(f)
	require.NoError(t, err)
	assert.Zero(t, flags&unix.O_NONBLOCK)
}

func fcntlFlags(f *os.File) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var flags int
	var ferr error
	if err := rc.Control(func(fd uintptr) { flags, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil {
		return 0, err
	}
	return flags, ferr
}
