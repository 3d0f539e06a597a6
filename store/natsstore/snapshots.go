package natsstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/store"
)

// A voyage's snapshot (store.Snapshots) is the object <voyage>/snapshot of
// the home's object store, which a writer's PutSnapshot replaces whole
// (the object store replaces an object only once the new one is
// complete; it allows the purge that takes the old one's chunks, which
// the units' stream denies). No artifact is named so: an artifact's
// object is <voyage>/<hash>. The object is
//
//	"HELMJSN1" | u32 length of the point's JSON | the point's JSON | zstd(the facade's data)
//
// compressed, for a long voyage's snapshot is mostly its logbook's text,
// and the object is read whole: a tenth of the bytes to send (a 100,000
// note voyage's 10 MB snapshot is about 1.5 MB). Decompressing stops at
// maxSnapshot bytes (a forged object cannot make a reader allocate more).
//
// where the point (snapshotPoint) is the chain's head after the record
// the snapshot was taken at and the message of the unit that ends there:
// its stream sequence, its CRC32C chain value and its unit number.
// Snapshot checks them against that message (one request; none when it is
// the voyage's last, which the tail's request reads), and the link it
// stores: a snapshot anyone with the credentials replaced, pointing at a
// message that is not that unit, or with another head, is refused
// (store.ErrBadSnapshot). Once checked, the point is where a Scan after it
// starts, so the records before it are never read. Another magic (a later
// version's) is refused the same way, and the voyage folded.
const (
	snapshotObject = "snapshot"
	snapshotMagic  = "HELMJSN1"
	maxSnapshot    = 1 << 30
	// maxSnapshotObject bounds the compressed object read: a voyage's
	// snapshot compresses to about a tenth of maxSnapshot at most.
	maxSnapshotObject = maxSnapshot / 4
)

var (
	snapshotEncoder = sync.OnceValue(func() *zstd.Encoder {
		e, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)))
		return e
	})
	snapshotDecoder = sync.OnceValue(func() *zstd.Decoder {
		d, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)), zstd.WithDecoderMaxMemory(maxSnapshot))
		return d
	})
)

// snapshotPoint is what a snapshot records of the log where it was taken.
type snapshotPoint struct {
	Head   chain.Head `json:"head"`
	Stream uint64     `json:"stream"`
	Chain  uint32     `json:"chain"`
	Unit   uint64     `json:"unit"`
}

func (l *log) snapshotName() string { return l.voyage + "/" + snapshotObject }

func (l *log) whereSnapshot() string {
	return fmt.Sprintf("object %s of object store %s on %s", l.snapshotName(), l.s.names.artifacts, l.s.url)
}

// PutSnapshot keeps data as the voyage's snapshot after record seq, which
// must end the last unit this Log appended or read.
func (l *log) PutSnapshot(ctx context.Context, seq uint64, data []byte) error {
	if l.closed.Load() {
		return store.ErrClosed
	}
	if err := checkName("voyage id", l.voyage); err != nil {
		return err
	}
	l.mu.Lock()
	var p point
	for _, c := range []point{l.tail, l.appended} {
		if c.stream != 0 && c.first-1 == seq && c.linked && c.stores {
			p = c
		}
	}
	l.mu.Unlock()
	if p.stream == 0 || seq == 0 {
		return fmt.Errorf("jetstream: voyage %s: no snapshot after record %d: this client does not know the unit that ends there (it read or appended up to another)", l.voyage, seq)
	}
	pj, err := json.Marshal(snapshotPoint{Head: chain.Head{Seq: seq, Hash: p.link}, Stream: p.stream, Chain: p.prev, Unit: p.units})
	if err != nil {
		return err
	}
	obj := make([]byte, 0, len(snapshotMagic)+4+len(pj)+len(data)/4)
	obj = append(obj, snapshotMagic...)
	obj = binary.LittleEndian.AppendUint32(obj, uint32(len(pj)))
	obj = snapshotEncoder().EncodeAll(data, append(obj, pj...))
	ctx, cancel := l.s.ctx(ctx)
	defer cancel()
	if _, err := l.s.obs.PutBytes(ctx, l.snapshotName(), obj); err != nil {
		return fmt.Errorf("jetstream: voyage %s: keep its snapshot, %s: %w", l.voyage, l.whereSnapshot(), hint(err))
	}
	return nil
}

// parseSnapshot splits a snapshot object into its point and its
// compressed views, or says why it is not a snapshot of this version.
func parseSnapshot(obj []byte) (sp snapshotPoint, views []byte, reason string) {
	at := len(snapshotMagic) + 4
	if len(obj) < at || string(obj[:len(snapshotMagic)]) != snapshotMagic {
		return sp, nil, "not a snapshot of this version"
	}
	n := int(binary.LittleEndian.Uint32(obj[len(snapshotMagic):]))
	if n < 0 || n > len(obj)-at {
		return sp, nil, "its point runs past its end"
	}
	if err := json.Unmarshal(obj[at:at+n], &sp); err != nil {
		return sp, nil, "its point: " + err.Error()
	}
	if sp.Head.Seq == 0 || sp.Stream == 0 {
		return sp, nil, "its point names no record"
	}
	return sp, obj[at+n:], ""
}

// errSnapshotTooLarge: a snapshot object holds more than maxSnapshotObject
// bytes, more than any snapshot helm writes compresses to.
var errSnapshotTooLarge = fmt.Errorf("the object is larger than %d MiB, more than a snapshot helm writes: not read", maxSnapshotObject>>20)

// readSnapshotObject reads the voyage's snapshot object, at most
// maxSnapshotObject bytes of it whatever its metadata says: an object
// anyone with the credentials replaced cannot make a reader hold more.
func (l *log) readSnapshotObject(ctx context.Context) ([]byte, error) {
	r, err := l.s.obs.Get(ctx, l.snapshotName())
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if info, err := r.Info(); err == nil && info.Size > maxSnapshotObject {
		return nil, errSnapshotTooLarge
	}
	obj, err := io.ReadAll(io.LimitReader(r, maxSnapshotObject+1))
	if err != nil {
		return nil, err
	}
	if len(obj) > maxSnapshotObject {
		return nil, errSnapshotTooLarge
	}
	return obj, nil
}

// Snapshot reads the voyage's snapshot and checks its point against the
// log.
func (l *log) Snapshot(ctx context.Context) (store.Snapshot, error) {
	if l.closed.Load() {
		return store.Snapshot{}, store.ErrClosed
	}
	if err := checkName("voyage id", l.voyage); err != nil {
		return store.Snapshot{}, err
	}
	ctx, cancel := l.s.ctx(ctx)
	defer cancel()
	var obj []byte
	err := l.s.retry(ctx, func(ctx context.Context) (err error) {
		obj, err = l.readSnapshotObject(ctx)
		return err
	})
	if errors.Is(err, errSnapshotTooLarge) {
		return store.Snapshot{}, fmt.Errorf("%w: voyage %s, %s: %w", store.ErrBadSnapshot, l.voyage, l.whereSnapshot(), err)
	}
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return store.Snapshot{}, fmt.Errorf("%w: voyage %s keeps no snapshot (%s)", store.ErrNotFound, l.voyage, l.whereSnapshot())
	}
	if err != nil {
		return store.Snapshot{}, fmt.Errorf("jetstream: voyage %s: read its snapshot, %s: %w", l.voyage, l.whereSnapshot(), hint(err))
	}
	bad := func(reason string) error {
		return fmt.Errorf("%w: voyage %s, %s: %s", store.ErrBadSnapshot, l.voyage, l.whereSnapshot(), reason)
	}
	sp, views, reason := parseSnapshot(obj)
	if reason != "" {
		return store.Snapshot{}, bad(reason)
	}
	tail, err := l.fetchTail(ctx)
	if err != nil {
		return store.Snapshot{}, err
	}
	if sp.Head.Seq > tail.first-1 {
		return store.Snapshot{}, &store.DamageError{Voyage: l.voyage, Where: l.whereSnapshot(), Seq: tail.first,
			Reason: fmt.Sprintf("the voyage's snapshot was taken after record %d, but its log ends at record %d (%s): the log lost records it had acknowledged, or the snapshot was forged", sp.Head.Seq, tail.first-1, l.where())}
	}
	p := point{first: sp.Head.Seq + 1, stream: sp.Stream, prev: sp.Chain, units: sp.Unit, link: sp.Head.Hash, linked: true, stores: true}
	if tail.first-1 != sp.Head.Seq {
		var msg *jetstream.RawStreamMsg
		err := l.s.retry(ctx, func(ctx context.Context) (err error) {
			msg, err = l.s.stream.GetMsg(ctx, sp.Stream, jetstream.WithGetMsgSubject(l.subject))
			return err
		})
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return store.Snapshot{}, bad(fmt.Sprintf("it names message %d of %s, which holds no unit of the voyage", sp.Stream, l.where()))
		}
		if err != nil {
			return store.Snapshot{}, fmt.Errorf("jetstream: voyage %s: check its snapshot against %s: %w", l.voyage, l.where(), hint(err))
		}
		tail = point{stream: msg.Sequence}
		if h, herr := parseHeader(msg.Header); herr == nil {
			if u, uerr := decodeUnit(msg.Data); uerr == nil && uint64(len(u.records)) == h.count {
				tail = point{first: h.last() + 1, stream: msg.Sequence, prev: h.chain, units: h.unit, link: u.link, linked: u.linked, stores: u.linked}
			}
		}
	}
	if tail != p {
		return store.Snapshot{}, bad(fmt.Sprintf("its head after record %d is not the log's (%s, message %d): the snapshot was not taken from this log, or was replaced", sp.Head.Seq, l.where(), sp.Stream))
	}
	// The records after it are read from here on.
	p.stream++
	p.reached = true
	l.mu.Lock()
	i := sort.Search(len(l.index), func(i int) bool { return l.index[i].first >= p.first })
	if i < len(l.index) && l.index[i].first == p.first {
		l.index[i] = p
	} else {
		l.index = slices.Insert(l.index, i, p)
	}
	l.mu.Unlock()
	data, err := snapshotDecoder().DecodeAll(views, make([]byte, 0, 4*len(obj)))
	if err != nil {
		return store.Snapshot{}, bad("its views do not decompress: " + err.Error())
	}
	return store.Snapshot{Head: sp.Head, Data: data}, nil
}
