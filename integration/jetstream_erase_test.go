package integration

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	njs "github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/sighting"
	"github.com/helmlog/helm/store"
	"github.com/helmlog/helm/store/natsstore"
)

// Erasure on a JetStream home: a jettisoned artifact's key is erased with
// the server's secure delete, and its bytes, kept encrypted, are noise.
// The recorded agent holds the home's NATS credentials: it can read every
// message (so every key of an artifact not jettisoned, the same power it
// has over a plaintext artifact on disk), publish, delete messages where
// the streams allow it, and edit the streams.

// homeStreams are the streams of a home.
func homeStreams(home string) []string {
	return []string{"HELM_" + home, "KV_HELM_" + home + "_voyages", "OBJ_HELM_" + home + "_artifacts", "KEYS_HELM_" + home}
}

// everyMessage returns the data and headers of every message the home's
// streams hold, as the agent reads them.
func everyMessage(t *testing.T, js njs.JetStream, home string) [][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out [][]byte
	for _, name := range homeStreams(home) {
		st, err := js.Stream(ctx, name)
		require.NoError(t, err, name)
		info, err := st.Info(ctx)
		require.NoError(t, err)
		for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
			m, err := st.GetMsg(ctx, seq)
			if errors.Is(err, njs.ErrMsgNotFound) {
				continue
			}
			require.NoError(t, err)
			var h bytes.Buffer
			for k, vs := range m.Header {
				h.WriteString(k + ": " + strings.Join(vs, ",") + "\n")
			}
			out = append(out, append(h.Bytes(), m.Data...))
		}
	}
	return out
}

// holds reports whether any message holds one of needles.
func holds(msgs [][]byte, needles ...[]byte) bool {
	for _, m := range msgs {
		for _, n := range needles {
			if bytes.Contains(m, n) {
				return true
			}
		}
	}
	return false
}

// traces are what of an artifact's bytes a reader could find: the
// plaintext marker, and windows of the stored (zstd) form.
func traces(t *testing.T, marker string, plain []byte) [][]byte {
	t.Helper()
	e := artifact.Encode(plain)
	e.Compress()
	out := [][]byte{[]byte(marker)}
	for i := 0; i+32 <= len(e.Compressed); i += max(32, len(e.Compressed)/8) {
		out = append(out, e.Compressed[i:i+32])
	}
	return out
}

// keyMsgs returns the messages of the artifact's key subject.
func keyMsgs(t *testing.T, js njs.JetStream, home, voyage, hash string) []*njs.RawStreamMsg {
	t.Helper()
	st, err := js.Stream(context.Background(), "KEYS_HELM_"+home)
	require.NoError(t, err)
	return subjectMsgs(t, st, "helm."+home+".k."+voyage+"."+hash)
}

// opens reports whether key opens the voyage's encrypted copy of the
// artifact (the form keys.go writes: 0xE1, a nonce, the sealed bytes).
func opens(t *testing.T, key, sealed []byte, home, voyage, hash string) bool {
	t.Helper()
	b, err := aes.NewCipher(key)
	require.NoError(t, err)
	g, err := cipher.NewGCM(b)
	require.NoError(t, err)
	require.Greater(t, len(sealed), 1+g.NonceSize())
	_, err = g.Open(nil, sealed[1:1+g.NonceSize()], sealed[1+g.NonceSize():], []byte("helm-artifact/1\x00"+home+"\x00"+voyage+"\x00"+hash))
	return err == nil
}

// observed records a sighting holding marker (its mark, in the log,
// does not) and returns its hash and plaintext.
func observed(t *testing.T, v *helm.Voyage, topic, marker string, size int) (string, []byte) {
	t.Helper()
	ctx := context.Background()
	s := &reviewSighting{Text: marker + " " + hexText(uint64(len(topic)), size)}
	_, err := v.TakeBearing(ctx, "saw "+topic, reviewWho, &helm.BearingOptions{Observations: []helm.Observation{{Mark: &reviewNote{Topic: topic}, Sighting: s}}})
	require.NoError(t, err)
	data, err := sighting.Marshal(s)
	require.NoError(t, err)
	hash := artifact.Hash(data)
	r, err := v.OpenArtifact(ctx, hash)
	require.NoError(t, err)
	plain, err := io.ReadAll(r)
	require.NoError(t, err)
	r.Close()
	require.Contains(t, string(plain), marker)
	return hash, plain
}

// filesHolding lists the files under dir that hold b.
func filesHolding(t *testing.T, dir string, b []byte) []string {
	t.Helper()
	var found []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(data, b) {
			found = append(found, p)
		}
		return nil
	}))
	return found
}

func newMarker(t *testing.T) string {
	b := make([]byte, 16)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return "MARKER-" + hex.EncodeToString(b)
}

// A jettison on a JetStream home erases the artifact's key: no message
// of the home's streams holds its plaintext or its stored form, no key
// there opens its encrypted copy, the server's files no longer hold the
// key, reading it says it was jettisoned, and verify still proves the
// chain, the jettisoned artifact skipped and counted. Small artifacts
// too: a JetStream home keeps none in its log.
func TestJetStreamJettisonErasesTheArtifactsKey(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	srv := startServer(t, "erase", func(o *server.Options) { o.StoreDir = dir })
	home := newHome()
	h := jsHome(t, srv.ClientURL(), home)
	js := rawJS(t, srv)
	v, err := h.Start(ctx, "erase what was seen", helm.ResolveIssue, reviewWho, nil)
	require.NoError(t, err)
	defer v.Close()

	for _, tc := range []struct {
		name string
		size int
	}{
		{name: "small", size: 200},
		{name: "large", size: 200 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := newMarker(t)
			hash, plain := observed(t, v, tc.name, marker, tc.size)
			keep, _ := observed(t, v, tc.name+"-kept", newMarker(t), tc.size)
			keys := keyMsgs(t, js, home, v.ID(), hash)
			require.Len(t, keys, 1, "its key is one message")
			key := keys[0].Data[1:]
			obs, err := js.ObjectStore(ctx, "HELM_"+home+"_artifacts")
			require.NoError(t, err)
			sealed, err := obs.GetBytes(ctx, v.ID()+"/"+hash)
			require.NoError(t, err, "the artifact is in the object store, not the log")
			require.True(t, opens(t, key, sealed, home, v.ID(), hash))
			require.False(t, holds(everyMessage(t, js, home), traces(t, marker, plain)...), "stored encrypted, before any jettison")

			// A server of one, not clustered, writes each message to its
			// block file as it stores it (flush in place).
			require.NotEmpty(t, filesHolding(t, dir, key), "the server's files hold the key")

			require.NoError(t, v.Jettison(ctx, hash, "holds a customer's data", reviewWho))

			assert.Empty(t, keyMsgs(t, js, home, v.ID(), hash), "the key is erased")
			msgs := everyMessage(t, js, home)
			assert.False(t, holds(msgs, traces(t, marker, plain)...), "no message holds the artifact's bytes")
			assert.False(t, holds(msgs, key), "no message holds its key")
			_, err = v.OpenArtifact(ctx, hash)
			assert.ErrorIs(t, err, helm.ErrArtifactGone)
			_, err = v.OpenArtifact(ctx, keep)
			assert.NoError(t, err, "the other artifact reads")

			// The server's files: the secure delete overwrote the key.
			assert.Empty(t, filesHolding(t, dir, key), "the server's files hold the erased key")

			rep, err := h.Verify(ctx, v.ID(), nil)
			require.NoError(t, err)
			assert.True(t, rep.OK(), "%v", rep.Problems)
			assert.NotZero(t, rep.SkippedJettisoned)
		})
	}
	rep, err := v.Compact(ctx)
	require.NoError(t, err, "compaction on a JetStream home erases what is left")
	assert.Equal(t, 2, rep.Artifacts, "the two jettisoned, erased (again)")
	assert.Zero(t, rep.Kept)

	// Pulled into a home on disk, the voyage verifies there too: the
	// erased artifacts are not carried, the others are.
	disk, err := helm.Open(t.TempDir(), nil)
	require.NoError(t, err)
	_, err = h.Copy(ctx, v.ID(), disk)
	require.NoError(t, err)
	verified(t, disk, v.ID())
	pulled, err := disk.Voyage(ctx, v.ID())
	require.NoError(t, err)
	defer pulled.Close()
	arts := 0
	for a, err := range pulled.Artifacts(ctx, nil) {
		require.NoError(t, err)
		if a.Status == logbook.ArtifactStowed {
			r, err := pulled.OpenArtifact(ctx, a.Hash)
			require.NoError(t, err)
			_, err = io.ReadAll(r)
			require.NoError(t, err)
			r.Close()
			arts++
		}
	}
	assert.Equal(t, 2, arts, "the two kept read on disk")
}

// The agent deletes the key of an artifact the voyage did not jettison:
// reading it is damage naming the artifact and the missing key, and so is
// verify.
func TestAttackJetStreamDeletedLiveKeyIsReportedAsDamage(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t, "live-key", nil)
	home := newHome()
	h := jsHome(t, srv.ClientURL(), home)
	js := rawJS(t, srv)
	v, err := h.Start(ctx, "a key goes missing", helm.ResolveIssue, reviewWho, nil)
	require.NoError(t, err)
	defer v.Close()
	hash, _ := observed(t, v, "victim", newMarker(t), 300)
	verified(t, h, v.ID())

	keys := keyMsgs(t, js, home, v.ID(), hash)
	require.Len(t, keys, 1)
	st, err := js.Stream(ctx, "KEYS_HELM_"+home)
	require.NoError(t, err)
	require.NoError(t, st.SecureDeleteMsg(ctx, keys[0].Sequence))

	_, err = v.OpenArtifact(ctx, hash)
	require.ErrorIs(t, err, helm.ErrDamaged)
	assert.Contains(t, err.Error(), hash)
	assert.Contains(t, err.Error(), "key")
	rep, err := h.Verify(ctx, v.ID(), nil)
	require.NoError(t, err)
	require.False(t, rep.OK(), "verify reports the missing key")
	assert.Contains(t, rep.Problems[0].Error(), hash)
	assert.Contains(t, rep.Problems[0].Error(), "key of artifact")
	assert.Contains(t, rep.Problems[0].Error(), "did not jettison")
}

// The agent keeps a copy of the key on the key's subject, as a second
// message, before the jettison: the jettison erases every message of the
// subject. Afterwards it publishes a key of its own there: the artifact
// does not read (jettisoned), and the store's copy does not open with it.
func TestAttackJetStreamJettisonLeavesNoKeyAndNoneRestoresIt(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t, "second-key", nil)
	home := newHome()
	h := jsHome(t, srv.ClientURL(), home)
	js := rawJS(t, srv)
	v, err := h.Start(ctx, "a key copied", helm.ResolveIssue, reviewWho, nil)
	require.NoError(t, err)
	defer v.Close()
	hash, _ := observed(t, v, "copied", newMarker(t), 300)
	keys := keyMsgs(t, js, home, v.ID(), hash)
	require.Len(t, keys, 1)
	subject := "helm." + home + ".k." + v.ID() + "." + hash
	_, err = js.Publish(ctx, subject, keys[0].Data)
	require.NoError(t, err)
	require.Len(t, keyMsgs(t, js, home, v.ID(), hash), 2)
	_, err = v.OpenArtifact(ctx, hash)
	require.NoError(t, err, "the copy is the same key")

	require.NoError(t, v.Jettison(ctx, hash, "secret", reviewWho))
	assert.Empty(t, keyMsgs(t, js, home, v.ID(), hash), "both messages erased")
	assert.False(t, holds(everyMessage(t, js, home), keys[0].Data[1:]), "no message holds the key")

	forged := append([]byte{1}, make([]byte, 32)...)
	_, err = rand.Read(forged[1:])
	require.NoError(t, err)
	_, err = js.Publish(ctx, subject, forged)
	require.NoError(t, err)
	_, err = v.OpenArtifact(ctx, hash)
	assert.ErrorIs(t, err, helm.ErrArtifactGone)
	st := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer st.Close()
	_, err = st.Artifacts(v.ID()).Get(ctx, artifact.Ref{Hash: hash})
	assert.ErrorIs(t, err, store.ErrDamaged, "another key does not open the copy")
	verified(t, h, v.ID())
}

// plainStore is a store whose artifacts do not erase: a home on it keeps
// small artifacts as blob records in the log, as helm did before
// erasure.
type plainStore struct{ store.Store }

func (p plainStore) Artifacts(voyage string) store.Artifacts {
	return struct{ store.Artifacts }{p.Store.Artifacts(voyage)}
}

// toEarlierForm rewrites the voyage's encrypted copies as an earlier helm
// stored them: the object <hash>, unencrypted, and no key.
func toEarlierForm(t *testing.T, js njs.JetStream, home, voyage string) int {
	t.Helper()
	ctx := context.Background()
	obs, err := js.ObjectStore(ctx, "HELM_"+home+"_artifacts")
	require.NoError(t, err)
	list, err := obs.List(ctx)
	require.NoError(t, err)
	keys, err := js.Stream(ctx, "KEYS_HELM_"+home)
	require.NoError(t, err)
	n := 0
	for _, info := range list {
		hash, ok := strings.CutPrefix(info.Name, voyage+"/")
		if !ok {
			continue
		}
		sealed, err := obs.GetBytes(ctx, info.Name)
		require.NoError(t, err)
		msgs := keyMsgs(t, js, home, voyage, hash)
		require.Len(t, msgs, 1)
		b, err := aes.NewCipher(msgs[0].Data[1:])
		require.NoError(t, err)
		g, err := cipher.NewGCM(b)
		require.NoError(t, err)
		stored, err := g.Open(nil, sealed[1:13], sealed[13:], []byte("helm-artifact/1\x00"+home+"\x00"+voyage+"\x00"+hash))
		require.NoError(t, err)
		_, err = obs.PutBytes(ctx, hash, stored)
		require.NoError(t, err)
		require.NoError(t, obs.Delete(ctx, info.Name))
		require.NoError(t, keys.DeleteMsg(ctx, msgs[0].Sequence))
		n++
	}
	return n
}

// A voyage stored by an earlier helm (small artifacts as blob records in
// the log, large ones unencrypted under their address) opens and reads
// with this one, and verifies; its artifacts cannot be erased, and
// compaction says so (Kept), while new artifacts are stored encrypted.
func TestJetStreamReadsArtifactsStoredByAnEarlierHelm(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t, "earlier", nil)
	home := newHome()
	js := rawJS(t, srv)
	st := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	t.Cleanup(func() { st.Close() })
	old, err := helm.OpenStore(t.TempDir(), plainStore{st}, "home "+home, nil)
	require.NoError(t, err)
	v, err := old.Start(ctx, "written before erasure", helm.ResolveIssue, reviewWho, nil)
	require.NoError(t, err)
	small, err := v.Observe(ctx, &reviewNote{Topic: "small", Text: "small and old"}, reviewWho, nil)
	require.NoError(t, err)
	require.NotZero(t, small.Artifact.Blob, "a blob record, as before")
	largeMarker := newMarker(t)
	large, err := v.Observe(ctx, &reviewNote{Topic: "large", Text: largeMarker + hexText(3, 200<<10)}, reviewWho, nil)
	require.NoError(t, err)
	require.Zero(t, large.Artifact.Blob)
	id := v.ID()
	require.NoError(t, v.Close())
	require.Equal(t, 1, toEarlierForm(t, js, home, id))

	h := jsHome(t, srv.ClientURL(), home)
	c, err := h.Voyage(ctx, id)
	require.NoError(t, err)
	defer c.Close()
	for _, hash := range []string{small.Artifact.Hash, large.Artifact.Hash} {
		r, err := c.OpenArtifact(ctx, hash)
		require.NoError(t, err, hash)
		_, err = io.ReadAll(r)
		require.NoError(t, err)
		r.Close()
	}
	verified(t, h, id)
	// The earlier form is readable in the store: the scan finds it.
	r, err := c.OpenArtifact(ctx, large.Artifact.Hash)
	require.NoError(t, err)
	plain, err := io.ReadAll(r)
	require.NoError(t, err)
	r.Close()
	require.True(t, holds(everyMessage(t, js, home), traces(t, largeMarker, plain)[1:]...), "the earlier form's stored bytes are in the object store")

	// A new artifact is stored encrypted.
	fresh, err := c.Observe(ctx, &reviewNote{Topic: "fresh", Text: "new"}, reviewWho, nil)
	require.NoError(t, err)
	assert.Zero(t, fresh.Artifact.Blob)
	assert.Len(t, keyMsgs(t, js, home, id, fresh.Artifact.Hash), 1)

	// The earlier ones are jettisoned; compaction cannot erase them.
	require.NoError(t, c.Jettison(ctx, small.Artifact.Hash, "old", reviewWho))
	require.NoError(t, c.Jettison(ctx, large.Artifact.Hash, "old", reviewWho))
	require.NoError(t, c.Jettison(ctx, fresh.Artifact.Hash, "new", reviewWho))
	rep, err := c.Compact(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, rep.Kept, "the blob record and the unencrypted object are kept")
	assert.Equal(t, 1, rep.Artifacts, "the new one is erased")
	verified(t, h, id)
}

// Compaction after a reduce erases the original payload's key on a
// JetStream home; the summary reads, verify proves the chain.
func TestJetStreamCompactionErasesAReducedArtifactsKey(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t, "reduce", nil)
	home := newHome()
	h := jsHome(t, srv.ClientURL(), home)
	js := rawJS(t, srv)
	v, err := h.Start(ctx, "reduce then compact", helm.ResolveIssue, reviewWho, nil)
	require.NoError(t, err)
	defer v.Close()
	marker := newMarker(t)
	hash, plain := observed(t, v, "long", marker, 50<<10)
	sum, err := v.Reduce(ctx, hash, helm.Reduction{Summary: &reviewSighting{Text: "short"}, Method: "human"}, reviewWho)
	require.NoError(t, err)
	require.Len(t, keyMsgs(t, js, home, v.ID(), hash), 1, "a reduce alone erases nothing")

	rep, err := v.Compact(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Reduced)
	assert.Empty(t, keyMsgs(t, js, home, v.ID(), hash))
	assert.False(t, holds(everyMessage(t, js, home), traces(t, marker, plain)...))
	r, err := v.OpenArtifact(ctx, sum)
	require.NoError(t, err, "the summary reads")
	r.Close()
	verified(t, h, v.ID())
}

// A keys stream someone made, or changed, so that it could lose keys
// early, keep them from being erased, or answer from a replica behind:
// Open refuses the home, naming the stream and the setting, and creates
// nothing.
func TestJetStreamRefusesAMisconfiguredKeysStream(t *testing.T) {
	srv := startServer(t, "keys-settings", nil)
	js := rawJS(t, srv)
	good := func(home string) njs.StreamConfig {
		return njs.StreamConfig{
			Name: "KEYS_HELM_" + home, Subjects: []string{"helm." + home + ".k.>"},
			Storage: njs.FileStorage, Replicas: 1, Retention: njs.LimitsPolicy, Discard: njs.DiscardNew,
			MaxMsgs: -1, MaxBytes: -1, MaxMsgsPerSubject: -1, DenyPurge: true,
		}
	}
	for _, tc := range []struct {
		name    string
		change  func(c *njs.StreamConfig, home string)
		setting string
	}{
		{"deletes denied: no key could be erased", func(c *njs.StreamConfig, _ string) { c.DenyDelete = true }, "deny_delete"},
		{"purges allowed: every key lost at once, unerased", func(c *njs.StreamConfig, _ string) { c.DenyPurge = false }, "deny_purge"},
		{"memory storage", func(c *njs.StreamConfig, _ string) { c.Storage = njs.MemoryStorage }, "storage"},
		{"an age limit: keys lost early", func(c *njs.StreamConfig, _ string) { c.MaxAge = time.Hour }, "max_age"},
		{"message TTLs: a key lost early", func(c *njs.StreamConfig, _ string) { c.AllowMsgTTL = true }, "allow_msg_ttl"},
		{"a limit that drops old keys", func(c *njs.StreamConfig, _ string) { c.MaxMsgs, c.Discard = 100, njs.DiscardOld }, "max_msgs"},
		{"roll-ups", func(c *njs.StreamConfig, _ string) { c.DenyPurge, c.AllowRollup = false, true }, "allow_rollup_hdrs"},
		{"another subject", func(c *njs.StreamConfig, home string) { c.Subjects = []string{"elsewhere." + home + ".>"} }, "subjects"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			home := newHome()
			cfg := good(home)
			tc.change(&cfg, home)
			_, err := js.CreateStream(ctx, cfg)
			require.NoError(t, err)
			_, err = openHome(ctx, srv.ClientURL(), home, 1)
			refusedBy(t, err, "KEYS_HELM_"+home, tc.setting)
			assert.NotContains(t, streamNames(t, js), "HELM_"+home, "nothing created")
			var se *natsstore.SettingsError
			require.ErrorAs(t, err, &se)
			assert.NotEmpty(t, se.Hint())
		})
	}
	t.Run("the keys stream as helm makes it opens", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		home := newHome()
		_, err := js.CreateStream(ctx, good(home))
		require.NoError(t, err)
		s, err := openHome(ctx, srv.ClientURL(), home, 1)
		require.NoError(t, err)
		s.Close()
	})
}

// A voyage pushed from a home on disk, which jettisoned an artifact and
// stowed the same bytes again later: the push's units that hold the
// jettison erase nothing (the copy stowed again has the same key), the
// artifact reads and verifies on JetStream, and compaction there erases
// nothing that is stowed.
func TestJetStreamPushOfAJettisonStowedAgainKeepsTheLiveCopy(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t, "push-again", nil)
	home := newHome()
	shared := jsHome(t, srv.ClientURL(), home)
	js := rawJS(t, srv)
	disk, err := helm.Open(t.TempDir(), nil)
	require.NoError(t, err)
	v, err := disk.Start(ctx, "seen twice", helm.ResolveIssue, reviewWho, nil)
	require.NoError(t, err)
	defer v.Close()
	marker := newMarker(t)
	hash, _ := observed(t, v, "twice", marker, 100<<10)
	require.NoError(t, v.Jettison(ctx, hash, "stale", reviewWho))
	again, _ := observed(t, v, "twice", marker, 100<<10)
	require.Equal(t, hash, again)
	r, err := v.OpenArtifact(ctx, hash)
	require.NoError(t, err, "stowed again on disk")
	r.Close()

	_, err = disk.Copy(ctx, v.ID(), shared)
	require.NoError(t, err)
	c, err := shared.Voyage(ctx, v.ID())
	require.NoError(t, err)
	defer c.Close()
	r, err = c.OpenArtifact(ctx, hash)
	require.NoError(t, err, "the copy stowed again reads on JetStream")
	_, err = io.ReadAll(r)
	require.NoError(t, err)
	r.Close()
	assert.Len(t, keyMsgs(t, js, home, v.ID(), hash), 1)
	verified(t, shared, v.ID())
	rep, err := c.Compact(ctx)
	require.NoError(t, err)
	assert.Zero(t, rep.Artifacts, "nothing jettisoned is left")
	verified(t, shared, v.ID())
}

// The agent makes the keys stream deny deletes while helm has the home
// open: the jettison is recorded, and its error says so and that the
// bytes are not erased (never "nothing was recorded"); compaction fails
// as long as deletes are denied; the next Open refuses the home, naming
// the keys stream and deny_delete.
func TestAttackJetStreamKeysStreamDeniesDeletesAfterOpen(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t, "deny-later", nil)
	home := newHome()
	h := jsHome(t, srv.ClientURL(), home)
	js := rawJS(t, srv)
	v, err := h.Start(ctx, "a jettison the agent blocks", helm.ResolveIssue, reviewWho, nil)
	require.NoError(t, err)
	defer v.Close()
	hash, _ := observed(t, v, "blocked", newMarker(t), 300)

	st, err := js.Stream(ctx, "KEYS_HELM_"+home)
	require.NoError(t, err)
	cfg := st.CachedInfo().Config
	cfg.DenyDelete = true
	_, err = js.UpdateStream(ctx, cfg)
	require.NoError(t, err)

	err = v.Jettison(ctx, hash, "a customer's data", reviewWho)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is recorded, but its bytes")
	assert.NotContains(t, err.Error(), "nothing was recorded")
	assert.Contains(t, err.Error(), "compacting the voyage erases them")
	_, err = v.OpenArtifact(ctx, hash)
	assert.ErrorIs(t, err, helm.ErrArtifactGone, "the jettison is recorded")
	assert.Len(t, keyMsgs(t, js, home, v.ID(), hash), 1, "the key is still there")
	_, err = v.Compact(ctx)
	assert.Error(t, err, "compaction cannot erase either")

	_, err = openHome(ctx, srv.ClientURL(), home, 1)
	refusedBy(t, err, "KEYS_HELM_"+home, "deny_delete")
}
