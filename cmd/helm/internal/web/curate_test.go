package web_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/internal/webtest"
	"github.com/helmlog/helm/marks"
)

// A sighting jettisoned after its voyage was completed: the voyage's
// page and the sighting's say who jettisoned it, when and why, and its
// bytes are not served. (A context mark's label holds its description:
// the mark is the story's, and stays.)
func TestAJettisonedSightingSaysWhoJettisonedIt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	h, err := helm.Open(dir, nil)
	require.NoError(t, err)
	v, err := h.Start(ctx, "curated later", helm.OpenWaters, webtest.Ann, nil)
	require.NoError(t, err)
	m, err := marks.NewContext("account 4471 of a customer")
	require.NoError(t, err)
	o, err := v.Observe(ctx, m, webtest.Ann, nil)
	require.NoError(t, err)
	hash := o.Record.Artifact
	require.NoError(t, v.Complete(ctx, "", "done", webtest.Ann))
	require.NoError(t, v.Jettison(ctx, hash, "holds a customer's data", webtest.Ann))
	require.NoError(t, v.Close())

	ts := serve(t, dir, nil)
	for _, path := range []string{"/voyages/" + v.ID(), "/voyages/" + v.ID() + "/sightings/" + hash} {
		status, _, body := get(t, ts, path)
		require.Equal(t, http.StatusOK, status, body)
		assert.Contains(t, body, "jettisoned by ann (method human) at ", path)
		assert.Contains(t, body, "holds a customer&#39;s data", path)
	}
	status, _, body := get(t, ts, "/voyages/"+v.ID()+"/artifacts/"+hash)
	assert.NotEqual(t, http.StatusOK, status, body)
	assert.NotContains(t, body, `"description"`)
}
