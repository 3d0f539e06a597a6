package replay_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/internal/hometest"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/replay"
)

// corpusView is what a corpus voyage must still show.
type corpusView struct {
	Info      helm.VoyageInfo             `json:"info"`
	Story     string                      `json:"story"`
	Slate     []logbook.ObservationRecord `json:"slate"`
	Artifacts map[string]string           `json:"artifacts"` // hash -> SHA-256 of the bytes Artifact returns
}

// TestCorpusExportsReplayToTheGoldenViews replays the JSONL exports that
// the root's corpus entries hold (exports/ID.jsonl, one per voyage, from
// v0.3 on) with ReadEvents and Fold, and checks the views against the
// entry's golden ones: the voyage's description, its slate, its story,
// and its artifact index. Views have no story of their own: it is
// rendered from the replayed description and logbook with
// logbook.WriteStory, as package story renders it. An export holds no artifact bytes, so
// the index is compared by hash and status, not by content.
func TestCorpusExportsReplayToTheGoldenViews(t *testing.T) {
	entries, err := filepath.Glob(filepath.Join("..", "testdata", "voyages", "*", "exports"))
	require.NoError(t, err)
	// Entries from v0.3 on carry exports: the test must not pass for want
	// of any (a moved testdata directory, a glob gone wrong).
	require.GreaterOrEqual(t, len(entries), 3, "corpus entries with exports")
	for _, exports := range entries {
		dir := filepath.Dir(exports)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, "views.golden.json"))
			require.NoError(t, err)
			var golden map[string]corpusView
			require.NoError(t, json.Unmarshal(data, &golden))
			files, err := filepath.Glob(filepath.Join(exports, "*.jsonl"))
			require.NoError(t, err)
			ids := make([]string, 0, len(golden))
			for id := range golden {
				ids = append(ids, id)
			}
			have := make([]string, len(files))
			for i, f := range files {
				have[i] = strings.TrimSuffix(filepath.Base(f), ".jsonl")
			}
			assert.ElementsMatch(t, ids, have, "an entry with exports has one for each of its voyages")

			want, got := map[string]corpusView{}, map[string]corpusView{}
			for i, f := range files {
				id := have[i]
				r, err := os.Open(f)
				require.NoError(t, err)
				events, err := replay.ReadEvents(r)
				r.Close()
				require.NoError(t, err, "read %s", f)
				views, err := replay.Fold(events)
				require.NoError(t, err, "replay %s", f)
				got[id] = replayedView(t, views)
				w := golden[id]
				w.Artifacts = artifactStatuses(w.Artifacts)
				want[id] = w
			}
			wantJSON, err := json.Marshal(want)
			require.NoError(t, err)
			gotJSON, err := json.Marshal(got)
			require.NoError(t, err)
			a, b := hometest.AsOf(t, wantJSON, gotJSON)
			assert.JSONEq(t, a, b, "views replayed from the exports")
		})
	}
}

// replayedView is what corpusViews says of a voyage, from its replayed
// views; its artifacts map each hash to its status.
func replayedView(t *testing.T, v *replay.Views) corpusView {
	t.Helper()
	info := v.Info
	h := logbook.Header{Intent: info.Intent, Identity: info.Identity, Created: info.Created, Status: info.Status,
		CompletedAt: info.CompletedAt, Outcome: info.Outcome, Summary: info.Summary}
	for _, c := range info.Lifecycle {
		h.Lifecycle = append(h.Lifecycle, logbook.Change(c))
	}
	var story strings.Builder
	require.NoError(t, logbook.WriteStory(&story, h, v.Logbook))
	slate := v.Slate
	if slate == nil {
		slate = []logbook.ObservationRecord{}
	}
	arts := map[string]string{}
	for _, a := range v.Artifacts {
		arts[a.Hash] = string(a.Status)
	}
	return corpusView{Info: info, Story: story.String(), Slate: slate, Artifacts: arts}
}

// artifactStatuses turns a golden artifact index (a stowed artifact's
// hash maps to the SHA-256 of its bytes, any other's to its status) into
// statuses alone.
func artifactStatuses(golden map[string]string) map[string]string {
	out := make(map[string]string, len(golden))
	for h, s := range golden {
		switch logbook.ArtifactStatus(s) {
		case logbook.ArtifactReduced, logbook.ArtifactJettisoned:
			out[h] = s
		default:
			out[h] = string(logbook.ArtifactStowed)
		}
	}
	return out
}
