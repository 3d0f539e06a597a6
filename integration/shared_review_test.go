package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/replay"
	"github.com/helmlog/helm/sighting"
	"github.com/helmlog/helm/store"
	"github.com/helmlog/helm/store/natsstore"
)

// The shared home's review tests: a helm.Home whose voyages are in a
// JetStream store on an embedded server.

// reviewNote is a test mark: observing it returns its text.
type reviewNote struct {
	Topic string `json:"topic"`
	Text  string `json:"text"`
}

func (n *reviewNote) Kind() string   { return "review-note" }
func (n *reviewNote) Key() string    { return "review-note:" + n.Topic }
func (n *reviewNote) String() string { return "Review note @ " + n.Topic }
func (n *reviewNote) Observe(context.Context, *marks.Env) (sighting.Sighting, error) {
	return &reviewSighting{Text: n.Text}, nil
}

type reviewSighting struct {
	Text string `json:"text"`
}

func (s *reviewSighting) Kind() string { return "review-note" }

func init() {
	marks.Register("review-note", func() marks.Mark { return &reviewNote{} })
	sighting.Register("review-note", func() sighting.Sighting { return &reviewSighting{} })
}

var reviewWho = logbook.Who{Identity: "review-agent", Role: "reviewer", Method: "test"}

// hexText returns n random hex digits: zstd halves them, no more.
func hexText(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = "0123456789abcdef"[r.IntN(16)]
	}
	return string(b)
}

// jsHome opens a helm home whose voyages are in home on the server at
// url: each call is another connection.
func jsHome(t *testing.T, url, home string) *helm.Home {
	t.Helper()
	st := openStore(t, url, natsstore.Options{Home: home})
	t.Cleanup(func() { st.Close() })
	h, err := helm.OpenStore(t.TempDir(), st, "home "+home+" on "+url, nil)
	require.NoError(t, err)
	return h
}

// storyOf is v's story as its handle holds it (package story's WriteText
// reads the log's new events first: this does not).
func storyOf(t *testing.T, v *helm.Voyage) string {
	t.Helper()
	info := v.Info()
	h := logbook.Header{Intent: info.Intent, Identity: info.Identity, Created: info.Created, Status: info.Status,
		CompletedAt: info.CompletedAt, Outcome: info.Outcome, Summary: info.Summary}
	for _, c := range info.Lifecycle {
		h.Lifecycle = append(h.Lifecycle, logbook.Change(c))
	}
	var b bytes.Buffer
	require.NoError(t, logbook.WriteStory(&b, h, entriesOf(t, v)))
	return b.String()
}

func verified(t *testing.T, h *helm.Home, id string) {
	t.Helper()
	rep, err := h.Verify(context.Background(), id, nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "verify %s: %v", id, rep.Problems)
}

// A voyage on disk whose log is larger than one unit a JetStream server
// takes (its 1 MiB max_payload) is pushed all the same, and a push that
// failed part way does not keep it from being pushed again.
func TestSharedPushOfAVoyageLargerThanAUnit(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t, "push-large", nil)
	home := newHome()
	shared := jsHome(t, srv.ClientURL(), home)
	disk, err := helm.Open(t.TempDir(), nil)
	require.NoError(t, err)
	v, err := disk.Start(ctx, "a long voyage", helm.ResolveIssue, reviewWho, nil)
	require.NoError(t, err)
	defer v.Close()
	for i := range 70 { // small artifacts (blob records in the log) of up to 28 KiB stored
		o, err := v.Observe(ctx, &reviewNote{Topic: fmt.Sprint(i), Text: hexText(uint64(i), 28<<10)}, reviewWho, nil)
		require.NoError(t, err)
		require.NotZero(t, o.Artifact.Blob)
	}
	_, err = v.TakeBearing(ctx, "many", reviewWho, nil)
	require.NoError(t, err)

	// A push that stopped after the store made the voyage.
	st := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer st.Close()
	l, err := st.Create(ctx, v.ID())
	require.NoError(t, err)
	require.NoError(t, l.Close())

	rep, err := disk.Copy(ctx, v.ID(), shared)
	require.NoError(t, err)
	assert.True(t, rep.Created)
	c, err := shared.Voyage(ctx, v.ID())
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, storyOf(t, v), storyOf(t, c))
	verified(t, shared, v.ID())

	// Brought up to date with more than a unit's worth.
	for i := range 70 {
		_, err := v.Observe(ctx, &reviewNote{Topic: fmt.Sprint("more", i), Text: hexText(uint64(100+i), 28<<10)}, reviewWho, nil)
		require.NoError(t, err)
	}
	rep, err = disk.Copy(ctx, v.ID(), shared)
	require.NoError(t, err)
	assert.Greater(t, rep.Appended, uint64(200))
	require.NoError(t, c.Refresh(ctx))
	assert.Equal(t, storyOf(t, v), storyOf(t, c))
	assert.Equal(t, v.Info(), c.Info())
	verified(t, shared, v.ID())
}

// Two connections, four goroutines on each handle, write one voyage at
// once: every change is recorded once, entries numbered 1..N, and both
// handles read what a fresh one reads.
func TestSharedJetStreamConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t, "writers", nil)
	home := newHome()
	hA, hB := jsHome(t, srv.ClientURL(), home), jsHome(t, srv.ClientURL(), home)
	v0, err := hA.Start(ctx, "crowded", helm.ResolveIssue, reviewWho, nil)
	require.NoError(t, err)
	id := v0.ID()
	require.NoError(t, v0.Close())
	vA, err := hA.Voyage(ctx, id)
	require.NoError(t, err)
	defer vA.Close()
	vB, err := hB.Voyage(ctx, id)
	require.NoError(t, err)
	defer vB.Close()

	const workers, rounds = 4, 6
	var wg sync.WaitGroup
	var notes atomic.Int64
	for si, v := range []*helm.Voyage{vA, vB} {
		for w := range workers {
			wg.Go(func() {
				me := logbook.Who{Identity: fmt.Sprintf("agent-%d-%d", si, w), Role: "coder", Method: "test"}
				for r := range rounds {
					_, err := v.Note(ctx, fmt.Sprintf("note %d-%d-%d", si, w, r), me)
					if assert.NoError(t, err) {
						notes.Add(1)
					}
					_, err = v.Observe(ctx, &reviewNote{Topic: fmt.Sprintf("%d-%d-%d", si, w, r), Text: fmt.Sprintf("%d-%d-%d", si, w, r)}, me, nil)
					assert.NoError(t, err)
					if r%3 == 2 {
						_, err := v.TakeBearing(ctx, fmt.Sprintf("reading %d-%d-%d", si, w, r), me, nil)
						if err != nil {
							assert.ErrorIs(t, err, helm.ErrEmptySlate)
						}
					}
				}
			})
		}
	}
	wg.Wait()
	fresh, err := hB.Voyage(ctx, id)
	require.NoError(t, err)
	defer fresh.Close()
	seen := map[string]int{}
	sealed := len(fresh.Slate())
	for i, e := range entriesOf(t, fresh) {
		assert.Equal(t, i+1, e.N)
		if e.Note != nil {
			seen[e.Note.Text]++
		}
		if e.Bearing != nil {
			sealed += len(e.Bearing.Observations)
		}
	}
	assert.Len(t, seen, int(notes.Load()))
	for text, n := range seen {
		assert.Equal(t, 1, n, "note %q", text)
	}
	assert.Equal(t, 2*workers*rounds, sealed)
	want := storyOf(t, fresh)
	for _, v := range []*helm.Voyage{vA, vB} {
		require.NoError(t, v.Refresh(ctx))
		assert.Equal(t, want, storyOf(t, v))
	}
	verified(t, hA, id)
}

// Large artifacts observed, jettisoned, reduced (to a summary the voyage
// held already) on a JetStream home, copied to disk, brought up to date
// there, and copied back to another JetStream home: every stop reads the
// same.
func TestSharedJetStreamCopiesToDiskAndBack(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t, "copies", nil)
	shared := jsHome(t, srv.ClientURL(), newHome())
	other := jsHome(t, srv.ClientURL(), newHome())
	disk, err := helm.Open(t.TempDir(), nil)
	require.NoError(t, err)

	v, err := shared.Start(ctx, "carried", helm.ResolveIssue, reviewWho, nil)
	require.NoError(t, err)
	defer v.Close()
	x, err := v.Observe(ctx, &reviewNote{Topic: "x", Text: hexText(1, 200<<10)}, reviewWho, nil)
	require.NoError(t, err)
	require.NoError(t, v.Jettison(ctx, x.Record.Artifact, "stale", reviewWho))
	bText := hexText(2, 210<<10)
	b, err := v.Observe(ctx, &reviewNote{Topic: "b", Text: bText}, reviewWho, nil)
	require.NoError(t, err)
	a, err := v.Observe(ctx, &reviewNote{Topic: "a", Text: hexText(3, 220<<10)}, reviewWho, nil)
	require.NoError(t, err)
	got, err := readSighting(ctx, v, b.Record.Artifact)
	require.NoError(t, err)
	assert.Equal(t, bText, got.(*reviewSighting).Text)
	verified(t, shared, v.ID())

	_, err = shared.Copy(ctx, v.ID(), disk)
	require.NoError(t, err)
	derived, err := v.Reduce(ctx, a.Record.Artifact, helm.Reduction{Summary: &reviewSighting{Text: bText}, Method: "human"}, reviewWho)
	require.NoError(t, err)
	require.Equal(t, b.Record.Artifact, derived)
	rep, err := shared.Copy(ctx, v.ID(), disk)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), rep.Appended)
	verified(t, disk, v.ID())
	_, err = disk.Copy(ctx, v.ID(), other)
	require.NoError(t, err)
	verified(t, other, v.ID())
	want := storyOf(t, v)
	for _, h := range []*helm.Home{disk, other} {
		c, err := h.Voyage(ctx, v.ID())
		require.NoError(t, err)
		assert.Equal(t, want, storyOf(t, c))
		s, err := readSighting(ctx, c, derived)
		if assert.NoError(t, err) {
			assert.Equal(t, bText, s.(*reviewSighting).Text)
		}
		_, err = readArtifact(ctx, c, a.Record.Artifact)
		assert.ErrorIs(t, err, helm.ErrArtifactGone)
		c.Close()
	}
}

// What a user meets when a store refuses: a change larger than a unit
// names the voyage and the store.
func TestSharedJetStreamRefusesAChangeLargerThanAUnitSayingWhy(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t, "too-large", nil)
	shared := jsHome(t, srv.ClientURL(), newHome())
	v, err := shared.Start(ctx, "big bearing", helm.ResolveIssue, reviewWho, nil)
	require.NoError(t, err)
	defer v.Close()
	var extra []helm.Observation
	for i := range 70 {
		// Large marks: a JetStream home stows every sighting in its
		// object store (encrypted, to be erasable), none in the unit.
		extra = append(extra, helm.Observation{Mark: &reviewNote{Topic: fmt.Sprint(i), Text: hexText(uint64(i), 28<<10)}, Sighting: &reviewSighting{Text: "small"}})
	}
	_, err = v.TakeBearing(ctx, "too much at once", reviewWho, &helm.BearingOptions{Observations: extra})
	require.Error(t, err)
	assert.ErrorIs(t, err, helm.ErrInvalid)
	assert.Contains(t, err.Error(), v.ID())
	assert.True(t, strings.Contains(err.Error(), srv.ClientURL()) || strings.Contains(err.Error(), "127.0.0.1"), "%v", err)
	assert.False(t, errors.Is(err, helm.ErrDamaged))
	// The handle goes on.
	_, err = v.Note(ctx, "smaller", reviewWho)
	require.NoError(t, err)
}

// A history larger than a unit is seeded into a JetStream home (helm
// replay's way in), in units the store takes.
func TestSharedSeedOfAHistoryLargerThanAUnit(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t, "seed-large", nil)
	shared := jsHome(t, srv.ClientURL(), newHome())
	disk, err := helm.Open(t.TempDir(), nil)
	require.NoError(t, err)
	v, err := disk.Start(ctx, "a long history", helm.ResolveIssue, reviewWho, nil)
	require.NoError(t, err)
	defer v.Close()
	for i := range 300 {
		_, err := v.Note(ctx, fmt.Sprint(i, " ", hexText(uint64(i), 4<<10)), reviewWho)
		require.NoError(t, err)
	}
	var b bytes.Buffer
	require.NoError(t, replay.WriteEvents(ctx, &b, v))
	events, err := replay.ReadEvents(&b)
	require.NoError(t, err)
	s, err := shared.Seed(ctx, events)
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, storyOf(t, v), storyOf(t, s))
	verified(t, shared, v.ID())
}

// cancelStore is a store whose logs cancel a context before the first
// AppendIf: a request ended while its change was being appended.
type cancelStore struct {
	store.Store
	cancel func()
}

func (s *cancelStore) Open(ctx context.Context, id string) (store.Log, error) {
	l, err := s.Store.Open(ctx, id)
	if err != nil {
		return nil, err
	}
	return &cancelLog{Log: l, s: s}, nil
}

type cancelLog struct {
	store.Log
	s *cancelStore
}

func (l *cancelLog) AppendIf(ctx context.Context, expect uint64, records ...[]byte) (uint64, error) {
	if c := l.s.cancel; c != nil {
		l.s.cancel = nil
		c()
	}
	return l.Log.AppendIf(ctx, expect, records...)
}

// A change whose context ends while its unit is appended to a JetStream
// store fails, and leaves the handle usable: helm mcp keeps its voyages
// open across requests, and a request the client cancelled must not
// break the voyage for every later one.
func TestSharedJetStreamCancelledAppendLeavesTheHandleUsable(t *testing.T) {
	bg := context.Background()
	srv := startServer(t, "cancelled", nil)
	home := newHome()
	plain := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer plain.Close()
	cs := &cancelStore{Store: plain}
	h, err := helm.OpenStore(t.TempDir(), cs, "home "+home, nil)
	require.NoError(t, err)
	v0, err := h.Start(bg, "cancelled", helm.ResolveIssue, reviewWho, nil)
	require.NoError(t, err)
	require.NoError(t, v0.Close())
	v, err := h.Voyage(bg, v0.ID())
	require.NoError(t, err)
	defer v.Close()

	ctx, cancel := context.WithCancel(bg)
	cs.cancel = cancel
	_, err = v.Note(ctx, "cancelled", reviewWho)
	require.Error(t, err)
	_, err = v.Note(bg, "next", reviewWho)
	require.NoError(t, err, "the handle goes on")
	fresh, err := jsHome(t, srv.ClientURL(), home).Voyage(bg, v.ID())
	require.NoError(t, err)
	defer fresh.Close()
	assert.Equal(t, storyOf(t, fresh), storyOf(t, v))
}

// A store that cannot be reached is an error that names it, without the
// password its URL holds.
func TestSharedJetStreamOpenErrorHidesThePassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url := fmt.Sprintf("nats://alice:s3cret-pass@127.0.0.1:%d", freePort(t))
	_, err := natsstore.Open(ctx, url, &natsstore.Options{Home: "h"})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "s3cret-pass")
	assert.Contains(t, err.Error(), "127.0.0.1")
}
