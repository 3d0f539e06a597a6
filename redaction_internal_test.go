package helm

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/redact"
)

// TestContentAddressesAreNotRedacted: an artifact's BLAKE3 address is no
// text, and a rule that reads a prefix of it as a token (4b1d, ClickHouse's)
// must not change it: the event would name an artifact that is not there.
// A field meant for an address that holds anything else is text, and
// redacted as text.
func TestContentAddressesAreNotRedacted(t *testing.T) {
	r, err := redact.New(nil)
	require.NoError(t, err)
	addr := "4b1d846e75fe8c3bb710e159f031db3818cc2c3ae2bf25fe160dae50f2752f17"
	e := &projection.Event{Type: projection.ArtifactStowed, Artifact: &projection.ArtifactRef{Hash: addr, DerivedFrom: addr}}
	assert.Zero(t, redactEvent(r, e))
	assert.Equal(t, addr, e.Artifact.Hash)
	assert.Equal(t, addr, e.Artifact.DerivedFrom)
	o := &projection.Event{Type: projection.Observed, Obs: &logbook.ObservationRecord{Key: "k", Artifact: addr}}
	assert.Zero(t, redactEvent(r, o))
	assert.Equal(t, addr, o.Obs.Artifact)

	token := "ghp_" + strings.Repeat("a1B2", 9)
	smuggled := &projection.Event{Type: projection.Observed, Obs: &logbook.ObservationRecord{Key: "k", Artifact: token}}
	assert.Equal(t, 1, redactEvent(r, smuggled), "not an address: redacted as any text")
	assert.NotContains(t, smuggled.Obs.Artifact, token)
}
