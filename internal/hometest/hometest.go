// Package hometest opens homes and compares views for the tests of the
// facade and of the packages built on it; unlike voyagetest, it registers
// no mark, so the root's own tests may use it.
package hometest

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/store/storetest"
)

// Backend is one kind of home a read-path test runs over: Home opens it,
// Other opens it again, as another process would.
type Backend struct {
	Name        string
	Home, Other func() *helm.Home
}

// Homes opens, in a temporary directory of t, a home on disk and a home
// on a shared store (storetest.Dir), each with a second opener.
func Homes(t *testing.T) []Backend {
	t.Helper()
	dir := t.TempDir()
	st := storetest.OpenDir(filepath.Join(dir, "shared"), &storetest.DirOptions{NoSync: true})
	disk := func() *helm.Home {
		h, err := helm.Open(filepath.Join(dir, "disk"), &helm.Options{NoSync: true})
		require.NoError(t, err)
		return h
	}
	shared := func(local string) func() *helm.Home {
		return func() *helm.Home {
			h, err := helm.OpenStore(filepath.Join(dir, local), st, "the test's store", &helm.Options{NoSync: true})
			require.NoError(t, err)
			return h
		}
	}
	return []Backend{{"disk", disk, disk}, {"shared", shared("a"), shared("b")}}
}

// AsOf brings the golden views of a corpus entry and the views read
// today to what both can say: the voyage's description gained fields
// since some entries were written (its lifecycle, crew, last event), which
// are compared where the golden has them; and the status of a voyage
// completed with another outcome is that outcome today (golden files
// written before said "completed" with outcome "blocked").
func AsOf(t *testing.T, golden, got []byte) (string, string) {
	t.Helper()
	var want, have map[string]map[string]any
	require.NoError(t, json.Unmarshal(golden, &want))
	require.NoError(t, json.Unmarshal(got, &have))
	for id, w := range want {
		wi, _ := w["info"].(map[string]any)
		hi, _ := have[id]["info"].(map[string]any)
		if wi == nil || hi == nil {
			continue
		}
		if wi["status"] == "completed" && wi["outcome"] != nil {
			wi["status"] = wi["outcome"]
		}
		if c, ok := wi["current_identity"]; ok && (c == "" || c == nil) {
			// Written before handoffs: a voyage's identity then never
			// changed.
			wi["current_identity"] = wi["identity"]
		}
		for k := range hi {
			if _, ok := wi[k]; !ok {
				delete(hi, k)
			}
		}
	}
	a, err := json.Marshal(want)
	require.NoError(t, err)
	b, err := json.Marshal(have)
	require.NoError(t, err)
	return string(a), string(b)
}
