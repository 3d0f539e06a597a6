package helm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/redact"
	"github.com/helmlog/helm/sighting"
)

// Large sightings: a file-contents sighting whose large files were left
// unread (sighting.TextSource) is stored as a stream. Its JSON is written,
// redacted, hashed and compressed as the files are read, straight into a
// frame of the pack (artifact.Pack.StowStream), so a file of gigabytes
// costs a few megabytes of memory.

// streamAbove is the size above which Observe leaves a file's text to be
// streamed as it is stored, rather than read into the sighting.
const streamAbove = 4 << 20

// streamedSighting is a sighting stored as a stream, and what storing it
// found out.
type streamedSighting struct {
	ctx context.Context // ends the reading of a large file: nothing is stored
	red *redact.Redactor
	// cur is the sighting as it is stored: a content whose source turned
	// out not to be text is replaced by what it is.
	cur        *sighting.Files
	sizes      map[int]uint64 // bytes read of each streamed text, by index
	redactions int
}

func newStreamedSighting(ctx context.Context, red *redact.Redactor, f *sighting.Files) *streamedSighting {
	return &streamedSighting{ctx: ctx, red: red, cur: &sighting.Files{Contents: slices.Clone(f.Contents)}}
}

// encode writes the sighting's JSON, redacted, with the number of secrets
// hidden (the "redactions" member redactSighting adds) at its end. It asks
// to be run again (artifact.ErrRestart) when a source turns out not to be
// text, having recorded what it is instead.
func (s *streamedSighting) encode(w io.Writer) error {
	s.sizes, s.redactions = map[int]uint64{}, 0
	var order []int // the streamed contents' indexes, in order
	for i, c := range s.cur.Contents {
		if c.Content.Source != nil {
			order = append(order, i)
		}
	}
	var texts []*countingWriter
	tail := &holdLast{w: w}
	err := sighting.Encode(tail, s.cur, &sighting.EncodeOptions{
		JSON: func(doc []byte) []byte {
			out, n := s.red.JSON(doc)
			s.redactions += n
			return out
		},
		Text: func(dst io.Writer) io.WriteCloser {
			c := &countingWriter{ctx: s.ctx, red: s.red.Writer(dst)}
			texts = append(texts, c)
			return c
		},
	})
	if nt, ok := errors.AsType[*sighting.NotTextError](err); ok {
		s.cur.Contents[nt.Index].Content = nt.Content
		return fmt.Errorf("%s: %w", s.cur.Contents[nt.Index].Path, artifact.ErrRestart)
	}
	if err != nil {
		return err
	}
	for k, c := range texts {
		s.redactions += c.red.Count()
		s.sizes[order[k]] = c.n
		if n, ok := sighting.TextSize(s.cur.Contents[order[k]].Content.Source); ok {
			s.sizes[order[k]] = n // the size recorded, not that of the text as stored
		}
	}
	return tail.close(s.redactions)
}

// stored returns the sighting as stored, its large texts read back from
// the artifact open returns.
func (s *streamedSighting) stored(open func() (io.ReadCloser, error)) *sighting.Files {
	out := &sighting.Files{Contents: slices.Clone(s.cur.Contents)}
	for i, c := range out.Contents {
		if c.Content.Source != nil {
			out.Contents[i].Content = sighting.FileContent{Type: sighting.ContentText, SizeBytes: s.sizes[i], Source: sighting.StoredText(open, i, s.sizes[i])}
		}
	}
	return out
}

// countingWriter counts a text's bytes on their way to the redactor.
type countingWriter struct {
	ctx context.Context
	red *redact.Writer
	n   uint64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, fmt.Errorf("reading a large file: %w", err)
	}
	c.n += uint64(len(p))
	return c.red.Write(p)
}

func (c *countingWriter) Close() error { return c.red.Close() }

// holdLast writes on all but the last byte written to it, so that close
// can put the "redactions" member before the JSON object's closing brace.
type holdLast struct {
	w    io.Writer
	last []byte
}

func (h *holdLast) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(h.last) > 0 {
		if _, err := h.w.Write(h.last); err != nil {
			return 0, err
		}
	}
	if _, err := h.w.Write(p[:len(p)-1]); err != nil {
		return 0, err
	}
	h.last = append(h.last[:0], p[len(p)-1])
	return len(p), nil
}

func (h *holdLast) close(redactions int) error {
	if redactions > 0 && string(h.last) == "}" {
		_, err := io.WriteString(h.w, `,"redactions":`+strconv.Itoa(redactions)+"}")
		return err
	}
	_, err := h.w.Write(h.last)
	return err
}

// storedOpener returns a function opening the stored artifact a names,
// for a streamed sighting's texts to be read back from. It goes to where
// the bytes are, taking none of the voyage's locks: the sighting may be
// recorded again, its texts read under them. The sighting outlives the
// call that recorded it, and so does ctx's values, not its end.
func (v *Voyage) storedOpener(ctx context.Context, a ArtifactInfo) func() (io.ReadCloser, error) {
	ref := projection.ArtifactRef{Hash: a.Hash, Size: a.Size, StoredSize: a.StoredSize, Offset: a.Offset, Blob: a.Blob}
	ctx = context.WithoutCancel(ctx)
	return func() (io.ReadCloser, error) { return v.open(ctx, &ref) }
}
