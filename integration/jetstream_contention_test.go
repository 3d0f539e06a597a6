package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/segment"
	"github.com/helmlog/helm/store"
	"github.com/helmlog/helm/store/natsstore"
)

// counted returns how many messages clients send the server while do
// runs (every request and publish, not their replies nor the server's
// advisories): a subscriber to every subject sees each, and has them
// all once a round trip after do's last reply is done. The test has one
// client at work meanwhile. Subjects with a prefix in except are not
// counted.
func counted(t *testing.T, srv *server.Server, do func(), except ...string) int {
	t.Helper()
	nc := rawConn(t, srv)
	sub, err := nc.SubscribeSync(">")
	require.NoError(t, err)
	require.NoError(t, sub.SetPendingLimits(-1, -1))
	defer sub.Unsubscribe()
	require.NoError(t, nc.Flush())
	do()
	require.NoError(t, nc.Flush())
	n := 0
	for {
		msg, err := sub.NextMsg(0)
		if err != nil {
			break
		}
		if !slices.ContainsFunc(append(except, "_INBOX.", "$JS.EVENT."), func(p string) bool { return strings.HasPrefix(msg.Subject, p) }) {
			n++
		}
	}
	return n
}

// A change on the tail its writer knows costs the requests it must: a
// note is one message (its unit, published on the tail); a small
// observation, whose sighting a store that erases keeps as an artifact,
// makes its key (one publish: a voyage stores an artifact once, so the
// key is published before it is looked for), stores the object (its
// lookup, then its chunk and its metadata with one wait), and publishes
// its unit, after the read that an observation makes first.
func TestJetStreamRequestsPerChange(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := startServer(t, "requests", nil)
	home := newHome()
	st := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	t.Cleanup(func() { st.Close() })
	h, err := helm.OpenStore(t.TempDir(), st, "home "+home, nil)
	require.NoError(t, err)
	v, err := h.Start(ctx, "requests", helm.OpenWaters, reviewWho, nil)
	require.NoError(t, err)
	defer v.Close()
	_, err = v.Note(ctx, "the first note: the tail is known from here on", reviewWho)
	require.NoError(t, err)

	const n = 10
	notes := counted(t, srv, func() {
		for i := range n {
			_, err := v.Note(ctx, fmt.Sprintf("note %d", i), reviewWho)
			require.NoError(t, err)
		}
	})
	observations := counted(t, srv, func() {
		for i := range n {
			_, err := v.Observe(ctx, &reviewNote{Topic: fmt.Sprint(i), Text: fmt.Sprintf("a small sighting, %d", i)}, reviewWho, nil)
			require.NoError(t, err)
		}
	})
	t.Logf("messages per note: %.1f; per small observation: %.1f", float64(notes)/n, float64(observations)/n)
	assert.Equal(t, n, notes, "a note on the known tail is one publish")
	assert.Equal(t, 6*n, observations, "a small observation: a read, the key, the object's lookup, chunk and metadata, the unit")
}

// publishLinked publishes a unit of payload version 2 (records, then
// link) on subject as something other than helm would, with the headers
// given.
func publishLinked(t *testing.T, js njs.JetStream, subject string, first, unit uint64, sum uint32, link chain.Hash, records ...[]byte) {
	t.Helper()
	payload := []byte{2, byte(len(records))}
	for _, r := range records {
		payload = append(payload, byte(len(r)))
		payload = append(payload, r...)
	}
	payload = append(payload, link[:]...)
	hdr := nats.Header{}
	hdr.Set("Helm-Seq", fmt.Sprint(first))
	hdr.Set("Helm-Count", fmt.Sprint(len(records)))
	hdr.Set("Helm-Chain", fmt.Sprintf("%08x", sum))
	hdr.Set("Helm-Unit", fmt.Sprint(unit))
	_, err := js.PublishMsg(context.Background(), &nats.Msg{Subject: subject, Header: hdr, Data: payload})
	require.NoError(t, err)
}

// A writer that loses a race to several units gets them all with its
// conflict, checked as a read from its tail would check them, and
// decides again without reading the log; a unit among them that does not
// continue the chains is not given, and the read the writer falls back
// on reports it as damage.
func TestJetStreamConflictGivesEveryUnitThatCameBetween(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := startServer(t, "between", nil)
	js := rawJS(t, srv)
	home := newHome()
	a := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer a.Close()
	b := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer b.Close()

	// chains continues both chains of voyage id over records 1 to n.
	chains := func(id string, records ...string) (uint32, chain.Hash) {
		sum, link := segment.ChainGenesis(id), chain.Genesis(id)
		for i, r := range records {
			sum = segment.ChainNext(sum, []byte(r))
			link = chain.Link(link, uint64(i+1), []byte(r))
		}
		return sum, link
	}
	for _, tc := range []struct {
		name string
		// forge publishes, as the agent would, the voyage's unit 3
		// (record 3, "x") onto subject, after records a and b.
		forge func(subject, id string)
	}{
		{name: "none: every unit is helm's"},
		{name: "a unit whose link its records do not give", forge: func(subject, id string) {
			sum, _ := chains(id, "a", "b", "x")
			_, link := chains(id, "a", "b", "y")
			publishLinked(t, js, subject, 3, 3, sum, link, []byte("x"))
		}},
		{name: "a unit that breaks the CRC32C chain", forge: func(subject, id string) {
			sum, _ := chains(id, "a", "b", "y")
			_, link := chains(id, "a", "b", "x")
			publishLinked(t, js, subject, 3, 3, sum, link, []byte("x"))
		}},
		{name: "a unit that stores no link after units that do", forge: func(subject, id string) {
			sum, _ := chains(id, "a", "b")
			publishUnit(t, js, subject, 3, 3, sum, nil, []byte("x"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := fmt.Sprintf("v%d", homes.Add(1))
			subject := "helm." + home + ".v." + id
			writer, err := a.Create(ctx, id)
			require.NoError(t, err)
			defer writer.Close()
			loser, err := b.Open(ctx, id)
			require.NoError(t, err)
			defer loser.Close()
			_, err = writer.AppendIf(ctx, 0, []byte("a"))
			require.NoError(t, err)
			require.NoError(t, loser.Scan(ctx, 1, func(store.Record) error { return nil }), "the loser knows the tail after record 1")

			_, err = writer.AppendIf(ctx, 1, []byte("b"))
			require.NoError(t, err)
			records := []string{"a", "b", "c", "d", "e"}
			if tc.forge != nil {
				tc.forge(subject, id)
				records = []string{"a", "b", "x", "e"}
			} else {
				_, err = writer.AppendIf(ctx, 2, []byte("c"), []byte("d"))
				require.NoError(t, err)
			}
			// Unit 4, record "e", on top: the loser's conflict reads it
			// with the tail.
			sum, link := chains(id, records...)
			publishLinked(t, js, subject, uint64(len(records)), 4, sum, link, []byte("e"))

			_, err = loser.AppendIf(ctx, 1, []byte("late"))
			var ce *store.ConflictError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, [2]uint64{1, uint64(len(records))}, [2]uint64{ce.Expected, ce.Actual})
			if tc.forge == nil {
				want := []store.Record{{Seq: 2, Data: []byte("b")}, {Seq: 3, Data: []byte("c")}, {Seq: 4, Data: []byte("d")}, {Seq: 5, Data: []byte("e")}}
				assert.Equal(t, want, ce.Records, "every unit that came between, in order")
				_, err = loser.AppendIf(ctx, ce.Actual, []byte("late"))
				assert.NoError(t, err, "the loser appends on the tail its conflict gave")
				return
			}
			assert.Empty(t, ce.Records, "a unit that does not continue the chains is not given")
			err = loser.Scan(ctx, 2, func(store.Record) error { return nil })
			assert.ErrorIs(t, err, store.ErrDamaged, "the read the loser falls back on finds it")
		})
	}
}

// A reader that knows a long voyage's tail reads the unit appended since
// from where it begins: one request for the tail and one for the unit,
// not a consumer of its own or a read from an index point hundreds of
// records back.
func TestJetStreamScanNearTheTailReadsOnlyTheNewUnit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := startServer(t, "near-tail", nil)
	home := newHome()
	a := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer a.Close()
	b := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer b.Close()
	writer, err := a.Create(ctx, "v")
	require.NoError(t, err)
	defer writer.Close()
	const units = 200 // past shortScan records, short of an index point
	for i := range uint64(units) {
		_, err := writer.AppendIf(ctx, i, []byte(fmt.Sprint("unit ", i+1)))
		require.NoError(t, err)
	}
	reader, err := b.Open(ctx, "v")
	require.NoError(t, err)
	defer reader.Close()
	n := 0
	require.NoError(t, reader.Scan(ctx, 1, func(store.Record) error { n++; return nil }))
	require.Equal(t, units, n)

	_, err = writer.AppendIf(ctx, units, []byte("the new unit"))
	require.NoError(t, err)
	var got []store.Record
	requests := counted(t, srv, func() {
		require.NoError(t, reader.Scan(ctx, units+1, func(r store.Record) error { got = append(got, r); return nil }))
	}, "$JS.API.CONSUMER.DELETE.") // the first read's, in the background
	assert.Equal(t, []store.Record{{Seq: units + 1, Data: []byte("the new unit")}}, got)
	assert.Equal(t, 2, requests, "the tail, then the new unit")
}
