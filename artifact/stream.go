package artifact

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"runtime"

	"github.com/klauspost/compress/zstd"
	"github.com/zeebo/blake3"

	"github.com/helmlog/helm/segment"
)

// Streaming a large artifact: its bytes are written by a function, hashed
// and compressed as they come, straight into a frame at the pack's end.
// Neither the bytes nor their compressed form are ever held whole, so a
// sighting of gigabytes costs a few buffers. The frame's header (its size,
// checksum and hash) is written last, once they are known.

// Stream returns an artifact whose bytes encode writes, for one too large
// to hold in memory. Its address and size are known once Pack.StowStream
// has run it. encode may be run more than once (see ErrRestart).
func Stream(encode func(w io.Writer) error) *Encoded { return &Encoded{encode: encode} }

// Streamed reports whether e's bytes are written by a function (Stream):
// such an artifact always goes to the pack.
func (e *Encoded) Streamed() bool { return e.encode != nil }

// Settle runs a streamed artifact's encode function into memory and
// makes e an artifact of those bytes, hashed and ready to compress, for a
// store that takes artifacts whole. An artifact that is not streamed is
// left as it is.
func (e *Encoded) Settle() error {
	if e.encode == nil {
		return nil
	}
	var buf bytes.Buffer
	for {
		buf.Reset()
		err := e.encode(&buf)
		if errors.Is(err, ErrRestart) {
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	*e = *Prepare(buf.Bytes())
	return nil
}

// ErrRestart, wrapped in the error of a stream's encode function, asks
// StowStream to discard what it wrote and run it again from the start:
// the function found, part way, that it must write something else. The
// function must come to an end: each restart should settle something
// (the facade's settles one file found not to be text).
var ErrRestart = errors.New("restart the artifact's encoding")

// StowStream runs e's encode function (Stream), hashing and compressing
// what it writes into a frame at the pack's end, and makes the frame
// durable (fdatasync) before it returns where it is. It sets e's Hash and
// Size. When held reports that the voyage holds the artifact already, the
// frame is truncated away and stored is false. Like Stow, a frame whose
// writing fails is truncated away before the error is returned, and the
// caller serialises writers of one pack.
func (p *Pack) StowStream(e *Encoded, held func(hash string) bool) (ref Ref, stored bool, err error) {
	if !e.Streamed() {
		return Ref{}, false, fmt.Errorf("stow artifact in %s: not a streamed artifact", p.path)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	off, err := p.end()
	if err != nil {
		return Ref{}, false, err
	}
	for {
		fw, err := p.writeFrameBody(e, off)
		if errors.Is(err, ErrRestart) {
			if terr := p.w.Truncate(off); terr != nil {
				return Ref{}, false, p.unwrite(off, fmt.Errorf("truncate %s back to %d bytes to write an artifact again: %w", p.path, off, terr))
			}
			continue
		}
		if err != nil {
			return Ref{}, false, p.unwrite(off, fmt.Errorf("write an artifact to %s at offset %d: %w", p.path, off, err))
		}
		e.Hash = hex.EncodeToString(fw.sum.Sum(nil))
		e.Size = fw.size
		if fw.stored > maxFrame {
			return Ref{}, false, p.unwrite(off, fmt.Errorf("stow artifact %s in %s: %d compressed bytes exceed a frame's %d", e.Hash, p.path, fw.stored, int64(maxFrame)))
		}
		if held != nil && held(e.Hash) {
			// Stored once per voyage: these bytes are not needed. Nothing
			// refers to them, so a crash before the truncation is harmless.
			if terr := p.w.Truncate(off); terr != nil {
				return Ref{}, false, p.unwrite(off, fmt.Errorf("truncate %s back to %d bytes after writing artifact %s again: %w", p.path, off, e.Hash, terr))
			}
			return Ref{Hash: e.Hash, Size: e.Size}, false, nil
		}
		head := make([]byte, frameHead)
		binary.LittleEndian.PutUint32(head[0:], uint32(fw.stored))
		hex.Decode(head[8:], []byte(e.Hash))
		crc := crc32.Update(crc32.Checksum(head[0:4], castagnoli), castagnoli, head[8:])
		binary.LittleEndian.PutUint32(head[4:], crc32Combine(crc, fw.crc, fw.stored))
		if _, err := p.w.WriteAt(head, off); err != nil {
			return Ref{}, false, p.unwrite(off, fmt.Errorf("write artifact %s's frame header to %s at offset %d: %w", e.Hash, p.path, off, err))
		}
		if !p.noSync {
			if err := p.w.Datasync(); err != nil {
				return Ref{}, false, p.unwrite(off, fmt.Errorf("fdatasync %s after writing artifact %s at offset %d: %w", p.path, e.Hash, off, err))
			}
		}
		return Ref{Hash: e.Hash, Size: e.Size, StoredSize: fw.stored, Offset: off}, true, nil
	}
}

// writeFrameBody runs e's encode function once, writing the compressed
// bytes after the frame header's place at off.
func (p *Pack) writeFrameBody(e *Encoded, off int64) (*frameWriter, error) {
	fw := &frameWriter{f: p.w, off: off + frameHead, buf: make([]byte, 0, frameBuffer), sum: blake3.New()}
	z, err := zstd.NewWriter(fw, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)))
	if err != nil {
		return nil, err
	}
	raw := newRawWriter(fw, z)
	err = e.encode(raw)
	if werr := raw.close(); err == nil {
		err = werr
	}
	if cerr := z.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fw.flush()
	}
	return fw, err
}

// frameBuffer is how much compressed data is written to the pack at once.
const frameBuffer = 1 << 20

// rawWriter takes an artifact's bytes: a goroutine of its own hashes and
// counts them and hands them to the compressor, so that whatever produces
// the bytes (reading, redacting, escaping a file) runs beside it rather
// than taking turns with it.
type rawWriter struct {
	fw    *frameWriter
	z     *zstd.Encoder
	full  chan []byte // written, to be hashed and compressed
	empty chan []byte // buffers to write into
	done  chan error
	err   error // the goroutine's, once it has stopped
}

// rawBuffers is how many buffers of bytes may wait for the compressor.
const rawBuffers = 4

func newRawWriter(fw *frameWriter, z *zstd.Encoder) *rawWriter {
	w := &rawWriter{fw: fw, z: z, full: make(chan []byte, rawBuffers), empty: make(chan []byte, rawBuffers), done: make(chan error, 1)}
	for range rawBuffers {
		w.empty <- nil
	}
	go w.run()
	return w
}

func (w *rawWriter) run() {
	var err error
	for b := range w.full {
		if err == nil {
			w.fw.sum.Write(b)
			w.fw.size += int64(len(b))
			_, err = w.z.Write(b)
		}
		w.empty <- b[:0]
	}
	w.done <- err
}

func (w *rawWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	b := append(<-w.empty, p...)
	w.full <- b
	return len(p), nil
}

// close waits for the bytes written to be hashed and compressed, and
// returns the compressor's error, if any.
func (w *rawWriter) close() error {
	if w.full != nil {
		close(w.full)
		w.err = <-w.done
		w.full = nil
	}
	return w.err
}

// frameWriter takes the compressed bytes: it checksums them and writes
// them to the pack in large pieces.
type frameWriter struct {
	f      segment.File
	off    int64 // where the next piece goes
	buf    []byte
	crc    uint32 // of the compressed bytes
	stored int64  // compressed bytes
	size   int64  // uncompressed bytes
	sum    hash.Hash
}

func (w *frameWriter) Write(p []byte) (int, error) {
	w.crc = crc32.Update(w.crc, castagnoli, p)
	w.stored += int64(len(p))
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), cap(w.buf)-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		if len(w.buf) == cap(w.buf) {
			if err := w.flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

func (w *frameWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if _, err := w.f.WriteAt(w.buf, w.off); err != nil {
		return err
	}
	w.off += int64(len(w.buf))
	w.buf = w.buf[:0]
	return nil
}

// crc32Combine returns the CRC-32C of a+b from crcA (of a), crcB (of b)
// and b's length, without reading either: zlib's crc32_combine, over
// GF(2) matrices that shift a CRC past len zero bits.
func crc32Combine(crcA, crcB uint32, lenB int64) uint32 {
	if lenB <= 0 {
		return crcA
	}
	var even, odd [32]uint32
	odd[0] = crc32.Castagnoli // the reversed polynomial: one zero bit
	row := uint32(1)
	for n := 1; n < 32; n++ {
		odd[n] = row
		row <<= 1
	}
	gf2Square(&even, &odd) // two zero bits
	gf2Square(&odd, &even) // four
	for {
		// Apply len's bits, a byte (eight zero bits) and up.
		gf2Square(&even, &odd)
		if lenB&1 != 0 {
			crcA = gf2Times(&even, crcA)
		}
		if lenB >>= 1; lenB == 0 {
			break
		}
		gf2Square(&odd, &even)
		if lenB&1 != 0 {
			crcA = gf2Times(&odd, crcA)
		}
		if lenB >>= 1; lenB == 0 {
			break
		}
	}
	return crcA ^ crcB
}

func gf2Times(mat *[32]uint32, vec uint32) uint32 {
	var sum uint32
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

func gf2Square(square, mat *[32]uint32) {
	for n := range 32 {
		square[n] = gf2Times(mat, mat[n])
	}
}

// Open returns a reader of the artifact ref names from its pack frame,
// decompressed as it is read: an artifact of any size costs a few
// buffers. The frame's checksum, size and address are checked as the
// bytes go by; a reader that reaches the end of bytes that do not answer
// them returns a *DamageError instead of io.EOF, so a caller must read to
// the end before trusting what it read.
func (p *Pack) Open(ref Ref) (io.ReadCloser, error) {
	rf, head, damaged, err := p.readFrame(ref, frameHead)
	if err != nil {
		return nil, err
	}
	body := &crcReader{r: io.NewSectionReader(rf, ref.Offset+frameHead, ref.StoredSize),
		crc: crc32.Update(crc32.Checksum(head[0:4], castagnoli), castagnoli, head[8:])}
	dec, err := newStreamDecoder(body)
	if err != nil {
		return nil, err
	}
	return &verifyingReader{ref: ref, head: head, body: body, dec: dec, sum: blake3.New(), damaged: damaged}, nil
}

// readError turns a failure to open the pack for reading into the error
// Load and Open return.
func (p *Pack) readError(ref Ref, err error) error {
	damaged := &DamageError{Hash: ref.Hash, File: p.path, Offset: ref.Offset}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		damaged.Reason = "the pack file is missing"
	case errors.Is(err, errShortHeader):
		damaged.Reason = "the pack file ends inside its header"
	default:
		return err
	}
	return damaged
}

type crcReader struct {
	r   io.Reader
	crc uint32
	n   int64
}

func (c *crcReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.crc = crc32.Update(c.crc, castagnoli, p[:n])
	c.n += int64(n)
	return n, err
}

// verifyingReader decompresses a frame and checks it at its end.
type verifyingReader struct {
	ref     Ref
	head    []byte
	body    *crcReader
	dec     *zstd.Decoder
	sum     hash.Hash
	n       int64
	err     error
	damaged func(string) error
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.dec.Read(p)
	v.sum.Write(p[:n])
	v.n += int64(n)
	switch {
	case v.n > v.ref.Size:
		// Found as soon as it happens: a frame that expands beyond what
		// its event declares is never read to its end.
		v.err = v.damaged(tooLarge(v.ref))
		return n, v.err
	case errors.Is(err, io.EOF):
		v.err = v.check()
		if v.err == nil {
			v.err = io.EOF
		}
		return n, v.err
	case err != nil:
		v.err = v.damaged(zstdReason(err, v.ref))
		return n, v.err
	}
	return n, err
}

// check runs once the frame is read: its checksum, then the address.
func (v *verifyingReader) check() error {
	if v.body.n != v.ref.StoredSize {
		return v.damaged("the pack file ends before the artifact does")
	}
	if v.body.crc != binary.LittleEndian.Uint32(v.head[4:]) {
		return v.damaged("frame checksum mismatch")
	}
	if got := hex.EncodeToString(v.sum.Sum(nil)); got != v.ref.Hash {
		return v.damaged("BLAKE3 of the content is " + got)
	}
	return nil
}

func (v *verifyingReader) Close() error {
	v.dec.Close()
	if v.err == nil {
		v.err = errors.New("artifact reader closed")
	}
	return nil
}

// checkWhole is the largest artifact Check reads whole, compressed and
// decompressed: its checksum is then checked before it is decompressed,
// which names the damage best.
const checkWhole = 8 << 20

// Check reads the artifact ref names and checks it against its frame's
// checksum and its address, without keeping its bytes: a large one is
// streamed (Open), so that checking an artifact of any size costs a few
// buffers. Large is by either size: a frame of a few hundred kilobytes
// may hold a gigabyte. Damage is a *DamageError.
func (p *Pack) Check(ref Ref) error {
	if ref.StoredSize <= checkWhole && ref.Size <= checkWhole {
		_, err := p.Load(ref)
		return err
	}
	r, err := p.Open(ref)
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = io.Copy(io.Discard, r)
	return err
}
