package helm

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/internal/durable"
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

// claims is what the caches beside a voyage's log say of it: how far the
// log went, per cache, and the head summary.json recorded. They are read
// before the log (readClaims, then the log's open, scan or verify): the
// log only grows, and every cache is written after the log held what it
// names, so a claim read first is at most the log's end read after it,
// whatever writers do meanwhile. Read after the log, a cache a writer
// wrote meanwhile would name a seq beyond the end read.
type claims struct {
	id    string
	found []claim
	head  *chain.Head // summary.json's, if it records one
	file  string      // summary.json's path, for the head's damage
}

type claim struct {
	file, what string
	seq        uint64
}

// readClaims reads the claims of the caches of voyage id, whose directory
// is dir, in the home home ("": no home index).
func readClaims(home, dir, id string) claims {
	c, snap := readClaimsSnapshot(home, dir, id)
	if snap != nil {
		snap.f.Close()
	}
	return c
}

// readClaimsSnapshot is readClaims, also returning open the snapshot whose
// claim it read (nil when none is voyage id's), for the open that follows
// to fold from: the snapshot a claim is read from and the one the views
// start from are then one read of the file, not two. The caller closes
// it.
func readClaimsSnapshot(home, dir, id string) (claims, *snapshotFile) {
	c := claims{id: id, file: filepath.Join(dir, summaryName)}
	if seq, head, ok := summaryClaim(c.file, id); ok {
		c.found = append(c.found, claim{c.file, summaryName, seq})
		c.head = head
	}
	var kept *snapshotFile
	if snap, err := openSnapshot(dir); err == nil { // one that does not check out says nothing
		if snap.st.Voyage.ID == id {
			c.found = append(c.found, claim{filepath.Join(dir, snapshotName), "the snapshot", snap.mark.Last})
			kept = snap
		} else {
			snap.f.Close()
		}
	}
	if home != "" {
		path := filepath.Join(home, homeindex.Name)
		seq, ok, _ := homeindex.SeqOf(path, id) // damage after a record leaves the records before it
		if ok {
			c.found = append(c.found, claim{path, "the home index", seq})
		}
	}
	return c, kept
}

// against returns the damage the claims prove of a log whose last seq is
// last, and whose chain's head is head when known (nil: heads are not
// compared): one per cache beyond the log, and a head at the same seq
// with another hash.
func (c claims) against(last uint64, head *chain.Head) []*DamageError {
	var out []*DamageError
	for _, f := range c.found {
		if f.seq > last {
			out = append(out, &DamageError{Voyage: c.id, File: f.file,
				Reason: fmt.Sprintf("the log ends at seq %d; %s records seq %d: rolled back or truncated", last, f.what, f.seq)})
		}
	}
	if h := c.head; h != nil && head != nil && h.Seq == head.Seq && h.Hash != head.Hash {
		out = append(out, &DamageError{Voyage: c.id, File: c.file,
			Reason: fmt.Sprintf("%s records head %s at seq %d, the log's is %s: edited or rolled back", summaryName, h, head.Seq, head)})
	}
	return out
}

// summaryClaim reads summary.json as loosely as a seq can be read from
// it: a summary of another version of its form (one a listing ignores)
// still says how far the log went. Torn, or another voyage's, it says
// nothing. It reads as readSummary does (no hang on a FIFO).
func summaryClaim(path, id string) (uint64, *chain.Head, bool) {
	var buf [4096]byte
	n, err := durable.ReadFileAt(path, buf[:], 0)
	if err != nil {
		return 0, nil, false
	}
	data := buf[:n]
	if n == len(buf) {
		if data, err = os.ReadFile(path); err != nil {
			return 0, nil, false
		}
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
		return 0, nil, false
	}
	seq := s.Log.Last
	if s.Head != nil {
		seq = max(seq, s.Head.Seq)
	}
	return seq, s.Head, true
}

// evidenceError is the error a read or a write of a voyage that caches
// prove rolled back returns.
func evidenceError(op, id string, found []*DamageError) error {
	return &VoyageError{Op: op, Voyage: id, Err: found[0], Hint: hint.Hint{Kind: hint.Verify,
		Text: "verify the voyage: its log holds less than a cache proves it held; restore the voyage's directory from a backup, or check the log against a witness (a commit's Helm-Voyage trailer, a head kept elsewhere); the caches were left as they are, as evidence"}}
}
