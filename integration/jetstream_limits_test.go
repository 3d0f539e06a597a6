package integration

import (
	"context"
	"errors"
	"fmt"
	"regexp"
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
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/segment"
	"github.com/helmlog/helm/store"
	"github.com/helmlog/helm/store/natsstore"
)

// A home's streams may be made before helm first opens it, by someone
// who set limits, or changed by someone after helm made them: helm must
// not use a stream that could remove a unit it acknowledged, and a
// listing must not show a voyage that lost units as healthy. The tests
// change the streams with a raw nats.go client, as an operator (or an
// agent with the credentials) would.

func rawJS(t testing.TB, srv *server.Server) njs.JetStream {
	t.Helper()
	js, err := njs.New(rawConn(t, srv))
	require.NoError(t, err)
	return js
}

// streamNames lists the streams on the server.
func streamNames(t testing.TB, js njs.JetStream) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []string
	names := js.StreamNames(ctx)
	for n := range names.Name() {
		out = append(out, n)
	}
	require.NoError(t, names.Err())
	slices.Sort(out)
	return out
}

// The streams of a home as helm (and nats.go, for the buckets) makes
// them.
func logStreamConfig(home string) njs.StreamConfig {
	return njs.StreamConfig{
		Name: "HELM_" + home, Subjects: []string{"helm." + home + ".v.*"},
		Storage: njs.FileStorage, Replicas: 1, Retention: njs.LimitsPolicy, Discard: njs.DiscardNew,
		MaxMsgs: -1, MaxBytes: -1, MaxMsgsPerSubject: -1, Duplicates: 2 * time.Minute,
		DenyDelete: true, DenyPurge: true,
	}
}

func bucketStreamConfig(home string) njs.StreamConfig {
	b := "HELM_" + home + "_voyages"
	return njs.StreamConfig{
		Name: "KV_" + b, Subjects: []string{"$KV." + b + ".>"},
		Storage: njs.FileStorage, Replicas: 1, Retention: njs.LimitsPolicy, Discard: njs.DiscardNew,
		MaxMsgs: -1, MaxBytes: -1, MaxMsgsPerSubject: 1, MaxMsgSize: -1, Duplicates: 2 * time.Minute,
		AllowRollup: true, DenyDelete: true, AllowDirect: true,
	}
}

func objectStreamConfig(home string) njs.StreamConfig {
	b := "HELM_" + home + "_artifacts"
	return njs.StreamConfig{
		Name: "OBJ_" + b, Subjects: []string{"$O." + b + ".C.>", "$O." + b + ".M.>"},
		Storage: njs.FileStorage, Replicas: 1, Retention: njs.LimitsPolicy, Discard: njs.DiscardNew,
		MaxMsgs: -1, MaxBytes: -1, AllowRollup: true, AllowDirect: true,
	}
}

// unsafeSetting is a setting that could remove a unit helm acknowledged,
// on one of a home's three streams.
type unsafeSetting struct {
	name    string
	stream  string // "log", "bucket" or "objects"
	setting string // what the refusal names
	change  func(c *njs.StreamConfig, home string)
	// replicas is what the home asks for (0: 1).
	replicas int
	// fixed: the server refuses to change the setting on a stream that
	// has one, so a stream helm made cannot be given it.
	fixed bool
}

func unsafeSettings() []unsafeSetting {
	return []unsafeSetting{
		{name: "memory storage", stream: "log", setting: "storage", fixed: true,
			change: func(c *njs.StreamConfig, _ string) { c.Storage = njs.MemoryStorage }},
		{name: "async persistence", stream: "log", setting: "persist_mode", fixed: true,
			change: func(c *njs.StreamConfig, _ string) { c.PersistMode = njs.AsyncPersistMode }},
		{name: "interest retention", stream: "log", setting: "retention",
			change: func(c *njs.StreamConfig, _ string) { c.Retention = njs.InterestPolicy }},
		{name: "work-queue retention", stream: "log", setting: "retention", fixed: true,
			change: func(c *njs.StreamConfig, _ string) { c.Retention = njs.WorkQueuePolicy }},
		{name: "an age limit", stream: "log", setting: "max_age",
			change: func(c *njs.StreamConfig, _ string) { c.MaxAge = time.Hour }},
		{name: "max msgs, discard old", stream: "log", setting: "max_msgs",
			change: func(c *njs.StreamConfig, _ string) { c.MaxMsgs, c.Discard = 1000, njs.DiscardOld }},
		{name: "max bytes, discard old", stream: "log", setting: "max_bytes",
			change: func(c *njs.StreamConfig, _ string) { c.MaxBytes, c.Discard = 1<<30, njs.DiscardOld }},
		{name: "max msgs per subject", stream: "log", setting: "max_msgs_per_subject",
			change: func(c *njs.StreamConfig, _ string) { c.MaxMsgsPerSubject = 3 }},
		{name: "max msgs per subject, discard old", stream: "log", setting: "max_msgs_per_subject",
			change: func(c *njs.StreamConfig, _ string) { c.MaxMsgsPerSubject, c.Discard = 3, njs.DiscardOld }},
		{name: "no acknowledgements", stream: "log", setting: "no_ack",
			change: func(c *njs.StreamConfig, _ string) { c.NoAck = true }},
		{name: "a subject transform", stream: "log", setting: "subject_transform",
			change: func(c *njs.StreamConfig, home string) {
				c.SubjectTransform = &njs.SubjectTransformConfig{Source: "helm." + home + ".v.*", Destination: "helm." + home + ".v.{{wildcard(1)}}-moved"}
			}},
		{name: "other subjects", stream: "log", setting: "subjects",
			change: func(c *njs.StreamConfig, home string) { c.Subjects = []string{"elsewhere." + home + ".>"} }},
		{name: "sources", stream: "log", setting: "sources",
			change: func(c *njs.StreamConfig, home string) { c.Sources = []*njs.StreamSource{{Name: "ORIGIN_" + home}} }},
		{name: "a mirror", stream: "log", setting: "mirror", fixed: true,
			change: func(c *njs.StreamConfig, home string) {
				c.Mirror, c.Subjects = &njs.StreamSource{Name: "ORIGIN_" + home}, nil
			}},
		{name: "a counter stream", stream: "log", setting: "allow_msg_counter", fixed: true,
			change: func(c *njs.StreamConfig, _ string) { c.AllowMsgCounter, c.Discard = true, njs.DiscardOld }},
		{name: "deletes allowed", stream: "log", setting: "deny_delete", fixed: true,
			change: func(c *njs.StreamConfig, _ string) { c.DenyDelete = false }},
		{name: "purges allowed", stream: "log", setting: "deny_purge", fixed: true,
			change: func(c *njs.StreamConfig, _ string) { c.DenyPurge = false }},
		{name: "roll-ups", stream: "log", setting: "allow_rollup_hdrs", fixed: true,
			change: func(c *njs.StreamConfig, _ string) { c.DenyPurge, c.AllowRollup = false, true }},
		{name: "subject delete markers", stream: "log", setting: "subject_delete_marker_ttl", fixed: true,
			change: func(c *njs.StreamConfig, _ string) {
				c.DenyPurge, c.AllowRollup, c.AllowMsgTTL, c.SubjectDeleteMarkerTTL = false, true, true, time.Minute
			}},
		{name: "message schedules", stream: "log", setting: "allow_msg_schedules", fixed: true,
			change: func(c *njs.StreamConfig, _ string) {
				c.DenyPurge, c.AllowRollup, c.AllowMsgSchedules, c.Discard = false, true, true, njs.DiscardOld
			}},
		{name: "message TTLs", stream: "log", setting: "allow_msg_ttl",
			change: func(c *njs.StreamConfig, _ string) { c.AllowMsgTTL = true }},
		{name: "fewer replicas than asked", stream: "log", setting: "num_replicas", replicas: 3},

		{name: "a TTL on the voyages bucket", stream: "bucket", setting: "max_age",
			change: func(c *njs.StreamConfig, _ string) { c.MaxAge = 24 * time.Hour }},
		{name: "max msgs, discard old, on the voyages bucket", stream: "bucket", setting: "max_msgs",
			change: func(c *njs.StreamConfig, _ string) { c.MaxMsgs, c.Discard = 1000, njs.DiscardOld }},
		{name: "deletes allowed on the voyages bucket", stream: "bucket", setting: "deny_delete", fixed: true,
			change: func(c *njs.StreamConfig, _ string) { c.DenyDelete = false }},
		{name: "memory storage for the voyages bucket", stream: "bucket", setting: "storage", fixed: true,
			change: func(c *njs.StreamConfig, _ string) { c.Storage = njs.MemoryStorage }},

		{name: "a TTL on the object store", stream: "objects", setting: "max_age",
			change: func(c *njs.StreamConfig, _ string) { c.MaxAge = 24 * time.Hour }},
		{name: "max msgs per subject on the object store", stream: "objects", setting: "max_msgs_per_subject",
			change: func(c *njs.StreamConfig, _ string) { c.MaxMsgsPerSubject = 2 }},
		{name: "max bytes, discard old, on the object store", stream: "objects", setting: "max_bytes",
			change: func(c *njs.StreamConfig, _ string) { c.MaxBytes, c.Discard = 1<<30, njs.DiscardOld }},
		{name: "interest retention on the object store", stream: "objects", setting: "retention",
			change: func(c *njs.StreamConfig, _ string) { c.Retention = njs.InterestPolicy }},
	}
}

// streamOf returns the name and the configuration helm gives the
// stream of home that u is about.
func (u unsafeSetting) streamOf(home string) njs.StreamConfig {
	switch u.stream {
	case "bucket":
		return bucketStreamConfig(home)
	case "objects":
		return objectStreamConfig(home)
	}
	return logStreamConfig(home)
}

// refusedBy checks err is Open's refusal naming the stream and setting,
// with a hint.
func refusedBy(t *testing.T, err error, stream, setting string) {
	t.Helper()
	require.Error(t, err, "helm opened a home whose stream %s has an unsafe %s", stream, setting)
	assert.ErrorIs(t, err, natsstore.ErrUnsafeSettings)
	assert.Contains(t, err.Error(), "stream "+stream+": "+setting+" is ")
	assert.Contains(t, err.Error(), "helm requires")
	var se *natsstore.SettingsError
	if assert.ErrorAs(t, err, &se) {
		assert.Contains(t, se.Hint(), stream, "the hint says which stream to fix")
	}
}

func openHome(ctx context.Context, url, home string, replicas int) (*natsstore.Store, error) {
	return natsstore.Open(ctx, url, &natsstore.Options{Home: home, Replicas: replicas})
}

// (a) A stream made before helm's first Open with a setting that could
// remove a unit: Open refuses the home, naming the setting, and creates
// none of the home's other streams.
func TestJetStreamRefusesAPreCreatedStreamThatCouldRemoveUnits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := startServer(t, "pre-created", nil)
	js := rawJS(t, srv)
	for _, tc := range unsafeSettings() {
		t.Run(tc.name, func(t *testing.T) {
			home := newHome()
			_, err := js.CreateStream(ctx, njs.StreamConfig{Name: "ORIGIN_" + home, Subjects: []string{"origin." + home}, Storage: njs.FileStorage})
			require.NoError(t, err)
			cfg := tc.streamOf(home)
			if tc.change != nil {
				tc.change(&cfg, home)
			}
			_, err = js.CreateStream(ctx, cfg)
			require.NoError(t, err, "the server takes the stream")
			before := streamNames(t, js)

			_, err = openHome(ctx, srv.ClientURL(), home, tc.replicas)
			refusedBy(t, err, cfg.Name, tc.setting)
			t.Logf("refused:\n%v\nTry: %s", err, hintOf(err))
			assert.Equal(t, before, streamNames(t, js), "the refused Open created nothing")
		})
	}
}

func hintOf(err error) string {
	var se *natsstore.SettingsError
	if errors.As(err, &se) {
		return se.Hint()
	}
	return ""
}

// (b) A stream helm made, changed afterwards: the next Open refuses it,
// naming the setting. A setting the server will not change on a stream
// cannot be given to one helm made: the server refuses the change, and
// the home opens as it was, its units all there.
func TestJetStreamRefusesAStreamChangedAfterHelmMadeIt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := startServer(t, "changed", nil)
	js := rawJS(t, srv)
	for _, tc := range unsafeSettings() {
		t.Run(tc.name, func(t *testing.T) {
			home := newHome()
			_, err := js.CreateStream(ctx, njs.StreamConfig{Name: "ORIGIN_" + home, Subjects: []string{"origin." + home}, Storage: njs.FileStorage})
			require.NoError(t, err)
			s := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
			l, err := s.Create(ctx, "v")
			require.NoError(t, err)
			_, err = l.AppendIf(ctx, 0, []byte("a"), []byte("b"))
			require.NoError(t, err)
			_, err = l.AppendIf(ctx, 2, []byte("c"))
			require.NoError(t, err)
			require.NoError(t, s.Close())

			name := tc.streamOf(home).Name
			if tc.change != nil {
				st, err := js.Stream(ctx, name)
				require.NoError(t, err)
				cfg := st.CachedInfo().Config
				tc.change(&cfg, home)
				_, err = js.UpdateStream(ctx, cfg)
				if tc.fixed {
					require.Error(t, err, "the server changes %s on a stream", tc.setting)
					t.Logf("the server refuses the change: %v", err)
					again, err := openHome(ctx, srv.ClientURL(), home, tc.replicas)
					require.NoError(t, err, "the stream is as helm made it")
					defer again.Close()
					l, err := again.Open(ctx, "v")
					require.NoError(t, err)
					assert.NoError(t, l.Verify(ctx))
					last, err := l.Last(ctx)
					require.NoError(t, err)
					assert.Equal(t, uint64(3), last)
					return
				}
				require.NoError(t, err, "the server changes %s", tc.setting)
			}
			_, err = openHome(ctx, srv.ClientURL(), home, tc.replicas)
			refusedBy(t, err, name, tc.setting)
		})
	}
}

// Settings that remove nothing are accepted: a per-subject limit that
// refuses a voyage's next unit rather than drop its first, a sealed
// stream (read, never written). A limit that refuses keeps every
// acknowledged unit.
func TestJetStreamOpensAStreamWhoseSettingsRemoveNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := startServer(t, "accepted", nil)
	js := rawJS(t, srv)

	home := newHome()
	cfg := logStreamConfig(home)
	cfg.MaxMsgsPerSubject, cfg.DiscardNewPerSubject, cfg.MaxMsgs = 2, true, 1000
	_, err := js.CreateStream(ctx, cfg)
	require.NoError(t, err)
	s := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer s.Close()
	l, err := s.Create(ctx, "v")
	require.NoError(t, err)
	_, err = l.AppendIf(ctx, 0, []byte("a"))
	require.NoError(t, err)
	_, err = l.AppendIf(ctx, 1, []byte("b"))
	require.NoError(t, err)
	_, err = l.AppendIf(ctx, 2, []byte("c"))
	require.Error(t, err, "the subject is full: the unit is refused")
	assert.ErrorContains(t, err, "the stream is full")
	assert.ErrorContains(t, err, "nothing was appended")
	assert.NoError(t, l.Verify(ctx), "and none before it dropped")
	last, err := l.Last(ctx)
	require.NoError(t, err)
	assert.Equal(t, uint64(2), last)

	// Sealed after helm wrote: it opens and reads; writes are refused.
	st, err := js.Stream(ctx, cfg.Name)
	require.NoError(t, err)
	sealed := st.CachedInfo().Config
	sealed.Sealed = true
	_, err = js.UpdateStream(ctx, sealed)
	require.NoError(t, err)
	again := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer again.Close()
	r, err := again.Open(ctx, "v")
	require.NoError(t, err)
	assert.NoError(t, r.Verify(ctx))
	_, err = r.AppendIf(ctx, 2, []byte("c"))
	assert.Error(t, err, "a sealed stream takes no unit")
}

// start records a voyage with notes on a shared home and closes it (its
// summary then describes its last record).
func start(t *testing.T, h *helm.Home, intent string, notes int) string {
	t.Helper()
	ctx := context.Background()
	who := logbook.Who{Identity: "ana", Role: "coder", Method: "human"}
	v, err := h.Start(ctx, intent, helm.OpenWaters, who, nil)
	require.NoError(t, err)
	for i := range notes {
		_, err := v.Note(ctx, fmt.Sprintf("note %d", i+1), who)
		require.NoError(t, err)
	}
	require.NoError(t, v.Close())
	return v.ID()
}

// damagedIn checks that List lists id as damaged (with want in its
// reason), never as read, and lists the others.
func damagedIn(t *testing.T, h *helm.Home, id, want string, healthy ...string) {
	t.Helper()
	list, err := h.List(context.Background(), nil)
	var le *helm.ListError
	require.ErrorAs(t, err, &le, "List says a voyage could not be read")
	require.Equal(t, []string{id}, le.Voyages)
	assert.ErrorIs(t, le.Errs[0], helm.ErrDamaged)
	assert.Contains(t, le.Errs[0].Error(), want)
	var ids []string
	for _, v := range list {
		ids = append(ids, v.ID)
	}
	assert.NotContains(t, ids, id, "the damaged voyage is not listed as read")
	assert.ElementsMatch(t, healthy, ids)
	t.Logf("listed as damaged: %v", le.Errs[0])
}

// A per-subject limit set after helm wrote, and lifted again, drops a
// voyage's first units and leaves a stream whose settings pass: List
// shows the voyage damaged, because its subject holds fewer messages than
// its last unit's number; the voyage beside it, under the limit, is
// listed as it is.
func TestSharedListShowsAVoyageThatLostItsFirstUnitsDamaged(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := startServer(t, "front", nil)
	home := newHome()
	h := jsHome(t, srv.ClientURL(), home)
	long := start(t, h, "A long voyage", 5)
	short := start(t, h, "A short one", 0)
	list, err := h.List(ctx, nil)
	require.NoError(t, err)
	require.Len(t, list, 2)

	js := rawJS(t, srv)
	st, err := js.Stream(ctx, "HELM_"+home)
	require.NoError(t, err)
	cfg := st.CachedInfo().Config
	cfg.MaxMsgsPerSubject = 2
	_, err = js.UpdateStream(ctx, cfg)
	require.NoError(t, err)
	cfg.MaxMsgsPerSubject = -1
	_, err = js.UpdateStream(ctx, cfg)
	require.NoError(t, err)

	damagedIn(t, jsHome(t, srv.ClientURL(), home), long, "of the units it acknowledged are gone", short)
	_, err = jsHome(t, srv.ClientURL(), home).Voyage(ctx, long)
	assert.ErrorIs(t, err, helm.ErrDamaged, "opening it says so too")
}

// copyHome makes home to's streams by hand, as an operator could before
// helm checked them, with deletes and purges allowed, and copies from's
// units and keys into them message by message, headers and all.
func copyHome(t *testing.T, js njs.JetStream, from, to string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := logStreamConfig(to)
	cfg.DenyDelete, cfg.DenyPurge = false, false
	_, err := js.CreateStream(ctx, cfg)
	require.NoError(t, err)
	src, err := js.Stream(ctx, "HELM_"+from)
	require.NoError(t, err)
	for seq := uint64(1); ; seq++ {
		m, err := src.GetMsg(ctx, seq)
		if errors.Is(err, njs.ErrMsgNotFound) {
			break
		}
		require.NoError(t, err)
		hdr := nats.Header{}
		for k, v := range m.Header {
			if strings.HasPrefix(k, "Helm-") {
				hdr[k] = v
			}
		}
		subject := "helm." + to + ".v." + strings.TrimPrefix(m.Subject, "helm."+from+".v.")
		_, err = js.PublishMsg(ctx, &nats.Msg{Subject: subject, Header: hdr, Data: m.Data})
		require.NoError(t, err)
	}
	fromKV, err := js.KeyValue(ctx, "HELM_"+from+"_voyages")
	require.NoError(t, err)
	toKV, err := js.CreateKeyValue(ctx, njs.KeyValueConfig{Bucket: "HELM_" + to + "_voyages", History: 1, Storage: njs.FileStorage})
	require.NoError(t, err)
	keys, err := fromKV.ListKeys(ctx)
	require.NoError(t, err)
	for k := range keys.Keys() {
		e, err := fromKV.Get(ctx, k)
		require.NoError(t, err)
		_, err = toKV.Put(ctx, k, e.Value())
		require.NoError(t, err)
	}
}

// Units removed behind helm's back, on a stream made by hand with deletes
// and purges allowed (then denied, so that helm opens it): whichever unit
// went, the first, one between others, the last, or the voyage's every
// unit, List shows the voyage damaged, never healthy, and never leaves it
// out.
func TestSharedListShowsAVoyageWhoseUnitsWereDeletedDamaged(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := startServer(t, "deleted", nil)
	js := rawJS(t, srv)
	from := newHome()
	h := jsHome(t, srv.ClientURL(), from)
	id := start(t, h, "Four notes", 4)
	other := start(t, h, "Untouched", 1)

	for _, tc := range []struct {
		name   string
		remove func(t *testing.T, st njs.Stream, seqs []uint64, subject string)
		want   string
	}{
		{"the first unit", func(t *testing.T, st njs.Stream, seqs []uint64, _ string) {
			require.NoError(t, st.DeleteMsg(ctx, seqs[0]))
		}, "of the units it acknowledged are gone"},
		{"a unit between others", func(t *testing.T, st njs.Stream, seqs []uint64, _ string) {
			require.NoError(t, st.SecureDeleteMsg(ctx, seqs[2]))
		}, "of the units it acknowledged are gone"},
		{"the last unit", func(t *testing.T, st njs.Stream, seqs []uint64, _ string) {
			require.NoError(t, st.DeleteMsg(ctx, seqs[len(seqs)-1]))
		}, "the store lost records it had acknowledged"},
		{"every unit (a purge of its subject)", func(t *testing.T, st njs.Stream, _ []uint64, subject string) {
			require.NoError(t, st.Purge(ctx, njs.WithPurgeSubject(subject)))
		}, "the store lost records it had acknowledged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			to := newHome()
			copyHome(t, js, from, to)
			st, err := js.Stream(ctx, "HELM_"+to)
			require.NoError(t, err)
			subject := "helm." + to + ".v." + id
			var seqs []uint64
			for seq := uint64(1); ; seq++ {
				m, err := st.GetMsg(ctx, seq, njs.WithGetMsgSubject(subject))
				if errors.Is(err, njs.ErrMsgNotFound) {
					break
				}
				require.NoError(t, err)
				seqs = append(seqs, m.Sequence)
				seq = m.Sequence
			}
			require.GreaterOrEqual(t, len(seqs), 4)
			_, err = openHome(ctx, srv.ClientURL(), to, 0)
			refusedBy(t, err, "HELM_"+to, "deny_delete")

			tc.remove(t, st, seqs, subject)
			cfg := st.CachedInfo().Config
			cfg.DenyDelete, cfg.DenyPurge = true, true
			_, err = js.UpdateStream(ctx, cfg)
			require.NoError(t, err, "deletes and purges denied from now on")

			damagedIn(t, jsHome(t, srv.ClientURL(), to), id, tc.want, other)
		})
	}
}

// A voyage whose key was deleted from the voyages bucket still has its
// units: List shows it damaged rather than leave it out, and opening it
// says why.
func TestSharedListShowsAVoyageWhoseKeyWasDeletedDamaged(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := startServer(t, "key-gone", nil)
	home := newHome()
	h := jsHome(t, srv.ClientURL(), home)
	id := start(t, h, "Hidden", 2)
	other := start(t, h, "Seen", 0)
	kv, err := rawJS(t, srv).KeyValue(ctx, "HELM_"+home+"_voyages")
	require.NoError(t, err)
	require.NoError(t, kv.Delete(ctx, id))

	damagedIn(t, jsHome(t, srv.ClientURL(), home), id, "key is gone", other)
	_, err = jsHome(t, srv.ClientURL(), home).Voyage(ctx, id)
	assert.ErrorIs(t, err, helm.ErrDamaged)
	assert.ErrorContains(t, err, "key is gone")
}

// publishOldUnit publishes a unit as helm wrote them before units were
// numbered (no Helm-Unit), continuing chain sum.
func publishOldUnit(t *testing.T, js njs.JetStream, subject string, first uint64, sum uint32, records ...[]byte) uint32 {
	t.Helper()
	payload := []byte{1, byte(len(records))}
	for _, r := range records {
		payload = append(payload, byte(len(r)))
		payload = append(payload, r...)
		sum = segment.ChainNext(sum, r)
	}
	hdr := nats.Header{}
	hdr.Set("Helm-Seq", fmt.Sprint(first))
	hdr.Set("Helm-Count", fmt.Sprint(len(records)))
	hdr.Set("Helm-Chain", fmt.Sprintf("%08x", sum))
	_, err := js.PublishMsg(context.Background(), &nats.Msg{Subject: subject, Header: hdr, Data: payload})
	require.NoError(t, err)
	return sum
}

// A voyage written before units were numbered reads, verifies, lists and
// takes more units as before (still without numbers); once its first
// units are dropped, List finds it by its first message, which no longer
// holds record 1.
func TestJetStreamVoyagesWrittenBeforeUnitNumbers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := startServer(t, "old-units", nil)
	home := newHome()
	s := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer s.Close()
	l, err := s.Create(ctx, "old")
	require.NoError(t, err)
	js := rawJS(t, srv)
	subject := "helm." + home + ".v.old"
	sum := publishOldUnit(t, js, subject, 1, segment.ChainGenesis("old"), []byte("a"), []byte("b"))
	publishOldUnit(t, js, subject, 3, sum, []byte("c"))

	_, err = l.AppendIf(ctx, 3, []byte("d"))
	require.NoError(t, err, "helm appends to it")
	m, err := js.Stream(ctx, "HELM_"+home)
	require.NoError(t, err)
	last, err := m.GetLastMsgForSubject(ctx, subject)
	require.NoError(t, err)
	assert.Empty(t, last.Header.Get("Helm-Unit"), "without a number, as the units before it")
	assert.NoError(t, l.Verify(ctx))
	list, err := s.List(ctx)
	require.NoError(t, err)
	assert.Equal(t, store.Listing{Last: 4}, store.Listing{Last: list["old"].Last, Err: list["old"].Err})

	cfg := m.CachedInfo().Config
	cfg.MaxMsgsPerSubject = 1
	_, err = js.UpdateStream(ctx, cfg)
	require.NoError(t, err)
	cfg.MaxMsgsPerSubject = -1
	_, err = js.UpdateStream(ctx, cfg)
	require.NoError(t, err)
	list, err = s.List(ctx)
	require.NoError(t, err)
	require.ErrorIs(t, list["old"].Err, store.ErrDamaged)
	assert.ErrorContains(t, list["old"].Err, "records 1 to 3, which it acknowledged, are gone")
	assert.ErrorIs(t, l.Verify(ctx), store.ErrDamaged)
}

// A message that numbers its unit out of turn is damage, though its
// records continue the chain: a unit repeated, or numbered by something
// other than helm.
func TestJetStreamScanChecksUnitNumbers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := startServer(t, "unit-numbers", nil)
	home := newHome()
	s := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer s.Close()
	l, err := s.Create(ctx, "v")
	require.NoError(t, err)
	_, err = l.AppendIf(ctx, 0, []byte("a"))
	require.NoError(t, err)
	sum := segment.ChainNext(segment.ChainGenesis("v"), []byte("a"))
	sum = segment.ChainNext(sum, []byte("b"))
	hdr := nats.Header{}
	hdr.Set("Helm-Seq", "2")
	hdr.Set("Helm-Count", "1")
	hdr.Set("Helm-Chain", fmt.Sprintf("%08x", sum))
	hdr.Set("Helm-Unit", "5")
	_, err = rawJS(t, srv).PublishMsg(ctx, &nats.Msg{Subject: "helm." + home + ".v.v", Header: hdr, Data: []byte{1, 1, 1, 'b'}})
	require.NoError(t, err)
	err = l.Verify(ctx)
	require.ErrorIs(t, err, store.ErrDamaged)
	assert.ErrorContains(t, err, "the message is unit 5 where unit 2 comes next")
}

// The command line, against a JetStream server: a home whose stream was
// made with a per-subject limit is refused (exit 1), the message naming
// the stream and the setting, its Try line the fix; a voyage that lost
// units is DAMAGED in helm voyage list.
func TestCLIRefusesUnsafeStreamsAndListsLostUnitsAsDamaged(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin := buildHelm(t)
	srv := startServer(t, "cli-limits", nil)
	js := rawJS(t, srv)

	unsafe := newHome()
	cfg := logStreamConfig(unsafe)
	cfg.MaxMsgsPerSubject = 3
	_, err := js.CreateStream(ctx, cfg)
	require.NoError(t, err)
	dir := t.TempDir()
	c := newHelmCLI(t, bin, dir, "HELM_STORE="+srv.ClientURL()+"/"+unsafe)
	before := streamNames(t, js)
	stdout, stderr := c.exits(1, "voyage", "new", "Nothing should come of this")
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "stream HELM_"+unsafe+": max_msgs_per_subject is 3")
	assert.Contains(t, stderr, "Try: nats stream edit HELM_"+unsafe+" --max-msgs-per-subject=-1")
	assert.Equal(t, before, streamNames(t, js), "nothing created on the server")
	t.Logf("helm voyage new, refused:\n%s", stderr)

	home := newHome()
	c = newHelmCLI(t, bin, t.TempDir(), "HELM_STORE="+srv.ClientURL()+"/"+home)
	long := strings.TrimSpace(c.ok("voyage", "new", "A long voyage"))
	for i := range 4 {
		c.ok("note", "--voyage", long, fmt.Sprint("note ", i))
	}
	c.ok("voyage", "new", "A short one")
	st, err := js.Stream(ctx, "HELM_"+home)
	require.NoError(t, err)
	lim := st.CachedInfo().Config
	lim.MaxMsgsPerSubject = 2
	_, err = js.UpdateStream(ctx, lim)
	require.NoError(t, err)
	lim.MaxMsgsPerSubject = -1
	_, err = js.UpdateStream(ctx, lim)
	require.NoError(t, err)

	stdout, stderr, code := c.run("voyage", "list", "--status", "all")
	t.Logf("helm voyage list (exit %d):\n%s%s", code, stdout, stderr)
	assert.NotEqual(t, 0, code, "a listing with a damaged voyage fails")
	assert.Regexp(t, regexp.MustCompile(`(?m)^`+long[:8]+`\s+\?\s+DAMAGED\b`), stdout)
	assert.Contains(t, stdout, "A short one")
	assert.Contains(t, stderr, "of the units it acknowledged are gone")
}
