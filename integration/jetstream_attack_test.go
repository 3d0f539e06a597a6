package integration

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/segment"
	"github.com/helmlog/helm/store"
	"github.com/helmlog/helm/store/natsstore"
)

// The recorded agent holds the home's NATS credentials: it can publish
// raw messages on a voyage's subject, edit the streams as far as the
// server lets it, delete and make streams, and write the voyages bucket.
// These tests are its attacks on what helm promises of a shared home:
// that no unit it acknowledged is removed without List or Verify saying
// so.

// subjectMsgs returns the messages of subject in stream st, in order.
func subjectMsgs(t *testing.T, st njs.Stream, subject string) []*njs.RawStreamMsg {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []*njs.RawStreamMsg
	for seq := uint64(1); ; seq++ {
		m, err := st.GetMsg(ctx, seq, njs.WithGetMsgSubject(subject))
		if errors.Is(err, njs.ErrMsgNotFound) {
			return out
		}
		require.NoError(t, err)
		out = append(out, m)
		seq = m.Sequence
	}
}

// republish publishes msgs on their subject, with their Helm headers, as
// helm published them.
func republish(t *testing.T, js njs.JetStream, msgs []*njs.RawStreamMsg) {
	t.Helper()
	for _, m := range msgs {
		hdr := nats.Header{}
		for _, k := range []string{"Helm-Seq", "Helm-Count", "Helm-Chain", "Helm-Unit"} {
			if v, ok := m.Header[k]; ok {
				hdr[k] = v
			}
		}
		_, err := js.PublishMsg(context.Background(), &nats.Msg{Subject: m.Subject, Header: hdr, Data: m.Data})
		require.NoError(t, err)
	}
}

// 1. The agent takes a voyage back to an earlier state: it saves the
// voyage's units and summary as they are, lets the voyage go on (the
// note it wants gone), then removes the voyage's units, publishes the
// saved ones again, headers and all, and puts the saved summary back.
// List cannot tell (it checks what is cheap, and everything it checks is
// consistent); Verify, which reads every unit, must. It cannot either:
// the chain is CRC32C from a genesis anyone can compute, the unit
// numbers run 1..k, and nothing outside the agent's reach remembers the
// voyage's head.
//
// On a stream helm accepts, a purge is refused (deny_purge, which the
// server will not lift) and so is a delete; but the credentials allow
// deleting the whole stream ($JS.API.STREAM.DELETE) and making it again
// with helm's settings, as helm's own next Open would. The voyages beside
// it are published again as they were.
//
// It fails today: a hole that needs a witness of the head outside the
// store (DESIGN.md, "Chain and witness (23)"; issue 31), not a fix here.
// HELM_KNOWN_HOLES=1 runs it; issue 31 makes it pass and removes the skip.
func TestJetStreamVerifyFindsAVoyageRolledBackByTheAgent(t *testing.T) {
	if os.Getenv("HELM_KNOWN_HOLES") == "" {
		t.Skip("known hole until the chain and its witnesses (issue 31): a rollback by someone holding the store's credentials passes verify; HELM_KNOWN_HOLES=1 runs it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := startServer(t, "rollback", nil)
	js := rawJS(t, srv)
	who := logbook.Who{Identity: "ana", Role: "coder", Method: "human"}
	home := newHome()
	h := jsHome(t, srv.ClientURL(), home)
	id := start(t, h, "Work the agent will want to forget", 2)
	other := start(t, h, "Untouched", 1)

	st, err := js.Stream(ctx, "HELM_"+home)
	require.NoError(t, err)
	subject := "helm." + home + ".v." + id
	kv, err := js.KeyValue(ctx, "HELM_"+home+"_voyages")
	require.NoError(t, err)
	saved := subjectMsgs(t, st, subject)
	savedSum, err := kv.Get(ctx, id)
	require.NoError(t, err)
	savedOther := subjectMsgs(t, st, "helm."+home+".v."+other)

	v, err := h.Voyage(ctx, id)
	require.NoError(t, err)
	_, err = v.Note(ctx, "force-pushed main over the reviewer's commits", who)
	require.NoError(t, err)
	require.NoError(t, v.Close())
	acknowledged := len(subjectMsgs(t, st, subject))
	require.Greater(t, acknowledged, len(saved))

	cfg := st.CachedInfo().Config
	require.True(t, cfg.DenyDelete && cfg.DenyPurge, "helm made it so that no unit can be removed")
	require.Error(t, st.Purge(ctx, njs.WithPurgeSubject(subject)), "the server refuses a purge")
	require.NoError(t, js.DeleteStream(ctx, "HELM_"+home))
	_, err = js.CreateStream(ctx, cfg)
	require.NoError(t, err)
	republish(t, js, savedOther)
	republish(t, js, saved)
	_, err = kv.Put(ctx, id, savedSum.Value())
	require.NoError(t, err)

	again := jsHome(t, srv.ClientURL(), home)
	list, err := again.List(ctx, nil)
	t.Logf("helm voyage list after the rollback: %d voyages, err %v (List checks what is cheap: it cannot tell)", len(list), err)
	rep, err := again.Verify(ctx, id, nil)
	require.NoError(t, err)
	assert.NotEmpty(t, rep.Problems, "voyage verify passes a voyage whose last %d acknowledged units are gone (%d acknowledged, %d there): nothing outside the agent's reach witnesses its head", acknowledged-len(saved), acknowledged, len(saved))
}

// publishUnit publishes a numbered unit of records on subject as helm
// would, continuing chain sum, with extra headers; it returns the chain's
// sum after it.
func publishUnit(t *testing.T, js njs.JetStream, subject string, first, unit uint64, sum uint32, extra nats.Header, records ...[]byte) uint32 {
	t.Helper()
	payload := []byte{1, byte(len(records))}
	for _, r := range records {
		payload = append(payload, byte(len(r)))
		payload = append(payload, r...)
		sum = segment.ChainNext(sum, r)
	}
	hdr := nats.Header{}
	for k, v := range extra {
		hdr[k] = v
	}
	hdr.Set("Helm-Seq", fmt.Sprint(first))
	hdr.Set("Helm-Count", fmt.Sprint(len(records)))
	hdr.Set("Helm-Chain", fmt.Sprintf("%08x", sum))
	if unit != 0 {
		hdr.Set("Helm-Unit", fmt.Sprint(unit))
	}
	_, err := js.PublishMsg(context.Background(), &nats.Msg{Subject: subject, Header: hdr, Data: payload})
	require.NoError(t, err)
	return sum
}

// gone waits until the message at stream sequence seq is gone (a TTL
// expired): the wait is bounded only to end a hang.
func gone(t *testing.T, st njs.Stream, seq uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		_, err := st.GetMsg(ctx, seq)
		if errors.Is(err, njs.ErrMsgNotFound) {
			return
		}
		require.NoError(t, err)
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			t.Fatalf("message %d still there after a minute", seq)
		}
	}
}

// 2. A stream with allow_msg_ttl (which the checks accept, as helm never
// sets a TTL) takes a unit-shaped message with a Nats-TTL header from the
// agent. Helm reads it as the voyage's next unit, and its writers append
// on top of it: units helm acknowledged. Then the server removes it by
// itself, deny_delete or not. What helm acknowledged after it is then
// unreadable (a gap: List and Verify say DAMAGED); a TTL'd unit that
// nothing followed vanishes from the tail without a trace (List and
// Verify say healthy, of a record readers were shown). A stream that
// removes messages by itself is what the checks are for: allow_msg_ttl
// must be refused on the units' stream, and (as a stream cannot drop
// it) the stream made again.
func TestJetStreamRefusesAStreamThatTakesMessageTTLs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := startServer(t, "ttl", nil)
	js := rawJS(t, srv)

	// What the attack does where the checks let it.
	home := newHome()
	cfg := logStreamConfig(home)
	cfg.AllowMsgTTL = true
	_, err := js.CreateStream(ctx, cfg)
	require.NoError(t, err)
	s, err := openHome(ctx, srv.ClientURL(), home, 0)
	if err == nil {
		defer s.Close()
		st, err := js.Stream(ctx, cfg.Name)
		require.NoError(t, err)
		for _, id := range []string{"followed", "tail"} {
			l, err := s.Create(ctx, id)
			require.NoError(t, err)
			_, err = l.AppendIf(ctx, 0, []byte("a"))
			require.NoError(t, err)
			sum := segment.ChainNext(segment.ChainGenesis(id), []byte("a"))
			subject := "helm." + home + ".v." + id
			publishUnit(t, js, subject, 2, 2, sum, nats.Header{"Nats-TTL": {"1s"}}, []byte("the agent's, for a second"))
			ttld, err := st.GetLastMsgForSubject(ctx, subject)
			require.NoError(t, err)
			if id == "followed" {
				_, err = l.AppendIf(ctx, 2, []byte("c"))
				require.NoError(t, err, "helm acknowledges a unit after the agent's")
			}
			require.NoError(t, l.Verify(ctx), "before it expires, the voyage reads whole")
			gone(t, st, ttld.Sequence)
			list, err := s.List(ctx)
			require.NoError(t, err)
			t.Logf("%s: after the TTL, List: last %d, err %v; Verify: %v", id, list[id].Last, list[id].Err, l.Verify(ctx))
		}
	}
	refusedBy(t, err, cfg.Name, "allow_msg_ttl")
}

// 3. A Helm-Unit header that lies, on a unit whose records continue the
// chain: Scan and Verify refuse it as damage naming the voyage, the
// message and the unit, and never panic.
func TestJetStreamReadersRefuseAUnitNumberThatLies(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := startServer(t, "unit-lies", nil)
	js := rawJS(t, srv)
	home := newHome()
	s := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer s.Close()

	for _, tc := range []struct {
		name string
		old  bool // the voyage's units before have no number
		unit string
		want string
	}{
		{name: "a repeated number", unit: "2", want: "the message is unit 2 where unit 3 comes next"},
		{name: "a number skipped", unit: "4", want: "the message is unit 4 where unit 3 comes next"},
		{name: "a number going back to 1", unit: "1", want: "the message is unit 1 where unit 3 comes next"},
		{name: "the largest number", unit: fmt.Sprint(uint64(math.MaxUint64)), want: "where unit 3 comes next"},
		{name: "a number past 64 bits", unit: "18446744073709551616", want: `header Helm-Unit is "18446744073709551616"`},
		{name: "zero", unit: "0", want: `header Helm-Unit is "0"`},
		{name: "not a number", unit: "three", want: `header Helm-Unit is "three"`},
		{name: "no number after numbered units", want: "the message has no unit number (Helm-Unit), where unit 3 comes next"},
		{name: "a number on a voyage written before numbers", old: true, unit: "3", want: "the message is numbered unit 3, where the voyage's units before it have no number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := fmt.Sprintf("v%d", homes.Add(1))
			subject := "helm." + home + ".v." + id
			l, err := s.Create(ctx, id)
			require.NoError(t, err)
			sum := segment.ChainGenesis(id)
			for i := range uint64(2) {
				unit := i + 1
				if tc.old {
					unit = 0
				}
				sum = publishUnit(t, js, subject, i+1, unit, sum, nil, []byte{'a' + byte(i)})
			}
			// The third unit, whose records continue the chain.
			hdr := nats.Header{}
			hdr.Set("Helm-Seq", "3")
			hdr.Set("Helm-Count", "1")
			hdr.Set("Helm-Chain", fmt.Sprintf("%08x", segment.ChainNext(sum, []byte("x"))))
			if tc.unit != "" {
				hdr.Set("Helm-Unit", tc.unit)
			}
			_, err = js.PublishMsg(ctx, &nats.Msg{Subject: subject, Header: hdr, Data: []byte{1, 1, 1, 'x'}})
			require.NoError(t, err)

			for name, read := range map[string]func() error{
				"Verify": func() error { return l.Verify(ctx) },
				"Scan":   func() error { return l.Scan(ctx, 1, func(store.Record) error { return nil }) },
			} {
				err := read()
				require.ErrorIs(t, err, store.ErrDamaged, name)
				var de *store.DamageError
				require.ErrorAs(t, err, &de, name)
				assert.Equal(t, id, de.Voyage, name)
				assert.Contains(t, de.Where, "message ", name+" names the message")
				assert.Contains(t, err.Error(), tc.want, name)
			}
			t.Logf("%v", l.Verify(ctx))
		})
	}
}

// 3b. A lying number at the tail hides lost units from List: after a
// limit set and lifted drops a voyage's first units, the agent appends a
// unit (continuing the chain) that says it is unit 1 and rewrites the
// summary to describe it. List checks that the subject holds at least
// as many messages as the last unit's number, and finds nothing; Verify
// reads from the first and must find the voyage's front gone.
func TestJetStreamVerifyFindsLostUnitsATailNumberHides(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := startServer(t, "tail-lie", nil)
	js := rawJS(t, srv)
	home := newHome()
	s := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer s.Close()
	l, err := s.Create(ctx, "v")
	require.NoError(t, err)
	sum := segment.ChainGenesis("v")
	for i, r := range []string{"a", "b", "c", "d"} {
		_, err = l.AppendIf(ctx, uint64(i), []byte(r))
		require.NoError(t, err)
		sum = segment.ChainNext(sum, []byte(r))
	}
	st, err := js.Stream(ctx, "HELM_"+home)
	require.NoError(t, err)
	cfg := st.CachedInfo().Config
	cfg.MaxMsgsPerSubject = 2
	_, err = js.UpdateStream(ctx, cfg)
	require.NoError(t, err)
	cfg.MaxMsgsPerSubject = -1
	_, err = js.UpdateStream(ctx, cfg)
	require.NoError(t, err)
	list, err := s.List(ctx)
	require.NoError(t, err)
	require.ErrorIs(t, list["v"].Err, store.ErrDamaged, "List finds the lost units")

	publishUnit(t, js, "helm."+home+".v.v", 5, 1, sum, nil, []byte("e"))
	require.NoError(t, s.PutSummary(ctx, "v", store.Summary{Seq: 5}))
	list, err = s.List(ctx)
	require.NoError(t, err)
	t.Logf("List after the lying tail: last %d, err %v (it cannot tell)", list["v"].Last, list["v"].Err)
	err = l.Verify(ctx)
	require.ErrorIs(t, err, store.ErrDamaged)
	assert.ErrorContains(t, err, "records are missing")
}
