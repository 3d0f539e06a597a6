package integration

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/store"
	"github.com/helmlog/helm/store/natsstore"
)

// holdProxy forwards TCP between a client and a server; while held, it
// keeps what the server sends back until released, as a network that
// loses a reply for a while.
type holdProxy struct {
	addr string
	mu   sync.Mutex
	held bool
	cond *sync.Cond
}

func startHoldProxy(t testing.TB, target string) *holdProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	p := &holdProxy{addr: ln.Addr().String()}
	p.cond = sync.NewCond(&p.mu)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			t.Cleanup(func() { c.Close(); s.Close() })
			go func() { io.Copy(s, c) }()
			go func() {
				buf := make([]byte, 64<<10)
				for {
					n, err := s.Read(buf)
					p.mu.Lock()
					for p.held {
						p.cond.Wait()
					}
					p.mu.Unlock()
					if n > 0 {
						if _, werr := c.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						c.Close()
						return
					}
				}
			}()
		}
	}()
	return p
}

func (p *holdProxy) hold(on bool) {
	p.mu.Lock()
	p.held = on
	p.mu.Unlock()
	p.cond.Broadcast()
}

// A publish whose acknowledgement is lost (it comes after the attempt's
// time is up) is retried with the same message id: the unit was stored
// by the first attempt, so AppendIf succeeds, once, and reports no
// conflict with its own unit.
func TestJetStreamAppendRetryAfterALostAckIsNoConflict(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := startServer(t, "lostack", nil)
	p := startHoldProxy(t, srv.Addr().String())
	home := newHome()
	s := openStore(t, "nats://"+p.addr, natsstore.Options{Home: home})
	defer s.Close()
	l, err := s.Create(ctx, "v")
	require.NoError(t, err)
	_, err = l.AppendIf(ctx, 0, []byte("a"))
	require.NoError(t, err)

	// Another writer, not behind the proxy, appends after the unit
	// while its acknowledgement is held: the retry still finds its unit.
	other := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer other.Close()
	lo, err := other.Open(ctx, "v")
	require.NoError(t, err)
	for _, tc := range []struct {
		expect uint64
		unit   string
		after  bool
	}{{1, "b", false}, {2, "c", true}} {
		p.hold(true)
		released := make(chan struct{})
		go func() {
			defer close(released)
			if tc.after {
				for {
					last, err := lo.Last(ctx)
					if !assert.NoError(t, err) || last == tc.expect+1 {
						break
					}
					time.Sleep(10 * time.Millisecond)
				}
				_, err := lo.AppendIf(ctx, tc.expect+1, []byte("other"))
				assert.NoError(t, err)
			}
			time.Sleep(2500 * time.Millisecond)
			p.hold(false)
		}()
		first, err := l.AppendIf(ctx, tc.expect, []byte(tc.unit))
		<-released
		require.NoError(t, err, "the unit's own retry is no conflict (%s)", tc.unit)
		require.Equal(t, tc.expect+1, first)
	}

	var got []string
	require.NoError(t, l.Scan(ctx, 1, func(r store.Record) error { got = append(got, string(r.Data)); return nil }))
	require.Equal(t, []string{"a", "b", "c", "other"}, got)
	require.NoError(t, l.Verify(ctx))
}

// Scans leave no consumers behind on the server: a facade that scans
// a voyage for every request must not pile up ephemeral consumers (each
// lives five minutes after its last pull otherwise).
func TestJetStreamScansLeaveNoConsumers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := startServer(t, "consumers", nil)
	home := newHome()
	s := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer s.Close()
	l, err := s.Create(ctx, "v")
	require.NoError(t, err)
	for i := range uint64(5) {
		_, err := l.AppendIf(ctx, i, []byte("r"))
		require.NoError(t, err)
	}
	for range 50 {
		require.NoError(t, l.Scan(ctx, 1, func(store.Record) error { return nil }))
	}
	require.NoError(t, l.Verify(ctx))
	fctx, fcancel := context.WithTimeout(ctx, 200*time.Millisecond)
	require.ErrorIs(t, l.Follow(fctx, 1, func(store.Record) error { return nil }), context.DeadlineExceeded)
	fcancel()

	nc := rawConn(t, srv)
	js, err := njs.New(nc)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		info, err := js.Stream(ctx, "HELM_"+home)
		if !assert.NoError(t, err) {
			return false
		}
		n := info.CachedInfo().State.Consumers
		t.Logf("%d consumers", n)
		return n == 0
	}, 10*time.Second, 500*time.Millisecond)
}

// A scan from any record, through units spanning the index's points,
// gives exactly the records from it on, on a log that built its index
// and on a fresh one.
func TestJetStreamScanFromEveryRecord(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := startServer(t, "everyrecord", nil)
	s := openStore(t, srv.ClientURL(), natsstore.Options{Home: newHome()})
	defer s.Close()
	w, err := s.Create(ctx, "v")
	require.NoError(t, err)
	var ref []string
	for u := 0; len(ref) < 700; u++ {
		var unit [][]byte
		for i := range 1 + (u*37)%45 {
			r := fmt.Sprintf("u%d/%d", u, i)
			unit = append(unit, []byte(r))
		}
		_, err := w.AppendIf(ctx, uint64(len(ref)), unit...)
		require.NoError(t, err)
		for _, r := range unit {
			ref = append(ref, string(r))
		}
	}
	warm, err := s.Open(ctx, "v")
	require.NoError(t, err)
	require.NoError(t, warm.Verify(ctx))
	scan := func(l store.Log, from uint64) []string {
		var got []string
		require.NoError(t, l.Scan(ctx, from, func(r store.Record) error {
			require.Equal(t, max(from, 1)+uint64(len(got)), r.Seq)
			got = append(got, string(r.Data))
			return nil
		}))
		return got
	}
	for from := uint64(0); from <= uint64(len(ref))+2; from++ {
		want := ref[min(max(from, 1)-1, uint64(len(ref))):]
		if len(want) == 0 {
			want = nil
		}
		require.Equal(t, want, scan(warm, from), "warm, from %d", from)
		if from%23 == 0 {
			cold, err := s.Open(ctx, "v")
			require.NoError(t, err)
			require.Equal(t, want, scan(cold, from), "cold, from %d", from)
		}
	}
	// Follow from inside a unit, across all of them.
	fctx, fcancel := context.WithCancel(ctx)
	var got []string
	err = warm.Follow(fctx, 300, func(r store.Record) error {
		got = append(got, string(r.Data))
		if len(got) == len(ref)-299 {
			fcancel()
		}
		return nil
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, ref[299:], got)
}

// A last message whose headers are well formed but whose payload is not
// a unit (cut short, of a newer version, of another record count) is
// damage to Last and AppendIf too: nothing is appended on top of it.
func TestJetStreamAppendsNothingOnADamagedLastMessage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := startServer(t, "damagedtail", nil)
	home := newHome()
	s := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer s.Close()
	nc := rawConn(t, srv)
	hdr := nats.Header{"Helm-Seq": {"3"}, "Helm-Count": {"1"}, "Helm-Chain": {"00000000"}}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"cut-short", []byte{1, 1, 5, 'x'}},
		{"newer-version", []byte{2, 1, 1, 'x'}},
		{"two-records", []byte{1, 2, 1, 'x', 1, 'y'}},
		{"empty", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := s.Create(ctx, tc.name)
			require.NoError(t, err)
			_, err = l.AppendIf(ctx, 0, []byte("a"), []byte("b"))
			require.NoError(t, err)
			_, err = nc.RequestMsg(&nats.Msg{Subject: "helm." + home + ".v." + tc.name, Header: hdr, Data: tc.data}, 5*time.Second)
			require.NoError(t, err)

			fresh, err := s.Open(ctx, tc.name)
			require.NoError(t, err)
			_, err = fresh.Last(ctx)
			assert.ErrorIs(t, err, store.ErrDamaged, "Last")
			_, err = fresh.AppendIf(ctx, 3, []byte("on top"))
			assert.ErrorIs(t, err, store.ErrDamaged, "AppendIf on a fresh log")
			_, err = l.AppendIf(ctx, 2, []byte("on top"))
			assert.ErrorIs(t, err, store.ErrDamaged, "AppendIf on the writer's log")
			var de *store.DamageError
			err = fresh.Scan(ctx, 1, func(store.Record) error { return nil })
			require.ErrorAs(t, err, &de)
			assert.Equal(t, uint64(3), de.Seq)
			assert.Contains(t, de.Where, "message ")
			fctx, fcancel := context.WithTimeout(ctx, 5*time.Second)
			assert.ErrorIs(t, fresh.Follow(fctx, 1, func(store.Record) error { return nil }), store.ErrDamaged, "Follow")
			fcancel()
			assert.ErrorIs(t, fresh.Verify(ctx), store.ErrDamaged, "Verify")
		})
	}
}

// On a server that takes messages larger than 8 MiB, a unit that large
// is appended, and read back.
func TestJetStreamReadsAUnitLargerThanEightMiB(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := startServer(t, "bigpayload", func(o *server.Options) { o.MaxPayload = 16 << 20 })
	s := openStore(t, srv.ClientURL(), natsstore.Options{Home: newHome()})
	defer s.Close()
	l, err := s.Create(ctx, "v")
	require.NoError(t, err)
	big := make([]byte, 10<<20)
	_, err = l.AppendIf(ctx, 0, big)
	require.NoError(t, err)
	n := 0
	require.NoError(t, l.Scan(ctx, 1, func(r store.Record) error { n += len(r.Data); return nil }))
	require.Equal(t, len(big), n)
}

func TestJetStreamOpenErrors(t *testing.T) {
	srv := startServer(t, "openerrors", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	_, err := natsstore.Open(ctx, fmt.Sprintf("nats://127.0.0.1:%d", freePort(t)), nil)
	t.Logf("nothing listening (%v): %v", time.Since(start), err)
	require.Error(t, err)
	for _, r := range []int{-1, 3, 7} {
		_, err := natsstore.Open(ctx, srv.ClientURL(), &natsstore.Options{Home: newHome(), Replicas: r})
		t.Logf("replicas %d: %v", r, err)
		require.Error(t, err)
	}
}

// Summaries put by many clients at once keep the latest; Voyages lists
// none, and hundreds; two clients creating one voyage: one wins.
func TestJetStreamSummariesAndVoyagesUnderConcurrency(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := startServer(t, "kv", nil)
	home := newHome()
	var clients []*natsstore.Store
	for range 4 {
		c := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
		defer c.Close()
		clients = append(clients, c)
	}
	vs, err := clients[0].Voyages(ctx)
	require.NoError(t, err)
	require.Empty(t, vs)

	var wins, exists atomic.Int64
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() {
			_, err := c.Create(ctx, "race")
			if err == nil {
				wins.Add(1)
			} else if assert.ErrorIs(t, err, store.ErrExists) {
				exists.Add(1)
			}
		})
	}
	wg.Wait()
	require.Equal(t, int64(1), wins.Load())
	require.Equal(t, int64(3), exists.Load())

	for i, c := range clients {
		for g := range 4 {
			wg.Go(func() {
				for seq := uint64(g*4 + i); seq <= 400; seq += 16 {
					assert.NoError(t, c.PutSummary(ctx, "race", store.Summary{Seq: seq, Data: fmt.Appendf(nil, "s%d", seq)}))
				}
			})
		}
	}
	wg.Wait()
	vs, err = clients[1].Voyages(ctx)
	require.NoError(t, err)
	require.Equal(t, store.Summary{Seq: 400, Data: []byte("s400")}, vs["race"])

	for i := range 300 {
		_, err := clients[i%4].Create(ctx, fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i))
		require.NoError(t, err)
	}
	vs, err = clients[2].Voyages(ctx)
	require.NoError(t, err)
	require.Len(t, vs, 301)
}

// Artifacts: a large one round-trips; a missing one is ErrNoArtifact; an
// object whose bytes do not answer its name (an earlier helm's,
// unencrypted) is damage to Get and Open, and so is an encrypted copy
// changed by a bit. Put stores the copy anew.
func TestJetStreamArtifactsCheckWhatTheyRead(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := startServer(t, "artifacts", nil)
	home := newHome()
	s := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer s.Close()
	a := s.Artifacts("v")
	big := make([]byte, 20<<20)
	for i := range big {
		big[i] = byte(i * 7 / 5)
	}
	ref, err := a.Put(ctx, artifact.Encode(big))
	require.NoError(t, err)
	ref2, err := a.Put(ctx, artifact.Encode(big))
	require.NoError(t, err)
	require.Equal(t, ref, ref2)
	got, err := a.Get(ctx, ref)
	require.NoError(t, err)
	require.True(t, bytes.Equal(big, got))
	r, err := a.Open(ctx, ref)
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, r)
	require.NoError(t, err)
	r.Close()

	other := artifact.Encode([]byte("another artifact, never stored"))
	other.Compress()
	missing := artifact.Ref{Hash: other.Hash, Size: other.Size, StoredSize: int64(len(other.Compressed))}
	_, err = a.Get(ctx, missing)
	require.ErrorIs(t, err, store.ErrNoArtifact)
	_, err = a.Open(ctx, missing)
	require.ErrorIs(t, err, store.ErrNoArtifact)

	// Raw bytes under the other artifact's name.
	nc := rawConn(t, srv)
	js, err := njs.New(nc)
	require.NoError(t, err)
	obs, err := js.ObjectStore(ctx, "HELM_"+home+"_artifacts")
	require.NoError(t, err)
	_, err = obs.PutBytes(ctx, other.Hash, append([]byte{}, other.Compressed[:len(other.Compressed)-1]...))
	require.NoError(t, err)
	_, err = a.Get(ctx, missing)
	require.ErrorIs(t, err, store.ErrDamaged)
	r, err = a.Open(ctx, missing)
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, r)
	require.ErrorIs(t, err, store.ErrDamaged)
	r.Close()
	// Put heals it: the voyage's copy is stored anew, encrypted
	// (v/<hash>), and read rather than the unencrypted one.
	_, err = a.Put(ctx, other)
	require.NoError(t, err)
	_, err = a.Get(ctx, missing)
	require.NoError(t, err)
	// A bit flipped in the encrypted copy: it does not open.
	sealed, err := obs.GetBytes(ctx, "v/"+other.Hash)
	require.NoError(t, err)
	sealed[len(sealed)/2] ^= 0x10
	_, err = obs.PutBytes(ctx, "v/"+other.Hash, sealed)
	require.NoError(t, err)
	_, err = a.Get(ctx, missing)
	require.ErrorIs(t, err, store.ErrDamaged)
	_, err = a.Open(ctx, missing)
	require.ErrorIs(t, err, store.ErrDamaged)
	_, err = a.Put(ctx, other)
	require.NoError(t, err)
	_, err = a.Get(ctx, missing)
	require.NoError(t, err)
}

// A Follow goes on through a restart of the server (on its port and
// storage), with the records appended after it.
func TestJetStreamFollowsThroughAServerRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir, port := t.TempDir(), freePort(t)
	opts := func(o *server.Options) { o.StoreDir, o.Port = dir, port }
	srv := startServer(t, "restart", opts)
	home := newHome()
	s := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer s.Close()
	l, err := s.Create(ctx, "v")
	require.NoError(t, err)
	_, err = l.AppendIf(ctx, 0, []byte("1"), []byte("2"))
	require.NoError(t, err)
	got := make(chan uint64, 10)
	done := make(chan error, 1)
	go func() {
		done <- l.Follow(ctx, 1, func(r store.Record) error {
			got <- r.Seq
			if r.Seq == 4 {
				return io.EOF
			}
			return nil
		})
	}()
	require.Equal(t, uint64(1), <-got)
	require.Equal(t, uint64(2), <-got)
	srv.Shutdown()
	srv.WaitForShutdown()
	startServer(t, "restart", opts)
	_, err = l.AppendIf(ctx, 2, []byte("3"), []byte("4"))
	require.NoError(t, err)
	require.ErrorIs(t, <-done, io.EOF)
	require.Equal(t, uint64(3), <-got)
	require.Equal(t, uint64(4), <-got)
}
