package segment

import (
	"os"
	"slices"
	"sort"
	"sync"
)

// Position cache.
//
// Every scan of a Log used to start at the beginning of the segment that
// holds `from`, so "give me what was appended since seq N" cost O(segment)
// and a caller that does it per commit became quadratic. A Log therefore
// remembers verified positions — offsets just after a complete commit unit,
// with the seq of the next record and the chain value there — and starts
// scans at the nearest one at or before `from`:
//
//   - the tail: the furthest position this Log has seen (after Open's
//     recovery, each catch-up, each own append, each scan that reached the
//     end of the log), plus the last few tails before it, so a Tx.Scan from
//     the tail the Log had before its catch-up starts there;
//   - a sparse index: one position every indexSpacing bytes of every
//     segment region a cursor of this Log has walked.
//
// Everything read from a checkpoint on is still verified: the chain value
// at the checkpoint is known, so every later frame's sum is checked exactly
// as in a scan from the segment start. A checkpoint stays valid because a
// segment is only ever appended to, and a cut removes only a torn final
// unit, which lies after every complete unit (and so after every
// checkpoint). The cache is per Log, in memory; ScanDir and Verify do not
// use it.

// indexSpacing is the distance in bytes between sparse checkpoints: a scan
// from an arbitrary seq reads at most this much before its first record
// (plus the unit that holds it).
const indexSpacing = 1 << 20

// recentTails is how many previous tails are kept besides the current one.
const recentTails = 8

// checkpoint is a verified position in segment first.
type checkpoint struct {
	first   uint64      // segment (its first seq)
	fi      os.FileInfo // the file the offsets are in (see cursor.openAt)
	p       pos
	start   int64  // the segment's header size
	version uint32 // the segment's format version
}

type posIndex struct {
	mu     sync.Mutex
	tail   checkpoint // p.next == 0: unknown
	recent [recentTails]checkpoint
	ri     int
	sparse []checkpoint // sorted by p.next, at most one per indexSpacing bytes
}

// noteTail records cp as a position the Log has reached. It only moves the
// tail forward; an older position is offered to the sparse index instead.
func (x *posIndex) noteTail(cp checkpoint) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if cp.p.next < x.tail.p.next || (cp.p.next == x.tail.p.next && cp.first <= x.tail.first) {
		return
	}
	if x.tail.p.next != 0 {
		x.recent[x.ri] = x.tail
		x.ri = (x.ri + 1) % recentTails
	}
	x.tail = cp
}

// noteSparse offers cp to the sparse index; it is kept unless a sparse
// checkpoint of the same segment lies less than indexSpacing before it.
func (x *posIndex) noteSparse(cp checkpoint) {
	x.mu.Lock()
	defer x.mu.Unlock()
	i := sort.Search(len(x.sparse), func(i int) bool { return x.sparse[i].p.next > cp.p.next })
	if i > 0 {
		prev := x.sparse[i-1]
		if prev.first == cp.first && cp.p.off-prev.p.off < indexSpacing {
			return
		}
	}
	if i < len(x.sparse) {
		nx := x.sparse[i]
		if nx.first == cp.first && nx.p.off-cp.p.off < indexSpacing/2 {
			return
		}
	}
	x.sparse = append(x.sparse, checkpoint{})
	copy(x.sparse[i+1:], x.sparse[i:])
	x.sparse[i] = cp
}

// tailPos returns the furthest known position (p.next == 0: none).
func (x *posIndex) tailPos() checkpoint {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.tail
}

// lookup returns the known position closest before or at from (its p.next
// <= from), if any.
func (x *posIndex) lookup(from uint64) (checkpoint, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	var best checkpoint
	ok := false
	better := func(cp checkpoint) {
		if cp.p.next == 0 || cp.p.next > from {
			return
		}
		if !ok || cp.p.next > best.p.next || (cp.p.next == best.p.next && cp.first > best.first) {
			best, ok = cp, true
		}
	}
	better(x.tail)
	if ok && best.p.next == from {
		return best, true
	}
	for _, cp := range x.recent {
		better(cp)
	}
	if i := sort.Search(len(x.sparse), func(i int) bool { return x.sparse[i].p.next > from }); i > 0 {
		better(x.sparse[i-1])
	}
	return best, ok
}

// forget drops every checkpoint in segment first: its file was replaced.
func (x *posIndex) forget(first uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.tail.first == first {
		x.tail = checkpoint{}
	}
	for i := range x.recent {
		if x.recent[i].first == first {
			x.recent[i] = checkpoint{}
		}
	}
	x.sparse = slices.DeleteFunc(x.sparse, func(cp checkpoint) bool { return cp.first == first })
}
