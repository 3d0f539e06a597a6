package helm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/internal/homeindex"
)

// Caches as evidence. Each cache a writer keeps beside a voyage's log
// records how far the log went when it was written: summary.json its
// segment.Mark (and the chain's head), the snapshot its mark, the home
// index the seq of each writer's close. Each is written only after the
// log made durable what it names (a cache never runs ahead of an
// acknowledged write), so a cache that names a seq beyond the log's last
// proves the log lost acknowledged records: it was rolled back (a copy
// of events/ restored, WATERMARK and all) or truncated. That is damage,
// never a cache to rebuild: the voyage is DAMAGED, every read of it
// refuses, every write is refused, and the cache is left as it is, for
// whoever investigates. A cache older than the log is what caches are:
// it lags, and says nothing.
//
// What a cache that does not decode says: nothing (a crash tore it, or
// another version wrote it): it is passed by, as reading passes it by.

// cacheEvidence checks the caches beside voyage id's log (its directory
// dir, its home home) against the log, whose last seq is last. head, when
// known, is the chain's head at last: a cache that records a head at the
// same seq with another hash is damage too. It returns the damage found,
// one per cache.
func cacheEvidence(home, dir, id string, last uint64, head *chain.Head) []*DamageError {
	var out []*DamageError
	if d := summaryEvidence(dir, id, last, head); d != nil {
		out = append(out, d)
	}
	if d := snapshotEvidence(dir, id, last); d != nil {
		out = append(out, d)
	}
	if home != "" {
		path := filepath.Join(home, homeindex.Name)
		seqs, _ := homeindex.Seqs(path) // damage after a record leaves the records before it
		if seq := seqs[id]; seq > last {
			out = append(out, beyondLog(id, path, "the home index", seq, last))
		}
	}
	return out
}

func beyondLog(id, file, what string, seq, last uint64) *DamageError {
	return &DamageError{Voyage: id, File: file,
		Reason: fmt.Sprintf("the log ends at seq %d; %s records seq %d: rolled back or truncated", last, what, seq)}
}

// summaryEvidence reads summary.json as loosely as a seq can be read from
// it: a summary of another version of its form (one a listing ignores)
// still says how far the log went.
func summaryEvidence(dir, id string, last uint64, head *chain.Head) *DamageError {
	path := filepath.Join(dir, summaryName)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var s struct {
		Voyage struct {
			ID string `json:"id"`
		} `json:"voyage"`
		Log struct {
			Last uint64 `json:"last"`
		} `json:"log"`
		Head *chain.Head `json:"head"`
	}
	if json.Unmarshal(data, &s) != nil || s.Voyage.ID != id {
		return nil // torn, or not this voyage's: it says nothing of this log
	}
	switch {
	case s.Log.Last > last:
		return beyondLog(id, path, summaryName, s.Log.Last, last)
	case s.Head != nil && s.Head.Seq > last:
		return beyondLog(id, path, summaryName, s.Head.Seq, last)
	case s.Head != nil && head != nil && s.Head.Seq == head.Seq && s.Head.Hash != head.Hash:
		return &DamageError{Voyage: id, File: path,
			Reason: fmt.Sprintf("%s records head %s at seq %d, the log's is %s: edited or rolled back", summaryName, s.Head, head.Seq, head)}
	}
	return nil
}

// snapshotEvidence reads the snapshot's mark: one that does not check out
// (torn, another version's) says nothing, nor does one of another voyage.
func snapshotEvidence(dir, id string, last uint64) *DamageError {
	snap, err := openSnapshot(dir)
	if err != nil {
		return nil
	}
	snap.f.Close()
	if snap.st.Voyage.ID != id || snap.mark.Last <= last {
		return nil
	}
	return beyondLog(id, filepath.Join(dir, snapshotName), "the snapshot", snap.mark.Last, last)
}

// evidenceError is the error a read or a write of a voyage that caches
// prove rolled back returns.
func evidenceError(op, id string, found []*DamageError) error {
	return &VoyageError{Op: op, Voyage: id, Err: found[0], Hint: hint.Hint{Kind: hint.Verify,
		Text: "verify the voyage: its log holds less than a cache proves it held; restore the voyage's directory from a backup, or check the log against a witness (a commit's Helm-Voyage trailer, a head kept elsewhere); the caches were left as they are, as evidence"}}
}

// isEvidence reports whether err is a cache's evidence that the log was
// rolled back, from cacheEvidence.
func isEvidence(err error) bool {
	var de *DamageError
	return errors.As(err, &de) && de.Err == nil && errors.Is(err, ErrDamaged) && !errors.Is(err, fs.ErrNotExist)
}
