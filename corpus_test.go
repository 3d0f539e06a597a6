package helm_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
)

// The corpus: homes written by landed versions of helm, kept under
// testdata/voyages/<version>/ with the views they must open to
// (views.golden.json). Every later version must open them, show the same
// views, verify them, and keep writing to them. A format change adds an
// entry written by the version before it, with
//
//	HELM_WRITE_CORPUS=testdata/voyages/NAME go test -run TestWriteCorpus .
//
// run on that version (the script below only uses public API and real mark
// kinds, so any version can run it).

// corpusAction is a recorded action that touches nothing.
type corpusAction struct {
	Message string `json:"message"`
	Fail    bool   `json:"fail,omitempty"` // the world refuses it
}

func (a *corpusAction) Kind() string { return "commit" }
func (a *corpusAction) Perform(ctx context.Context) (logbook.ActionResult, error) {
	if a.Fail {
		return logbook.ActionResult{}, fmt.Errorf("nothing to commit, working tree clean")
	}
	return logbook.ActionResult{SHA: "abc1234def5678"}, nil
}

func TestWriteCorpus(t *testing.T) {
	out := os.Getenv("HELM_WRITE_CORPUS")
	if out == "" {
		t.Skip("set HELM_WRITE_CORPUS=testdata/voyages/NAME to write a corpus entry")
	}
	_, err := os.Stat(out)
	require.True(t, os.IsNotExist(err), "%s exists: corpus entries are never rewritten", out)
	ctx := context.Background()
	work := t.TempDir()
	files := filepath.Join(work, "files")
	require.NoError(t, os.MkdirAll(files, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(files, "small.txt"), []byte("package widget\n\nfunc Init() {}\n"), 0o600))
	rng := rand.New(rand.NewPCG(1, 2))
	big := make([]byte, 96<<10) // compresses to more than the inline limit: goes to the pack
	for i := range big {
		big[i] = 'a' + byte(rng.IntN(26))
	}
	require.NoError(t, os.WriteFile(filepath.Join(files, "big.txt"), big, 0o600))
	home := filepath.Join(work, "home")

	opts := helm.Deterministic(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC), time.Minute, "c0a9b5e1")
	opts.SegmentSize = 4 << 10 // several segments in the long voyage
	env := &helm.ObserveOptions{Env: &marks.Env{Dir: files}}
	h, err := helm.Open(home, opts)
	require.NoError(t, err)

	// 1: completed, with a bearing, a challenge, an action and a large sighting.
	v, err := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, who)
	require.NoError(t, err)
	m1, err := marks.NewFileContents("small.txt", "big.txt")
	require.NoError(t, err)
	_, err = v.Observe(ctx, m1, who, env)
	require.NoError(t, err)
	m2, err := marks.NewContext("the widget crashes at start")
	require.NoError(t, err)
	_, err = v.Observe(ctx, m2, who, nil)
	require.NoError(t, err)
	_, err = v.TakeBearing(ctx, "Widget module has a null check missing in init().", who, nil)
	require.NoError(t, err)
	_, err = v.Challenge(ctx, 1, helm.Challenge{Feedback: "look again", Reading: "Init() dereferences a nil config.", Source: helm.SourceUser}, who)
	require.NoError(t, err)
	_, err = v.Perform(ctx, &corpusAction{Message: "Fix null check"}, who)
	require.NoError(t, err)
	require.NoError(t, v.Complete(ctx, helm.OutcomeCompleted, "Fixed null check in widget init.", who))
	require.NoError(t, v.Close())

	// 2: active, long enough for several segments, with a slate left open.
	v, err = h.Start(ctx, "Explore the widget module", helm.OpenWaters, who)
	require.NoError(t, err)
	for i := range 40 {
		m, err := marks.NewContext(fmt.Sprintf("observation %d: %s", i, strings.Repeat("widget ", i%7+1)))
		require.NoError(t, err)
		_, err = v.Observe(ctx, m, who, nil)
		require.NoError(t, err)
		if i%10 == 9 {
			_, err = v.TakeBearing(ctx, fmt.Sprintf("reading %d", i/10+1), who, nil)
			require.NoError(t, err)
		}
	}
	m3, err := marks.NewContext("left on the slate")
	require.NoError(t, err)
	_, err = v.Observe(ctx, m3, who, nil)
	require.NoError(t, err)
	require.NoError(t, v.Close())

	// 3 (from v1): evidence. A secret redacted before storing, a small
	// and a large sighting jettisoned with a reason, and the log
	// compacted: stub records in the chain, a hole in the pack.
	v, err = h.Start(ctx, "Prune the evidence", helm.OpenWaters, who)
	require.NoError(t, err)
	m4, err := marks.NewContext("the token is ghp_0123456789abcdefghijABCDEFGHIJ012345")
	require.NoError(t, err)
	_, err = v.Observe(ctx, m4, who, nil)
	require.NoError(t, err)
	m5, err := marks.NewFileContents("small.txt")
	require.NoError(t, err)
	_, err = v.Observe(ctx, m5, who, env)
	require.NoError(t, err)
	m6, err := marks.NewFileContents("big.txt")
	require.NoError(t, err)
	_, err = v.Observe(ctx, m6, who, env)
	require.NoError(t, err)
	for _, rec := range v.Slate() {
		if rec.Key == m5.Key() || rec.Key == m6.Key() {
			require.NoError(t, v.Jettison(ctx, rec.Artifact, "holds a customer's data", who))
		}
	}
	rep, err := v.Compact(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, rep.Artifacts)
	require.NoError(t, v.Close())

	// 4 (from v0.2): a failed action between entries, and a voyage
	// completed as blocked.
	v, err = h.Start(ctx, "Land the widget fix", helm.ResolveIssue, who)
	require.NoError(t, err)
	for i, step := range []string{"bearing", "fail", "bearing", "act", "bearing"} {
		switch step {
		case "bearing":
			m, err := marks.NewContext(fmt.Sprintf("step %d", i+1))
			require.NoError(t, err)
			_, err = v.Observe(ctx, m, who, nil)
			require.NoError(t, err)
			_, err = v.TakeBearing(ctx, fmt.Sprintf("reading after step %d", i+1), who, nil)
			require.NoError(t, err)
		case "fail", "act":
			_, err = v.Perform(ctx, &corpusAction{Message: "step " + step, Fail: step == "fail"}, who)
			if step == "fail" {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
		}
	}
	require.NoError(t, v.Complete(ctx, helm.OutcomeBlocked, "Waiting for a review of the fix.", who))
	require.NoError(t, v.Close())

	require.NoError(t, os.MkdirAll(filepath.Dir(out), 0o755))
	require.NoError(t, os.CopyFS(out, os.DirFS(home)))
	golden := corpusViews(t, h)
	data, err := json.MarshalIndent(golden, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(out, "views.golden.json"), append(data, '\n'), 0o644))
}

// corpusView is what a corpus voyage must still show.
type corpusView struct {
	Info      helm.VoyageInfo          `json:"info"`
	Story     string                   `json:"story"`
	Slate     []helm.ObservationRecord `json:"slate"`
	Artifacts map[string]string        `json:"artifacts"` // hash -> SHA-256 of the bytes Artifact returns
}

func corpusViews(t *testing.T, h *helm.Home) map[string]corpusView {
	t.Helper()
	ctx := context.Background()
	list, err := h.List(ctx, helm.ListAll)
	require.NoError(t, err)
	out := map[string]corpusView{}
	for _, info := range list {
		v, err := h.Voyage(ctx, info.ID)
		require.NoError(t, err)
		var story strings.Builder
		require.NoError(t, v.WriteStory(&story))
		cv := corpusView{Info: v.Info(), Story: story.String(), Slate: v.Slate(), Artifacts: map[string]string{}}
		for _, a := range v.Artifacts() {
			if a.Status != helm.ArtifactStowed {
				cv.Artifacts[a.Hash] = string(a.Status)
				continue
			}
			data, err := v.Artifact(ctx, a.Hash)
			require.NoError(t, err)
			sum := sha256.Sum256(data)
			cv.Artifacts[a.Hash] = hex.EncodeToString(sum[:])
		}
		require.NoError(t, v.Close())
		out[info.ID] = cv
	}
	return out
}

// asOf brings the golden views of a corpus entry and the views read
// today to what both can say: the voyage's description gained fields
// since some entries were written (its lifecycle, crew, last event), which
// are compared where the golden has them; and the status of a voyage
// completed with another outcome is that outcome today (golden files
// written before said "completed" with outcome "blocked").
func asOf(t *testing.T, golden, got []byte) (string, string) {
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

// copyTree copies a corpus home to a temporary directory, so that tests
// may write to it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "home")
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	return dst
}

func TestCorpusVoyagesOpenVerifyAndAcceptWrites(t *testing.T) {
	entries, err := filepath.Glob(filepath.Join("testdata", "voyages", "*", "views.golden.json"))
	require.NoError(t, err)
	require.NotEmpty(t, entries, "the corpus is empty")
	ctx := context.Background()
	for _, g := range entries {
		dir := filepath.Dir(g)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			data, err := os.ReadFile(g)
			require.NoError(t, err)
			var want map[string]corpusView
			require.NoError(t, json.Unmarshal(data, &want))
			home := copyTree(t, dir)
			h, err := helm.Open(home, nil)
			require.NoError(t, err)
			got, err := json.MarshalIndent(corpusViews(t, h), "", "  ")
			require.NoError(t, err)
			wantJSON, gotJSON := asOf(t, data, got)
			assert.JSONEq(t, wantJSON, gotJSON, "views of the corpus voyages")
			ids := make([]string, 0, len(want))
			for id := range want {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			for _, id := range ids {
				rep, err := h.Verify(ctx, id)
				require.NoError(t, err)
				assert.True(t, rep.OK(), "verify %s: %v", id, rep.Problems)
			}
			// A later version keeps writing to an old voyage.
			for _, id := range ids {
				v, err := h.Voyage(ctx, id)
				require.NoError(t, err)
				if v.Info().Status.Resumable() {
					// A voyage paused by an earlier version is resumed by this one.
					require.NoError(t, v.Resume(ctx, "resumed by a later version", who))
					require.Equal(t, helm.StatusActive, v.Info().Status)
				}
				if v.Info().Status != helm.StatusActive {
					require.NoError(t, v.Close())
					continue
				}
				m, err := marks.NewContext("written by a later version")
				require.NoError(t, err)
				_, err = v.Observe(ctx, m, who, nil)
				require.NoError(t, err)
				_, err = v.TakeBearing(ctx, "still readable", who, nil)
				require.NoError(t, err)
				require.NoError(t, v.Close())
				rep, err := h.Verify(ctx, id)
				require.NoError(t, err)
				assert.True(t, rep.OK(), "verify %s after a write: %v", id, rep.Problems)
				v, err = h.Voyage(ctx, id)
				require.NoError(t, err)
				n := len(want[id].Slate)
				entries := v.Logbook()
				require.NotEmpty(t, entries)
				last := entries[len(entries)-1]
				require.NotNil(t, last.Bearing)
				assert.Equal(t, "still readable", last.Bearing.Reading.Text)
				assert.Len(t, last.Bearing.Observations, n+1)
				require.NoError(t, v.Close())
			}
			// The corpus itself is never written by the test.
			require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				require.NoError(t, err)
				if d.Type().IsRegular() {
					assert.False(t, strings.Contains(d.Name(), ".tmp"), "stray file %s in the corpus", p)
				}
				return nil
			}))
		})
	}
}
