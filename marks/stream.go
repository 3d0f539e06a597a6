package marks

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"unicode/utf8"

	"github.com/helmlog/helm/internal/utf8x"
	"github.com/helmlog/helm/sighting"
)

// largeText returns a file's content as a source to be read when the
// sighting is stored (sighting.TextSource), when env asks for it and the
// file is larger than env.StreamAbove; ok is false otherwise, and the
// file is read as usual. The source reads under ctx, the observation's.
func largeText(ctx context.Context, env *Env, path string) (sighting.FileContent, bool) {
	if env == nil || env.StreamAbove <= 0 {
		return sighting.FileContent{}, false
	}
	f, err := openRegular(path)
	if err != nil {
		return sighting.FileContent{}, false // read as usual, which reports it
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || info.Size() <= env.StreamAbove {
		return sighting.FileContent{}, false
	}
	// A file that is binary from its start (most binaries) is counted as
	// usual, not streamed only to be found binary as it is stored.
	head := make([]byte, readChunk)
	n, _ := io.ReadFull(f, head)
	head = head[:utf8x.CompleteRunes(head[:n])]
	if !utf8.Valid(head) || bytes.IndexByte(head, 0) >= 0 {
		return sighting.FileContent{}, false
	}
	return sighting.FileContent{Type: sighting.ContentText, SizeBytes: uint64(info.Size()), Source: fileText{ctx: ctx, path: path}}, true
}

// fileText is a large file's text, read from the file each time it is
// opened: what a sighting records of it is what was read when the
// sighting was stored. It keeps the ctx of the observation that found the
// file (OpenText, an interface method, takes none): the sighting is stored
// under that observation, and a reader that turns out to be counting a
// binary file's rest stops when it ends, as readContent does.
type fileText struct {
	ctx  context.Context
	path string
}

// OpenText opens the file. A file that cannot be opened, cannot be read,
// or turns out not to be text (a NUL byte or invalid UTF-8, as readContent
// judges) makes the reader fail with a *sighting.NotTextError saying what
// the file holds instead.
func (p fileText) OpenText() (io.ReadCloser, error) {
	f, err := openRegular(p.path)
	if err != nil {
		return nil, &sighting.NotTextError{Content: sighting.ErrorContent(errorMessage(err))}
	}
	return &textReader{ctx: p.ctx, f: f}, nil
}

// textReader reads a file, checking that it is text as it goes.
type textReader struct {
	ctx   context.Context // the observation's (fileText)
	f     *os.File
	carry []byte // an incomplete rune held back from the last read
	total uint64
	err   error
}

func (r *textReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if len(p) <= utf8.UTFMax {
		return 0, io.ErrShortBuffer
	}
	k := copy(p, r.carry)
	r.carry = r.carry[:0]
	n, err := r.f.Read(p[k:])
	r.total += uint64(n)
	data := p[:k+n]
	complete := len(data)
	if err == nil {
		complete = utf8x.CompleteRunes(data)
	}
	if !utf8.Valid(data[:complete]) || bytes.IndexByte(data[:complete], 0) >= 0 {
		var content sighting.FileContent
		if err != nil && !errors.Is(err, io.EOF) {
			content = sighting.ErrorContent(errorMessage(err))
		} else {
			content = countRest(r.ctx, r.f, make([]byte, readChunk), r.total, err != nil)
		}
		r.err = &sighting.NotTextError{Content: content}
		return 0, r.err
	}
	r.carry = append(r.carry, data[complete:]...)
	switch {
	case errors.Is(err, io.EOF):
		r.err = io.EOF
		if complete == 0 {
			return 0, io.EOF
		}
		return complete, nil
	case err != nil:
		r.err = &sighting.NotTextError{Content: sighting.ErrorContent(errorMessage(err))}
		return 0, r.err
	}
	return complete, nil
}

func (r *textReader) Close() error { return r.f.Close() }
