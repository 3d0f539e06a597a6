package segment

import (
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/helmlog/helm/chain"
)

// Digests ahead.
//
// A scan that computes the BLAKE3 chain (recovery of the last segment at
// every open, Verify, the writer's catch-up) hashes every record it reads:
// its digest, BLAKE3(record), then the link over the digest (chain.Next,
// two compressions). On a replay the digests are most of the CPU an open
// costs, and they do not depend on each other, only the links do. So
// while the scan walks a read buffer (checking every frame, linking it,
// and handing units to its caller, which folds them), a helper goroutine
// computes the digests of the same buffer's frames ahead of it, and the
// scan takes each frame's digest from the helper when it is computed, or
// computes it itself when the helper has not reached the frame. Each
// claims a frame before computing its digest, so none is computed twice;
// when the scan overtakes the helper (a cheap fold, large records), the
// helper goes on from halfway between the scan and the buffer's end, so
// the two meet again only a few times per buffer. The scan waits only for
// a digest the helper is computing as it reaches the frame.
//
// Nothing is checked less, and every link is the one the scan would have
// computed: the scan computes every link itself, in order, from the link
// before it; it takes a digest from the helper only for the frame it
// verified at the same offset of the same buffer, with the same seq and
// length, and the buffer is not written while the helper runs. On a
// machine with one core, or when the helper is not scheduled, the scan
// computes every digest as before.

// aheadMin is the fewest bytes left in a read buffer for which a helper
// starts: below it (a catch-up after a few appends), the goroutine costs
// more than it saves.
const aheadMin = 64 << 10

// Slot states: who computes a frame's digest.
const (
	slotTodo       uint32 = iota
	slotHelper            // the helper is computing it
	slotHelperDone        // the helper computed it
	slotScan              // the scan took it
)

// spinFor bounds the scan's wait for the digest the helper is computing
// (a digest costs a microsecond or two): past it, the helper was
// descheduled, and the scan computes the digest itself.
const spinFor = 1 << 13

// wait reports whether state becomes want within spinFor loads.
func wait(state *atomic.Uint32, want uint32) bool {
	for range spinFor {
		if state.Load() == want {
			return true
		}
	}
	return state.Load() == want
}

type digestSlot struct {
	state  atomic.Uint32
	off    int    // the offset of the frame in the buffer
	seq    uint64 // its seq
	n      int    // its data length
	digest chain.Hash
}

// linkAhead is the helper of one read buffer.
type linkAhead struct {
	buf   []byte
	slots []digestSlot
	next  int // the scan's first slot not yet passed
	stop  atomic.Bool
	wg    sync.WaitGroup
	on    bool
}

// start walks the frame headers of buf from off and starts the helper
// over the frames found that hold a record (a stub holds its digest). The
// headers are only read here to know where frames are: the scan checks
// every frame as before.
func (a *linkAhead) start(buf []byte, off int) {
	a.halt()
	if len(buf)-off < aheadMin || runtime.GOMAXPROCS(0) < 2 {
		return
	}
	slots := a.slots[:0]
	for off+frameHeaderSize <= len(buf) {
		fr, size, st := decodeHeader(buf[off:])
		if st != frameOK || size > len(buf)-off {
			break
		}
		if !fr.stub {
			if len(slots) == cap(slots) {
				slots = append(slots, make([]digestSlot, max(64, len(slots)))...)[:len(slots)]
			}
			slots = slots[:len(slots)+1]
			s := &slots[len(slots)-1]
			s.state.Store(slotTodo)
			s.off, s.seq, s.n = off, fr.seq, int(binary.LittleEndian.Uint32(buf[off+4:]))
		}
		off += size
	}
	a.slots = slots
	if len(slots) < 2 {
		return
	}
	a.buf, a.next, a.on = buf, 0, true
	a.stop.Store(false)
	a.wg.Add(1)
	go a.run()
}

// run computes the digests of the slots in order, going on from halfway
// to the end when the scan took the slot it reached.
func (a *linkAhead) run() {
	defer a.wg.Done()
	for i := 0; i < len(a.slots); {
		if a.stop.Load() {
			return
		}
		s := &a.slots[i]
		if !s.state.CompareAndSwap(slotTodo, slotHelper) {
			i += (len(a.slots)-i)/2 + 1 // the scan is here: ahead of it
			continue
		}
		at := s.off + frameHeaderSize
		s.digest = chain.Digest(a.buf[at : at+s.n])
		s.state.Store(slotHelperDone)
		i++
	}
}

// link returns the chain's link after fr, the frame the scan verified at
// offset off of the buffer the helper walks, continued from prev: over
// the helper's digest of the frame when it computed it, else over one
// computed here.
func (a *linkAhead) link(fr *frame, off int, prev chain.Hash) chain.Hash {
	if !a.on || fr.stub {
		return fr.link(prev)
	}
	for a.next < len(a.slots) && a.slots[a.next].off < off {
		a.next++
	}
	if a.next == len(a.slots) {
		return fr.link(prev)
	}
	s := &a.slots[a.next]
	if s.off != off || s.seq != fr.seq || s.n != len(fr.data) {
		return fr.link(prev)
	}
	a.next++
	if s.state.CompareAndSwap(slotTodo, slotScan) {
		return fr.link(prev) // the helper has not reached it
	}
	if wait(&s.state, slotHelperDone) {
		return chain.Next(prev, fr.seq, len(fr.data), s.digest)
	}
	return fr.link(prev)
}

// halt stops the helper and waits for it: the buffer may be written
// after it returns.
func (a *linkAhead) halt() {
	if !a.on {
		return
	}
	a.stop.Store(true)
	a.wg.Wait()
	a.on, a.buf = false, nil
}
