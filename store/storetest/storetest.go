// Package storetest is the conformance suite of helm's stores: a store
// that passes Run is a helm store. It checks what the facade relies on —
// order, conditional appends and their typed conflicts, atomic units,
// follow, concurrent writers in one client and across clients, large
// artifacts checked against their address, listing with summaries, and
// reopening — against the store under test, so every store is held to the
// same promises.
package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/store"
)

// NewStore makes an empty store for one test and returns how to open it:
// each call of the function returned is a new client of that same store
// (for a directory, a Dir on it; for a server, a new connection), so that
// the suite can write from several clients and reopen.
type NewStore func(t *testing.T) (open func() store.Store)

// Run runs the suite, each check as a subtest with a store of its own.
func Run(t *testing.T, newStore NewStore) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, open func() store.Store)
	}{
		{"CreateOpenList", createOpenList},
		{"AppendScanInOrder", appendScan},
		{"ConflictOnAStaleTail", conflict},
		{"UnitsStayWhole", unitsStayWhole},
		{"LargeUnits", largeUnits},
		{"ConcurrentWritersAcrossClients", concurrentWriters},
		{"Follow", follow},
		{"LargeArtifacts", largeArtifacts},
		{"Summaries", summaries},
		{"ListWithTails", listWithTails},
		{"Reopen", reopen},
		{"Heads", heads},
		{"Erase", erase},
		{"Snapshots", snapshots},
	} {
		t.Run(c.name, func(t *testing.T) {
			open := newStore(t)
			c.run(t, open)
		})
	}
}

func ctxOf(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func client(t *testing.T, open func() store.Store) store.Store {
	s := open()
	t.Cleanup(func() { s.Close() })
	return s
}

func create(t *testing.T, s store.Store, voyage string) store.Log {
	l, err := s.Create(ctxOf(t), voyage)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return l
}

// records returns the log's records from 1.
func records(t *testing.T, l store.Log) []store.Record {
	var out []store.Record
	require.NoError(t, l.Scan(ctxOf(t), 1, func(r store.Record) error {
		out = append(out, store.Record{Seq: r.Seq, Data: slices.Clone(r.Data)})
		return nil
	}))
	return out
}

func data(rs []store.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r.Data)
	}
	return out
}

func createOpenList(t *testing.T, open func() store.Store) {
	ctx := ctxOf(t)
	s := client(t, open)
	_, err := s.Open(ctx, "v-missing")
	assert.ErrorIs(t, err, store.ErrNotFound)
	l := create(t, s, "v-one")
	last, err := l.Last(ctx)
	require.NoError(t, err)
	assert.Zero(t, last, "a new log is empty")
	_, err = s.Create(ctx, "v-one")
	assert.ErrorIs(t, err, store.ErrExists)
	create(t, s, "v-two")
	list, err := s.Voyages(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"v-one", "v-two"}, keys(list))
	other, err := client(t, open).Open(ctx, "v-one")
	require.NoError(t, err, "another client opens it")
	require.NoError(t, other.Close())
}

func keys(m map[string]store.Summary) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func appendScan(t *testing.T, open func() store.Store) {
	ctx := ctxOf(t)
	l := create(t, client(t, open), "v")
	first, err := l.AppendIf(ctx, 0, []byte("a"), []byte("b"))
	require.NoError(t, err)
	assert.Equal(t, uint64(1), first)
	first, err = l.AppendIf(ctx, 2, []byte("c"))
	require.NoError(t, err)
	assert.Equal(t, uint64(3), first)
	first, err = l.AppendIf(ctx, 3, []byte{}, bytes.Repeat([]byte{0, 0xff}, 100))
	require.NoError(t, err, "an empty record and binary bytes")
	assert.Equal(t, uint64(4), first)
	_, err = l.AppendIf(ctx, 5)
	require.NoError(t, err, "no records: the tail is checked, nothing appended")

	got := records(t, l)
	require.Len(t, got, 5)
	for i, r := range got {
		assert.Equal(t, uint64(i+1), r.Seq)
	}
	assert.Equal(t, []string{"a", "b", "c", "", string(bytes.Repeat([]byte{0, 0xff}, 100))}, data(got))
	var from3 []string
	require.NoError(t, l.Scan(ctx, 3, func(r store.Record) error { from3 = append(from3, string(r.Data)); return nil }))
	assert.Equal(t, []string{"c", ""}, from3[:2])
	require.NoError(t, l.Scan(ctx, 6, func(store.Record) error { t.Error("no record after the last"); return nil }))
	last, err := l.Last(ctx)
	require.NoError(t, err)
	assert.Equal(t, uint64(5), last)
	stop := errors.New("stop")
	n := 0
	err = l.Scan(ctx, 1, func(store.Record) error { n++; return stop })
	assert.ErrorIs(t, err, stop, "fn's error stops the scan and is returned")
	assert.Equal(t, 1, n)
	require.NoError(t, l.Verify(ctx))
}

func conflict(t *testing.T, open func() store.Store) {
	ctx := ctxOf(t)
	s := client(t, open)
	l := create(t, s, "v")
	_, err := l.AppendIf(ctx, 0, []byte("a"), []byte("b"))
	require.NoError(t, err)
	// Two clients decide on the same tail: one commits, the other gets the
	// typed conflict, reads the new tail and commits after it.
	other, err := client(t, open).Open(ctx, "v")
	require.NoError(t, err)
	t.Cleanup(func() { other.Close() })
	_, err = l.AppendIf(ctx, 2, []byte("mine"))
	require.NoError(t, err)
	_, err = other.AppendIf(ctx, 2, []byte("theirs"))
	var ce *store.ConflictError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, store.ErrConflict)
	assert.Equal(t, "v", ce.Voyage)
	assert.Equal(t, [2]uint64{2, 3}, [2]uint64{ce.Expected, ce.Actual})
	if len(ce.Records) > 0 {
		assert.Equal(t, []store.Record{{Seq: 3, Data: []byte("mine")}}, ce.Records, "the records a conflict gives are the log's")
	}
	assert.Contains(t, err.Error(), "v")
	for _, stale := range []uint64{0, 1, 4, 100} {
		_, err := other.AppendIf(ctx, stale, []byte("stale"))
		assert.ErrorIs(t, err, store.ErrConflict, "expect %d", stale)
	}
	_, err = other.AppendIf(ctx, ce.Actual, []byte("theirs"))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "mine", "theirs"}, data(records(t, l)))

	// A writer that knew the tail loses a race: a store that read the
	// unit that came first with the tail may give its records.
	_, err = l.AppendIf(ctx, 4, []byte("mine again"))
	require.NoError(t, err)
	_, err = other.AppendIf(ctx, 4, []byte("late"))
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, [2]uint64{4, 5}, [2]uint64{ce.Expected, ce.Actual})
	if len(ce.Records) > 0 {
		assert.Equal(t, []store.Record{{Seq: 5, Data: []byte("mine again")}}, ce.Records, "the records a conflict gives are the log's")
	}
}

// unitsStayWhole: a reader following the log while units of several
// records are appended sees every unit whole, never a part of one.
func unitsStayWhole(t *testing.T, open func() store.Store) {
	ctx := ctxOf(t)
	s := client(t, open)
	l := create(t, s, "v")
	reader, err := client(t, open).Open(ctx, "v")
	require.NoError(t, err)
	t.Cleanup(func() { reader.Close() })
	const units, size = 40, 5
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	seen := make(chan store.Record, units*size)
	done := make(chan error, 1)
	go func() {
		done <- reader.Follow(fctx, 1, func(r store.Record) error {
			seen <- store.Record{Seq: r.Seq, Data: slices.Clone(r.Data)}
			return nil
		})
	}()
	var last uint64
	for u := range units {
		recs := make([][]byte, size)
		for i := range recs {
			recs[i] = fmt.Appendf(nil, "unit %d record %d", u, i)
		}
		_, err := l.AppendIf(ctx, last, recs...)
		require.NoError(t, err)
		last += size
	}
	for i := range units * size {
		select {
		case r := <-seen:
			assert.Equal(t, uint64(i+1), r.Seq)
			assert.Equal(t, fmt.Sprintf("unit %d record %d", i/size, i%size), string(r.Data))
		case <-time.After(30 * time.Second):
			t.Fatalf("follow saw %d records of %d", i, units*size)
		}
	}
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled, "follow ends with its context")
}

// largeUnits: a unit of 900 KiB goes in whole; one far larger is either
// taken whole or refused whole (ErrTooLarge), never in part.
func largeUnits(t *testing.T, open func() store.Store) {
	ctx := ctxOf(t)
	l := create(t, client(t, open), "v")
	big := make([][]byte, 9)
	for i := range big {
		big[i] = randomBytes(t, 100<<10)
	}
	_, err := l.AppendIf(ctx, 0, big...)
	require.NoError(t, err)
	got := records(t, l)
	require.Len(t, got, len(big))
	for i := range big {
		assert.True(t, bytes.Equal(big[i], got[i].Data), "record %d", i+1)
	}
	huge := [][]byte{randomBytes(t, 6<<20), []byte("after")}
	_, err = l.AppendIf(ctx, 9, huge...)
	if err != nil {
		require.ErrorIs(t, err, store.ErrTooLarge)
		last, lerr := l.Last(ctx)
		require.NoError(t, lerr)
		assert.Equal(t, uint64(9), last, "refused whole")
		return
	}
	got = records(t, l)
	require.Len(t, got, 11)
	assert.True(t, bytes.Equal(huge[0], got[9].Data))
	require.NoError(t, l.Verify(ctx))
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return b
}

// concurrentWriters: goroutines in several clients append units on one
// voyage, each deciding on the tail it read and retrying on a conflict.
// Every unit is in the log exactly once, whole, and the sequence has no
// gap.
func concurrentWriters(t *testing.T, open func() store.Store) {
	ctx := ctxOf(t)
	create(t, client(t, open), "v")
	const clients, goroutines, units = 3, 4, 12
	var wg sync.WaitGroup
	errs := make(chan error, clients*goroutines)
	for c := range clients {
		s := client(t, open)
		for g := range goroutines {
			l, err := s.Open(ctx, "v")
			require.NoError(t, err)
			t.Cleanup(func() { l.Close() })
			wg.Go(func() {
				for u := range units {
					for {
						last, err := l.Last(ctx)
						if err != nil {
							errs <- err
							return
						}
						_, err = l.AppendIf(ctx, last, fmt.Appendf(nil, "%d/%d/%d a", c, g, u), fmt.Appendf(nil, "%d/%d/%d b", c, g, u))
						if errors.Is(err, store.ErrConflict) {
							continue
						}
						if err != nil {
							errs <- err
							return
						}
						break
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	reader, err := client(t, open).Open(ctx, "v")
	require.NoError(t, err)
	t.Cleanup(func() { reader.Close() })
	got := records(t, reader)
	require.Len(t, got, clients*goroutines*units*2)
	seen := map[string]bool{}
	for i := 0; i < len(got); i += 2 {
		assert.Equal(t, uint64(i+1), got[i].Seq)
		a, b := string(got[i].Data), string(got[i+1].Data)
		unit, ok := strings.CutSuffix(a, " a")
		require.True(t, ok, "record %d begins a unit: %q", i+1, a)
		assert.Equal(t, unit+" b", b, "unit %s whole", unit)
		assert.False(t, seen[unit], "unit %s once", unit)
		seen[unit] = true
	}
	require.NoError(t, reader.Verify(ctx))
}

func follow(t *testing.T, open func() store.Store) {
	ctx := ctxOf(t)
	l := create(t, client(t, open), "v")
	_, err := l.AppendIf(ctx, 0, []byte("1"), []byte("2"))
	require.NoError(t, err)
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := make(chan string, 10)
	done := make(chan error, 1)
	go func() {
		done <- l.Follow(fctx, 2, func(r store.Record) error {
			got <- fmt.Sprintf("%d:%s", r.Seq, r.Data)
			return nil
		})
	}()
	other, err := client(t, open).Open(ctx, "v")
	require.NoError(t, err)
	t.Cleanup(func() { other.Close() })
	_, err = other.AppendIf(ctx, 2, []byte("3"))
	require.NoError(t, err)
	for _, want := range []string{"2:2", "3:3"} {
		select {
		case g := <-got:
			assert.Equal(t, want, g)
		case <-time.After(30 * time.Second):
			t.Fatalf("follow did not see %s", want)
		}
	}
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(30 * time.Second):
		t.Fatal("follow did not end with its context")
	}
	stop := errors.New("stop")
	assert.ErrorIs(t, l.Follow(ctx, 1, func(store.Record) error { return stop }), stop)
}

func largeArtifacts(t *testing.T, open func() store.Store) {
	ctx := ctxOf(t)
	s := client(t, open)
	create(t, s, "v")
	arts := s.Artifacts("v")
	content := make([]byte, 3<<20) // compressible, but not to nothing
	for i := range content {
		content[i] = byte(i*7) ^ byte(i>>11)
	}
	e := artifact.Encode(content)
	ref, err := arts.Put(ctx, e)
	require.NoError(t, err)
	assert.Equal(t, e.Hash, ref.Hash)
	assert.Equal(t, int64(len(content)), ref.Size)
	assert.Equal(t, int64(len(e.Compressed)), ref.StoredSize)

	got, err := client(t, open).Artifacts("v").Get(ctx, ref)
	require.NoError(t, err, "another client reads it")
	assert.True(t, bytes.Equal(content, got))
	r, err := arts.Open(ctx, ref)
	require.NoError(t, err)
	stored, err := io.ReadAll(r)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	assert.True(t, bytes.Equal(e.Compressed, stored), "Open gives the stored bytes")

	small := artifact.Encode([]byte("a second artifact"))
	ref2, err := arts.Put(ctx, small)
	require.NoError(t, err)
	got, err = arts.Get(ctx, ref2)
	require.NoError(t, err)
	assert.Equal(t, "a second artifact", string(got))

	wrong := ref
	wrong.Hash = artifact.Hash([]byte("something else"))
	_, err = arts.Get(ctx, wrong)
	assert.Error(t, err, "bytes that do not answer the address are refused")
}

func summaries(t *testing.T, open func() store.Store) {
	ctx := ctxOf(t)
	s := client(t, open)
	create(t, s, "v")
	create(t, s, "w")
	require.NoError(t, s.PutSummary(ctx, "v", store.Summary{Seq: 5, Data: []byte(`{"intent":"five"}`)}))
	require.NoError(t, s.PutSummary(ctx, "v", store.Summary{Seq: 3, Data: []byte(`{"intent":"three"}`)}))
	list, err := client(t, open).Voyages(ctx)
	require.NoError(t, err)
	assert.Equal(t, store.Summary{Seq: 5, Data: []byte(`{"intent":"five"}`)}, list["v"], "an older summary does not replace a newer one")
	assert.Zero(t, list["w"].Seq, "a voyage without a summary is listed")
	require.NoError(t, s.PutSummary(ctx, "v", store.Summary{Seq: 7, Data: []byte(`{"intent":"seven"}`)}))
	list, err = s.Voyages(ctx)
	require.NoError(t, err)
	assert.Equal(t, uint64(7), list["v"].Seq)
}

// listWithTails: List gives every voyage with its summary and its log's
// last record, through any client; a voyage whose log is empty has none.
func listWithTails(t *testing.T, open func() store.Store) {
	ctx := ctxOf(t)
	s := client(t, open)
	v := create(t, s, "v")
	_, err := v.AppendIf(ctx, 0, []byte("a"), []byte("b"))
	require.NoError(t, err)
	_, err = v.AppendIf(ctx, 2, []byte("c"))
	require.NoError(t, err)
	require.NoError(t, s.PutSummary(ctx, "v", store.Summary{Seq: 2, Data: []byte(`{"intent":"two"}`)}))
	create(t, s, "w")

	list, err := client(t, open).List(ctx)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"v", "w"}, slices.Collect(maps.Keys(list)))
	assert.Equal(t, store.Listing{Summary: store.Summary{Seq: 2, Data: []byte(`{"intent":"two"}`)}, Last: 3}, list["v"])
	w := list["w"]
	assert.NoError(t, w.Err)
	assert.Zero(t, w.Last, "an empty log has no last record")
	assert.Zero(t, w.Summary.Seq)
	assert.Empty(t, w.Summary.Data)
}

func reopen(t *testing.T, open func() store.Store) {
	ctx := ctxOf(t)
	s := open()
	l, err := s.Create(ctx, "v")
	require.NoError(t, err)
	_, err = l.AppendIf(ctx, 0, []byte("a"), []byte("b"))
	require.NoError(t, err)
	ref, err := s.Artifacts("v").Put(ctx, artifact.Encode(bytes.Repeat([]byte("kept "), 10000)))
	require.NoError(t, err)
	require.NoError(t, l.Close())
	require.NoError(t, s.Close())

	again := client(t, open)
	l, err = again.Open(ctx, "v")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	assert.Equal(t, []string{"a", "b"}, data(records(t, l)))
	last, err := l.Last(ctx)
	require.NoError(t, err)
	assert.Equal(t, uint64(2), last)
	_, err = l.AppendIf(ctx, 2, []byte("c"))
	require.NoError(t, err, "the reopened log takes appends after its tail")
	got, err := again.Artifacts("v").Get(ctx, ref)
	require.NoError(t, err)
	assert.Len(t, got, 50000)
	require.NoError(t, l.Verify(ctx))
}

// heads: the head after each unit's last record is the chain over the
// records up to it, from the genesis of the voyage's id, from the writer
// and from another client that read nothing; there is none past the log's
// end.
func heads(t *testing.T, open func() store.Store) {
	ctx := ctxOf(t)
	l := create(t, client(t, open), "v-heads")
	h, err := l.Head(ctx, 0)
	require.NoError(t, err)
	assert.Equal(t, chain.Head{Hash: chain.Genesis("v-heads")}, h, "an empty log's head is the genesis")

	units := [][][]byte{{[]byte("a"), []byte("b")}, {{}}, {[]byte("c"), bytes.Repeat([]byte{0, 0xff}, 1000), []byte("d")}}
	want := map[uint64]chain.Head{}
	link, last := chain.Genesis("v-heads"), uint64(0)
	for _, u := range units {
		_, err := l.AppendIf(ctx, last, u...)
		require.NoError(t, err)
		for _, r := range u {
			last++
			link = chain.Link(link, last, r)
		}
		want[last] = chain.Head{Seq: last, Hash: link}
		h, err := l.Head(ctx, last)
		require.NoError(t, err)
		assert.Equal(t, want[last], h, "the writer's head after record %d", last)
	}
	for _, seq := range []uint64{6, 2, 3} {
		reader, err := client(t, open).Open(ctx, "v-heads")
		require.NoError(t, err)
		h, err := reader.Head(ctx, seq)
		require.NoError(t, err)
		assert.Equal(t, want[seq], h, "a new client's head after record %d", seq)
		require.NoError(t, reader.Close())
	}
	_, err = l.Head(ctx, 7)
	assert.ErrorContains(t, err, "no head after record 7")
}

// snapshots checks a store whose Logs keep snapshots (store.Snapshots):
// none kept is ErrNotFound; one kept is read by another client with the
// head after its record and its bytes, and a Scan after it gives the
// records after it; the next one replaces it, taken by a writer whose
// unit ends where the log had moved on since. A store that keeps none
// skips it.
func snapshots(t *testing.T, open func() store.Store) {
	ctx := ctxOf(t)
	l := create(t, client(t, open), "v-snap")
	w, ok := l.(store.Snapshots)
	if !ok {
		t.Skip("the store keeps no snapshots")
	}
	_, err := w.Snapshot(ctx)
	require.ErrorIs(t, err, store.ErrNotFound, "a voyage with none")

	link, last := chain.Genesis("v-snap"), uint64(0)
	heads := map[uint64]chain.Head{}
	appendUnit := func(l store.Log, recs ...string) {
		var rs [][]byte
		for _, r := range recs {
			rs = append(rs, []byte(r))
		}
		_, err := l.AppendIf(ctx, last, rs...)
		require.NoError(t, err)
		for _, r := range rs {
			last++
			link = chain.Link(link, last, r)
		}
		heads[last] = chain.Head{Seq: last, Hash: link}
	}
	appendUnit(l, "a", "b")
	appendUnit(l, "c")
	require.NoError(t, w.PutSnapshot(ctx, 3, []byte("views at 3")))
	appendUnit(l, "d", "e")

	r, err := client(t, open).Open(ctx, "v-snap")
	require.NoError(t, err)
	defer r.Close()
	snap, err := r.(store.Snapshots).Snapshot(ctx)
	require.NoError(t, err, "a client that read nothing")
	assert.Equal(t, heads[3], snap.Head)
	assert.Equal(t, "views at 3", string(snap.Data))
	var got []store.Record
	require.NoError(t, r.Scan(ctx, snap.Head.Seq+1, func(rec store.Record) error {
		got = append(got, store.Record{Seq: rec.Seq, Data: bytes.Clone(rec.Data)})
		return nil
	}))
	assert.Equal(t, []string{"d", "e"}, data(got), "a scan after the snapshot gives the records after it")
	assert.Equal(t, uint64(4), got[0].Seq)

	// Another writer appends, and replaces the snapshot at its own unit's
	// end, which the first writer's log moved past later.
	other, err := client(t, open).Open(ctx, "v-snap")
	require.NoError(t, err)
	defer other.Close()
	appendUnit(other, "f")
	appendUnit(l, "g")
	require.NoError(t, other.(store.Snapshots).PutSnapshot(ctx, 6, []byte("views at 6")))
	r2, err := client(t, open).Open(ctx, "v-snap")
	require.NoError(t, err)
	defer r2.Close()
	snap, err = r2.(store.Snapshots).Snapshot(ctx)
	require.NoError(t, err)
	assert.Equal(t, heads[6], snap.Head, "the later snapshot replaced the first")
	assert.Equal(t, "views at 6", string(snap.Data))
}

// erase checks a store whose Artifacts erase (store.Eraser): an erased
// artifact no longer reads, from any client, and no Put of other bytes
// or Get makes it read again; erasing again says it is erased; another
// voyage's copy of the same artifact, and the voyage's other artifacts,
// still read. A store that does not erase skips it.
func erase(t *testing.T, open func() store.Store) {
	ctx := ctxOf(t)
	s := client(t, open)
	create(t, s, "v")
	create(t, s, "w")
	arts := s.Artifacts("v")
	eraser, ok := arts.(store.Eraser)
	if !ok {
		t.Skip("the store's artifacts do not erase")
	}
	gone, kept := artifact.Encode([]byte("a customer's data, to be erased")), artifact.Encode([]byte("evidence that stays"))
	ref, err := arts.Put(ctx, gone)
	require.NoError(t, err)
	keptRef, err := arts.Put(ctx, kept)
	require.NoError(t, err)
	other := artifact.Encode([]byte("a customer's data, to be erased"))
	otherRef, err := s.Artifacts("w").Put(ctx, other)
	require.NoError(t, err)

	erased, err := eraser.Erase(ctx, gone.Hash)
	require.NoError(t, err)
	assert.True(t, erased)
	_, err = client(t, open).Artifacts("v").Get(ctx, ref)
	assert.Error(t, err, "an erased artifact does not read")
	r, err := arts.Open(ctx, ref)
	if err == nil {
		_, err = io.ReadAll(r)
		r.Close()
	}
	assert.Error(t, err, "nor its stored bytes")
	erased, err = eraser.Erase(ctx, gone.Hash)
	require.NoError(t, err)
	assert.True(t, erased, "erased already")

	got, err := arts.Get(ctx, keptRef)
	require.NoError(t, err, "the voyage's other artifacts read")
	assert.Equal(t, "evidence that stays", string(got))
	got, err = s.Artifacts("w").Get(ctx, otherRef)
	require.NoError(t, err, "another voyage's copy of the same artifact reads")
	assert.Equal(t, "a customer's data, to be erased", string(got))
}
