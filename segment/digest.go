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
// BLAKE3(record), then the link over it (chain.Next). The links depend on
// each other, the digests do not, and on a replay the digests are about
// half of the CPU the open costs. So while the scan walks a read buffer
// (checking every frame and handing units to its caller, which folds
// them), a helper goroutine digests the records of the same buffer ahead
// of it, and the scan takes each record's digest from the helper when it
// is ready, or computes it itself when it is not.
//
// Nothing is checked less: the digest the scan uses is BLAKE3 of exactly
// the bytes of the frame it verified (same buffer, same offset, same
// length, and the buffer is not written while the helper runs), and every
// link is still computed from it by the scan, in order.
//
// The helper claims a slot before hashing it and the scan claims the ones
// it reaches first, so no record is hashed twice and the scan never waits
// for the helper: on a machine with one core free, or when the helper is
// not scheduled, the scan does all the work as before.

// aheadMin is the fewest bytes left in a read buffer for which a helper
// starts: below it (a catch-up after a few appends), the goroutine costs
// more than it saves.
const aheadMin = 64 << 10

// Slot states.
const (
	slotTodo uint32 = iota
	slotClaimed
	slotDone
)

type digestSlot struct {
	state atomic.Uint32
	off   int // the offset of the record's data in the buffer
	n     int // its length
	sum   chain.Hash
}

// digestAhead is the helper of one read buffer.
type digestAhead struct {
	buf   []byte
	slots []digestSlot
	next  int // the scan's first slot not yet passed
	stop  atomic.Bool
	wg    sync.WaitGroup
	on    bool
}

// start walks the frame headers of buf from off and starts the helper
// over the records found (stubs carry their digest and are skipped). The
// headers are only read here to know where records are: the scan checks
// every frame as before.
func (a *digestAhead) start(buf []byte, off int) {
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
			n := int(binary.LittleEndian.Uint32(buf[off+4:]))
			if len(slots) < cap(slots) {
				slots = slots[:len(slots)+1]
				s := &slots[len(slots)-1]
				s.state.Store(slotTodo)
				s.off, s.n = off+frameHeaderSize, n
			} else {
				slots = append(slots, digestSlot{off: off + frameHeaderSize, n: n})
			}
		}
		off += size
	}
	if len(slots) < 2 {
		a.slots = slots[:0]
		return
	}
	a.buf, a.slots, a.next, a.on = buf, slots, 0, true
	a.stop.Store(false)
	a.wg.Add(1)
	go a.run()
}

func (a *digestAhead) run() {
	defer a.wg.Done()
	for i := range a.slots {
		if a.stop.Load() {
			return
		}
		s := &a.slots[i]
		if s.state.CompareAndSwap(slotTodo, slotClaimed) {
			s.sum = chain.Digest(a.buf[s.off : s.off+s.n])
			s.state.Store(slotDone)
		}
	}
}

// digest returns BLAKE3 of data, the record at offset off of the buffer
// the helper walks: the helper's digest when it is ready, else computed
// here.
func (a *digestAhead) digest(data []byte, off int) chain.Hash {
	if a.on {
		for a.next < len(a.slots) && a.slots[a.next].off < off {
			a.next++
		}
		if a.next < len(a.slots) {
			s := &a.slots[a.next]
			if s.off == off && s.n == len(data) {
				a.next++
				switch {
				case s.state.Load() == slotDone:
					return s.sum
				case s.state.CompareAndSwap(slotTodo, slotClaimed):
					// The helper is behind: this one is ours.
				}
			}
		}
	}
	return chain.Digest(data)
}

// halt stops the helper and waits for it: the buffer may be written
// after it returns.
func (a *digestAhead) halt() {
	if !a.on {
		return
	}
	a.stop.Store(true)
	a.wg.Wait()
	a.on, a.buf = false, nil
}
