package artifact

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

	"github.com/helmlog/helm/internal/durable"
	"github.com/helmlog/helm/segment"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errShortHeader: a pack file shorter than its header.
var errShortHeader = errors.New("short pack header")

// PackOptions tune a Pack. The zero value is what production uses.
type PackOptions struct {
	// FS is the file system the pack is written through; nil means
	// segment.OSFS{}. Tests inject short writes, failing fsyncs and a full
	// disk with it.
	FS segment.FS
	// NoSync skips fdatasync and fsync. For tests of logic only: a crash
	// loses data.
	NoSync bool
}

// Pack is a voyage's pack file (format.go): the artifacts too large to be
// blob records in its event log, one frame each. Its file is opened when
// first needed, so a Pack of a voyage that stores nothing large costs no
// file. A Pack is safe for concurrent use; writers of one pack (goroutines
// or processes) must also be serialised by the caller, as the voyage's
// log lock serialises them, since a frame is written at the pack's end.
type Pack struct {
	dir, path string
	fs        segment.FS
	noSync    bool

	mu sync.Mutex   // the write handle; held while a frame is written
	w  segment.File // open for writing

	rmu sync.Mutex   // the read handle: a read need not wait for a write
	r   segment.File // open for reading
}

// NewPack returns the pack in dir (the voyage's directory). It opens no
// file: Stow creates the pack, Load reads it.
func NewPack(dir string, opts *PackOptions) *Pack {
	p := &Pack{dir: dir, path: filepath.Join(dir, PackName), fs: segment.OSFS{}}
	if opts != nil {
		if opts.FS != nil {
			p.fs = opts.FS
		}
		p.noSync = opts.NoSync
	}
	return p
}

// Path returns the pack file's path.
func (p *Pack) Path() string { return p.path }

// Stow appends e as a frame at the pack's end and makes it durable
// (fdatasync) before it returns where the frame is. A frame whose write or
// fdatasync fails is truncated away again before the error is returned:
// the pack never ends in a partial frame, and the next frame is written
// where this one began. Nothing refers to a frame until the caller
// appends the event that names it.
func (p *Pack) Stow(e *Encoded) (Ref, error) {
	sum, err := p.address(e.Hash)
	if err != nil {
		return Ref{}, err
	}
	e.Compress()
	if len(e.Compressed) > maxFrame {
		return Ref{}, fmt.Errorf("stow artifact %s in %s: %d compressed bytes exceed a frame's %d", e.Hash, p.path, len(e.Compressed), maxFrame)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	off, err := p.end()
	if err != nil {
		return Ref{}, err
	}
	frame := make([]byte, frameHead, frameHead+len(e.Compressed))
	copy(frame[8:], sum)
	frame = append(frame, e.Compressed...)
	binary.LittleEndian.PutUint32(frame[0:], uint32(len(e.Compressed)))
	binary.LittleEndian.PutUint32(frame[4:], frameCRC(frame))
	if _, err := p.w.WriteAt(frame, off); err != nil {
		return Ref{}, p.unwrite(off, fmt.Errorf("write artifact %s (%d bytes) to %s at offset %d: %w", e.Hash, len(frame), p.path, off, err))
	}
	if !p.noSync {
		if err := p.w.Datasync(); err != nil {
			return Ref{}, p.unwrite(off, fmt.Errorf("fdatasync %s after writing artifact %s at offset %d: %w", p.path, e.Hash, off, err))
		}
	}
	return Ref{Hash: e.Hash, Size: e.Size, StoredSize: int64(len(e.Compressed)), Offset: off}, nil
}

// frameCRC is the checksum of a frame: over its size, hash and zstd bytes.
func frameCRC(frame []byte) uint32 {
	return crc32.Update(crc32.Checksum(frame[0:4], castagnoli), castagnoli, frame[8:])
}

// unwrite undoes a frame whose write or fdatasync at off failed (err): it
// truncates the pack back to off and makes that durable, so no partial
// frame is left after the pack's end, and closes the write handle (after a
// failed fdatasync the page cache may not match the disk; the next Stow
// opens the pack again). It returns err with what became of the pack.
func (p *Pack) unwrite(off int64, err error) error {
	terr := p.w.Truncate(off)
	if terr == nil && !p.noSync {
		terr = p.w.Sync()
	}
	p.w.Close()
	p.w = nil
	if terr != nil {
		return fmt.Errorf("%w; truncating %s back to %d bytes failed too (%v): the bytes after offset %d are an unreferenced partial frame, harmless, and the next artifact is written after them; the artifact was not stored", err, p.path, off, terr, off)
	}
	return fmt.Errorf("%w; %s was truncated back to %d bytes and the artifact was not stored", err, p.path, off)
}

// openWrite opens the pack for writing, creating it with its header. The
// caller holds p.mu.
func (p *Pack) openWrite() error {
	if p.w != nil {
		return nil
	}
	f, err := p.fs.OpenFile(p.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
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
			f.Truncate(0) // no partial header: the next Stow writes it again
			f.Close()
			return fmt.Errorf("write %s header at offset 0: %w (the artifact was not stored)", p.path, err)
		}
		if !p.noSync {
			err := f.Sync()
			if err != nil {
				err = fmt.Errorf("fsync %s: %w (the artifact was not stored)", p.path, err)
			} else if err = syncDir(p.fs, p.dir); err != nil {
				err = fmt.Errorf("create %s: %w (the artifact was not stored)", p.path, err)
			}
			if err != nil {
				// Empty again, so the next Stow writes the header and
				// syncs the file and its directory anew.
				f.Truncate(0)
				f.Close()
				return err
			}
		}
	} else if err := p.checkMagic(f); err != nil {
		f.Close()
		return err
	}
	p.w = f
	return nil
}

// syncDir fsyncs dir, so that a file created in it survives a crash. Its
// errors are the seam's *fs.PathError, which name the directory.
func syncDir(fsys segment.FS, dir string) error {
	d, err := fsys.OpenFile(dir, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

func (p *Pack) checkMagic(f segment.File) error {
	var magic [len(packMagic)]byte
	if _, err := f.ReadAt(magic[:], 0); err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%s ends inside its %d-byte header: %w", p.path, len(packMagic), errShortHeader)
		}
		return fmt.Errorf("read %s header: %w", p.path, err)
	}
	if string(magic[:]) != packMagic {
		return fmt.Errorf("%s is not a helm pack file (header %q, want %q): it was written by another program or a newer helm", p.path, magic[:], packMagic)
	}
	return nil
}

// Load reads the artifact ref names from its pack frame, decompresses it
// and checks it against its address. Damage (a missing pack, a frame that
// does not check out, bytes that do not answer the address) is a
// *DamageError.
func (p *Pack) Load(ref Ref) ([]byte, error) {
	_, frame, damaged, err := p.readFrame(ref, frameHead+ref.StoredSize)
	if err != nil {
		return nil, err
	}
	if frameCRC(frame) != binary.LittleEndian.Uint32(frame[4:]) {
		return nil, damaged("frame checksum mismatch")
	}
	return expand(ref, frame[frameHead:], damaged)
}

// readFrame reads the first n bytes of the frame ref names (its header,
// or all of it) and checks its size against ref's. It returns the pack's
// read handle, the bytes, and the maker of ref's damage errors.
func (p *Pack) readFrame(ref Ref, n int64) (segment.File, []byte, func(reason string) error, error) {
	damaged := func(reason string) error {
		return &DamageError{Hash: ref.Hash, File: p.path, Offset: ref.Offset, Reason: reason}
	}
	rf, err := p.openRead()
	if err != nil {
		return nil, nil, damaged, p.readError(ref, err)
	}
	if ref.StoredSize < 0 || ref.StoredSize > maxFrame || ref.Offset < int64(len(packMagic)) {
		return nil, nil, damaged, damaged(fmt.Sprintf("no frame of %d bytes can be at offset %d", ref.StoredSize, ref.Offset))
	}
	frame := make([]byte, n)
	if _, err := rf.ReadAt(frame, ref.Offset); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, damaged, damaged("the pack file ends before the artifact does")
		}
		return nil, nil, damaged, fmt.Errorf("read artifact %s from %s at offset %d: %w", ref.Hash, p.path, ref.Offset, err)
	}
	if got := int64(binary.LittleEndian.Uint32(frame[0:])); got != ref.StoredSize {
		return nil, nil, damaged, damaged(fmt.Sprintf("frame size %d, the event says %d", got, ref.StoredSize))
	}
	return rf, frame, damaged, nil
}

// openRead returns the pack's read handle, opening it first if need be.
func (p *Pack) openRead() (segment.File, error) {
	p.rmu.Lock()
	defer p.rmu.Unlock()
	if p.r != nil {
		return p.r, nil
	}
	f, err := p.fs.OpenFile(p.path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	if err := p.checkMagic(f); err != nil {
		f.Close()
		return nil, err
	}
	p.r = f
	return f, nil
}

// Close closes the pack's files.
func (p *Pack) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rmu.Lock()
	defer p.rmu.Unlock()
	var err error
	for _, f := range []*segment.File{&p.w, &p.r} {
		if *f != nil {
			if cerr := (*f).Close(); err == nil {
				err = cerr
			}
			*f = nil
		}
	}
	return err
}

// address decodes an artifact's BLAKE3 hex address, the hash its frame
// header holds.
func (p *Pack) address(hash string) ([]byte, error) {
	sum, err := hex.DecodeString(hash)
	if err != nil || len(sum) != hashLen {
		return nil, fmt.Errorf("stow artifact %q in %s: not a BLAKE3-256 hex address", hash, p.path)
	}
	return sum, nil
}

// end opens the pack for writing and returns where a new frame goes: its
// end. The caller holds p.mu.
func (p *Pack) end() (int64, error) {
	if err := p.openWrite(); err != nil {
		return 0, err
	}
	st, err := p.w.Stat()
	if err != nil {
		return 0, fmt.Errorf("stat %s: %w", p.path, err)
	}
	return st.Size(), nil
}

// Reclaimed reports whether the frame ref names is a reclaimed one (as
// Reclaim or StowReclaimed leaves it): its header names ref's hash and
// size, and every byte of its body is zero. Bytes that are only partly
// zero are not reclaimed: they are there, and damaged. A missing pack or
// a frame that is not ref's is a *DamageError.
func (p *Pack) Reclaimed(ref Ref) (bool, error) {
	rf, head, damaged, err := p.readFrame(ref, frameHead)
	if err != nil {
		return false, err
	}
	if hex.EncodeToString(head[8:frameHead]) != ref.Hash {
		return false, damaged("the frame there is not this artifact's")
	}
	buf := make([]byte, min(ref.StoredSize, 64<<10))
	for off := int64(0); off < ref.StoredSize; {
		n := min(int64(len(buf)), ref.StoredSize-off)
		if _, err := rf.ReadAt(buf[:n], ref.Offset+frameHead+off); err != nil {
			if errors.Is(err, io.EOF) {
				return false, damaged("the pack file ends before the artifact does")
			}
			return false, fmt.Errorf("read artifact %s from %s at offset %d: %w", ref.Hash, p.path, ref.Offset, err)
		}
		for _, b := range buf[:n] {
			if b != 0 {
				return false, nil
			}
		}
		off += n
	}
	return true, nil
}

// Reclaim discards the compressed bytes of the frames refs name (artifacts
// that were jettisoned): each frame keeps its header (size, crc, hash) and
// its place, so no other frame moves and no event's offset changes, and
// its body is punched out of the file (durable.PunchHole: on Linux the
// blocks wholly inside it are freed; elsewhere it is zeroed). A frame
// whose header does not name its ref's hash is left alone and reported.
// It returns the frames and bytes discarded (a frame reclaimed before is
// skipped). Like Stow, the caller serialises it with the pack's writers.
func (p *Pack) Reclaim(refs []Ref) (frames int, n int64, err error) {
	if len(refs) == 0 {
		return 0, 0, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.openWrite(); err != nil {
		return 0, 0, fmt.Errorf("reclaim artifacts in %s: %w", p.path, err)
	}
	head := make([]byte, frameHead+4)
	for _, ref := range refs {
		if ref.StoredSize <= 0 || ref.StoredSize > maxFrame || ref.Offset < int64(len(packMagic)) {
			return frames, n, &DamageError{Hash: ref.Hash, File: p.path, Offset: ref.Offset, Reason: fmt.Sprintf("no frame of %d bytes can be at offset %d", ref.StoredSize, ref.Offset)}
		}
		if _, err := p.w.ReadAt(head, ref.Offset); err != nil {
			return frames, n, fmt.Errorf("reclaim artifact %s: read %s at offset %d: %w", ref.Hash, p.path, ref.Offset, err)
		}
		if hex.EncodeToString(head[8:frameHead]) != ref.Hash || int64(binary.LittleEndian.Uint32(head)) != ref.StoredSize {
			return frames, n, &DamageError{Hash: ref.Hash, File: p.path, Offset: ref.Offset, Reason: "the frame there is not this artifact's; nothing was reclaimed from it"}
		}
		if binary.LittleEndian.Uint32(head[frameHead:]) == 0 {
			continue // no zstd magic: reclaimed already
		}
		if err := durable.PunchHole(p.w, ref.Offset+frameHead, ref.StoredSize); err != nil {
			return frames, n, fmt.Errorf("reclaim artifact %s in %s at offset %d: %w", ref.Hash, p.path, ref.Offset, err)
		}
		n += ref.StoredSize
		frames++
	}
	if !p.noSync {
		if err := p.w.Datasync(); err != nil {
			return frames, n, fmt.Errorf("reclaim artifacts in %s: fdatasync: %w", p.path, err)
		}
	}
	return frames, n, nil
}
