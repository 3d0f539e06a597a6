package marks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/helmlog/helm/internal/utf8x"
	"github.com/helmlog/helm/sighting"
)

// readChunk is the buffer size for reading files: large enough that a
// 100 MB file takes a few thousand reads, small enough to never matter.
const readChunk = 256 << 10

// readContent reads one file as text, binary or error. It streams: a binary
// file is recognised on the chunk holding its first invalid byte and then
// only counted, so memory never exceeds the text it returns plus one chunk.
// A file is text when it is valid UTF-8 and holds no NUL byte (git's test
// for binary files, which UTF-8 alone would miss). Anything but a regular
// file is refused without being read (see openRegular): a FIFO, socket or
// device comes back as an error such as "not a regular file (FIFO)".
func readContent(ctx context.Context, path string) sighting.FileContent {
	f, err := openRegular(path)
	if err != nil {
		return sighting.ErrorContent(errorMessage(err))
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return sighting.ErrorContent(errorMessage(err))
	}

	var text strings.Builder
	grown := false
	buf := make([]byte, readChunk)
	var carry int // bytes of an incomplete rune kept at the start of buf
	var total uint64
	for {
		if ctx.Err() != nil {
			return sighting.ErrorContent("interrupted: " + ctx.Err().Error())
		}
		n, err := f.Read(buf[carry:])
		total += uint64(n)
		data := buf[:carry+n]
		complete := len(data)
		if err == nil {
			complete = utf8x.CompleteRunes(data)
		}
		if !utf8.Valid(data[:complete]) || bytes.IndexByte(data[:complete], 0) >= 0 {
			if err != nil && !errors.Is(err, io.EOF) {
				return sighting.ErrorContent(errorMessage(err))
			}
			return countRest(ctx, f, buf, total, err != nil)
		}
		if !grown {
			// The first chunk is text, so the file likely is: size the
			// builder once. A binary file never gets this far.
			if size := info.Size(); size > 0 && size < 1<<40 {
				text.Grow(int(size))
			}
			grown = true
		}
		text.Write(data[:complete])
		carry = copy(buf, data[complete:])
		if errors.Is(err, io.EOF) {
			return sighting.TextContent(text.String())
		}
		if err != nil {
			return sighting.ErrorContent(errorMessage(err))
		}
	}
}

// countRest counts the rest of a binary file, a chunk at a time, checking
// ctx between chunks; total is what was read so far and eof says the file
// has ended already.
func countRest(ctx context.Context, f io.Reader, buf []byte, total uint64, eof bool) sighting.FileContent {
	for !eof {
		if ctx.Err() != nil {
			return sighting.ErrorContent("interrupted: " + ctx.Err().Error())
		}
		n, err := f.Read(buf)
		total += uint64(n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return sighting.ErrorContent(errorMessage(err))
		}
	}
	return sighting.BinaryContent(total)
}

// capBuffer keeps the head and the tail of a stream that may exceed its
// limit, counting what it drops from the middle. It backs the command and
// web marks' output caps.
type capBuffer struct {
	limit   int // total bytes kept: half head, half tail
	head    []byte
	tail    []byte // ring buffer once full
	tailPos int
	dropped int64
}

func (c *capBuffer) Write(p []byte) (int, error) {
	n := len(p)
	half := c.limit / 2
	if room := half - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	tailCap := c.limit - half
	for len(p) > 0 {
		if len(c.tail) < tailCap {
			k := min(tailCap-len(c.tail), len(p))
			c.tail = append(c.tail, p[:k]...)
			p = p[k:]
			continue
		}
		// The ring is full: every byte written now pushes one out.
		if len(p) >= tailCap {
			c.dropped += int64(tailCap) + int64(len(p)-tailCap)
			copy(c.tail, p[len(p)-tailCap:])
			c.tailPos = 0
			p = nil
			break
		}
		k := copy(c.tail[c.tailPos:], p)
		c.dropped += int64(k)
		c.tailPos = (c.tailPos + k) % tailCap
		p = p[k:]
	}
	return n, nil
}

// String returns what was kept, with the marker where bytes were dropped.
func (c *capBuffer) String() string {
	var b strings.Builder
	b.Write(c.head)
	if c.dropped > 0 {
		fmt.Fprintf(&b, "\n… [truncated %d bytes] …\n", c.dropped)
	}
	b.Write(c.tail[c.tailPos:])
	b.Write(c.tail[:c.tailPos])
	return strings.ToValidUTF8(b.String(), "\uFFFD")
}
