package helm

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/zeebo/blake3"
	"golang.org/x/sys/unix"

	"github.com/helmlog/helm/projection"
)

// Where a sighting's bytes live.
//
// A sighting's JSON is zstd-compressed and stored once per voyage under
// the BLAKE3 hash of the uncompressed JSON. A small one (compressed to at
// most inlineMax bytes, which is most: a 2 KiB source file compresses to
// under 1 KiB) is a blob record in the event log, appended in the same
// batch as the artifact-stowed event that names it: one write, one
// fdatasync for the whole observation. Opening a voyage reads past blob
// records without decoding them.
//
//	blob record: | 0x02 | zstd bytes |
//
// The format byte 0x02 is neither an event's (0x01, or '{' for JSON), so a
// reader tells blobs from events by the first byte.
//
// A large one goes to the pack file beside the event log, which opening a
// voyage never reads; its frame is fdatasync'd before the event that
// refers to it is appended (a second fdatasync, small next to compressing
// a large sighting):
//
//	file:  "HELMPK01"                       8 bytes: magic and format version
//	frame: | size u32 | crc u32 | hash 32 B | zstd bytes (size) |
//
// crc is CRC32C over size, hash and the compressed bytes: a cheap check
// that catches damage before decompression. Either way, the BLAKE3 hash of
// the decompressed bytes must equal the address: the artifact verifies
// itself when it is read. A crash after a pack frame but before its event
// leaves unreferenced bytes at the end of the pack: harmless, and the next
// frame is written after them. A frame whose write or fdatasync fails (a
// full disk) is truncated away before the error is returned.
const (
	blobFormat    = 0x02
	inlineMax     = 32 << 10
	packMagic     = "HELMPK01"
	packFrameHead = 4 + 4 + 32
	packName      = "artifacts.pack"
)

// isBlob reports whether a log record is an artifact blob, not an event.
func isBlob(record []byte) bool { return len(record) > 0 && record[0] == blobFormat }

// compress returns the zstd form of a sighting's JSON.
func compress(data []byte) []byte { return zenc.EncodeAll(data, nil) }

// expand decompresses an artifact's stored bytes and checks them against
// its address; where names the place for the error.
func expand(ref *projection.ArtifactRef, stored []byte, where string) ([]byte, error) {
	data, err := zdec.DecodeAll(stored, make([]byte, 0, ref.Size))
	if err != nil {
		return nil, artifactDamaged(ref, where, "zstd: "+err.Error())
	}
	if got := hashArtifact(data); got != ref.Hash {
		return nil, artifactDamaged(ref, where, "BLAKE3 of the content is "+got)
	}
	return data, nil
}

func artifactDamaged(ref *projection.ArtifactRef, where, why string) error {
	return fmt.Errorf("%w: artifact %s in %s: %s (run `helm voyage verify`)", ErrArtifactDamaged, ref.Hash, where, why)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var (
	zenc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	zdec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
)

// hashArtifact returns the content address of a sighting's JSON.
func hashArtifact(data []byte) string {
	sum := blake3.Sum256(data)
	return hex.EncodeToString(sum[:])
}

type pack struct {
	path   string
	noSync bool
	// datasync makes a written frame durable: fdatasync. Tests inject a
	// failing one.
	datasync func(*os.File) error

	mu sync.Mutex
	f  *os.File // opened lazily for writing
	rf *os.File // opened lazily for reading
}

func newPack(dir string, noSync bool) *pack {
	return &pack{path: filepath.Join(dir, packName), noSync: noSync, datasync: fdatasync}
}

func fdatasync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if err != unix.EINTR {
			return err
		}
	}
}

// stow appends compressed, the zstd form of a sighting of size bytes, as
// a frame, durably. The caller holds the voyage's write lock.
func (p *pack) stow(hash string, size int64, compressed []byte) (*projection.ArtifactRef, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.openWrite(); err != nil {
		return nil, err
	}
	st, err := p.f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", p.path, err)
	}
	off := st.Size()
	sum, _ := hex.DecodeString(hash)
	frame := make([]byte, packFrameHead, packFrameHead+len(compressed))
	copy(frame[8:], sum)
	frame = append(frame, compressed...)
	binary.LittleEndian.PutUint32(frame[0:], uint32(len(frame)-packFrameHead))
	crc := crc32.Update(crc32.Checksum(frame[0:4], castagnoli), castagnoli, frame[8:])
	binary.LittleEndian.PutUint32(frame[4:], crc)
	if _, err := p.f.WriteAt(frame, off); err != nil {
		return nil, p.unwrite(off, fmt.Errorf("write artifact %s (%d bytes) to %s at offset %d: %w", hash, len(frame), p.path, off, err))
	}
	if !p.noSync {
		if err := p.datasync(p.f); err != nil {
			return nil, p.unwrite(off, fmt.Errorf("fdatasync %s after writing artifact %s at offset %d: %w", p.path, hash, off, err))
		}
	}
	return &projection.ArtifactRef{
		Hash: hash, Size: size, StoredSize: int64(len(compressed)), Offset: off,
	}, nil
}

// unwrite undoes a frame whose write or fdatasync at off failed (err): it
// truncates the pack back to off and makes that durable, so no partial
// frame is left after the pack's end, and closes the write handle (after a
// failed fdatasync the page cache may not match the disk; the next stow
// opens the pack again). It returns err with what became of the pack and
// what to do. Nothing refers to the frame: its event was not appended.
func (p *pack) unwrite(off int64, err error) error {
	terr := p.f.Truncate(off)
	if terr == nil && !p.noSync {
		terr = p.f.Sync()
	}
	p.f.Close()
	p.f = nil
	fix := "retry"
	if noSpace(err) {
		fix = "free disk space, then retry"
	}
	if terr != nil {
		return fmt.Errorf("%w; truncating %s back to %d bytes failed too (%v): the bytes after offset %d are an unreferenced partial frame, harmless: the next artifact is written after them; the artifact was not stored: %s", err, p.path, off, terr, off, fix)
	}
	return fmt.Errorf("%w; %s was truncated back to %d bytes and the artifact was not stored: %s", err, p.path, off, fix)
}

// noSpace reports whether err says the file system, or the owner's quota,
// is full.
func noSpace(err error) bool {
	return errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT)
}

func (p *pack) openWrite() error {
	if p.f != nil {
		return nil
	}
	f, err := os.OpenFile(p.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open %s: %w", p.path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("stat %s: %w", p.path, err)
	}
	if st.Size() == 0 {
		// A new pack: write its header and make the file itself durable
		// (data, then the directory entry) before any frame refers to it.
		if _, err := f.WriteAt([]byte(packMagic), 0); err != nil {
			f.Truncate(0) // no partial header: the next stow writes it again
			f.Close()
			fix := "retry"
			if noSpace(err) {
				fix = "free disk space, then retry"
			}
			return fmt.Errorf("write %s header at offset 0: %w (the artifact was not stored: %s)", p.path, err, fix)
		}
		if !p.noSync {
			if err := f.Sync(); err != nil {
				f.Close()
				return fmt.Errorf("fsync %s: %w", p.path, err)
			}
			if err := syncDir(filepath.Dir(p.path)); err != nil {
				f.Close()
				return err
			}
		}
	} else if err := checkPackMagic(f, p.path); err != nil {
		f.Close()
		return err
	}
	p.f = f
	return nil
}

func checkPackMagic(f *os.File, path string) error {
	var magic [len(packMagic)]byte
	if _, err := f.ReadAt(magic[:], 0); err != nil {
		return fmt.Errorf("read %s header: %w", path, err)
	}
	if string(magic[:]) != packMagic {
		return fmt.Errorf("%s is not a helm pack file (header %q, want %q): it was written by another program or a newer helm", path, magic[:], packMagic)
	}
	return nil
}

// load reads, decompresses and verifies the artifact described by ref.
func (p *pack) load(ref *projection.ArtifactRef) ([]byte, error) {
	p.mu.Lock()
	if p.rf == nil {
		f, err := os.Open(p.path)
		if err != nil {
			p.mu.Unlock()
			return nil, fmt.Errorf("open %s: %w", p.path, err)
		}
		if err := checkPackMagic(f, p.path); err != nil {
			f.Close()
			p.mu.Unlock()
			return nil, err
		}
		p.rf = f
	}
	rf := p.rf
	p.mu.Unlock()

	where := fmt.Sprintf("%s at offset %d", p.path, ref.Offset)
	damaged := func(why string) error { return artifactDamaged(ref, where, why) }
	frame := make([]byte, packFrameHead+ref.StoredSize)
	if _, err := rf.ReadAt(frame, ref.Offset); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, damaged("the pack file ends before the artifact does")
		}
		return nil, fmt.Errorf("read artifact %s from %s: %w", ref.Hash, p.path, err)
	}
	if got := int64(binary.LittleEndian.Uint32(frame[0:])); got != ref.StoredSize {
		return nil, damaged(fmt.Sprintf("frame size %d, event says %d", got, ref.StoredSize))
	}
	crc := crc32.Update(crc32.Checksum(frame[0:4], castagnoli), castagnoli, frame[8:])
	if crc != binary.LittleEndian.Uint32(frame[4:]) {
		return nil, damaged("frame checksum mismatch")
	}
	return expand(ref, frame[packFrameHead:], where)
}

func (p *pack) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var err error
	if p.f != nil {
		err = p.f.Close()
		p.f = nil
	}
	if p.rf != nil {
		if cerr := p.rf.Close(); err == nil {
			err = cerr
		}
		p.rf = nil
	}
	return err
}

// syncDir fsyncs a directory so that a file created in it survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}
