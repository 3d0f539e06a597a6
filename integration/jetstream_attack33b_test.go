package integration

import (
	"context"
	"testing"
	"time"

	njs "github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
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
