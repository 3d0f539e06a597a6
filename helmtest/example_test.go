package helmtest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/helmtest"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/runner"
)

// These examples show test functions' bodies: each needs the test's t.
// newT stands in for it here, so that the examples run; a test passes
// its own *testing.T.

// exampleT is the part of testing.TB that helmtest calls, for the
// examples: a temporary directory, cleanups, and a failure that panics.
type exampleT struct {
	testing.TB // what helmtest does not call
	cleanups   []func()
}

func newT() *exampleT { return &exampleT{} }

func (t *exampleT) Helper()                   {}
func (t *exampleT) Logf(string, ...any)       {}
func (t *exampleT) Cleanup(f func())          { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }
func (t *exampleT) TempDir() string {
	dir, err := os.MkdirTemp("", "helmtest-example")
	if err != nil {
		panic(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func (t *exampleT) Setenv(key, value string) {
	old, had := os.LookupEnv(key)
	os.Setenv(key, value)
	t.Cleanup(func() {
		if had {
			os.Setenv(key, old)
		} else {
			os.Unsetenv(key)
		}
	})
}

// done runs the cleanups, as the end of a test does.
func (t *exampleT) done() {
	for _, f := range slices.Backward(t.cleanups) {
		f()
	}
}

// Home gives a test a home whose clock and ids are the same on every run.
func ExampleHome() {
	t := newT() // in a test: the test's t
	defer t.done()
	h := helmtest.Home(t)
	v, _ := h.Start(context.Background(), "Fix #42", helm.OpenWaters, logbook.Who{Identity: "ann"}, nil)
	defer v.Close()
	fmt.Println(v.ID(), v.Info().Created)
	// Output:
	// 7e570000-0000-4000-8000-000000000001 2026-01-01 09:00:01 +0000 UTC
}

// Given, When, Then: what a change records, from a given history.
func ExampleGiven() {
	t := newT() // in a test: the test's t
	defer t.done()
	ann := logbook.Who{Identity: "ann", Role: "coder", Method: "human"}
	helmtest.Given(t,
		helmtest.Started("Fix #42", ann),
		helmtest.Observed("the crash report", ann),
	).When(func(v *helm.Voyage) error {
		_, err := v.TakeBearing(context.Background(), "A nil config.", ann, nil)
		return err
	}).Then(
		helmtest.Bearing("A nil config.", ann),
	)
	fmt.Println("recorded as wanted")
	// Output:
	// recorded as wanted
}

// Record keeps a voyage as testdata/NAME.jsonl the first time, and
// replays it in every later run: here, the recording testdata/fix-42.jsonl
// is kept already.
func ExampleRecord() {
	t := newT() // in a test: the test's t
	defer t.done()
	r := helmtest.Record(t, "fix-42", func(h *helm.Home) (*helm.Voyage, error) {
		ctx := context.Background()
		ann := logbook.Who{Identity: "ann", Role: "coder", Method: "human"}
		v, err := h.Start(ctx, "Fix #42", helm.OpenWaters, ann, nil)
		if err != nil {
			return nil, err
		}
		_, err = v.Note(ctx, "The crash needs a nil config.", ann)
		return v, err
	})
	fmt.Println(r.Views.Info.Intent, len(r.Views.Logbook), len(r.Actions()))
	// Output:
	// Fix #42 1 0
}

// A run whose agent commits with the real git records the same commit
// on every run: Record gives git a fixed author and date (GitEnv), so the
// same files on the same parent make the same SHA. The run builds its
// repository from fixed files, inside itself; the recording
// testdata/fix-42-commit.jsonl is kept already, and this run replays it.
func ExampleRecord_gitCommit() {
	t := newT() // in a test: the test's t
	defer t.done()
	r := helmtest.Record(t, "fix-42-commit", func(h *helm.Home) (*helm.Voyage, error) {
		ctx := context.Background()
		repo := t.TempDir()
		for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "start"}} {
			if err := exec.Command("git", append([]string{"-C", repo}, args...)...).Run(); err != nil {
				return nil, err
			}
		}
		if err := os.WriteFile(filepath.Join(repo, "widget.go"), []byte("package widget\n"), 0o600); err != nil {
			return nil, err
		}
		if err := exec.Command("git", "-C", repo, "add", "widget.go").Run(); err != nil {
			return nil, err
		}
		ann := logbook.Who{Identity: "ann", Role: "coder", Method: "human"}
		v, err := h.Start(ctx, "Fix #42", helm.OpenWaters, ann, nil)
		if err != nil {
			return nil, err
		}
		commit, err := actions.NewCommit(&runner.Runner{Home: h.Dir(), Dir: repo}, actions.Commit{Message: "Add the widget"})
		if err != nil {
			return nil, err
		}
		_, err = v.Perform(ctx, commit, ann, nil)
		return v, err
	})
	a := r.Actions()[0]
	fmt.Println(a.Kind, a.Status, a.Result.SHA)
	// Output:
	// commit performed 872c9be840230e6382514b05bb45d11a6a087809
}

// Replay checks a recording (with its views beside it) against the code
// as it is now.
func ExampleReplay() {
	t := newT() // in a test: the test's t
	defer t.done()
	r := helmtest.Replay(t, "testdata/fix-42.jsonl")
	for _, e := range r.Views.Logbook {
		fmt.Println(e.N, e.Kind, e.Note.Text)
	}
	// Output:
	// 1 note The crash needs a nil config.
}

// Replay also reads what helm voyage export --format jsonl writes, and a
// voyage directory copied out of a home: with no recorded views beside
// it, it folds the events with today's code and returns the views.
func ExampleReplay_exportArchive() {
	t := newT() // in a test: the test's t
	defer t.done()
	ctx := context.Background()
	h := helmtest.Home(t)
	ann := logbook.Who{Identity: "ann", Role: "coder", Method: "human"}
	v, _ := h.Start(ctx, "Fix #42", helm.OpenWaters, ann, nil)
	_, _ = v.Note(ctx, "The crash needs a nil config.", ann)
	_ = v.Close()

	archive := filepath.Join(t.TempDir(), "fix-42.jsonl") // helm voyage export --format jsonl > fix-42.jsonl
	f, _ := os.Create(archive)
	_ = h.Export(ctx, v.ID(), f)
	_ = f.Close()

	r := helmtest.Replay(t, archive)
	fmt.Println(r.Recording.Form, r.Views.Info.Intent, len(r.Views.Logbook))
	// Output:
	// export archive Fix #42 1
}
