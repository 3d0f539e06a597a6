package integration

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/store"
	"github.com/helmlog/helm/store/natsstore"
	"github.com/helmlog/helm/store/storetest"
)

// The JetStream store's tests start nats-server in this process, on
// loopback ports, with its storage in a temporary directory: no binary
// to install, nothing outside the test.

// startServer starts one JetStream server; change adjusts its options
// (a cluster's, sync_interval).
func startServer(t testing.TB, name string, change func(*server.Options)) *server.Server {
	t.Helper()
	o := &server.Options{
		ServerName: name,
		Host:       "127.0.0.1",
		Port:       -1,
		JetStream:  true,
		StoreDir:   t.TempDir(),
		NoSigs:     true,
		NoLog:      true,
	}
	if change != nil {
		change(o)
	}
	s, err := server.NewServer(o)
	require.NoError(t, err)
	go s.Start()
	require.True(t, s.ReadyForConnections(20*time.Second), "nats-server %s did not start", name)
	t.Cleanup(s.Shutdown)
	return s
}

// homes names a new home for every test on a shared server.
var homes atomic.Int64

func newHome() string { return fmt.Sprintf("h%d", homes.Add(1)) }

func openStore(t testing.TB, url string, opts natsstore.Options) *natsstore.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := natsstore.Open(ctx, url, &opts)
	require.NoError(t, err)
	return s
}

// rawConn is a plain connection to srv, for a test that puts on a
// voyage's subject, or in a bucket, what helm would not.
func rawConn(t testing.TB, srv *server.Server) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(srv.ClientURL())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}

// The JetStream store on one embedded server passes the conformance
// suite, every check of it.
func TestJetStreamConforms(t *testing.T) {
	srv := startServer(t, "r1", nil)
	storetest.Run(t, func(t *testing.T) func() store.Store {
		home := newHome()
		return func() store.Store { return openStore(t, srv.ClientURL(), natsstore.Options{Home: home}) }
	})
}

// The test store on disk passes it too, in this module's run
// (store/storetest/dir_test.go runs it in the root module).
func TestDirConforms(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func() store.Store {
		root := t.TempDir()
		return func() store.Store { return storetest.OpenDir(root, &storetest.DirOptions{NoSync: true}) }
	})
}

func TestJetStreamWarnsOfOneReplicaOnce(t *testing.T) {
	srv := startServer(t, "warn", nil)
	var warnings []string
	home := newHome()
	warn := func(m string) { warnings = append(warnings, m) }
	s := openStore(t, srv.ClientURL(), natsstore.Options{Home: home, Warn: warn})
	defer s.Close()
	again := openStore(t, srv.ClientURL(), natsstore.Options{Home: home, Warn: warn})
	defer again.Close()
	require.Len(t, warnings, 1, "the Open that creates the home warns; later ones do not")
	assert.Contains(t, warnings[0], "power cut")
	assert.Contains(t, warnings[0], "sync_interval: always")
}

func TestJetStreamRefusesVoyageIDsThatAreNoSubjectToken(t *testing.T) {
	srv := startServer(t, "ids", nil)
	s := openStore(t, srv.ClientURL(), natsstore.Options{Home: newHome()})
	defer s.Close()
	for _, bad := range []string{"a.b", "a*", ">", "a b", ""} {
		_, err := s.Create(context.Background(), bad)
		assert.ErrorContains(t, err, "subject token", "%q", bad)
	}
	_, err := natsstore.Open(context.Background(), srv.ClientURL(), &natsstore.Options{Home: "a.b"})
	assert.ErrorContains(t, err, "home")
}

// A message put on a voyage's subject by something other than helm, or
// one that breaks the chain, is damage: Scan and Verify name the subject,
// the message and the record.
func TestJetStreamScanFindsDamage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := startServer(t, "damage", nil)
	home := newHome()
	s := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer s.Close()
	nc := rawConn(t, srv)

	for _, tc := range []struct {
		name   string
		header nats.Header
		data   []byte
		want   string
	}{
		{"not a unit", nats.Header{}, []byte("hello"), "Helm-Seq"},
		{"chain broken", nats.Header{"Helm-Seq": {"3"}, "Helm-Count": {"1"}, "Helm-Chain": {"00000000"}}, []byte{1, 1, 1, 'x'}, "hash chain broken"},
		{"records repeated", nats.Header{"Helm-Seq": {"2"}, "Helm-Count": {"1"}, "Helm-Chain": {"00000000"}}, []byte{1, 1, 1, 'x'}, "out of order"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			voyage := strings.ReplaceAll(tc.name, " ", "-")
			l, err := s.Create(ctx, voyage)
			require.NoError(t, err)
			defer l.Close()
			_, err = l.AppendIf(ctx, 0, []byte("a"), []byte("b"))
			require.NoError(t, err)
			_, err = nc.RequestMsg(&nats.Msg{Subject: "helm." + home + ".v." + voyage, Header: tc.header, Data: tc.data}, 5*time.Second)
			require.NoError(t, err)

			reader, err := s.Open(ctx, voyage)
			require.NoError(t, err)
			defer reader.Close()
			n := 0
			err = reader.Scan(ctx, 1, func(store.Record) error { n++; return nil })
			require.ErrorIs(t, err, store.ErrDamaged)
			var de *store.DamageError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, voyage, de.Voyage)
			assert.Contains(t, de.Where, "helm."+home+".v."+voyage)
			assert.Contains(t, de.Where, "message ")
			assert.Equal(t, uint64(3), de.Seq)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, 2, n, "the records before the damage are read")
			assert.ErrorIs(t, reader.Verify(ctx), store.ErrDamaged)
		})
	}
}

// freePort returns a loopback port nothing listens on now.
func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startCluster starts three JetStream servers routed to each other as
// one cluster.
func startCluster(t testing.TB, change func(*server.Options)) []*server.Server {
	ports := []int{freePort(t), freePort(t), freePort(t)}
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	var servers []*server.Server
	for i, p := range ports {
		servers = append(servers, startServer(t, fmt.Sprintf("n%d", i+1), func(o *server.Options) {
			o.Cluster = server.ClusterOpts{Name: "helm-test", Host: "127.0.0.1", Port: p}
			o.Routes = server.RoutesFromStr(strings.Join(routes, ","))
			if change != nil {
				change(o)
			}
		}))
	}
	return servers
}

func urls(servers []*server.Server) string {
	var out []string
	for _, s := range servers {
		out = append(out, s.ClientURL())
	}
	return strings.Join(out, ",")
}

// openClustered opens the home on the cluster once it has a JetStream
// leader to create streams (some seconds after it starts).
func openClustered(t testing.TB, url, home string) *natsstore.Store {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s, err := natsstore.Open(ctx, url, &natsstore.Options{Home: home, Replicas: 3})
		cancel()
		if err == nil {
			return s
		}
		require.True(t, time.Now().Before(deadline), "the cluster did not take the home: %v", err)
		time.Sleep(200 * time.Millisecond)
	}
}

func streamLeader(servers []*server.Server, stream string) *server.Server {
	for _, s := range servers {
		if s.Running() && s.JetStreamIsStreamLeader(server.DEFAULT_GLOBAL_ACCOUNT, stream) {
			return s
		}
	}
	return nil
}

// On a cluster of three (R3): writers on two clients append units
// concurrently, deciding on the tail they read and retrying on a
// conflict, while the stream's leader is shut down mid-run. Afterwards
// every acknowledged unit is in the log exactly once, the records are
// numbered without a gap, the chain verifies, and a client of each
// surviving server reads the same records.
func TestJetStreamClusterKeepsEveryAcknowledgedUnitThroughALeaderShutdown(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	servers := startCluster(t, nil)
	home := newHome()
	a := openClustered(t, urls(servers), home)
	defer a.Close()
	reversed := slices.Clone(servers)
	slices.Reverse(reversed)
	b := openStore(t, urls(reversed), natsstore.Options{Home: home, Replicas: 3})
	defer b.Close()
	la, err := a.Create(ctx, "v")
	require.NoError(t, err)
	lb, err := b.Open(ctx, "v")
	require.NoError(t, err)

	// Two clients decide on the same tail: one commits, the other gets
	// the typed conflict and retries against the new tail.
	_, err = la.AppendIf(ctx, 0, []byte("a/first"))
	require.NoError(t, err)
	_, err = lb.AppendIf(ctx, 0, []byte("b/first"))
	var ce *store.ConflictError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, store.ConflictError{Voyage: "v", Expected: 0, Actual: 1}, *ce)
	_, err = lb.AppendIf(ctx, ce.Actual, []byte("b/first"))
	require.NoError(t, err)

	// A writer alone on its voyage never gets a conflict, however fast
	// it appends: the leader's "wrong last sequence" for a subject with a
	// message still in flight (10164) is no conflict when the tail did
	// not move, and is retried.
	var alone sync.WaitGroup
	for i := range 16 {
		alone.Go(func() {
			l, err := a.Create(ctx, fmt.Sprintf("alone-%d", i))
			if !assert.NoError(t, err) {
				return
			}
			defer l.Close()
			for u := range uint64(40) {
				if _, err := l.AppendIf(ctx, u, []byte("unit")); !assert.NoError(t, err, "voyage alone-%d, unit %d", i, u) {
					return
				}
			}
		})
	}
	alone.Wait()

	const perWriter = 150
	var (
		mu      sync.Mutex
		acked   = map[string]bool{"a/first": true, "b/first": true}
		unknown = map[string]bool{} // an error other than a conflict: in the log at most once
		total   atomic.Int64
	)
	writer := func(name string, l store.Log) error {
		for i := range perWriter {
			unit := fmt.Sprintf("%s/%d", name, i)
			for {
				last, err := l.Last(ctx)
				if err != nil {
					return err
				}
				_, err = l.AppendIf(ctx, last, []byte(unit))
				if errors.Is(err, store.ErrConflict) {
					continue
				}
				mu.Lock()
				if err != nil {
					t.Logf("%s: %v", unit, err)
					unknown[unit] = true
				} else {
					acked[unit] = true
				}
				mu.Unlock()
				total.Add(1)
				break
			}
		}
		return nil
	}
	errs := make(chan error, 2)
	go func() { errs <- writer("a", la) }()
	go func() { errs <- writer("b", lb) }()
	for total.Load() < perWriter/2 {
		time.Sleep(5 * time.Millisecond)
	}
	leader := streamLeader(servers, "HELM_"+home)
	require.NotNil(t, leader, "the stream has a leader")
	stopped := time.Now()
	leader.Shutdown()
	t.Logf("stream leader %s shut down after %d units", leader.Name(), total.Load())
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	t.Logf("the writers finished %v after the shutdown; %d units acknowledged, %d unknown", time.Since(stopped).Round(time.Millisecond), len(acked), len(unknown))

	var views [][]store.Record
	for _, srv := range servers {
		if !srv.Running() {
			continue
		}
		c := openStore(t, srv.ClientURL(), natsstore.Options{Home: home, Replicas: 3})
		defer c.Close()
		l, err := c.Open(ctx, "v")
		require.NoError(t, err)
		var recs []store.Record
		require.NoError(t, l.Scan(ctx, 1, func(r store.Record) error {
			recs = append(recs, store.Record{Seq: r.Seq, Data: slices.Clone(r.Data)})
			return nil
		}), "read through %s", srv.Name())
		require.NoError(t, l.Verify(ctx), "verify through %s", srv.Name())
		views = append(views, recs)
	}
	require.Len(t, views, 2)
	assert.Equal(t, views[0], views[1], "every surviving server gives the same records")
	seen := map[string]int{}
	for i, r := range views[0] {
		assert.Equal(t, uint64(i+1), r.Seq, "no gap")
		seen[string(r.Data)]++
	}
	for unit := range acked {
		assert.Equal(t, 1, seen[unit], "acknowledged unit %s is in the log exactly once", unit)
	}
	for unit, n := range seen {
		assert.True(t, acked[unit] || unknown[unit], "unit %s in the log was appended", unit)
		assert.Equal(t, 1, n, "unit %s once", unit)
	}
}
