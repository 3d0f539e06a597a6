// Package helmtest is helm for a program's tests: a home with a clock and
// ids that make every run the same (Home), given-when-then checks of what
// a change to a voyage records (Given), and recorded voyages that later
// versions of the code must still read as they were read when recorded
// (Record, Replay), with a report of the first event where they no
// longer do. It builds on package replay, which folds and records
// voyages; this package turns what replay finds into test failures.
//
// A recorded voyage is replayed from its events: actions are not run
// again, their recorded parameters and results are read (Actions).
// HELMTEST_UPDATE=1 rewrites recordings instead of checking them.
//
// Record runs the code under test again on every test run and requires
// it to record the same events, actions included. helm's clock and ids
// are made deterministic by the home (Options); git's by Record: while
// the run runs, every git it starts (helm's actions' and the code's own)
// sees GitEnv, a fixed author, committer and date, no hooks and no
// signing, so a commit made from the same tree on the same parents gets
// the same SHA on every run and machine. A run that builds its repository inside itself (or from fixed
// files) thus records the same commits, pushes and reverts each time. A
// parallel test (t.Parallel) cannot change the environment: Record says
// so in the test's log, and the run passes GitEnv itself
// (runner.Runner.Env, exec.Cmd.Env). Results that come from outside the
// machine (a pull request's number from GitHub) are deterministic only
// when the run talks to a deterministic stand-in.
package helmtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/replay"
)

// Epoch is when a test home's clock starts; it moves a second at every
// reading.
var Epoch = time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)

// IDPrefix begins every id a test home makes:
// 7e570000-0000-4000-8000-000000000001, ...
const IDPrefix = "7e570000"

// Options returns the options of a test home: the deterministic clock and
// ids, without fsync.
func Options() *helm.Options {
	opts := replay.Deterministic(Epoch, time.Second, IDPrefix)
	opts.NoSync = true
	return opts
}

// Home returns a home in a temporary directory removed with the test,
// with Options.
func Home(t testing.TB) *helm.Home {
	t.Helper()
	h, err := helm.Open(t.TempDir(), Options())
	if err != nil {
		t.Fatalf("helmtest: open a home: %v", err)
	}
	return h
}

// Action is an action as a recording holds it: what was asked, and what
// it left.
type Action struct {
	N      int
	Kind   string
	Params json.RawMessage
	Why    string
	Status logbook.ActionStatus
	Result *logbook.ActionResult
	Error  string
	// Inverse is how the action can be taken back, as recorded with its
	// outcome; Undoes the entry it takes back, UndoneBy the entry that
	// took it back (0: none).
	Inverse  *logbook.Inverse
	Undoes   int
	UndoneBy int
}

// Recorded is a recorded voyage as replayed with today's code.
type Recorded struct {
	Recording *replay.Recording
	Views     *replay.Views
}

// Actions returns the voyage's actions, in the story's order, as
// recorded: a replay never runs them.
func (r *Recorded) Actions() []Action {
	var out []Action
	for _, e := range r.Views.Logbook {
		if a := e.Action; a != nil {
			out = append(out, Action{N: e.N, Kind: a.Kind, Params: a.Params, Why: a.Why, Status: a.Status, Result: a.Result, Error: a.Error,
				Inverse: a.Inverse, Undoes: a.Undoes, UndoneBy: a.UndoneBy})
		}
	}
	return out
}

// Replay replays what is at path with today's code: a recording (a
// .jsonl of events with its views beside it, as Record keeps them), the
// archive Home.Export writes (jsonl), or a voyage's
// directory wherever it lies (voyages/ID of a home, or a copy of one).
// The form is found by reading the path (replay.Open); nothing is
// written. When recorded views lie beside path (replay.ViewsPath), t
// fails with a divergence report — the first event after which the views
// differ, and the fields that differ — if they do not agree; without
// them, t fails only if today's code cannot fold the events, and the
// views it folds are returned (Recorded.Recording.Views is nil). A torn
// final write in a voyage directory is left in place and logged; the
// events before it are replayed.
func Replay(t testing.TB, path string) *Recorded {
	t.Helper()
	ctx := context.Background()
	var r *replay.Recording
	if _, err := os.Stat(replay.ViewsPath(path)); err == nil {
		if r, err = replay.ReadRecording(ctx, path); err != nil {
			t.Fatalf("helmtest: %v", err)
		}
		if d := r.Check(); d != nil {
			t.Fatalf("helmtest: replaying %s: %s", path, d)
		}
	} else {
		src, err := replay.Open(ctx, path)
		if err != nil {
			t.Fatalf("helmtest: %v", err)
		}
		r = &replay.Recording{Path: path, Events: src.Events, Form: src.Form, Torn: src.Torn}
	}
	if c := r.Torn; c != nil {
		t.Logf("helmtest: %s ends in a torn write (%d bytes at offset %d of %s), left in place: replaying the events before it", path, c.Bytes, c.Offset, c.File)
	}
	views, err := replay.Fold(r.Events)
	if err != nil {
		t.Fatalf("helmtest: replaying %s (%s): %v", path, r.Form, err)
	}
	return &Recorded{Recording: r, Views: views}
}

// GitEnv returns the environment entries (KEY=VALUE) that make git's
// commits deterministic: the author and committer (helmtest,
// helmtest@helm.invalid) and their date (Epoch), and no hooks and no
// signing (core.hooksPath, commit.gpgSign and tag.gpgSign, which a hook
// or a signature's own time would make differ on every run), whatever the
// machine's or the repository's git configuration and the clock. Record
// sets them for its run; a run in a parallel test gives them to the git
// it starts (runner.Runner.Env).
func GitEnv() []string {
	date := fmt.Sprintf("@%d +0000", Epoch.Unix())
	return []string{
		"GIT_AUTHOR_NAME=helmtest", "GIT_AUTHOR_EMAIL=helmtest@helm.invalid", "GIT_AUTHOR_DATE=" + date,
		"GIT_COMMITTER_NAME=helmtest", "GIT_COMMITTER_EMAIL=helmtest@helm.invalid", "GIT_COMMITTER_DATE=" + date,
		// As git -c, over every configuration file.
		"GIT_CONFIG_COUNT=3",
		"GIT_CONFIG_KEY_0=core.hooksPath", "GIT_CONFIG_VALUE_0=" + os.DevNull,
		"GIT_CONFIG_KEY_1=commit.gpgSign", "GIT_CONFIG_VALUE_1=false",
		"GIT_CONFIG_KEY_2=tag.gpgSign", "GIT_CONFIG_VALUE_2=false",
	}
}

// pinGit sets GitEnv in the test's environment for the rest of the test,
// and reports whether it could: a parallel test cannot (t.Setenv panics
// before it changes anything there).
func pinGit(t testing.TB) (ok bool) {
	t.Helper()
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	for _, kv := range GitEnv() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return true
}

// updating reports whether recordings are being rewritten.
func updating() bool { return os.Getenv("HELMTEST_UPDATE") == "1" }

// Record runs run in a test home and keeps the voyage it returns as the
// recording testdata/NAME.jsonl (and NAME.views.json): the first time, or
// with HELMTEST_UPDATE=1, it writes them; afterwards it replays the
// recording with today's code (Replay), and requires run to record the
// same events, reporting the first that differs. A run must be
// deterministic: its clock and ids are the home's (Options), and the
// commits of the git it starts are made with GitEnv, which Record sets
// in the test's environment (t.Setenv) for the rest of the test. In a
// parallel test, which cannot change it, Record logs that the run must
// pass GitEnv to git itself.
func Record(t testing.TB, name string, run func(h *helm.Home) (*helm.Voyage, error)) *Recorded {
	t.Helper()
	ctx := context.Background()
	if !pinGit(t) {
		t.Logf("helmtest: record %s: a parallel test cannot set git's dates and author in the environment: give helmtest.GitEnv() to the git the run starts (runner.Runner.Env), or its commits differ on every run", name)
	}
	v, err := run(Home(t))
	if err != nil {
		t.Fatalf("helmtest: record %s: %v", name, err)
	}
	got, err := eventsOf(ctx, v)
	if err != nil {
		t.Fatalf("helmtest: record %s: %v", name, err)
	}
	path := filepath.Join("testdata", name+".jsonl")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) || updating() {
		rec, err := replay.NewRecording(got)
		if err != nil {
			t.Fatalf("helmtest: record %s: %v", name, err)
		}
		rec.Path = path
		if err := rec.WriteFiles(); err != nil {
			t.Fatalf("helmtest: %v", err)
		}
		t.Logf("helmtest: recorded %s (%d events)", path, len(got))
	}
	if _, err := os.Stat(replay.ViewsPath(path)); err != nil {
		t.Fatalf("helmtest: %s has no recorded views (%s): %v (rerun with HELMTEST_UPDATE=1 to record them, and review the diff)", path, replay.ViewsPath(path), err)
	}
	r := Replay(t, path)
	if i, diff := firstDifference(r.Recording.Events, got); diff != "" {
		t.Fatalf("helmtest: %s no longer records %s: event %d differs:\n%s\n(an intended change? rerun with HELMTEST_UPDATE=1 and review the diff)", name, path, i+1, diff)
	}
	return r
}

// eventsOf reads every event of v.
func eventsOf(ctx context.Context, v *helm.Voyage) ([]helm.Event, error) {
	var out []helm.Event
	for e, err := range v.Events(ctx, 1) {
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// firstDifference returns the first event in which want and got differ,
// as their JSON lines, or "" when they agree.
func firstDifference(want, got []projection.Event) (int, string) {
	for i := range max(len(want), len(got)) {
		var w, g string
		if i < len(want) {
			w = line(&want[i])
		}
		if i < len(got) {
			g = line(&got[i])
		}
		if w != g {
			return i, fmt.Sprintf("  recorded: %s\n  now:      %s", orNone(w), orNone(g))
		}
	}
	return 0, ""
}

func line(e *projection.Event) string {
	data, err := json.Marshal(e)
	if err != nil {
		return err.Error()
	}
	return string(data)
}

func orNone(s string) string {
	if s == "" {
		return "(no event)"
	}
	return s
}
