package integration

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	njs "github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/segment"
	"github.com/helmlog/helm/store"
	"github.com/helmlog/helm/store/natsstore"
)

// The JetStream store's units carry the voyage's BLAKE3 chain (package
// chain): the link after a unit's last record closes its payload
// (version 2), a reader checks it, and the head is the last unit's.

// chainOf returns the chain's head over records, numbered from 1.
func chainOf(voyage string, records ...[]byte) chain.Head {
	h := chain.Head{Hash: chain.Genesis(voyage)}
	for i, r := range records {
		h = chain.Head{Seq: uint64(i + 1), Hash: chain.Link(h.Hash, uint64(i+1), r)}
	}
	return h
}

// unitPayload encodes records as a unit's payload of version 2, closed by
// link, as the agent (which knows the format) would.
func unitPayload(link chain.Hash, records ...[]byte) []byte {
	b := []byte{2}
	b = binary.AppendUvarint(b, uint64(len(records)))
	for _, r := range records {
		b = binary.AppendUvarint(b, uint64(len(r)))
		b = append(b, r...)
	}
	return append(b, link[:]...)
}

// crcAfter continues the CRC32C chain over records.
func crcAfter(sum uint32, records ...[]byte) uint32 {
	for _, r := range records {
		sum = segment.ChainNext(sum, r)
	}
	return sum
}

// remakeStream deletes the home's units stream and makes it again with
// its settings, as the agent holding the credentials can (a stream helm
// makes denies delete and purge; it does not deny its own deletion).
func remakeStream(t *testing.T, js njs.JetStream, st njs.Stream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := st.CachedInfo().Config
	require.NoError(t, js.DeleteStream(ctx, cfg.Name))
	_, err := js.CreateStream(ctx, cfg)
	require.NoError(t, err)
}

// Every unit helm appends closes with the chain's link after its last
// record; the head, from the writer or a client that read no record, is
// the last unit's link, the chain over every record; the facade's
// Voyage.Head is the same.
func TestJetStreamUnitsCarryTheChainAndTheHeadIsTheLastLink(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := startServer(t, "chain", nil)
	home := newHome()
	s := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer s.Close()
	l, err := s.Create(ctx, "v")
	require.NoError(t, err)
	defer l.Close()
	records := [][]byte{[]byte("a"), []byte("b"), {}, bytes.Repeat([]byte("c"), 300)}
	_, err = l.AppendIf(ctx, 0, records[:2]...)
	require.NoError(t, err)
	_, err = l.AppendIf(ctx, 2, records[2:]...)
	require.NoError(t, err)

	st, err := rawJS(t, srv).Stream(ctx, "HELM_"+home)
	require.NoError(t, err)
	msgs := subjectMsgs(t, st, "helm."+home+".v.v")
	require.Len(t, msgs, 2)
	for i, end := range []int{2, 4} {
		want := chainOf("v", records[:end]...)
		assert.Equal(t, byte(2), msgs[i].Data[0], "payload version 2")
		assert.Equal(t, want.Hash[:], msgs[i].Data[len(msgs[i].Data)-chain.Size:], "unit %d closes with the link after record %d", i+1, end)
	}

	want := chainOf("v", records...)
	head, err := l.Head(ctx, 4)
	require.NoError(t, err)
	assert.Equal(t, want, head, "the writer's head")
	reader := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer reader.Close()
	rl, err := reader.Open(ctx, "v")
	require.NoError(t, err)
	defer rl.Close()
	head, err = rl.Head(ctx, 4)
	require.NoError(t, err)
	assert.Equal(t, want, head, "a new client's head, from the last unit")
	head, err = rl.Head(ctx, 2)
	require.NoError(t, err)
	assert.Equal(t, chainOf("v", records[:2]...), head, "the head after an earlier unit")
	require.NoError(t, rl.Verify(ctx))

	h := jsHome(t, srv.ClientURL(), home)
	id := start(t, h, "Resolve #42", 3)
	v, err := h.Voyage(ctx, id)
	require.NoError(t, err)
	defer v.Close()
	fl, err := reader.Open(ctx, id)
	require.NoError(t, err)
	defer fl.Close()
	var all [][]byte
	require.NoError(t, fl.Scan(ctx, 1, func(r store.Record) error { all = append(all, bytes.Clone(r.Data)); return nil }))
	vh, err := v.Head(ctx)
	require.NoError(t, err)
	assert.Equal(t, chainOf(id, all...), vh, "Voyage.Head of a shared voyage is the chain over its records")
}

// The agent edits a unit ("tests FAILED" becomes "tests PASSED") and
// recomputes what it must for the CRC32C chain and the unit's own link:
// the reader finds the link that no longer follows, at the record where
// it breaks, and Verify says damaged.
func TestJetStreamRefusesAnEditedUnit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := startServer(t, "edit", nil)
	js := rawJS(t, srv)
	forged := []byte("tests PASSED fine!")
	for _, tc := range []struct {
		name     string
		relink   bool // the edited unit's link is recomputed (the next unit's is kept)
		wantSeq  uint64
		wantSays string
	}{
		{"the unit's old link kept", false, 1, "BLAKE3 chain"},
		{"the unit's link recomputed", true, 2, "BLAKE3 chain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := newHome()
			s := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
			defer s.Close()
			l, err := s.Create(ctx, "v")
			require.NoError(t, err)
			defer l.Close()
			_, err = l.AppendIf(ctx, 0, []byte("tests FAILED badly"))
			require.NoError(t, err)
			_, err = l.AppendIf(ctx, 1, []byte("after"))
			require.NoError(t, err)

			st, err := js.Stream(ctx, "HELM_"+home)
			require.NoError(t, err)
			subject := "helm." + home + ".v.v"
			msgs := subjectMsgs(t, st, subject)
			require.Len(t, msgs, 2)
			link := [chain.Size]byte(msgs[0].Data[len(msgs[0].Data)-chain.Size:])
			if tc.relink {
				link = chainOf("v", forged).Hash
			}
			msgs[0].Data = unitPayload(link, forged)
			msgs[0].Header.Set("Helm-Chain", fmt.Sprintf("%08x", crcAfter(segment.ChainGenesis("v"), forged)))
			msgs[1].Header.Set("Helm-Chain", fmt.Sprintf("%08x", crcAfter(segment.ChainGenesis("v"), forged, []byte("after"))))
			remakeStream(t, js, st)
			republish(t, js, msgs)

			reader := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
			defer reader.Close()
			rl, err := reader.Open(ctx, "v")
			require.NoError(t, err)
			defer rl.Close()
			var read []string
			err = rl.Scan(ctx, 1, func(r store.Record) error { read = append(read, string(r.Data)); return nil })
			require.ErrorIs(t, err, store.ErrDamaged)
			var de *store.DamageError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tc.wantSeq, de.Seq)
			assert.ErrorContains(t, err, tc.wantSays)
			assert.NotContains(t, read, "after", "no record of a unit whose link does not follow is read")
			assert.ErrorIs(t, rl.Verify(ctx), store.ErrDamaged)
		})
	}
}

// A voyage written before the BLAKE3 chain (units of payload version 1,
// with no link) still reads and verifies; its head is the chain computed
// over its records; helm appends to it in version 2, continuing that
// chain; a version 1 unit after a version 2 one is damage.
func TestJetStreamReadsUnitsWrittenBeforeTheChainAndContinuesIt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := startServer(t, "old-chain", nil)
	home := newHome()
	s := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer s.Close()
	l, err := s.Create(ctx, "old")
	require.NoError(t, err)
	defer l.Close()
	js := rawJS(t, srv)
	subject := "helm." + home + ".v.old"
	records := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	sum := publishUnit(t, js, subject, 1, 1, segment.ChainGenesis("old"), nil, records[:2]...)
	publishUnit(t, js, subject, 3, 2, sum, nil, records[2])

	reader := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer reader.Close()
	rl, err := reader.Open(ctx, "old")
	require.NoError(t, err)
	defer rl.Close()
	head, err := rl.Head(ctx, 3)
	require.NoError(t, err)
	assert.Equal(t, chainOf("old", records...), head, "computed over the records")
	require.NoError(t, rl.Verify(ctx))

	_, err = l.AppendIf(ctx, 3, []byte("d"))
	require.NoError(t, err, "helm appends to it")
	records = append(records, []byte("d"))
	st, err := js.Stream(ctx, "HELM_"+home)
	require.NoError(t, err)
	last, err := st.GetLastMsgForSubject(ctx, subject)
	require.NoError(t, err)
	assert.Equal(t, byte(2), last.Data[0], "in the new format")
	assert.Equal(t, "3", last.Header.Get("Helm-Unit"))
	want := chainOf("old", records...)
	assert.Equal(t, want.Hash[:], last.Data[len(last.Data)-chain.Size:], "its link continues the chain over the old units' records")
	head, err = rl.Head(ctx, 4)
	require.NoError(t, err)
	assert.Equal(t, want, head)
	require.NoError(t, rl.Verify(ctx))

	publishUnit(t, js, subject, 5, 4, crcAfter(segment.ChainGenesis("old"), records...), nil, []byte("e"))
	err = rl.Verify(ctx)
	require.ErrorIs(t, err, store.ErrDamaged)
	assert.ErrorContains(t, err, "stores no chain link (payload version 1) where the voyage's units before it store one")
}

// A shared voyage's head is the store's: the same whichever client asks
// and after every change, without the writer reading its log again.
func TestSharedJetStreamHeadFollowsEveryChange(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := startServer(t, "shared-head", nil)
	home := newHome()
	h := jsHome(t, srv.ClientURL(), home)
	who := logbook.Who{Identity: "ana", Role: "coder", Method: "human"}
	id := start(t, h, "Resolve #42", 1)
	v, err := h.Voyage(ctx, id)
	require.NoError(t, err)
	defer v.Close()
	before, err := v.Head(ctx)
	require.NoError(t, err)
	_, err = v.Note(ctx, "one more", who)
	require.NoError(t, err)
	after, err := v.Head(ctx)
	require.NoError(t, err)
	assert.Equal(t, v.Info().Seq, after.Seq)
	assert.NotEqual(t, before, after)

	other, err := jsHome(t, srv.ClientURL(), home).Voyage(ctx, id)
	require.NoError(t, err)
	defer other.Close()
	theirs, err := other.Head(ctx)
	require.NoError(t, err)
	assert.Equal(t, after, theirs)
}

// The command line on a shared home: helm voyage head prints the head
// (SEQ:HEX, or --json) of a voyage in the store, the chain over its
// records; complete prints the head after it; report and the exports
// give the same.
func TestCLIVoyageHeadOnASharedHome(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin := buildHelm(t)
	srv := startServer(t, "cli-head", nil)
	home := newHome()
	c := newHelmCLI(t, bin, t.TempDir(), "HELM_STORE="+srv.ClientURL()+"/"+home)
	id := strings.TrimSpace(c.ok("voyage", "new", "Resolve #42"))
	c.ok("note", "one")

	s := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer s.Close()
	records := func() [][]byte {
		l, err := s.Open(ctx, id)
		require.NoError(t, err)
		defer l.Close()
		var out [][]byte
		require.NoError(t, l.Scan(ctx, 1, func(r store.Record) error { out = append(out, bytes.Clone(r.Data)); return nil }))
		return out
	}
	want := chainOf(id, records()...)
	assert.Equal(t, want.String()+"\n", c.ok("voyage", "head"))
	var js struct {
		Voyage string `json:"voyage"`
		Seq    uint64 `json:"seq"`
		Hash   string `json:"hash"`
	}
	require.NoError(t, json.Unmarshal([]byte(c.ok("voyage", "head", "--json", id[:8])), &js))
	assert.Equal(t, id, js.Voyage)
	assert.Equal(t, want.Seq, js.Seq)
	assert.Equal(t, want.Hash.String(), js.Hash)

	out := c.ok("complete", "--summary", "done")
	want = chainOf(id, records()...)
	assert.Contains(t, out, "\nHead:    "+want.String()+"\n", "complete prints the head after it")
	assert.Equal(t, want.String()+"\n", c.ok("voyage", "head", id))
	assert.Contains(t, c.ok("report", id), "- **Head:** `"+want.String()+"`\n")
	assert.Contains(t, c.ok("voyage", "export", id, "--format", "md"), "- **Head:** `"+want.String()+"`\n")
}
