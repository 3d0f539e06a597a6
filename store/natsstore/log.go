package natsstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/segment"
	"github.com/helmlog/helm/store"
)

// log is a voyage's log: the messages on its subject of the home's stream.
//
// It learns, as it reads and appends, where the voyage's records are in
// the stream: the last unit it knows of (tail) and, every indexEvery
// records, a unit it read and checked (index), so that a Scan from a
// record starts near it instead of at the voyage's first message, and
// continues the chains from the sum and link it checked.
type log struct {
	s       *Store
	voyage  string
	subject string
	genesis point // the voyage's start

	mu   sync.Mutex
	tail point // the last unit known: after it, tail.first is the next record
	// appended is the point after the last unit this Log appended, for
	// a snapshot taken there (PutSnapshot) once others appended after it.
	appended point
	// lastRead is the last unit this Log read and checked (or checked from
	// a conflict's tail, followOn): its first record, its records and
	// the point after it, for the ConflictError of a writer that decided
	// before it (AppendIf) to give them.
	lastRead struct {
		first   uint64
		records [][]byte
		after   point
	}
	index []point // units read and checked, by first record, sparse
	// recent are the units read and checked, or appended, last: where
	// each begins, by first record, the last recentUnits of them, so
	// that a read from a record near the tail (a writer catching up
	// with the units others appended) starts at its unit, not at an
	// index point up to indexEvery records before it.
	recent []point

	closed atomic.Bool
}

// point is a place in a voyage's log: the unit whose first record is
// first, its message's stream sequence, the CRC32C chain's sum and the
// BLAKE3 chain's link before it, and the number of units before it. Past
// the tail, first is the record after the last, stream the last message's
// sequence, prev and link the chains after it, and units the last unit's
// number.
//
// units is 0 at the voyage's start (first is 1) and in a voyage written
// before units were numbered (Helm-Unit): there, past the start, units
// is not known.
//
// link is known (linked) at the start, at every point a read reached (it
// computes the chain from the start or a linked point) and every point an
// append made; a tail read from a unit of payload version 1 alone
// (fetchTail), which stores no link, has none. stores: the unit before
// the point stores its link (version 2), and so must every later one.
//
// reached: this Log computed the chains at p, reading from the voyage's
// start, from a snapshot it checked, or from another point it reached, or
// appending on one; not so a tail read alone (fetchTail), whose link is
// the one its last message stores, unchecked. Only points reached are
// kept as recent units (log.recent), for reads to start from.
type point struct {
	first, stream uint64
	prev          uint32
	units         uint64
	link          chain.Hash
	linked        bool
	stores        bool
	reached       bool
}

// numbered reports whether the units before p are numbered (or there are
// none): the next unit then has a number, units+1.
func (p point) numbered() bool { return p.first == 1 || p.units > 0 }

// next returns the number of the unit after p: 0 for a voyage whose
// units have none.
func (p point) next() uint64 {
	if p.numbered() {
		return p.units + 1
	}
	return 0
}

// indexEvery is how many records apart the index keeps its points: a scan
// from anywhere reads at most this many records before the first it
// returns, and a log of a million records keeps some thousands of points.
const indexEvery = 256

// recentUnits is how many of the last units a log keeps the beginning of
// (log.recent).
const recentUnits = 64

func (s *Store) newLog(voyage string) *log {
	g := point{first: 1, prev: segment.ChainGenesis(voyage), link: chain.Genesis(voyage), linked: true, reached: true}
	return &log{s: s, voyage: voyage, subject: s.names.subject(voyage), genesis: g, tail: g}
}

// where names the voyage's subject, for errors.
func (l *log) where() string {
	return fmt.Sprintf("subject %s of stream %s on %s", l.subject, l.s.names.stream, l.s.url)
}

func (l *log) damage(stream, seq uint64, reason string) error {
	where := l.where()
	if stream != 0 {
		where += fmt.Sprintf(", message %d", stream)
	}
	return &store.DamageError{Voyage: l.voyage, Where: where, Seq: seq, Reason: reason}
}

// learn moves the tail on to p if p is later, or the same and knows the
// link. The tail it leaves, where the unit after it begins, is a recent
// unit's beginning: a read from there need not go further back.
func (l *log) learn(p point) {
	l.mu.Lock()
	if p.stream > l.tail.stream || p.stream == l.tail.stream && (p.linked && !l.tail.linked || p.reached && !l.tail.reached) {
		if l.tail.stream != 0 && p.stream > l.tail.stream {
			l.rememberRecent(at(l.tail, l.tail.stream+1))
		}
		l.tail = p
	}
	l.mu.Unlock()
}

// learnAppended is learn for the point after a unit this Log appended,
// which began at begin (its stream sequence is the unit's): a recent
// unit, not one for the index, which keeps only units read and checked.
func (l *log) learnAppended(begin, p point) {
	l.learn(p)
	l.mu.Lock()
	l.appended = p
	l.rememberRecent(begin)
	l.mu.Unlock()
}

// fetchTail reads the voyage's last message and returns the point after it.
func (l *log) fetchTail(ctx context.Context) (point, error) {
	p, _, err := l.fetchTailUnit(ctx)
	return p, err
}

// fetchTailUnit is fetchTail that also returns the records of the
// voyage's last unit, unchecked.
func (l *log) fetchTailUnit(ctx context.Context) (point, [][]byte, error) {
	ctx, cancel := l.s.ctx(ctx)
	defer cancel()
	var msg *jetstream.RawStreamMsg
	err := l.s.retry(ctx, func(ctx context.Context) (err error) {
		msg, err = l.s.stream.GetLastMsgForSubject(ctx, l.subject)
		return err
	})
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return l.genesis, nil, nil
	}
	if err != nil {
		return point{}, nil, fmt.Errorf("jetstream: the last record of voyage %s, %s: %w", l.voyage, l.where(), hint(err))
	}
	var u unit
	h, err := parseHeader(msg.Header)
	if err == nil {
		// The payload too, so that nothing is appended on top of a
		// message that is not a unit (its chain is Verify's to check).
		if u, err = decodeUnit(msg.Data); err == nil && uint64(len(u.records)) != h.count {
			err = fmt.Errorf("the message holds %d records, its header says %d", len(u.records), h.count)
		}
	}
	if err != nil {
		// Where the damage is, for a read to go up to it.
		return point{stream: msg.Sequence}, nil, l.damage(msg.Sequence, 0, "the voyage's last message: "+err.Error())
	}
	p := point{first: h.last() + 1, stream: msg.Sequence, prev: h.chain, units: h.unit, link: u.link, linked: u.linked, stores: u.linked}
	l.learn(p)
	return p, u.records, nil
}

// Last reads the voyage's last message.
func (l *log) Last(ctx context.Context) (uint64, error) {
	if l.closed.Load() {
		return 0, store.ErrClosed
	}
	p, err := l.fetchTail(ctx)
	if err != nil {
		return 0, err
	}
	return p.first - 1, nil
}

// AppendIf publishes the unit as one message, expecting the subject's
// last message to be the one that holds record expectLast.
func (l *log) AppendIf(ctx context.Context, expectLast uint64, records ...[]byte) (uint64, error) {
	if l.closed.Load() {
		return 0, store.ErrClosed
	}
	// Every retry of the unit's publish comes within opTimeout of the
	// first, whatever ctx's deadline: well inside the stream's duplicate
	// window (two minutes), past which a retry of a publish that was
	// stored would not be known for a duplicate.
	ctx, cancel := context.WithTimeout(ctx, l.s.timeout)
	defer cancel()
	if len(records) == 0 {
		p, err := l.fetchTail(ctx)
		if err != nil {
			return 0, err
		}
		if p.first-1 != expectLast {
			return 0, &store.ConflictError{Voyage: l.voyage, Expected: expectLast, Actual: p.first - 1}
		}
		return expectLast + 1, nil
	}
	if size, max := payloadSize(records), l.s.nc.MaxPayload()-headerRoom; int64(size) > max {
		return 0, fmt.Errorf("%w: voyage %s: a unit of %d records takes %d bytes, and %s takes messages of %d at most (its max_payload less %d for the headers); nothing was appended", store.ErrTooLarge, l.voyage, len(records), size, l.s.url, max, headerRoom)
	}
	l.mu.Lock()
	tail := l.tail
	var recs []store.Record
	if tail.stream != 0 && tail.first-1 > expectLast {
		recs = l.readAfter(expectLast)
	}
	l.mu.Unlock()
	if tail.stream != 0 && tail.first-1 > expectLast {
		// A unit after expectLast was read or appended here already: no
		// request tells more.
		return 0, &store.ConflictError{Voyage: l.voyage, Expected: expectLast, Actual: tail.first - 1, Records: recs}
	}
	if tail.first-1 != expectLast || tail.stream == 0 {
		var err error
		if tail, err = l.fetchTail(ctx); err != nil {
			return 0, err
		}
		if tail.first-1 != expectLast {
			return 0, &store.ConflictError{Voyage: l.voyage, Expected: expectLast, Actual: tail.first - 1}
		}
	}
	// One id for every attempt of this unit, and another for every other
	// unit: a retry is a duplicate of its first attempt, never of another
	// writer's unit on the same tail.
	id := "helm-" + rand.Text()
	for attempt := 0; ; attempt++ {
		if !tail.linked {
			// A tail of payload version 1, read alone, stores no link:
			// the chain up to it is computed from the records, once.
			h, err := l.Head(ctx, expectLast)
			if err != nil {
				return 0, err
			}
			tail.link, tail.linked = h.Hash, true
		}
		sum, link := tail.prev, tail.link
		for i, r := range records {
			sum = segment.ChainNext(sum, r)
			link = chain.Link(link, expectLast+1+uint64(i), r)
		}
		unit := tail.next()
		after := point{first: expectLast + uint64(len(records)) + 1, prev: sum, units: unit, link: link, linked: true, stores: true, reached: tail.reached}
		msg := &nats.Msg{Subject: l.subject, Data: encodeUnit(records, link), Header: nats.Header{}}
		unitHeader{first: expectLast + 1, count: uint64(len(records)), chain: sum, unit: unit}.set(msg.Header)
		actx, cancel := context.WithTimeout(ctx, l.s.attempt)
		ack, err := l.s.js.PublishMsg(actx, msg,
			jetstream.WithMsgID(id),
			jetstream.WithExpectStream(l.s.names.stream),
			jetstream.WithExpectLastSequencePerSubject(tail.stream))
		cancel()
		if err == nil {
			after.stream = ack.Sequence
			l.learnAppended(at(tail, ack.Sequence), after)
			return expectLast + 1, nil
		}
		if isWrongLast(err) && attempt > 0 {
			// An earlier attempt may have been stored and its
			// acknowledgement lost: a server checks the expected last
			// sequence before the message id, so the retry is refused as
			// if another writer had appended. The unit, if stored, is the
			// subject's first message after tail.stream.
			seq, ours, ferr := l.stored(ctx, tail.stream, id)
			if ferr != nil {
				return 0, ferr
			}
			if ours {
				after.stream = seq
				l.learnAppended(at(tail, seq), after)
				return expectLast + 1, nil
			}
		}
		if isWrongLast(err) {
			// Another writer appended, or (10164, on a replicated
			// stream) the leader had a message on the subject in flight
			// and could not check: read the tail. If the record it ends
			// with is still expectLast, nothing moved the log on (or
			// only the stream sequence known here was stale): try again.
			now, raw, ferr := l.fetchTailUnit(ctx)
			if ferr != nil {
				return 0, ferr
			}
			if now.first-1 == expectLast && ctx.Err() == nil {
				if now.stream != tail.stream {
					tail = now
				}
				settle(ctx, attempt)
				continue
			}
			recs := l.caughtUp(ctx, tail, now, raw)
			if recs != nil {
				data := make([][]byte, len(recs))
				for i, r := range recs {
					data[i] = r.Data
				}
				now.reached = tail.reached // checked from tail
				l.learn(now)
				l.mu.Lock()
				l.keepRead(tail.first, data, now)
				l.mu.Unlock()
			}
			return 0, &store.ConflictError{Voyage: l.voyage, Expected: expectLast, Actual: now.first - 1, Records: recs}
		}
		if full(err) {
			return 0, fmt.Errorf("jetstream: append %d records after record %d of voyage %s, %s: the stream is full: %w; the server refused the unit and nothing was appended (raise the stream's limit: max_msgs, max_bytes or max_msgs_per_subject)", len(records), expectLast, l.voyage, l.where(), err)
		}
		if retryable(err) && ctx.Err() == nil {
			pause(ctx, attempt)
			continue
		}
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return 0, fmt.Errorf("jetstream: append %d records after record %d of voyage %s, %s: %w (the unit may or may not be in the log: read its tail before deciding again)", len(records), expectLast, l.voyage, l.where(), hint(err))
	}
}

// keepRead keeps the unit of records from first, checked, that ends at
// after, as the last read (the caller holds l.mu).
func (l *log) keepRead(first uint64, records [][]byte, after point) {
	l.lastRead.first, l.lastRead.records, l.lastRead.after = first, records, after
}

// readAfter returns the records after expectLast up to the tail when the
// last unit read holds them all (nil otherwise). The caller holds l.mu.
func (l *log) readAfter(expectLast uint64) []store.Record {
	r := l.lastRead
	if r.first != expectLast+1 || r.after.stream != l.tail.stream || r.after.first != l.tail.first {
		return nil
	}
	out := make([]store.Record, len(r.records))
	for i, d := range r.records {
		out[i] = store.Record{Seq: r.first + uint64(i), Data: d}
	}
	return out
}

// followOn returns the records of the unit that ends at now, when it is
// the one unit after tail and continues both chains from tail to now
// (the CRC32C chain its header gives, the link it stores, its number):
// as a read from tail would check it. Otherwise nil: the caller reads.
func followOn(tail, now point, records [][]byte) []store.Record {
	if !tail.linked || !now.linked || tail.first+uint64(len(records)) != now.first || now.units != tail.next() || len(records) == 0 {
		return nil
	}
	sum, link := tail.prev, tail.link
	out := make([]store.Record, len(records))
	for i, r := range records {
		seq := tail.first + uint64(i)
		sum = segment.ChainNext(sum, r)
		link = chain.Link(link, seq, r)
		out[i] = store.Record{Seq: seq, Data: r}
	}
	if sum != now.prev || link != now.link {
		return nil
	}
	return out
}

// caughtUp returns the records after tail up to now, the tail the store
// holds, checked as a read from tail would check them (followOn): those
// of the unit that ends at now, raw, and, when other units came between
// (shortScan records at most), theirs, read a unit at a time. nil when
// they cannot be had so: the caller reads them (Scan), and meets there
// what kept them.
//
// With many writers on one voyage, a writer that loses a race has most
// often lost it to more than one unit: giving them all spares its next
// decision a read of the log.
func (l *log) caughtUp(ctx context.Context, tail, now point, raw [][]byte) []store.Record {
	if recs := followOn(tail, now, raw); recs != nil || !tail.numbered() || now.units <= tail.next() || now.first-tail.first > shortScan {
		if recs != nil {
			l.mu.Lock()
			l.rememberRecent(at(tail, now.stream))
			l.mu.Unlock()
		}
		return recs
	}
	var out []store.Record
	for cur := tail; ; {
		var msg *jetstream.RawStreamMsg
		err := l.s.retry(ctx, func(ctx context.Context) (err error) {
			msg, err = l.s.stream.GetMsg(ctx, cur.stream+1, jetstream.WithGetMsgSubject(l.subject))
			return err
		})
		if err != nil || msg.Sequence > now.stream {
			return nil
		}
		p, records := now, raw
		if msg.Sequence < now.stream {
			h, err := parseHeader(msg.Header)
			if err != nil {
				return nil
			}
			u, err := decodeUnit(msg.Data)
			if err != nil || uint64(len(u.records)) != h.count {
				return nil
			}
			p = point{first: h.last() + 1, stream: msg.Sequence, prev: h.chain, units: h.unit, link: u.link, linked: u.linked, stores: u.linked}
			records = u.records
		}
		recs := followOn(cur, p, records)
		if recs == nil {
			return nil
		}
		p.reached = cur.reached
		l.mu.Lock()
		l.rememberRecent(at(cur, p.stream))
		l.mu.Unlock()
		out = append(out, recs...)
		if p.stream == now.stream {
			return out
		}
		cur = p
	}
}

// stored returns the subject's first message after stream sequence after,
// and whether it is the unit published with message id id.
func (l *log) stored(ctx context.Context, after uint64, id string) (uint64, bool, error) {
	var msg *jetstream.RawStreamMsg
	err := l.s.retry(ctx, func(ctx context.Context) (err error) {
		msg, err = l.s.stream.GetMsg(ctx, after+1, jetstream.WithGetMsgSubject(l.subject))
		return err
	})
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("jetstream: whether a retried append of voyage %s is in the log, %s: %w", l.voyage, l.where(), hint(err))
	}
	return msg.Sequence, msg.Header.Get(jetstream.MsgIDHeader) == id, nil
}

// full reports whether err is the server's refusal of a message past a
// limit of the stream under the discard policy new: a store failure
// (10077, which passes for a 503) that says which limit.
func full(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == 10077 && strings.HasPrefix(apiErr.Description, "maximum ") && strings.HasSuffix(apiErr.Description, " exceeded")
}

// retryable reports whether err is the server's (or the cluster's)
// passing unavailability: no answer in time, no responder while a leader
// is elected, a retry that found its first attempt still in flight.
func retryable(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode {
		case 10008, // JetStream system temporarily unavailable
			10009, // cluster cannot handle request (not the leader)
			10158: // duplicate message id is in process
			return true
		}
		return apiErr.Code == 503
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrDisconnected) || errors.Is(err, nats.ErrConnectionReconnecting)
}

// settle waits before a unit is published again on a tail that did not
// move, the leader having refused it while a message on the subject was
// in flight (10164): a random part of a bound that doubles after each
// attempt, from 1 ms (a replicated stream commits a message in about
// one) up to 16 ms, so that writers that met there fall out of step.
func settle(ctx context.Context, attempt int) {
	t := time.NewTimer(time.Duration(mrand.Int64N(int64(time.Millisecond) << min(attempt, 4))))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// pause waits a little before a retry, longer after each.
func pause(ctx context.Context, attempt int) {
	d := min(time.Duration(attempt+1)*10*time.Millisecond, time.Second)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func (l *log) Scan(ctx context.Context, from uint64, fn func(store.Record) error) error {
	return l.read(ctx, from, false, false, records(fn))
}

func (l *log) Follow(ctx context.Context, from uint64, fn func(store.Record) error) error {
	return l.read(ctx, from, true, false, records(fn))
}

// records adapts fn to read's, which also gives each record's link.
func records(fn func(store.Record) error) func(store.Record, chain.Hash) error {
	return func(rec store.Record, _ chain.Hash) error { return fn(rec) }
}

// Verify reads every message of the voyage from its first, checking each
// against the chains continued from the genesis.
func (l *log) Verify(ctx context.Context) error {
	return l.read(ctx, 1, false, true, func(store.Record, chain.Hash) error { return nil })
}

// Head returns the chain's head after record seq, which a unit ends: the
// link that unit stores, as this Log last read or appended it, or as the
// voyage's last message holds it (one request). A unit of payload version
// 1 stores none: the chain is then computed from the records, reading
// them from the nearest point this Log knows the link at (a read from the
// voyage's first message, at worst), as it is for a record inside a unit.
func (l *log) Head(ctx context.Context, seq uint64) (chain.Head, error) {
	if l.closed.Load() {
		return chain.Head{}, store.ErrClosed
	}
	if seq == 0 {
		return chain.Head{Hash: l.genesis.link}, nil
	}
	l.mu.Lock()
	tail := l.tail
	l.mu.Unlock()
	if tail.stream == 0 || tail.first-1 != seq || !tail.linked {
		var err error
		if tail, err = l.fetchTail(ctx); err != nil {
			return chain.Head{}, err
		}
	}
	if tail.first-1 == seq && tail.linked {
		return chain.Head{Seq: seq, Hash: tail.link}, nil
	}
	if seq >= tail.first {
		return chain.Head{}, fmt.Errorf("store: voyage %s, %s: no head after record %d: the log ends at record %d", l.voyage, l.where(), seq, tail.first-1)
	}
	var head chain.Head
	err := l.read(ctx, seq, false, false, func(rec store.Record, link chain.Hash) error {
		if rec.Seq < seq {
			return nil
		}
		head = chain.Head{Seq: rec.Seq, Hash: link}
		return errHead
	})
	if errors.Is(err, errHead) {
		return head, nil
	}
	if err == nil {
		err = fmt.Errorf("store: voyage %s, %s: no head after record %d: the log ended before it", l.voyage, l.where(), seq)
	}
	return chain.Head{}, err
}

// errHead stops the read of Head at the record it wants.
var errHead = errors.New("the head is found")

// at returns the point where the unit after p begins, stored as message
// stream.
func at(p point, stream uint64) point {
	p.stream = stream
	return p
}

// start returns where a read from record from begins: the latest point
// checked at or before it (a recent unit's, or the index's), the tail if
// from is after it, or the voyage's first message.
func (l *log) start(from uint64, tail point) point {
	l.mu.Lock()
	defer l.mu.Unlock()
	if from >= tail.first && tail.stream != 0 && tail.linked {
		p := tail
		p.stream++
		return p
	}
	best := l.begin()
	if i := sort.Search(len(l.index), func(i int) bool { return l.index[i].first > from }); i > 0 {
		best = l.index[i-1]
	}
	if i := sort.Search(len(l.recent), func(i int) bool { return l.recent[i].first > from }); i > 0 && l.recent[i-1].first > best.first {
		best = l.recent[i-1]
	}
	return best
}

// begin is where a read from the voyage's first message starts.
func (l *log) begin() point {
	p := l.genesis
	p.stream = 1
	return p
}

// remember adds where a checked (or appended) unit begins to the recent
// units, and to the index unless a point is within indexEvery records of
// it already.
func (l *log) remember(p point) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rememberRecent(p)
	i := sort.Search(len(l.index), func(i int) bool { return l.index[i].first >= p.first })
	if i > 0 && p.first < l.index[i-1].first+indexEvery || i < len(l.index) && l.index[i].first < p.first+indexEvery {
		return
	}
	l.index = slices.Insert(l.index, i, p)
}

// rememberRecent keeps p among the recent units (the caller holds l.mu):
// the last recentUnits or more by first record (up to twice as many, so
// that a long read drops the oldest in bulk), a unit once, if this Log
// reached it (point.reached), rather than a tail read alone gave it.
func (l *log) rememberRecent(p point) {
	if !p.linked || !p.reached {
		return
	}
	i := sort.Search(len(l.recent), func(i int) bool { return l.recent[i].first >= p.first })
	switch {
	case i < len(l.recent) && l.recent[i].first == p.first:
		return
	case i == 0 && len(l.recent) >= recentUnits:
		return // older than all kept
	}
	l.recent = slices.Insert(l.recent, i, p)
	if len(l.recent) >= 2*recentUnits {
		l.recent = slices.Delete(l.recent, 0, len(l.recent)-recentUnits)
	}
}

// read delivers the records from from on: up to the last when it began
// (Scan), or on until ctx ends (Follow). verify reads from the voyage's
// first message and checks the last one is where the tail was.
func (l *log) read(ctx context.Context, from uint64, follow, verify bool, fn func(store.Record, chain.Hash) error) error {
	if l.closed.Load() {
		return store.ErrClosed
	}
	from = max(from, 1)
	tail, err := l.fetchTail(ctx)
	var de *store.DamageError
	if errors.As(err, &de) && tail.stream != 0 {
		// The last message is damaged: read the records before it, and
		// report it where the read meets it, with the record it holds.
		tail.first, err = math.MaxUint64, nil
	}
	if err != nil {
		return err
	}
	if !follow && from >= tail.first {
		return nil // nothing at or after from
	}
	p := l.begin()
	if !verify {
		p = l.start(from, tail)
	}
	next, sum, link, at := p.first, p.prev, p.link, p // at: after the last unit read
	var links []chain.Hash                            // the link after each record of a unit
	// unit checks the message at stream holding a unit and gives fn its
	// records from from on; done when a Scan has read up to the tail.
	unit := func(stream uint64, hdr nats.Header, data []byte) (done bool, err error) {
		h, err := parseHeader(hdr)
		if err != nil {
			return false, l.damage(stream, next, err.Error())
		}
		if h.first != next {
			return false, l.damage(stream, next, fmt.Sprintf("the message holds records %d to %d where record %d comes next: records are missing, repeated or out of order", h.first, h.last(), next))
		}
		u, err := decodeUnit(data)
		if err != nil {
			return false, l.damage(stream, next, err.Error())
		}
		records := u.records
		if uint64(len(records)) != h.count {
			return false, l.damage(stream, next, fmt.Sprintf("the message holds %d records, its header says %d", len(records), h.count))
		}
		before, beforeLink := sum, link
		for _, r := range records {
			sum = segment.ChainNext(sum, r)
		}
		if sum != h.chain {
			return false, l.damage(stream, next, fmt.Sprintf("hash chain broken: the records continue it to %08x, the message says %08x (a record was changed, or a unit dropped or replaced before it)", sum, h.chain))
		}
		// A voyage's first unit says whether its units are numbered.
		switch {
		case h.unit == 0 && at.units > 0:
			return false, l.damage(stream, next, fmt.Sprintf("the message has no unit number (%s), where unit %d comes next", hdrUnit, at.units+1))
		case h.unit != 0 && !at.numbered():
			return false, l.damage(stream, next, fmt.Sprintf("the message is numbered unit %d, where the voyage's units before it have no number", h.unit))
		case h.unit != 0 && h.unit != at.units+1:
			return false, l.damage(stream, next, fmt.Sprintf("the message is unit %d where unit %d comes next: units are missing, repeated or out of order", h.unit, at.units+1))
		}
		links = links[:0]
		for i, r := range records {
			link = chain.Link(link, h.first+uint64(i), r)
			links = append(links, link)
		}
		switch {
		case u.linked && link != u.link:
			return false, l.damage(stream, next, fmt.Sprintf("hash chain broken: the records continue the BLAKE3 chain to %s, the message says %s (a record was changed, or a unit dropped or replaced before it)", link, u.link))
		case !u.linked && at.stores:
			return false, l.damage(stream, next, "the message stores no chain link (payload version 1) where the voyage's units before it store one")
		}
		l.remember(point{first: h.first, stream: stream, prev: before, units: at.units, link: beforeLink, linked: true, stores: at.stores, reached: at.reached})
		at = point{first: h.last() + 1, stream: stream, prev: sum, units: h.unit, link: link, linked: true, stores: u.linked, reached: at.reached}
		l.learn(at)
		l.mu.Lock()
		l.keepRead(h.first, records, at)
		l.mu.Unlock()
		for i, r := range records {
			if seq := h.first + uint64(i); seq >= from {
				if err := fn(store.Record{Seq: seq, Data: r}, links[i]); err != nil {
					return false, err
				}
			}
		}
		next = h.last() + 1
		if !follow && stream >= tail.stream {
			if verify && (stream != tail.stream || next != tail.first || sum != tail.prev || tail.linked && link != tail.link) {
				return false, l.damage(stream, next-1, fmt.Sprintf("the voyage's last message is %d, ending at record %d with chain %08x, but reading ended at message %d, record %d, chain %08x", tail.stream, tail.first-1, tail.prev, stream, next-1, sum))
			}
			return true, nil
		}
		return false, nil
	}
	if !follow && !verify && tail.first-p.first <= shortScan {
		// A few records: a request per unit, rather than a consumer
		// made and deleted (what a writer that lost a race reads).
		for stream := p.stream; ; {
			var msg *jetstream.RawStreamMsg
			err := l.s.retry(ctx, func(ctx context.Context) (err error) {
				msg, err = l.s.stream.GetMsg(ctx, stream, jetstream.WithGetMsgSubject(l.subject))
				return err
			})
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return fmt.Errorf("jetstream: read voyage %s, %s, after record %d: %w", l.voyage, l.where(), next-1, hint(err))
			}
			if done, err := unit(msg.Sequence, msg.Header, msg.Data); done || err != nil {
				return err
			}
			stream = msg.Sequence + 1
		}
	}
	cons, err := l.s.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{l.subject},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    p.stream,
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("jetstream: read voyage %s, %s: %w", l.voyage, l.where(), hint(err))
	}
	// A pull's byte budget must hold the largest message, or the server
	// never delivers it: a server may take units far larger than 8 MiB.
	// The budget alone (PullMaxBytes) would have the client buffer a
	// million messages, a channel of 8 MB made and cleared for every
	// read: pullMessages bounds what one pull asks for and buffers.
	it, err := cons.Messages(jetstream.PullMaxMessagesWithBytesLimit(pullMessages, int(max(8<<20, 2*l.s.nc.MaxPayload()))))
	if err != nil {
		return fmt.Errorf("jetstream: read voyage %s, %s: %w", l.voyage, l.where(), hint(err))
	}
	defer func() {
		it.Stop()
		// Stopping leaves the consumer on the server for five idle
		// minutes: a scan per request would pile them up. Delete it, in
		// the background, whatever ended the read. The deletion outlives
		// the read on purpose (a cancelled read is one to clean up after):
		// it keeps the read's values but not its cancellation, and is
		// bounded by one attempt's timeout.
		if info := cons.CachedInfo(); info != nil {
			cleanup := context.WithoutCancel(ctx)
			go func() {
				ctx, cancel := context.WithTimeout(cleanup, l.s.attempt)
				defer cancel()
				_ = l.s.stream.DeleteConsumer(ctx, info.Name)
			}()
		}
	}()
	for {
		msg, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("jetstream: read voyage %s, %s, after record %d: %w", l.voyage, l.where(), next-1, hint(err))
		}
		meta, err := msg.Metadata()
		if err != nil {
			return fmt.Errorf("jetstream: read voyage %s, %s, after record %d: %w", l.voyage, l.where(), next-1, err)
		}
		if done, err := unit(meta.Sequence.Stream, msg.Headers(), msg.Data()); done || err != nil {
			return err
		}
	}
}

// shortScan is how many records a Scan reads a unit at a time, with a
// request each, rather than through a consumer of its own.
const shortScan = 64

// pullMessages is how many units a read through a consumer asks for in
// one pull (it asks for more once half are taken), and buffers at most.
const pullMessages = 512

// Close makes the log refuse further calls. A Follow in progress goes on
// until its context ends.
func (l *log) Close() error {
	l.closed.Store(true)
	return nil
}
