package marks

import (
	"bytes"
	"context"
	"io"

	"github.com/helmlog/helm/internal/regular"
)

// openRegular and openDir open what marks read and walk without ever
// blocking on a FIFO planted there (package regular).
var (
	openRegular = regular.Open
	openDir     = regular.OpenDir
)

// readRegular reads a whole regular file (see regular.Open), a chunk at a
// time, checking ctx between chunks.
func readRegular(ctx context.Context, path string) ([]byte, error) {
	f, err := regular.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b bytes.Buffer
	if info, err := f.Stat(); err == nil && info.Size() > 0 && info.Size() < 1<<40 {
		b.Grow(int(info.Size()) + bytes.MinRead)
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := b.ReadFrom(io.LimitReader(f, readChunk))
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return b.Bytes(), nil
		}
	}
}
