// Package replay replays voyages: it folds a voyage's events into fresh
// views with the code as it is now (Fold), and keeps recordings — a
// voyage's events with the views they gave when recorded — that later
// versions of the code must still read the same (Recording, Check), the
// design's promise that a voyage written by any released version opens
// in every later one. It also moves events in and out of their JSON lines
// form (WriteEvents, ReadEvents), and makes options under which a
// scripted voyage records the same bytes on every run (Deterministic).
//
// It reads voyages through the root package's read path (Voyage.Events)
// only; package helmtest builds tests on it.
package replay

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
)

// Views are a voyage's views as Fold folds them from its events: what
// Info and Slate of helm.Voyage return for the voyage open, and what its
// Entries (Logbook; FailedActions, with OutsideStory) and Artifacts
// yield.
type Views struct {
	Info          helm.VoyageInfo
	Slate         []logbook.ObservationRecord
	Logbook       []logbook.Entry
	FailedActions []logbook.Entry
	Artifacts     []helm.ArtifactInfo
}

// Fold folds events into fresh views, as opening a voyage does. Tests use
// it to check the views of a recorded voyage (see ReadEvents). Events
// read from a log carry their sequence numbers (Event.Seq); events without
// one are numbered from 1 in order. An event that does not fold is an
// error naming it.
func Fold(events []helm.Event) (*Views, error) {
	st := &projection.State{}
	for i := range events {
		seq := events[i].Seq
		if seq == 0 {
			seq = uint64(i) + 1
		}
		if err := st.Apply(seq, &events[i]); err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
	}
	return viewsOf(st), nil
}

// Deterministic returns options that make a scripted voyage record the
// same bytes on every run, for tests that replay it or compare it with a
// recording: the clock starts at start and moves step at every reading,
// and ids are UUIDs made of idPrefix (8 hexadecimal digits) and a counter
// from 1 ("a3b0fc12-0000-4000-8000-000000000001", ...). The clock and the
// counter are safe for concurrent use; the order in which goroutines read
// them is theirs to make deterministic.
func Deterministic(start time.Time, step time.Duration, idPrefix string) *helm.Options {
	if len(idPrefix) != 8 {
		panic("replay.Deterministic: idPrefix must be 8 hexadecimal digits, got " + strconv.Quote(idPrefix))
	}
	var mu sync.Mutex
	t, n := start.UTC(), 0
	return &helm.Options{
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
			return uuid.MustParse(fmt.Sprintf("%s-0000-4000-8000-%012d", idPrefix, n))
		},
	}
}

// viewsOf is the views st holds, as helm.Voyage hands them out: its
// own copies, in its types.
func viewsOf(st *projection.State) *Views {
	return &Views{
		Info: infoOf(st.Voyage, st.Counts()), Slate: st.SlateList(), Logbook: logbook.Clone(st.Entries),
		FailedActions: logbook.Clone(st.FailedActions), Artifacts: artifactsOf(st),
	}
}

// infoOf is the description of the voyage p folds, as helm.Voyage.Info
// gives it (TestInfoOfSetsEveryField keeps the two alike).
func infoOf(p projection.VoyageView, c projection.LogbookCounts) helm.VoyageInfo {
	var lifecycle []helm.Transition
	if p.Lifecycle != nil {
		lifecycle = make([]helm.Transition, len(p.Lifecycle))
		for i, t := range p.Lifecycle {
			lifecycle[i] = helm.Transition{Status: logbook.Status(t.Status), At: t.At, Who: t.Who, Reason: t.Reason}
		}
	}
	return helm.VoyageInfo{
		ID: p.ID, Intent: p.Intent, Kind: helm.Kind(p.Kind), Identity: p.Identity, CurrentIdentity: p.CurrentIdentity(), Created: p.Created,
		Parent: p.Parent, Repo: p.Repo, Dir: p.Dir, Base: p.Base, Branch: p.Branch, Worktree: p.Worktree,
		Session: p.Session, Fork: p.Fork, Salvage: p.Salvage, WorktreeRemoved: p.WorktreeRemoved,
		Status:  logbook.Status(projection.NormalStatus(p.Status, p.Outcome)),
		Outcome: logbook.Outcome(p.Outcome), Summary: p.Summary, CompletedAt: p.CompletedAt,
		Lifecycle: lifecycle, Crew: slices.Clone(p.Crew), Handoffs: logbook.Clone(p.Handoffs), Seq: p.Seq, LastAt: p.LastAt,
		Counts: helm.LogbookCounts{Entries: c.Entries, Bearings: c.Bearings, Actions: c.Actions, OutcomeUnknown: c.OutcomeUnknown,
			Failed: c.Failed, Refused: c.Refused, Notes: c.Notes, Judgements: c.Judgements, Steps: c.Steps},
	}
}

// artifactsOf is the artifact index of st by hash, as
// helm.Voyage.Artifacts gives it.
func artifactsOf(st *projection.State) []helm.ArtifactInfo {
	out := make([]helm.ArtifactInfo, 0, len(st.Artifacts))
	for _, a := range st.Artifacts {
		out = append(out, artifactInfo(a))
	}
	slices.SortFunc(out, func(a, b helm.ArtifactInfo) int { return strings.Compare(a.Hash, b.Hash) })
	return out
}

func artifactInfo(a *projection.Artifact) helm.ArtifactInfo {
	return helm.ArtifactInfo{
		Hash: a.Hash, Size: a.Size, StoredSize: a.StoredSize, Offset: a.Offset, Blob: a.Blob,
		DerivedFrom: a.DerivedFrom, Method: a.Method, Status: logbook.ArtifactStatus(a.Status), ReducedTo: a.ReducedTo,
		Reason: a.Reason,
	}
}
