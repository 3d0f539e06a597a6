package segment

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"

	"github.com/helmlog/helm/chain"
)

// ChainInfo says which chain protects a log (see "The BLAKE3 chain" in
// format.go).
type ChainInfo struct {
	// Kind is "blake3" when the log's last segment is format 4 (its links
	// are stored in segment headers, stubs and WATERMARK, and checked at
	// open), "crc32c" when an older format wrote it (only the CRC32C chain
	// is stored: it detects accidents, not edits), "" for an empty log.
	Kind string
	// Since is, for "blake3", the first seq of the first format-4 segment:
	// 1 for a log written in format 4 from its genesis, more for one that
	// Rechain moved onto the stored chain at that seq.
	Since uint64
	// Format is the format version of the log's last segment.
	Format uint32
}

// String says it as helm prints it: "blake3", "blake3 since seq N" or
// "crc32c".
func (c ChainInfo) String() string {
	if c.Kind == "blake3" && c.Since > 1 {
		return "blake3 since seq " + strconv.FormatUint(c.Since, 10)
	}
	return c.Kind
}

// chainInfo describes the chain as the cursor c saw the log.
func (c *cursor) chainInfo() ChainInfo {
	switch {
	case c.f == nil && c.version == 0:
		return ChainInfo{}
	case c.version >= 4:
		return ChainInfo{Kind: "blake3", Since: max(c.firstV4, 1), Format: c.version}
	}
	return ChainInfo{Kind: "crc32c", Format: c.version}
}

// Chain says which chain protects the log as this Log last read or wrote
// it.
func (l *Log) Chain() ChainInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.chainInfo()
}

// Head returns the BLAKE3 chain's head at Last: the seq of the last record
// and the link after it (chain.Link over every record from the genesis of
// Options.Identity). A format-4 log knows it from its open (the last
// segment's header carries the link before its first record, and the
// open reads that segment) and keeps it across its commits and catch-ups;
// an older log's is computed once by reading the log from its first
// record, then kept the same way.
func (l *Log) Head(ctx context.Context) (chain.Head, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := &l.w
	if c.f == nil {
		if l.Last() > 0 {
			return chain.Head{}, fmt.Errorf("segment: head of %s: the log is not open at its end", l.dir)
		}
		return chain.Head{Hash: l.genesis()}, nil
	}
	if c.p.linked {
		return chain.Head{Seq: c.p.next - 1, Hash: c.p.link}, nil
	}
	h, err := l.readHead(ctx, c.p.next-1)
	if err != nil {
		return chain.Head{}, err
	}
	if h.Seq == c.p.next-1 && !c.p.linked {
		c.p.link, c.p.linked = h.Hash, true
	}
	return h, nil
}

// readHead computes the chain's head at seq last by reading the log from
// its first record (mu held).
func (l *Log) readHead(ctx context.Context, last uint64) (chain.Head, error) {
	c := &l.w
	if !c.genesisKnown && c.id != (LogID{}) {
		return chain.Head{}, fmt.Errorf("segment: head of %s: the log has an identity, and the Log was opened without it (Options.Identity): its chain's genesis is not known", l.dir)
	}
	h := chain.Head{Hash: l.genesis()}
	err := scanDir(ctx, l.fs, l.dir, 1, nil, func(r Record) error {
		if r.Seq > last {
			return errStop
		}
		h = chain.Head{Seq: r.Seq, Hash: r.Link(h.Hash)}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return chain.Head{}, err
	}
	if h.Seq != last {
		return chain.Head{}, fmt.Errorf("segment: head of %s: the log ends at seq %d, not %d", l.dir, h.Seq, last)
	}
	return h, nil
}

// ErrRechained is Rechain's error on a log already on the BLAKE3 chain.
var ErrRechained = errors.New("the log is already on the BLAKE3 chain (its last segment is format 4)")

// Rechain appends the records decide returns (helm's "rechained" event)
// to a log whose last segment an older format wrote, as one commit unit at
// the start of a new format-4 segment: the current segment is sealed, the
// new one created holding the unit (written whole under a temporary name,
// fsynced and renamed, so a crash leaves the old log or the rechained
// one), and the watermark moves to the format-4 slot layout. From then on
// the log is written in format 4: heads are stored and checked at open,
// and stubs keep digests. The chain itself does not change: the head
// after the records commits to the whole history, old records included.
//
// decide runs as Commit's does, under the writer lock, and is told where
// the older format's chain ends: sum is the CRC32C chain's sum after
// record tx.Last(), which the unit follows. On a log already in format 4
// (a new log is) decide is not called and Rechain returns an error
// matching ErrRechained; no records, or an error from decide, appends
// nothing.
func (l *Log) Rechain(ctx context.Context, decide func(tx *Tx, sum uint32) ([][]byte, error)) (first uint64, err error) {
	if decide == nil {
		return 0, errors.New("segment: Rechain with nil decide")
	}
	return l.Commit(ctx, func(tx *Tx) ([][]byte, error) {
		c := &l.w
		if c.f == nil || c.version >= 4 {
			return nil, fmt.Errorf("segment: rechain %s: %w", l.dir, ErrRechained)
		}
		// The chain's link at the log's end, for the new segment's header:
		// read the log from its genesis (lock held: nothing moves).
		h, err := l.readHead(tx.ctx, tx.base)
		if err != nil {
			return nil, err
		}
		sum := c.p.sum
		for _, d := range tx.staged { // staged by earlier decides of the group
			sum = crc32.Update(sum, castagnoli, d)
		}
		records, err := decide(tx, sum)
		if err != nil || len(records) == 0 {
			return nil, err
		}
		l.rechain, l.rechainLink = true, h.Hash
		return records, nil
	})
}
