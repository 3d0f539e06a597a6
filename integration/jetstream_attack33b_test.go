package integration

import (
	"context"
	"testing"
	"time"

	njs "github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

// The agent, holding the home's NATS credentials, edits the keys stream
// of a home helm has opened, so that a key outlives its erasure: it
// makes the stream republish every key to a subject of another of the
// home's streams (the object store's chunks, which a secure delete of
// the key never reaches), or seals it (no key can be deleted). While
// the edit lasts, a jettison's erasure is defeated; the next Open
// refuses the home, naming the keys stream and the setting, as it does
// for every setting that keeps a key from being erased.
func TestAttackJetStreamKeysStreamEditedToKeepKeysIsRefusedOnOpen(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t, "keys-kept", nil)
	js := rawJS(t, srv)
	for _, tc := range []struct {
		name    string
		edit    func(c *njs.StreamConfig, home string)
		setting string
	}{
		{"republished into the object store's stream", func(c *njs.StreamConfig, home string) {
			c.RePublish = &njs.RePublish{Source: "helm." + home + ".k.>", Destination: "$O.HELM_" + home + "_artifacts.C.kept.>"}
		}, "republish"},
		{"sealed", func(c *njs.StreamConfig, _ string) { c.Sealed = true }, "deny_delete"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := newHome()
			h := jsHome(t, srv.ClientURL(), home)
			v, err := h.Start(ctx, "a key the agent keeps", helm.ResolveIssue, reviewWho, nil)
			require.NoError(t, err)
			defer v.Close()

			st, err := js.Stream(ctx, "KEYS_HELM_"+home)
			require.NoError(t, err)
			cfg := st.CachedInfo().Config
			tc.edit(&cfg, home)
			_, err = js.UpdateStream(ctx, cfg)
			require.NoError(t, err, "the server takes the edit")

			if tc.setting == "republish" {
				later, _ := observed(t, v, "after", newMarker(t), 300)
				keys := keyMsgs(t, js, home, v.ID(), later)
				require.Len(t, keys, 1)
				require.NoError(t, v.Jettison(ctx, later, "a customer's data", reviewWho))
				assert.Empty(t, keyMsgs(t, js, home, v.ID(), later))
				// What the edit does while it lasts: the key outlives its
				// erasure in the object store's stream (as a copy the
				// agent published itself would: docs/design.md, "The
				// agent"). Open is where helm checks the settings.
				require.True(t, holds(everyMessage(t, js, home), keys[0].Data[1:]), "the republished copy of the key")
			}

			octx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			_, err = openHome(octx, srv.ClientURL(), home, 1)
			refusedBy(t, err, "KEYS_HELM_"+home, tc.setting)
		})
	}
}

// A fork on a JetStream home of a voyage whose artifact was jettisoned
// after the fork point (its key erased), and of one jettisoned before
// the fork point and stowed again later: the fork holds the artifact as
// jettisoned, has no key for it and no copy of it, and no message of
// the home's streams holds its plaintext; the fork verifies against its
// origin.
func TestAttackJetStreamForkNeverResurrectsAJettisonedArtifact(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t, "fork-jettison", nil)
	js := rawJS(t, srv)
	for _, tc := range []struct {
		name      string
		stowAgain bool
	}{
		{"jettisoned after the fork point", false},
		{"jettisoned before the fork point, stowed again after it", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := newHome()
			h := jsHome(t, srv.ClientURL(), home)
			v, err := h.Start(ctx, "a fork after a jettison", helm.ResolveIssue, reviewWho, nil)
			require.NoError(t, err)
			defer v.Close()
			marker := newMarker(t)
			hash, plain := observed(t, v, "secret", marker, 300)
			at := 1
			if tc.stowAgain {
				require.NoError(t, v.Jettison(ctx, hash, "a customer's data", reviewWho))
				_, err = v.Note(ctx, "after the jettison", reviewWho)
				require.NoError(t, err)
				at = 2
				again, _ := observed(t, v, "secret", marker, 300)
				require.Equal(t, hash, again)
			} else {
				_, err = v.Note(ctx, "after the fork point", reviewWho)
				require.NoError(t, err)
				require.NoError(t, v.Jettison(ctx, hash, "a customer's data", reviewWho))
			}

			f, err := h.Start(ctx, "What if", helm.OpenWaters, reviewWho, &helm.StartOptions{ForkOf: v.ID(), ForkAt: at})
			require.NoError(t, err)
			defer f.Close()
			a, err := f.ArtifactInfo(ctx, hash)
			require.NoError(t, err)
			assert.Equal(t, logbook.ArtifactJettisoned, a.Status)
			_, err = f.OpenArtifact(ctx, hash)
			assert.Error(t, err)
			assert.Empty(t, keyMsgs(t, js, home, f.ID(), hash), "the fork has no key for it")
			obs, err := js.ObjectStore(ctx, "HELM_"+home+"_artifacts")
			require.NoError(t, err)
			_, err = obs.GetInfo(ctx, f.ID()+"/"+hash)
			assert.ErrorIs(t, err, njs.ErrObjectNotFound, "the fork has no copy of it")
			if !tc.stowAgain {
				assert.False(t, holds(everyMessage(t, js, home), traces(t, marker, plain)...), "no message holds its bytes")
			}
			verified(t, h, f.ID())
		})
	}
}
