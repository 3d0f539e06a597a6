package artifact

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/zeebo/blake3"
)

// An artifact's stored form — its compressed bytes, as a blob record or a
// pack frame holds them — copied out of one voyage and into another as it
// is (an export, and its import): the bytes keep their stored size, and
// are checked against their address on the way, never trusted.

// CopyStored copies the stored form of the artifact ref names, exactly
// ref.StoredSize compressed bytes, from r to w, checking as they go by
// that they decompress to ref.Size bytes whose BLAKE3 is ref.Hash. Bytes
// that do not (fewer or more of them, not zstd, another size or hash) are
// an error wrapping ErrDamaged, returned once w has had what was read: the
// caller discards what it wrote. An error of w is returned as it is.
func CopyStored(w io.Writer, ref Ref, r io.Reader) error {
	if ref.StoredSize < 0 || ref.Size < 0 {
		return fmt.Errorf("%w: artifact %s: negative size", ErrDamaged, ref.Hash)
	}
	in := &countingReader{r: io.LimitReader(r, ref.StoredSize)}
	tw := &teeWriter{w: w}
	tee := io.TeeReader(in, tw)
	dec, err := newStreamDecoder(tee)
	if err != nil {
		return err
	}
	defer dec.Close()
	sum := blake3.New()
	n, err := io.Copy(sum, io.LimitReader(dec, ref.Size+1))
	if tw.err != nil {
		return tw.err
	}
	if err != nil {
		if in.err != nil && !errors.Is(in.err, io.EOF) {
			return in.err // reading failed: not the bytes' fault
		}
		return fmt.Errorf("%w: artifact %s: %s", ErrDamaged, ref.Hash, zstdReason(err, ref))
	}
	// What the decoder left unread (bytes after the zstd frame) is part of
	// the stored form all the same.
	if _, err := io.Copy(io.Discard, tee); err != nil {
		if tw.err != nil {
			return tw.err
		}
		return err
	}
	if in.n != ref.StoredSize {
		return fmt.Errorf("%w: artifact %s: %d stored bytes, its event says %d", ErrDamaged, ref.Hash, in.n, ref.StoredSize)
	}
	if more, err := moreThan(r); err != nil {
		return err // r's own check of what it read (a pack frame's checksum)
	} else if more {
		return fmt.Errorf("%w: artifact %s: more than the %d stored bytes its event says", ErrDamaged, ref.Hash, ref.StoredSize)
	}
	switch {
	case n > ref.Size:
		return fmt.Errorf("%w: artifact %s: %s", ErrDamaged, ref.Hash, tooLarge(ref))
	case n != ref.Size:
		return fmt.Errorf("%w: artifact %s: decompresses to %d bytes, its event says %d", ErrDamaged, ref.Hash, n, ref.Size)
	}
	if got := hex.EncodeToString(sum.Sum(nil)); got != ref.Hash {
		return fmt.Errorf("%w: artifact %s: BLAKE3 of the content is %s", ErrDamaged, ref.Hash, got)
	}
	return nil
}

// moreThan reports whether r has a byte left to read (and reads it), or
// the error r ends with other than io.EOF.
func moreThan(r io.Reader) (bool, error) {
	var b [1]byte
	for range 100 {
		n, err := r.Read(b[:])
		if n > 0 {
			return true, nil
		}
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	return false, io.ErrNoProgress
}

type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil {
		c.err = err
	}
	return n, err
}

// teeWriter keeps the error of w, so that CopyStored can tell it from the
// decoder's.
type teeWriter struct {
	w   io.Writer
	err error
}

func (t *teeWriter) Write(p []byte) (int, error) {
	if t.err != nil {
		return 0, t.err
	}
	n, err := t.w.Write(p)
	if err != nil {
		t.err = err
	}
	return n, err
}

// OpenStored returns a reader of the stored form of the artifact ref
// names from its pack frame: its compressed bytes as the frame holds
// them, read as they are asked for. The frame's size and checksum are
// checked: a reader that reaches the end of a frame that does not check
// out returns a *DamageError instead of io.EOF. The bytes are not
// decompressed (CopyStored checks them against the address).
func (p *Pack) OpenStored(ref Ref) (io.Reader, error) {
	rf, head, damaged, err := p.readFrame(ref, frameHead)
	if err != nil {
		return nil, err
	}
	body := &crcReader{r: io.NewSectionReader(rf, ref.Offset+frameHead, ref.StoredSize),
		crc: crc32.Update(crc32.Checksum(head[0:4], castagnoli), castagnoli, head[8:])}
	return &storedReader{ref: ref, head: head, body: body, damaged: damaged}, nil
}

type storedReader struct {
	ref     Ref
	head    []byte
	body    *crcReader
	damaged func(string) error
	err     error
}

func (s *storedReader) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.body.Read(p)
	if errors.Is(err, io.EOF) {
		switch {
		case s.body.n != s.ref.StoredSize:
			s.err = s.damaged("the pack file ends before the artifact does")
		case s.body.crc != binary.LittleEndian.Uint32(s.head[4:]):
			s.err = s.damaged("frame checksum mismatch")
		default:
			s.err = io.EOF
		}
		return n, s.err
	}
	if err != nil {
		s.err = err
	}
	return n, err
}

// StowStored appends a frame holding the stored form of the artifact ref
// names (its Hash, Size and StoredSize), read from r, and makes it durable
// (fdatasync) before it returns where the frame is: the frame holds the
// very bytes read, so the artifact keeps its stored size. The bytes are
// checked as they are written (CopyStored); a frame whose bytes do not
// check out, or whose writing fails, is truncated away before the error
// is returned. Like Stow, the caller serialises the pack's writers.
func (p *Pack) StowStored(ref Ref, r io.Reader) (Ref, error) {
	sum, err := p.storedAddress(ref)
	if err != nil {
		return Ref{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	off, err := p.end()
	if err != nil {
		return Ref{}, err
	}
	fw := &frameWriter{f: p.w, off: off + frameHead, buf: make([]byte, 0, min(frameBuffer, max(ref.StoredSize, 1)))}
	tw := &teeWriter{w: fw}
	err = CopyStored(tw, ref, r)
	if err == nil {
		err = fw.flush()
		tw.err = err
	}
	if err != nil {
		if tw.err == nil {
			// The bytes read did not check out, or could not be read: not
			// stored, and nothing refers to what was written of them.
			if terr := p.w.Truncate(off); terr != nil {
				return Ref{}, p.unwrite(off, fmt.Errorf("%w; and truncating %s back to %d bytes: %v", err, p.path, off, terr))
			}
			return Ref{}, err
		}
		return Ref{}, p.unwrite(off, fmt.Errorf("write artifact %s to %s at offset %d: %w", ref.Hash, p.path, off, err))
	}
	head := make([]byte, frameHead)
	binary.LittleEndian.PutUint32(head[0:], uint32(ref.StoredSize))
	copy(head[8:], sum)
	crc := crc32.Update(crc32.Checksum(head[0:4], castagnoli), castagnoli, head[8:])
	binary.LittleEndian.PutUint32(head[4:], crc32Combine(crc, fw.crc, fw.stored))
	if _, err := p.w.WriteAt(head, off); err != nil {
		return Ref{}, p.unwrite(off, fmt.Errorf("write artifact %s's frame header to %s at offset %d: %w", ref.Hash, p.path, off, err))
	}
	if !p.noSync {
		if err := p.w.Datasync(); err != nil {
			return Ref{}, p.unwrite(off, fmt.Errorf("fdatasync %s after writing artifact %s at offset %d: %w", p.path, ref.Hash, off, err))
		}
	}
	return Ref{Hash: ref.Hash, Size: ref.Size, StoredSize: ref.StoredSize, Offset: off}, nil
}

// StowReclaimed appends the frame of an artifact whose bytes are gone (a
// jettisoned artifact, which an export leaves out) as Reclaim leaves one:
// its header (size and hash) and a body of zeros, ref.StoredSize bytes
// that cost no disk where the file system keeps holes. Reading it fails,
// as reading a reclaimed frame does; reclaiming it again is a no-op. It is
// made durable before it returns where it is.
func (p *Pack) StowReclaimed(ref Ref) (Ref, error) {
	sum, err := p.storedAddress(ref)
	if err != nil {
		return Ref{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	off, err := p.end()
	if err != nil {
		return Ref{}, err
	}
	head := make([]byte, frameHead)
	binary.LittleEndian.PutUint32(head[0:], uint32(ref.StoredSize))
	copy(head[8:], sum)
	if _, err := p.w.WriteAt(head, off); err != nil {
		return Ref{}, p.unwrite(off, fmt.Errorf("write the frame of reclaimed artifact %s to %s at offset %d: %w", ref.Hash, p.path, off, err))
	}
	if err := p.w.Truncate(off + frameHead + ref.StoredSize); err != nil {
		return Ref{}, p.unwrite(off, fmt.Errorf("extend %s past the frame of reclaimed artifact %s at offset %d: %w", p.path, ref.Hash, off, err))
	}
	if !p.noSync {
		if err := p.w.Datasync(); err != nil {
			return Ref{}, p.unwrite(off, fmt.Errorf("fdatasync %s after writing reclaimed artifact %s at offset %d: %w", p.path, ref.Hash, off, err))
		}
	}
	return Ref{Hash: ref.Hash, Size: ref.Size, StoredSize: ref.StoredSize, Offset: off}, nil
}

// storedAddress checks what a frame of ref's stored bytes needs: a
// BLAKE3 address, and a size a frame holds.
func (p *Pack) storedAddress(ref Ref) ([]byte, error) {
	sum, err := p.address(ref.Hash)
	if err != nil {
		return nil, err
	}
	if ref.StoredSize < 0 || ref.StoredSize > maxFrame {
		return nil, fmt.Errorf("stow artifact %s in %s: %d compressed bytes do not fit a frame (at most %d)", ref.Hash, p.path, ref.StoredSize, int64(maxFrame))
	}
	return sum, nil
}
