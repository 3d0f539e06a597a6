package segment

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/helmlog/helm/chain"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFrameRoundTripAndChain(t *testing.T) {
	t.Parallel()
	b, s1 := appendFrame(nil, 7, 0, false, 42, []byte("hello"))
	b, s2 := appendFrame(b, 8, 1, true, s1, []byte(""))
	require.Equal(t, 0, len(b)%frameAlign)
	f, n, st := decodeFrame(b, 42)
	require.Equal(t, frameOK, st)
	assert.Equal(t, frame{seq: 7, idx: 0, last: false, sum: s1, data: []byte("hello")}, f)
	f, _, st = decodeFrame(b[n:], s1)
	require.Equal(t, frameOK, st)
	assert.True(t, f.last)
	assert.Equal(t, uint64(7), f.unitStart())
	assert.Equal(t, s2, f.sum)
	_, _, st = decodeFrame(b, 43)
	assert.Equal(t, frameBody, st, "a different chain value is detected")
	_, _, st = decodeFrame(make([]byte, 64), 0)
	assert.Equal(t, frameZero, st)
	_, _, st = decodeFrame(b[:n-1], 42)
	assert.Equal(t, frameShort, st)
}

func TestGarbageLengthIsNeverTrusted(t *testing.T) {
	t.Parallel()
	b, _ := appendFrame(nil, 1, 0, true, 0, []byte("x"))
	b[7] = 0x7f // length now ~2 GiB, header checksum no longer matches
	_, _, st := decodeFrame(b, 0)
	assert.Equal(t, frameHeader, st)
}

// FuzzDecodeRecord feeds arbitrary bytes to the frame decoder: it must
// never panic, never read past its input, and whatever it accepts must
// re-encode to the very same bytes.
func FuzzDecodeRecord(f *testing.F) {
	b, s := appendFrame(nil, 1, 0, true, 0, []byte("seed record"))
	f.Add(b, uint32(0))
	b2, _ := appendFrame(nil, 9, 2, false, s, bytes.Repeat([]byte{0xab}, 100))
	f.Add(b2, s)
	f.Add(make([]byte, 24), uint32(0))
	f.Add([]byte{1, 2, 3}, uint32(7))
	full, _ := appendFrame(nil, 4, 1, true, s, []byte("a reclaimed blob"))
	fr, _, _ := decodeFrame(full, s)
	f.Add(appendStub(nil, fr, len(fr.data), crc32.Checksum(fr.data, castagnoli), nil), s)
	d := chain.Digest(fr.data)
	f.Add(appendStub(nil, fr, len(fr.data), crc32.Checksum(fr.data, castagnoli), &d), s)
	f.Fuzz(func(t *testing.T, in []byte, prev uint32) {
		fr, n, st := decodeFrame(in, prev)
		if st != frameOK {
			if n != 0 {
				t.Fatalf("status %v with size %d", st, n)
			}
			return
		}
		if n > len(in) || n%frameAlign != 0 {
			t.Fatalf("size %d of %d bytes", n, len(in))
		}
		if fr.stub {
			recLen, recCRC := binary.LittleEndian.Uint32(in[frameHeaderSize:]), binary.LittleEndian.Uint32(in[frameHeaderSize+4:])
			var digest *chain.Hash
			if n == frameSize(stubSizeV4) {
				digest = &fr.digest
			} else if fr.digest != weakDigest(recLen, recCRC) {
				t.Fatalf("a format-3 stub's digest is not the weak one")
			}
			if fr.data != nil || fr.recLen != int(recLen) || chainOver(prev, int(recLen), recCRC) != fr.sum || !bytes.Equal(appendStub(nil, fr, int(recLen), recCRC, digest), in[:n]) {
				t.Fatalf("accepted stub does not re-encode identically")
			}
			return
		}
		re, sum := appendFrame(nil, fr.seq, fr.idx, fr.last, prev, fr.data)
		if sum != fr.sum || !bytes.Equal(re, in[:n]) {
			t.Fatalf("accepted frame does not re-encode identically")
		}
	})
}

// FuzzDecodeFileHeader: a header is accepted only when it re-encodes to
// the same bytes (format 2) or checks out under format 1's layout, and a
// garbage header never panics.
func FuzzDecodeFileHeader(f *testing.F) {
	f.Add(encodeFileHeader(fileHeader{first: 1, seed: genesis(2, idOf("voyage")), id: idOf("voyage")}))
	f.Add(encodeFileHeader(fileHeader{version: 2, first: 4097, seed: 77}))
	f.Add(encodeFileHeader(fileHeader{version: 3, first: 4097, seed: 77}))
	f.Add(encodeFileHeader(fileHeader{first: 1, seed: 9, id: idOf("voyage"), link: chain.Genesis("voyage")}))
	v1 := make([]byte, fileHeaderSizeV1)
	copy(v1, fileMagic)
	binary.LittleEndian.PutUint32(v1[8:], 1)
	binary.LittleEndian.PutUint64(v1[16:], 1)
	binary.LittleEndian.PutUint32(v1[28:], crc32.Checksum(v1[:28], castagnoli))
	f.Add(v1)
	f.Add([]byte("HELMSEG\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		h, reason := decodeFileHeader(in)
		if reason != "" {
			return
		}
		if h.first == 0 || h.version < 1 || h.version > formatVersion {
			t.Fatalf("accepted header %+v", h)
		}
		if h.version >= 2 && !bytes.Equal(encodeFileHeader(h), in[:h.size()]) {
			t.Fatalf("accepted format-%d header does not re-encode identically", h.version)
		}
	})
}

// FuzzDecodeWatermark: a slot is accepted only when it re-encodes to the
// same bytes.
func FuzzDecodeWatermark(f *testing.F) {
	f.Add(encodeWatermark(watermark{last: 42, segment: 1, sum: 0xdeadbeef}))
	f.Add(encodeWatermark(watermark{last: 42, segment: 1, sum: 0xdeadbeef, link: chain.Digest([]byte("x")), linked: true}))
	f.Add(make([]byte, watermarkLen))
	f.Add([]byte("HELMWMK\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		w, ok := decodeWatermark(in)
		if !ok {
			return
		}
		want := encodeWatermark(w)
		if !bytes.Equal(want, in[:len(want)]) {
			t.Fatalf("accepted slot does not re-encode identically")
		}
	})
}
