// Package projection folds voyage events into the views users read: the
// voyage, the slate, the logbook and the artifact index. It knows events,
// not files: the facade feeds it records from the segment log, and tests
// feed it event lists directly.
package projection

import (
	"fmt"
	"slices"
	"time"

	"github.com/helmlog/helm/logbook"
)

// Status is where a voyage stands (logbook.Status: declared once).
type Status = logbook.Status

// Voyage statuses.
const (
	StatusActive    = logbook.StatusActive
	StatusBlocked   = logbook.StatusBlocked
	StatusPartial   = logbook.StatusPartial
	StatusCompleted = logbook.StatusCompleted
	StatusFailed    = logbook.StatusFailed
	StatusCancelled = logbook.StatusCancelled
)

// NormalStatus returns the status a voyage in status st with outcome
// out has today. Views kept before the status took the outcome's word
// say "completed" with any outcome.
func NormalStatus(st Status, out Outcome) Status {
	if st == StatusCompleted && out != "" {
		return Status(out)
	}
	return st
}

// Transition is one change of a voyage's status: the start, a
// completion, a resumption.
type Transition struct {
	Status Status      `json:"status"`
	At     time.Time   `json:"at"`
	Who    logbook.Who `json:"who"`
	// Reason is the summary of a completion, or why it was resumed.
	Reason string `json:"reason,omitempty"`
}

// VoyageView is the voyage view: metadata and status.
type VoyageView struct {
	ID     string `json:"id"`
	Intent string `json:"intent"`
	Kind   string `json:"kind"`
	// Identity is the identity the voyage started with; Current the one
	// it has now (Identity until a handoff, then the last handoff's To).
	Identity string    `json:"identity"`
	Current  string    `json:"current,omitempty"`
	Created  time.Time `json:"created"`
	// Parent, Repo, Dir, Base, Branch and Worktree are as recorded at
	// the start (VoyageInfo).
	Parent   string `json:"parent,omitempty"`
	Repo     string `json:"repo,omitempty"`
	Dir      string `json:"dir,omitempty"`
	Base     string `json:"base,omitempty"`
	Branch   string `json:"branch,omitempty"`
	Worktree string `json:"worktree,omitempty"`
	// Session is the agent host's session the voyage records
	// (VoyageInfo.Session).
	Session string `json:"session,omitempty"`
	Status  Status `json:"status"`
	// Outcome, Summary and CompletedAt are the last completion's, while
	// the voyage is not active.
	Outcome     Outcome   `json:"outcome,omitempty"`
	Summary     string    `json:"summary,omitempty"`
	CompletedAt time.Time `json:"completed_at,omitzero"`
	// WorktreeRemoved is when Worktree was removed (zero while it is
	// there, or when there never was one).
	WorktreeRemoved time.Time `json:"worktree_removed,omitzero"`
	// Lifecycle is every change of status, the start first.
	Lifecycle []Transition `json:"lifecycle,omitempty"`
	// Crew lists, sorted, every identity that recorded an event.
	Crew []string `json:"crew,omitempty"`
	// Handoffs are the story's handoff entries (EntryHandoff), oldest
	// first: each change of the voyage's identity.
	Handoffs []logbook.Entry `json:"handoffs,omitempty"`
	// Policy is the guard rules recorded last (a policy-adopted event):
	// what the voyage's writers ran under; zero when none was recorded.
	Policy logbook.PolicyRecord `json:"policy,omitzero"`
	// Fork and Salvage are the voyage a fork or a salvage carried its
	// first records from, as its start recorded them (VoyageInfo).
	Fork    *Origin `json:"fork,omitempty"`
	Salvage *Origin `json:"salvage,omitempty"`
	// Seq is the sequence number of the last event folded in, and
	// LastAt its time.
	Seq    uint64    `json:"seq"`
	LastAt time.Time `json:"last_at,omitzero"`
}

// CurrentIdentity returns the identity the voyage has now: Current, or
// Identity in a view folded before handoffs existed.
func (v *VoyageView) CurrentIdentity() string {
	if v.Current != "" {
		return v.Current
	}
	return v.Identity
}

// ArtifactStatus is the condition of a stored artifact
// (logbook.ArtifactStatus: declared once).
type ArtifactStatus = logbook.ArtifactStatus

// Artifact statuses: stowed holds the full payload; reduced and
// jettisoned artifacts may no longer be read.
const (
	Stowed     = logbook.ArtifactStowed
	Reduced    = logbook.ArtifactReduced
	Jettisoned = logbook.ArtifactJettisoned
)

// Artifact is one entry of the artifact index.
type Artifact struct {
	ArtifactRef
	Status ArtifactStatus `json:"status"`
	// ReducedTo is the hash of the summary artifact of a reduced one.
	ReducedTo string `json:"reduced_to,omitempty"`
}

// State holds every view of one voyage. The zero value is an empty voyage
// ready for Apply. State is not safe for concurrent use.
type State struct {
	Voyage VoyageView
	// Slate maps a mark's canonical key to its newest observation.
	Slate map[string]logbook.ObservationRecord
	// Entries is the logbook story in order; entry i is numbered i+1.
	// While the entries of the snapshot a State was opened from are
	// pending (Pending), Entries holds those recorded since, numbered
	// after them.
	Entries []logbook.Entry
	// FailedActions holds actions that failed before entry numbers were
	// stored in events: helm then took them out of the story and
	// renumbered the entries after them, and their numbers stay as they
	// were shown. A failed action recorded since keeps its entry.
	FailedActions []logbook.Entry
	Artifacts     map[string]*Artifact

	// The entries' payloads stay put while entries move, so these index
	// them without renumbering when an entry is removed.
	bearings map[uint64]*logbook.Bearing      // BearingTaken seq -> its entry's bearing
	actions  map[string]*logbook.ActionRecord // action id -> its entry's action
	steps    map[stepKey]*logbook.Step        // open tool call -> its entry's step

	counts counts // the logbook's, kept as events fold
	// legacy holds the ids of actions intended without a stored entry
	// number whose outcome is not folded yet: their failure is folded as
	// helm folded it then. A snapshot does not keep it.
	legacy map[string]bool
	// storedN is the highest entry number read from an event.
	storedN int
	// lazy, when set, is where the sections not read yet are (OpenSnapshot).
	lazy *lazy
}

// Apply folds one event, stored at sequence number seq, into the views.
// Events are facts: rules are checked before they are written, so Apply
// only refuses what it cannot fold at all. It first loads the sections
// of the snapshot the event needs (see Load), and fails as Load does if
// one does not check out.
func (s *State) Apply(seq uint64, e *Event) error {
	if need := s.Needs(e); need != 0 {
		if err := s.Load(need); err != nil {
			return fmt.Errorf("apply %s event %d: %w", e.Type, seq, err)
		}
	}
	if s.Slate == nil {
		s.Slate = map[string]logbook.ObservationRecord{}
		s.Artifacts = map[string]*Artifact{}
		s.bearings = map[uint64]*logbook.Bearing{}
		s.actions = map[string]*logbook.ActionRecord{}
		s.legacy = map[string]bool{}
	}
	if s.steps == nil {
		s.steps = map[stepKey]*logbook.Step{}
	}
	if seq <= s.Voyage.Seq {
		return fmt.Errorf("event %d applied after event %d: out of order", seq, s.Voyage.Seq)
	}
	if err := s.apply(seq, e); err != nil {
		return fmt.Errorf("apply %s event %d: %w", e.Type, seq, err)
	}
	s.Voyage.Seq, s.Voyage.LastAt = seq, e.At
	if id := e.Who.Identity; id != "" {
		if i, found := slices.BinarySearch(s.Voyage.Crew, id); !found {
			s.Voyage.Crew = slices.Insert(s.Voyage.Crew, i, id)
		}
	}
	return nil
}

// entry appends the story entry that event e at seq records, numbered
// as e says or, for an event written before numbers were stored, next.
func (s *State) entry(seq uint64, e *Event, kind logbook.EntryKind) (*logbook.Entry, error) {
	next := s.Counts().Entries + 1
	if e.N != 0 {
		if e.N != next {
			return nil, fmt.Errorf("the event records entry %d, but it is entry %d of the story", e.N, next)
		}
		s.storedN = e.N
	}
	s.Entries = append(s.Entries, logbook.Entry{N: next, Seq: seq, Kind: kind, At: e.At, Who: e.Who})
	return &s.Entries[len(s.Entries)-1], nil
}

func (s *State) apply(seq uint64, e *Event) error {
	switch e.Type {
	case VoyageStarted:
		if e.Voyage == nil {
			return errMissing("voyage")
		}
		v, in := &s.Voyage, e.Voyage
		v.ID, v.Intent, v.Kind = in.ID, in.Intent, in.Kind
		v.Parent, v.Repo, v.Dir, v.Base, v.Branch, v.Worktree = in.Parent, in.Repo, in.Dir, in.Base, in.Branch, in.Worktree
		v.Session = in.Session
		v.Fork, v.Salvage = in.Fork, in.Salvage
		v.Identity, v.Current, v.Created, v.Status = e.Who.Identity, e.Who.Identity, e.At, StatusActive
		v.Lifecycle = append(v.Lifecycle, Transition{Status: StatusActive, At: e.At, Who: e.Who})
	case VoyageCompleted:
		if e.Completion == nil {
			return errMissing("completion")
		}
		v, c := &s.Voyage, e.Completion
		v.Status, v.CompletedAt = NormalStatus(StatusCompleted, c.Outcome), e.At
		v.Outcome, v.Summary = c.Outcome, c.Summary
		v.Lifecycle = append(v.Lifecycle, Transition{Status: v.Status, At: e.At, Who: e.Who, Reason: c.Summary})
	case WorktreeRemoved:
		if e.Removal == nil {
			return errMissing("removal")
		}
		s.Voyage.WorktreeRemoved = e.At
	case VoyageResumed:
		if e.Resumption == nil {
			return errMissing("resumption")
		}
		v := &s.Voyage
		v.Status, v.CompletedAt, v.Outcome, v.Summary = StatusActive, time.Time{}, "", ""
		v.Lifecycle = append(v.Lifecycle, Transition{Status: StatusActive, At: e.At, Who: e.Who, Reason: e.Resumption.Reason})
	case ArtifactStowed, ArtifactReduced:
		if e.Artifact == nil {
			return errMissing("artifact")
		}
		s.Artifacts[e.Artifact.Hash] = &Artifact{ArtifactRef: *e.Artifact, Status: Stowed}
		if e.Type == ArtifactReduced {
			if src := s.Artifacts[e.Artifact.DerivedFrom]; src != nil {
				src.Status, src.ReducedTo = Reduced, e.Artifact.Hash
			}
		}
	case ArtifactJettisoned:
		if e.Artifact == nil {
			return errMissing("artifact")
		}
		if a := s.Artifacts[e.Artifact.Hash]; a != nil {
			a.Status = Jettisoned
			a.Reason = e.Artifact.Reason
		}
	case Observed:
		if e.Obs == nil {
			return errMissing("observation")
		}
		s.Slate[e.Obs.Key] = *e.Obs
	case MarkErased:
		delete(s.Slate, e.Key)
	case SlateWiped:
		clear(s.Slate)
	case BearingTaken:
		if e.Bearing == nil {
			return errMissing("bearing")
		}
		b := *e.Bearing
		if b.Observations == nil {
			// The bearing seals the slate as it stands: the observations
			// are in the events before it, not stored twice.
			b.Observations = s.SlateList()
		} else {
			b.Observations = slices.Clone(b.Observations)
		}
		b.Reading.History = slices.Clone(b.Reading.History)
		en, err := s.entry(seq, e, logbook.EntryBearing)
		if err != nil {
			return err
		}
		en.Bearing = &b
		s.bearings[seq] = &b
		s.counts.bearings++
		clear(s.Slate)
	case NoteAdded:
		if e.Note == nil {
			return errMissing("note")
		}
		en, err := s.entry(seq, e, logbook.EntryNote)
		if err != nil {
			return err
		}
		n := *e.Note
		en.Note = &n
		s.counts.notes++
	case PolicyAdopted, PolicyChanged:
		if e.Policy == nil {
			return errMissing("policy")
		}
		p := *e.Policy
		p.Sources = slices.Clone(p.Sources)
		s.Voyage.Policy = p
		if e.Type == PolicyChanged { // a change is an entry of the story
			en, err := s.entry(seq, e, logbook.EntryPolicy)
			if err != nil {
				return err
			}
			en.Policy = &p
		}
	case ChainRechained:
		if e.Rechain == nil {
			return errMissing("rechain")
		}
		en, err := s.entry(seq, e, logbook.EntryRechain)
		if err != nil {
			return err
		}
		r := *e.Rechain
		en.Rechain = &r
	case StepRecorded:
		if e.Step == nil {
			return errMissing("step")
		}
		en, err := s.entry(seq, e, logbook.EntryStep)
		if err != nil {
			return err
		}
		st := e.Step.Clone()
		en.Step = st
		s.counts.steps++
		if isOpen(st) {
			s.steps[keyOf(st)] = st
		}
	case IdentityHandedOff:
		if e.Handoff == nil {
			return errMissing("handoff")
		}
		en, err := s.entry(seq, e, logbook.EntryHandoff)
		if err != nil {
			return err
		}
		h := *e.Handoff
		en.Handoff = &h
		s.Voyage.Current = h.To
		s.Voyage.Handoffs = append(s.Voyage.Handoffs, logbook.Clone([]logbook.Entry{*en})...)
	case StepFinished:
		if e.Step == nil || e.Step.Result == nil {
			return errMissing("step result")
		}
		k := keyOf(e.Step)
		st, ok := s.steps[k]
		if !ok {
			return fmt.Errorf("no open tool step %s of %s session %s", k.id, k.agent, k.session)
		}
		delete(s.steps, k)
		r := *e.Step.Result
		st.Result = &r
		if u := e.Step.Usage; u != nil {
			if st.Usage == nil {
				st.Usage = &logbook.Usage{}
			}
			st.Usage.Add(*u)
		}
	case Judged:
		if e.Judgement == nil {
			return errMissing("judgement")
		}
		en, err := s.entry(seq, e, logbook.EntryJudgement)
		if err != nil {
			return err
		}
		j := *e.Judgement
		j.Evidence = slices.Clone(j.Evidence)
		en.Judgement = &j
		s.counts.judgements++
	case ActionRefused:
		if e.Action == nil {
			return errMissing("action")
		}
		en, err := s.entry(seq, e, logbook.EntryAction)
		if err != nil {
			return err
		}
		a := *e.Action
		a.Status = logbook.ActionRefused
		en.Action = &a
		s.counts.refused++
	case ReadingChallenged:
		c := e.Challenge
		if c == nil {
			return errMissing("challenge")
		}
		b, ok := s.bearings[c.Bearing]
		if !ok {
			return fmt.Errorf("no bearing at event %d", c.Bearing)
		}
		r := &b.Reading
		r.History = append(r.History, logbook.ReadingAttempt{
			Text: r.Text, Source: r.Source, ChallengedWith: c.Feedback, ChallengedAt: e.At, ChallengedBy: e.Who,
		})
		r.Text, r.Source = c.Text, c.Source
	case ActionIntended:
		if e.Action == nil {
			return errMissing("action")
		}
		en, err := s.entry(seq, e, logbook.EntryAction)
		if err != nil {
			return err
		}
		a := *e.Action
		a.Status, a.UndoneBy = logbook.ActionOutcomeUnknown, 0
		if a.Undoes != 0 && s.actionEntry(a.Undoes, en.N) == nil {
			return fmt.Errorf("action %s undoes entry %d, which is not an earlier action", a.ID, a.Undoes)
		}
		en.Action = &a
		s.actions[a.ID] = &a
		if e.N == 0 {
			s.legacy[a.ID] = true
		}
		s.counts.actions++
		s.counts.unknown++
	case ActionPerformed, ActionFailed:
		if e.Action == nil {
			return errMissing("action")
		}
		if e.Type == ActionPerformed {
			delete(s.legacy, e.Action.ID)
		}
		a, ok := s.actions[e.Action.ID]
		if !ok {
			return fmt.Errorf("no intended action %s", e.Action.ID)
		}
		a.DoneAt = e.At
		if a.Status == logbook.ActionOutcomeUnknown {
			s.counts.unknown--
		}
		if e.Type == ActionPerformed {
			a.Status, a.Result, a.Inverse = logbook.ActionPerformed, e.Action.Result, e.Action.Inverse
			if a.Undoes != 0 {
				s.undone(a)
			}
			break
		}
		a.Status, a.Error, a.Result = logbook.ActionFailed, e.Action.Error, e.Action.Result
		legacy := s.legacy[a.ID]
		delete(s.legacy, a.ID)
		if !legacy {
			s.counts.failed++
			break
		}
		// Intended before numbers were stored: out of the story, as helm
		// folded it then, unless an entry numbered since follows it (its
		// number may not change).
		// Actions mostly fail soon after they are intended: look from the end.
		i := len(s.Entries) - 1
		for i >= 0 && s.Entries[i].Action != a {
			i--
		}
		if i < 0 {
			return fmt.Errorf("intended action %s is not in the story", a.ID)
		}
		if s.Entries[i].N <= s.storedN {
			s.counts.failed++
			break
		}
		s.FailedActions = append(s.FailedActions, s.Entries[i])
		s.removeEntry(i)
		s.counts.actions--
		delete(s.actions, a.ID)
	default:
		return fmt.Errorf("unknown event type %q", e.Type)
	}
	return nil
}

// stepKey names a tool call: its agent, session and the host's id.
type stepKey struct{ agent, session, id string }

func keyOf(s *logbook.Step) stepKey { return stepKey{s.Agent, s.Session, s.ID} }

// isOpen reports whether s is a tool call waiting for its result: a
// step-finished event of its agent, session and id attaches it.
func isOpen(s *logbook.Step) bool {
	return s.Kind == logbook.StepTool && s.ID != "" && s.Result == nil
}

// OpenStep returns the sequence number of the event that recorded the
// tool call that agent's session names id, while the call waits for its
// result (none recorded yet); false if there is none. While the entries are pending,
// only calls recorded since the snapshot are found: Load them first.
func (s *State) OpenStep(agent, session, id string) (seq uint64, ok bool) {
	st, ok := s.steps[stepKey{agent, session, id}]
	if !ok {
		return 0, false
	}
	for i := len(s.Entries) - 1; i >= 0; i-- {
		if s.Entries[i].Step == st {
			return s.Entries[i].Seq, true
		}
	}
	return 0, false
}

// removeEntry takes entry i out of the story and renumbers what follows.
func (s *State) removeEntry(i int) {
	s.Entries = slices.Delete(s.Entries, i, i+1)
	for j := i; j < len(s.Entries); j++ {
		s.Entries[j].N = j + 1
	}
}

// BearingSeq returns the event sequence number of the bearing that is
// entry n of the story, or false if entry n is not a bearing. Load the
// entries first: while they are pending, only entries recorded since the
// snapshot are found.
func (s *State) BearingSeq(n int) (uint64, bool) {
	n -= s.Counts().Entries - len(s.Entries) // the entries still pending
	if n < 1 || n > len(s.Entries) || s.Entries[n-1].Bearing == nil {
		return 0, false
	}
	return s.Entries[n-1].Seq, true
}

// EntryBySeq returns the story entry recorded by the event at seq. It
// searches from the end: callers ask for entries they just recorded.
// While the entries are pending, only those recorded since the snapshot
// are found.
func (s *State) EntryBySeq(seq uint64) (logbook.Entry, bool) {
	for i := len(s.Entries) - 1; i >= 0; i-- {
		switch e := s.Entries[i]; {
		case e.Seq == seq:
			return e, true
		case e.Seq < seq:
			return logbook.Entry{}, false
		}
	}
	return logbook.Entry{}, false
}

// HasAction reports whether an action with this id was intended and has
// no recorded outcome yet. While the entries are pending, only actions
// intended since the snapshot are found: Load them first.
func (s *State) HasAction(id string) bool {
	a, ok := s.actions[id]
	return ok && a.Status == logbook.ActionOutcomeUnknown
}

// SlateList returns the slate's observations ordered by key.
func (s *State) SlateList() []logbook.ObservationRecord {
	out := make([]logbook.ObservationRecord, 0, len(s.Slate))
	for _, o := range s.Slate {
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b logbook.ObservationRecord) int {
		switch {
		case a.Key < b.Key:
			return -1
		case a.Key > b.Key:
			return 1
		}
		return 0
	})
	return out
}

func errMissing(field string) error {
	return fmt.Errorf("event has no %s payload", field)
}

// actionEntry returns the action that entry n records, when n is an
// entry earlier than entry before and records one.
func (s *State) actionEntry(n, before int) *logbook.ActionRecord {
	if n <= 0 || n >= before || n > len(s.Entries) {
		return nil
	}
	en := s.Entries[n-1]
	if en.N != n {
		return nil
	}
	return en.Action
}

// undone marks the action that the performed action a undoes as undone
// by a's entry.
func (s *State) undone(a *logbook.ActionRecord) {
	// An undo is performed soon after it is intended: look from the end.
	for i := len(s.Entries) - 1; i >= 0; i-- {
		if s.Entries[i].Action == a {
			if target := s.actionEntry(a.Undoes, s.Entries[i].N); target != nil {
				target.UndoneBy = s.Entries[i].N
			}
			return
		}
	}
}
