// Package voyagetest scripts voyages for the tests of the packages that
// read them (report, story, transcript, search, replay): a mark that
// needs nothing to observe (Note), actions that touch nothing (Action),
// identities (Who, Bob, Carol), and a home whose clock and ids are the
// same on every run (Options, Fixed, Voyage). It is test support, as
// net/http/httptest is: no program imports it.
package voyagetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/sighting"
)

// Note is a mark of kind "test-note": observing it returns its text
// (the text "fail" fails the look). Its label is "Note @ TOPIC".
type Note struct {
	Topic string `json:"topic"`
	Text  string `json:"text"`
}

func (n *Note) Kind() string   { return "test-note" }
func (n *Note) Key() string    { return "test-note:" + strings.TrimSpace(n.Topic) }
func (n *Note) String() string { return "Note @ " + n.Topic }

// Observe returns the note's text as its sighting.
func (n *Note) Observe(ctx context.Context, env *marks.Env) (sighting.Sighting, error) {
	if n.Text == "fail" {
		return nil, errors.New("cannot look")
	}
	return &NoteSighting{Text: n.Text}, nil
}

// NoteSighting is what observing a Note returns.
type NoteSighting struct {
	Text string `json:"text"`
}

func (s *NoteSighting) Kind() string { return "test-note" }

func init() {
	marks.Register("test-note", func() marks.Mark { return &Note{} })
	sighting.Register("test-note", func() sighting.Sighting { return &NoteSighting{} })
}

// The identities the scripts record as: the voyage's coder (Who), a
// reviewer (Bob) and a judge (Carol).
var (
	Who   = logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}
	Bob   = logbook.Who{Identity: "bob", Role: "reviewer", Method: "claude"}
	Carol = logbook.Who{Identity: "carol", Role: "judge", Method: "human"}
)

// Action is an action of any kind (Of) that touches nothing: it leaves
// Result in the world, or fails with Fail. Its parameters are recorded as
// an action of that kind records them: {"number": 45}, {"title": ...}.
type Action struct {
	Of     string               `json:"-"`
	Number int                  `json:"number,omitempty"`
	Title  string               `json:"title,omitempty"`
	Body   string               `json:"body,omitempty"`
	Result logbook.ActionResult `json:"-"`
	Fail   error                `json:"-"`
}

func (a *Action) Kind() string { return a.Of }

// Perform returns the action's Result, or fails with Fail.
func (a *Action) Perform(context.Context) (logbook.ActionResult, error) { return a.Result, a.Fail }

// Perform performs a on v as w, with why, and requires what it asks:
// success, or a failure recorded in the logbook.
func Perform(t testing.TB, v *helm.Voyage, a helm.Action, w logbook.Who, why string) logbook.Entry {
	t.Helper()
	e, err := v.Perform(context.Background(), a, w, &helm.PerformOptions{Why: why})
	var ae *helm.ActionError
	if err != nil && !errors.As(err, &ae) {
		require.NoError(t, err)
	}
	return e
}

// Options returns options that make a scripted voyage the same bytes on
// every run: a clock from start moving step at every reading, and ids
// made of prefix (8 hexadecimal digits) and a counter from 1.
func Options(start time.Time, step time.Duration, prefix string) *helm.Options {
	var mu sync.Mutex
	t, n := start.UTC(), 0
	return &helm.Options{
		NoSync: true,
		Clock: func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			t = t.Add(step)
			return t
		},
		NewID: func() uuid.UUID {
			mu.Lock()
			defer mu.Unlock()
			n++
			return uuid.MustParse(fmt.Sprintf("%s-0000-4000-8000-%012d", prefix, n))
		},
	}
}

// Fixed returns the options of the root package's tests: a clock from
// 2026-02-26T17:00:00Z moving a minute per reading, ids from
// a3b0fc12-0000-4000-8000-000000000001 (the "a3b" of the design's
// example).
func Fixed() *helm.Options {
	return Options(time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC), time.Minute, "a3b0fc12")
}

// Voyage starts the voyage "Resolve #42: fix widget crash" as Who in a
// home opened with opts in a temporary directory, and closes it when the
// test ends.
func Voyage(t testing.TB, opts *helm.Options) (*helm.Home, *helm.Voyage) {
	t.Helper()
	h, err := helm.Open(t.TempDir(), opts)
	require.NoError(t, err)
	v, err := h.Start(context.Background(), "Resolve #42: fix widget crash", helm.ResolveIssue, Who, nil)
	require.NoError(t, err)
	t.Cleanup(func() { v.Close() })
	return h, v
}

// Entries returns the entries of v that opts chooses (nil: the story's),
// failing t on an error reading them.
func Entries(t testing.TB, v *helm.Voyage, opts *helm.EntriesOptions) []logbook.Entry {
	t.Helper()
	var out []logbook.Entry
	for e, err := range v.Entries(context.Background(), opts) {
		require.NoError(t, err)
		out = append(out, e)
	}
	return out
}

// Artifacts returns v's artifact index, failing t on an error reading it.
func Artifacts(t testing.TB, v *helm.Voyage) []helm.ArtifactInfo {
	t.Helper()
	out := []helm.ArtifactInfo{}
	for a, err := range v.Artifacts(context.Background(), nil) {
		require.NoError(t, err)
		out = append(out, a)
	}
	return out
}
