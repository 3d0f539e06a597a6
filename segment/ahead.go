package segment

import (
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/helmlog/helm/chain"
)

// Links ahead.
//
// A scan that computes the BLAKE3 chain (recovery of the last segment at
// every open, Verify, the writer's catch-up) hashes every record it reads:
// BLAKE3(record), then the link over it (chain.Next). On a replay that is
// half of the CPU an open costs, and none of it needs the fold the scan's
// caller does with the records. So while the scan walks a read buffer
// (checking every frame and handing units to its caller, which folds
// them), a helper goroutine computes the chain over the frames of the same
// buffer ahead of it, from the link the scan had at the buffer's start,
// and the scan takes each frame's link from the helper when it is ready,
// or computes it itself when it is not.
//
// Nothing is checked less, and every link is the one the scan would have
// computed: the scan takes a link only for the frame it verified at the
// same offset of the same buffer, with the same seq and length, and only
// when the link before it, the helper's, is the scan's own link before
// it; the buffer is not written while the helper runs. The two never
// compute a link twice: each claims a frame before computing its link,
// and the helper continues from the scan's link where the scan went
// first. The scan waits for the helper only while it computes a link it
// claimed, and not for long: on a machine with no core free, or when the
// helper is not scheduled, the scan computes every link as before.

// aheadMin is the fewest bytes left in a read buffer for which a helper
// starts: below it (a catch-up after a few appends), the goroutine costs
// more than it saves.
const aheadMin = 64 << 10

// Slot states: who computes a frame's link.
const (
	slotTodo       uint32 = iota
	slotHelper            // the helper is computing it
	slotHelperDone        // the helper computed it
	slotScan              // the scan is computing it
	slotScanDone          // the scan computed it
)

// spinFor bounds a wait for a link the other side is computing (a link
// costs a microsecond or two): past it, that side was descheduled, and
// the scan computes the link itself, or the helper stops.
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

type linkSlot struct {
	state atomic.Uint32
	off   int    // the offset of the frame in the buffer
	seq   uint64 // its seq
	n     int    // its data length
	prev  chain.Hash
	link  chain.Hash
}

// linkAhead is the helper of one read buffer.
type linkAhead struct {
	buf   []byte
	slots []linkSlot
	next  int // the scan's first slot not yet passed
	stop  atomic.Bool
	wg    sync.WaitGroup
	on    bool
}

// start walks the frame headers of buf from off, where the chain's link
// is link, and starts the helper over the frames found. The headers are
// only read here to know where frames are: the scan checks every frame as
// before.
func (a *linkAhead) start(buf []byte, off int, link chain.Hash) {
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
		if len(slots) == cap(slots) {
			slots = append(slots, make([]linkSlot, max(64, len(slots)))...)[:len(slots)]
		}
		slots = slots[:len(slots)+1]
		s := &slots[len(slots)-1]
		s.state.Store(slotTodo)
		s.off, s.seq, s.n = off, fr.seq, int(binary.LittleEndian.Uint32(buf[off+4:]))
		off += size
	}
	a.slots = slots
	if len(slots) < 2 {
		return
	}
	a.buf, a.next, a.on = buf, 0, true
	a.stop.Store(false)
	a.wg.Add(1)
	go a.run(link)
}

func (a *linkAhead) run(link chain.Hash) {
	defer a.wg.Done()
	for i := range a.slots {
		if a.stop.Load() {
			return
		}
		s := &a.slots[i]
		if !s.state.CompareAndSwap(slotTodo, slotHelper) {
			// The scan went first: continue from its link, or leave the
			// buffer to the scan if it is not there soon.
			if !wait(&s.state, slotScanDone) {
				return
			}
			link = s.link
			continue
		}
		h := a.buf[s.off : s.off+frameHeaderSize]
		data := a.buf[s.off+frameHeaderSize : s.off+frameHeaderSize+s.n]
		if binary.LittleEndian.Uint32(h[16:])&stubFrame != 0 {
			if s.n != stubSize && s.n != stubSizeV4 {
				s.state.Store(slotTodo) // the scan refuses it
				return
			}
			recLen, recCRC := binary.LittleEndian.Uint32(data), binary.LittleEndian.Uint32(data[4:])
			digest := weakDigest(recLen, recCRC)
			if s.n == stubSizeV4 {
				copy(digest[:], data[8:])
			}
			s.prev, s.link = link, chain.Next(link, s.seq, int(recLen), digest)
		} else {
			s.prev, s.link = link, chain.Link(link, s.seq, data)
		}
		link = s.link
		s.state.Store(slotHelperDone)
	}
}

// link returns the chain's link after fr, the frame the scan verified at
// offset off of the buffer the helper walks, continued from prev: the
// helper's when it is computed from prev, else computed here.
func (a *linkAhead) link(fr *frame, off int, prev chain.Hash) chain.Hash {
	if !a.on {
		return fr.link(prev)
	}
	for a.next < len(a.slots) && a.slots[a.next].off < off {
		a.next++
	}
	if a.next == len(a.slots) {
		return fr.link(prev)
	}
	s := &a.slots[a.next]
	if s.off != off || s.seq != fr.seq || (!fr.stub && s.n != len(fr.data)) {
		return fr.link(prev)
	}
	a.next++
	if s.state.CompareAndSwap(slotTodo, slotScan) {
		// Ahead of the helper: computed here, and left for it.
		s.prev, s.link = prev, fr.link(prev)
		s.state.Store(slotScanDone)
		return s.link
	}
	if wait(&s.state, slotHelperDone) && s.prev == prev {
		return s.link
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
