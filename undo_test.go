package helm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/policy"
)

// openThing is an invertible action: it opens thing Number, and its
// inverse closes it (closeThing), unless none is set.
type openThing struct {
	Number int `json:"number"`
	none   string
	invErr error
	ran    *int
}

func (a *openThing) Kind() string { return "create-issue" }
func (a *openThing) Perform(context.Context) (logbook.ActionResult, error) {
	if a.ran != nil {
		*a.ran++
	}
	return logbook.ActionResult{Number: a.Number}, nil
}
func (a *openThing) Inverse(_ context.Context, res logbook.ActionResult) (logbook.Inverse, error) {
	if a.invErr != nil {
		return logbook.Inverse{}, a.invErr
	}
	if a.none != "" {
		return logbook.Inverse{None: a.none}, nil
	}
	params, err := json.Marshal(closeThing{Number: res.Number})
	return logbook.Inverse{Kind: "close-issue", Params: params}, err
}

// partly opens a pull request, then fails to request its reviews.
type partly struct{}

func (partly) Kind() string { return "create-pull-request" }
func (partly) Perform(context.Context) (logbook.ActionResult, error) {
	return logbook.ActionResult{Number: 4}, errors.New("requesting reviews failed")
}

// closeThing takes back an openThing.
type closeThing struct {
	Number int `json:"number"`
	fail   error
	ran    *int
}

func (a *closeThing) Kind() string { return "close-issue" }
func (a *closeThing) Perform(context.Context) (logbook.ActionResult, error) {
	if a.ran != nil {
		*a.ran++
	}
	if a.fail != nil {
		return logbook.ActionResult{}, a.fail
	}
	return logbook.ActionResult{Number: a.Number}, nil
}

// undoOf builds the undo of entry n from its recorded inverse.
func undoOf(t *testing.T, v *helm.Voyage, n int) *closeThing {
	t.Helper()
	inv, err := v.Undoable(context.Background(), n)
	require.NoError(t, err)
	require.Equal(t, "close-issue", inv.Kind)
	var c closeThing
	require.NoError(t, json.Unmarshal(inv.Params, &c))
	return &c
}

func TestUndoIsAnActionLinkedToTheEntryItTakesBack(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, fixedOptions())
	e, err := v.Perform(ctx, &openThing{Number: 7}, who, nil)
	require.NoError(t, err)
	require.Equal(t, 1, e.N)
	assert.Equal(t, &logbook.Inverse{Kind: "close-issue", Params: json.RawMessage(`{"number":7}`)}, e.Action.Inverse)

	u, err := v.Perform(ctx, undoOf(t, v, 1), who, &helm.PerformOptions{Undoes: 1, Why: "opened by mistake"})
	require.NoError(t, err)
	assert.Equal(t, 2, u.N)
	assert.Equal(t, 1, u.Action.Undoes)
	assert.Contains(t, u.Action.Inverse.None, "an undo is not undone")
	entries := entriesOf(t, v)
	assert.Equal(t, 2, entries[0].Action.UndoneBy)

	var story strings.Builder
	require.NoError(t, writeStory(ctx, v, &story))
	assert.Contains(t, story.String(), "  created issue #7 (undone by 2)\n")
	assert.Contains(t, story.String(), "  closed issue #7 (undoes 1)\n  Why: opened by mistake\n")

	// Reopened from the log (and from its snapshot), the link holds.
	require.NoError(t, v.Close())
	again, err := h.Voyage(ctx, v.ID())
	require.NoError(t, err)
	defer again.Close()
	assert.Equal(t, entries, entriesOf(t, again))

	// Neither can be undone now; nothing more is recorded.
	for n, want := range map[int]string{
		1: "entry 1 (create-issue) was undone already, by entry 2",
		2: "entry 2 (close-issue) is the undo of entry 1, and an undo is not undone: perform that action again instead",
	} {
		_, err := again.Undoable(ctx, n)
		assert.ErrorIs(t, err, helm.ErrNotUndoable)
		assert.ErrorContains(t, err, want)
		assert.Equal(t, hint.ReadLogbook, helm.HintOf(err).Kind)
		ran := 0
		_, err = again.Perform(ctx, &closeThing{Number: 7, ran: &ran}, who, &helm.PerformOptions{Undoes: n})
		assert.ErrorIs(t, err, helm.ErrNotUndoable)
		assert.Zero(t, ran, "nothing was run")
	}
	assert.Equal(t, 2, again.Info().Counts.Entries)
}

func TestUndoableSaysWhyAnEntryCannotBeUndone(t *testing.T) {
	ctx := context.Background()
	_, v := newVoyage(t, fixedOptions())
	_, err := v.Observe(ctx, &note{Topic: "a", Text: "a"}, who, nil)
	require.NoError(t, err)
	_, err = v.TakeBearing(ctx, "r", who, nil)
	require.NoError(t, err)
	_, err = v.Perform(ctx, &openThing{Number: 1, none: "a merged pull request cannot be unmerged"}, who, nil) // 2
	require.NoError(t, err)
	_, err = v.Perform(ctx, &fakeAction{}, who, nil) // 3: declares no inverse
	require.NoError(t, err)
	_, err = v.Perform(ctx, &fakeAction{fail: errors.New("rejected")}, who, nil) // 4
	var aerr *helm.ActionError
	require.ErrorAs(t, err, &aerr)
	_, err = v.Perform(ctx, &openThing{Number: 2, invErr: errors.New("no origin remote")}, who, nil) // 5
	require.NoError(t, err)
	_, err = v.Note(ctx, "n", who) // 6
	require.NoError(t, err)
	_, err = v.Perform(ctx, &partly{}, who, nil) // 7
	require.ErrorAs(t, err, &aerr)

	for n, want := range map[int]string{
		0: "the story has no entry 0 (it has 7)",
		8: "the story has no entry 8 (it has 7)",
		7: "entry 7 (create-pull-request) failed part way, and helm records no way to take back what it left (created PR #4): do that by hand",
		1: "entry 1 is a bearing, not an action",
		2: "entry 2 (create-issue) has no inverse: a merged pull request cannot be unmerged",
		3: "entry 3 (commit) records no way to take it back",
		4: "entry 4 (commit) failed, so it left nothing to take back",
		5: "entry 5 (create-issue) has no inverse: helm could not tell how to take it back: no origin remote",
		6: "entry 6 is a note, not an action",
	} {
		_, err := v.Undoable(ctx, n)
		assert.ErrorIs(t, err, helm.ErrNotUndoable, "entry %d", n)
		assert.ErrorContains(t, err, want, "entry %d", n)
	}
}

// A failed undo leaves the entry undoable: the story shows the failure,
// and the next undo links to the same entry.
func TestFailedUndoCanBeTriedAgain(t *testing.T) {
	ctx := context.Background()
	_, v := newVoyage(t, fixedOptions())
	_, err := v.Perform(ctx, &openThing{Number: 7}, who, nil)
	require.NoError(t, err)
	c := undoOf(t, v, 1)
	c.fail = errors.New("HTTP 502")
	_, err = v.Perform(ctx, c, who, &helm.PerformOptions{Undoes: 1})
	var aerr *helm.ActionError
	require.ErrorAs(t, err, &aerr)
	assert.Zero(t, entriesOf(t, v)[0].Action.UndoneBy)
	e, err := v.Perform(ctx, undoOf(t, v, 1), who, &helm.PerformOptions{Undoes: 1})
	require.NoError(t, err)
	assert.Equal(t, 3, e.N)
	assert.Equal(t, 3, entriesOf(t, v)[0].Action.UndoneBy)
}

// An undo goes through the guard rules as the action it performs: a
// denied undo is a refused entry, runs nothing, and leaves the entry
// undoable.
func TestDeniedUndoTouchesNothing(t *testing.T) {
	ctx := context.Background()
	p, err := policy.Parse([]byte(`
[[rule]]
name = "agents do not close"
action = "close-issue"
actor = "agent"
decision = "deny"
`), "policy.toml")
	require.NoError(t, err)
	opts := fixedOptions()
	opts.Policy = p
	_, v := newVoyage(t, opts)
	agent := logbook.Who{Identity: "bot", Role: "coder", Method: "claude"}
	_, err = v.Perform(ctx, &openThing{Number: 7}, agent, nil)
	require.NoError(t, err)
	ran := 0
	c := undoOf(t, v, 1)
	c.ran = &ran
	_, err = v.Perform(ctx, c, agent, &helm.PerformOptions{Undoes: 1})
	require.ErrorIs(t, err, helm.ErrRefused)
	assert.Zero(t, ran)
	entries := entriesOf(t, v)
	require.Len(t, entries, 2)
	assert.Equal(t, logbook.ActionRefused, entries[1].Action.Status)
	assert.Zero(t, entries[0].Action.UndoneBy)
	_, err = v.Undoable(ctx, 1)
	assert.NoError(t, err, "still undoable, by someone the rules allow")
	_, err = v.Perform(ctx, c, who, &helm.PerformOptions{Undoes: 1})
	require.NoError(t, err)
	assert.Equal(t, 1, ran)
}

// Two handles undoing one entry at once: one undo is performed, the
// other refused before it runs.
func TestConcurrentUndosOfOneEntry(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, nil)
	_, err := v.Perform(ctx, &openThing{Number: 7}, who, nil)
	require.NoError(t, err)
	const n = 4
	var ran [n]int
	errs := make([]error, n)
	handles := make([]*helm.Voyage, n)
	undos := make([]*closeThing, n)
	for i := range n { // each sees entry 1 undoable
		w, err := h.Voyage(ctx, v.ID())
		require.NoError(t, err)
		handles[i], undos[i] = w, undoOf(t, w, 1)
		undos[i].ran = &ran[i]
	}
	var wg sync.WaitGroup
	for i, w := range handles {
		wg.Go(func() {
			defer w.Close()
			_, errs[i] = w.Perform(ctx, undos[i], who, &helm.PerformOptions{Undoes: 1})
		})
	}
	wg.Wait()
	done := 0
	for i, err := range errs {
		if err == nil {
			done++
			continue
		}
		assert.ErrorIs(t, err, helm.ErrNotUndoable)
		assert.Zero(t, ran[i], "a refused undo runs nothing")
	}
	assert.Equal(t, 1, done)
	require.NoError(t, v.Close())
	again, err := h.Voyage(ctx, v.ID())
	require.NoError(t, err)
	defer again.Close()
	assert.Equal(t, 2, again.Info().Counts.Entries)
	assert.Equal(t, 2, entriesOf(t, again)[0].Action.UndoneBy)
}

// An action that declares its inverse records it with its outcome; the
// undo is an action built from it, performed with PerformOptions.Undoes.
// Package actions declares the inverses of git's and GitHub's actions and
// builds their undos (actions.FromInverse).
func ExampleVoyage_Undoable() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, _ := helm.Open(dir, fixedOptions())
	who := logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}
	v, _ := h.Start(ctx, "File the follow-up", helm.OpenWaters, who, nil)
	defer v.Close()

	if _, err := v.Perform(ctx, &openThing{Number: 7}, who, nil); err != nil {
		panic(err)
	}
	inv, err := v.Undoable(ctx, 1)
	if err != nil {
		panic(err)
	}
	fmt.Println(inv.Kind, string(inv.Params))
	var undo closeThing
	if err := json.Unmarshal(inv.Params, &undo); err != nil {
		panic(err)
	}
	e, err := v.Perform(ctx, &undo, who, &helm.PerformOptions{Undoes: 1, Why: "filed twice"})
	if err != nil {
		panic(err)
	}
	fmt.Println(e.N, logbook.DescribeAction(e.Action))
	for e, err := range v.Entries(ctx, nil) {
		if err != nil {
			panic(err)
		}
		fmt.Println(logbook.DescribeAction(e.Action))
		break
	}
	_, err = v.Undoable(ctx, 1)
	fmt.Println(errors.Is(err, helm.ErrNotUndoable))
	// Output:
	// close-issue {"number":7}
	// 2 closed issue #7 (undoes 1)
	// created issue #7 (undone by 2)
	// true
}

// A change folds in what others recorded before it checks anything: an
// undo on a handle opened before the action it takes back was recorded
// (by another handle, another process) is performed, not refused on the
// strength of the handle's older view.
func TestUndoOnAHandleOpenedBeforeTheAction(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, nil)
	w, err := h.Voyage(ctx, v.ID())
	require.NoError(t, err)
	_, err = v.Perform(ctx, &openThing{Number: 7}, who, nil)
	require.NoError(t, err)
	_, err = w.Undoable(ctx, 1)
	assert.NoError(t, err)
	require.NoError(t, w.Close())
	w, err = h.Voyage(ctx, v.ID())
	require.NoError(t, err)
	defer w.Close()
	_, err = v.Perform(ctx, &openThing{Number: 8}, who, nil)
	require.NoError(t, err)
	e, err := w.Perform(ctx, &closeThing{Number: 8}, who, &helm.PerformOptions{Undoes: 2})
	require.NoError(t, err)
	assert.Equal(t, 3, e.N)
	assert.Equal(t, 3, entriesOf(t, w)[1].Action.UndoneBy)
}

// crashing is an undo whose process dies while it runs: its intent is
// recorded, its outcome never is.
type crashing struct{ closeThing }

func (*crashing) Perform(context.Context) (logbook.ActionResult, error) { panic("killed") }

// An undo whose outcome is unknown leaves the entry it meant to take back
// neither undone nor undoable, and the refusal says what to do: helm
// cannot tell whether the undo ran, so nothing helm does can be next.
func TestUndoWithUnknownOutcome(t *testing.T) {
	ctx := context.Background()
	h, v := newVoyage(t, nil)
	_, err := v.Perform(ctx, &openThing{Number: 7}, who, nil)
	require.NoError(t, err)
	func() {
		defer func() { require.NotNil(t, recover()) }()
		v.Perform(ctx, &crashing{}, who, &helm.PerformOptions{Undoes: 1})
	}()
	again, err := h.Voyage(ctx, v.ID())
	require.NoError(t, err)
	defer again.Close()
	entries := entriesOf(t, again)
	require.Len(t, entries, 2)
	assert.Equal(t, logbook.ActionOutcomeUnknown, entries[1].Action.Status)
	assert.Zero(t, entries[0].Action.UndoneBy)
	for n, want := range map[int]string{
		1: "entry 2, an undo of entry 1 (create-issue), has no recorded outcome: it is running, or it stopped before its outcome was recorded, and then helm cannot tell whether it took entry 1 back; if it stays so, check the world, and take it back by hand if it was not",
		2: "entry 2 (close-issue) has no recorded outcome, so helm cannot tell what it left; check the world and take it back by hand",
	} {
		_, err := again.Undoable(ctx, n)
		assert.ErrorIs(t, err, helm.ErrNotUndoable)
		assert.ErrorContains(t, err, want)
		_, err = again.Perform(ctx, &closeThing{Number: 7}, who, &helm.PerformOptions{Undoes: n})
		assert.ErrorIs(t, err, helm.ErrNotUndoable, "still refused, however often it is asked")
	}
}
