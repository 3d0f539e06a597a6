package helm

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"

	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
)

// A voyage's snapshot is its folded views as of some event, beside the log
// (snapshot in the voyage's directory), so that opening a long voyage
// loads it and folds only the events after it. It is a cache, never the
// truth: it records the log's segment.Mark at its event, and opening
// trusts it only when the log still passes through that mark (the unit,
// where it was, with the same chain values: segment.Log.ScanAfter) —
// otherwise, or when it does not check out, the voyage is folded from its
// first event, as if there were none. Writers write it (Close, once
// snapshotEvery events have been folded since the last one), without
// fsync: a snapshot lost or torn by a crash is ignored.
//
//	"HELMSNP1" | u32 CRC-32C of the rest | u32 length of the mark's JSON |
//	the mark's JSON | projection.State.EncodeSnapshot
const (
	snapshotName  = "snapshot"
	snapshotMagic = "HELMSNP1"
)

// snapshotEvery is how many events past the last snapshot make a closing
// writer write a new one.
var snapshotEvery uint64 = 4096

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// readSnapshot reads the snapshot in the voyage directory dir.
func readSnapshot(dir string) (*projection.State, segment.Mark, error) {
	data, err := os.ReadFile(filepath.Join(dir, snapshotName))
	if err != nil {
		return nil, segment.Mark{}, err
	}
	return decodeSnapshotFile(data)
}

func decodeSnapshotFile(data []byte) (*projection.State, segment.Mark, error) {
	var m segment.Mark
	if len(data) < len(snapshotMagic)+8 || string(data[:len(snapshotMagic)]) != snapshotMagic {
		return nil, m, errors.New("not a helm snapshot")
	}
	rest := data[len(snapshotMagic)+4:]
	if crc32.Checksum(rest, crcTable) != binary.LittleEndian.Uint32(data[len(snapshotMagic):]) {
		return nil, m, errors.New("its checksum does not match")
	}
	n := binary.LittleEndian.Uint32(rest)
	if uint64(n) > uint64(len(rest)-4) {
		return nil, m, errors.New("its mark runs past its end")
	}
	if err := json.Unmarshal(rest[4:4+n], &m); err != nil {
		return nil, m, fmt.Errorf("its mark: %w", err)
	}
	st, err := projection.DecodeSnapshot(rest[4+n:])
	if err != nil {
		return nil, m, err
	}
	if st.Voyage.Seq != m.Last {
		return nil, m, fmt.Errorf("its views are at event %d, its mark at %d", st.Voyage.Seq, m.Last)
	}
	return st, m, nil
}

// openFromSnapshot opens the voyage from its snapshot and the events after
// it, or returns false (nothing open) when there is no snapshot to trust.
func (h *Home) openFromSnapshot(v *Voyage, opts *segment.Options) bool {
	st, mark, err := readSnapshot(v.dir)
	if err != nil || st.Voyage.ID != v.id {
		return false
	}
	v.st = *st
	// Most often the mark is in the last segment: the open reads from it.
	events := filepath.Join(v.dir, "events")
	log, err := segment.OpenAfter(events, opts, mark, v.applyRecord)
	if errors.Is(err, segment.ErrMarkElsewhere) { // found before any record was read
		log, err = segment.Open(events, opts)
		if err == nil {
			if err = log.ScanAfter(context.Background(), mark, v.applyRecord); err != nil {
				log.Close()
			}
		}
	}
	if err != nil {
		// Not this log's snapshot, or damage that the full open reports;
		// the views may hold some of the events after the mark: start anew.
		v.st = projection.State{}
		return false
	}
	v.log, v.snapSeq = log, mark.Last
	return true
}

// writeSnapshot writes the voyage's snapshot, at Close, when this Voyage
// changed it and snapshotEvery events were folded since the last one.
// Failing to write a cache is not an error for the caller.
func (v *Voyage) writeSnapshot() {
	v.mu.Lock()
	due := v.wrote && v.broken == nil && v.st.Voyage.Seq >= v.snapSeq+snapshotEvery
	var snap []byte
	var seq uint64
	if due {
		snap, seq = v.st.EncodeSnapshot(), v.st.Voyage.Seq
	}
	v.mu.Unlock()
	if !due {
		return
	}
	mark := v.log.Mark()
	if mark.Last != seq {
		return // the log is ahead of these views: a later writer writes it
	}
	mj, err := json.Marshal(mark)
	if err != nil {
		return
	}
	data := make([]byte, len(snapshotMagic)+8, len(snapshotMagic)+8+len(mj)+len(snap))
	copy(data, snapshotMagic)
	binary.LittleEndian.PutUint32(data[len(snapshotMagic)+4:], uint32(len(mj)))
	data = append(append(data, mj...), snap...)
	binary.LittleEndian.PutUint32(data[len(snapshotMagic):], crc32.Checksum(data[len(snapshotMagic)+4:], crcTable))
	if !writeCache(v.dir, snapshotName, data) {
		return
	}
	v.mu.Lock()
	v.snapSeq = seq
	v.mu.Unlock()
}

// verifySnapshot checks the voyage's snapshot, if it has one, against the
// views v folded from every event: it reports why opening would ignore
// it, and as damage a snapshot opening would trust whose views, with the
// events after it folded in, are not v's.
func (v *Voyage) verifySnapshot(rep *VerifyReport) {
	path := filepath.Join(v.dir, snapshotName)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	rep.Snapshot = &SnapshotReport{}
	if err != nil {
		rep.Snapshot.Ignored = err.Error()
		return
	}
	st, mark, err := decodeSnapshotFile(data)
	if err != nil {
		rep.Snapshot.Ignored = err.Error()
		return
	}
	rep.Snapshot.Seq = st.Voyage.Seq
	if st.Voyage.ID != v.id {
		rep.Snapshot.Ignored = "it is voyage " + st.Voyage.ID + "'s"
		return
	}
	apply := eventsOf(v.id, v.log.Dir(), func(seq uint64, e *projection.Event) error { return st.Apply(seq, e) })
	if err := v.log.ScanAfter(context.Background(), mark, apply); err != nil {
		rep.Snapshot.Ignored = "the log does not go on from it: " + err.Error()
		return
	}
	v.mu.Lock()
	same := reflect.DeepEqual(st, &v.st)
	v.mu.Unlock()
	if !same {
		rep.Problems = append(rep.Problems, &DamageError{Voyage: v.id, File: path,
			Reason: fmt.Sprintf("the snapshot at event %d, with the events after it, does not give the views its events give; opening trusts it: remove it", rep.Snapshot.Seq)})
	}
}
