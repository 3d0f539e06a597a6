package helm

import (
	"slices"
	"time"

	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/redact"
	"github.com/helmlog/helm/segment"
	"github.com/helmlog/helm/sighting"
)

// The types a caller holds. The voyage's own (VoyageInfo, Status, Outcome,
// ArtifactInfo, Cut) are defined here; the logbook's entries are package
// logbook's types under the names below, so that a voyage needs no other
// package than this one, marks (to build marks) and the actions it
// performs. Package logbook may be imported too: its types are these.

// Kind is the kind of a voyage, which frames its first bearing.
type Kind string

// Voyage kinds.
const (
	OpenWaters   Kind = "open-waters"
	ResolveIssue Kind = "resolve-issue"
)

// kinds lists the voyage kinds.
var kinds = []Kind{OpenWaters, ResolveIssue}

// Status is where a voyage stands.
type Status string

// Voyage statuses: active, or the outcome it was completed with.
// Blocked and partial voyages may be resumed; completed, failed and
// cancelled ones are final.
const (
	StatusActive    Status = "active"
	StatusBlocked   Status = "blocked"
	StatusPartial   Status = "partial"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusCancelled Status = "cancelled"
)

// Resumable reports whether a voyage in this status may be resumed.
func (s Status) Resumable() bool { return projection.Status(s).Resumable() }

// Final reports whether a voyage in this status takes no more changes.
func (s Status) Final() bool { return s != StatusActive && !s.Resumable() }

// Outcome is how a voyage ended.
type Outcome string

// Outcomes a voyage can be completed with.
const (
	OutcomeCompleted Outcome = "completed"
	OutcomeBlocked   Outcome = "blocked"
	OutcomeFailed    Outcome = "failed"
	OutcomePartial   Outcome = "partial"
	OutcomeCancelled Outcome = "cancelled"
)

// outcomes lists the outcomes, in the order they are documented.
var outcomes = []Outcome{OutcomeCompleted, OutcomeBlocked, OutcomeFailed, OutcomePartial, OutcomeCancelled}

// Outcomes returns the outcomes a voyage can be completed with, in the
// order they are documented.
func Outcomes() []Outcome { return slices.Clone(outcomes) }

// VoyageInfo describes a voyage: what it is for, who started it, and where
// it stands. Its JSON form is stable.
type VoyageInfo struct {
	ID       string    `json:"id"`
	Intent   string    `json:"intent"`
	Kind     Kind      `json:"kind"`
	Identity string    `json:"identity"`
	Created  time.Time `json:"created"`
	// Parent is the voyage this one is a sub-voyage of.
	Parent string `json:"parent,omitempty"`
	// Repo, Dir, Base and Branch describe the git repository the voyage
	// started in (StartOptions); Worktree a working tree of its own.
	Repo     string `json:"repo,omitempty"`
	Dir      string `json:"dir,omitempty"`
	Base     string `json:"base,omitempty"`
	Branch   string `json:"branch,omitempty"`
	Worktree string `json:"worktree,omitempty"`
	// WorktreeRemoved is when Worktree was removed.
	WorktreeRemoved time.Time `json:"worktree_removed,omitzero"`
	Status          Status    `json:"status"`
	// Outcome, Summary and CompletedAt are those of the last completion,
	// while the voyage is not active.
	Outcome     Outcome   `json:"outcome,omitempty"`
	Summary     string    `json:"summary,omitempty"`
	CompletedAt time.Time `json:"completed_at,omitzero"`
	// Lifecycle is every change of status, the start first.
	Lifecycle []Transition `json:"lifecycle,omitempty"`
	// Crew lists, sorted, every identity that recorded an event.
	Crew []string `json:"crew,omitempty"`
	// Seq is the sequence number of the voyage's last event that this
	// description includes, and LastAt that event's time.
	Seq    uint64    `json:"seq"`
	LastAt time.Time `json:"last_at,omitzero"`
}

// Transition is one change of a voyage's status: its start, a
// completion (Reason is the summary) or a resumption (why).
type Transition struct {
	Status Status    `json:"status"`
	At     time.Time `json:"at"`
	Who    Who       `json:"who"`
	Reason string    `json:"reason,omitempty"`
}

func lifecycleOf(in []projection.Transition) []Transition {
	if in == nil {
		return nil
	}
	out := make([]Transition, len(in))
	for i, t := range in {
		out[i] = Transition{Status: Status(t.Status), At: t.At, Who: t.Who, Reason: t.Reason}
	}
	return out
}

func lifecycleView(in []Transition) []projection.Transition {
	if in == nil {
		return nil
	}
	out := make([]projection.Transition, len(in))
	for i, t := range in {
		out[i] = projection.Transition{Status: projection.Status(t.Status), At: t.At, Who: t.Who, Reason: t.Reason}
	}
	return out
}

func voyageInfo(p projection.VoyageView) VoyageInfo {
	return VoyageInfo{
		ID: p.ID, Intent: p.Intent, Kind: Kind(p.Kind), Identity: p.Identity, Created: p.Created,
		Parent: p.Parent, Repo: p.Repo, Dir: p.Dir, Base: p.Base, Branch: p.Branch, Worktree: p.Worktree,
		WorktreeRemoved: p.WorktreeRemoved,
		Status:          Status(projection.NormalStatus(p.Status, p.Outcome)),
		Outcome:         Outcome(p.Outcome), Summary: p.Summary, CompletedAt: p.CompletedAt,
		Lifecycle: lifecycleOf(p.Lifecycle), Crew: slices.Clone(p.Crew), Seq: p.Seq, LastAt: p.LastAt,
	}
}

// view is the inverse of voyageInfo.
func (i VoyageInfo) view() projection.VoyageView {
	return projection.VoyageView{
		ID: i.ID, Intent: i.Intent, Kind: string(i.Kind), Identity: i.Identity, Created: i.Created,
		Parent: i.Parent, Repo: i.Repo, Dir: i.Dir, Base: i.Base, Branch: i.Branch, Worktree: i.Worktree,
		WorktreeRemoved: i.WorktreeRemoved,
		Status:          projection.Status(i.Status), Outcome: projection.Outcome(i.Outcome), Summary: i.Summary, CompletedAt: i.CompletedAt,
		Lifecycle: lifecycleView(i.Lifecycle), Crew: i.Crew, Seq: i.Seq, LastAt: i.LastAt,
	}
}

// ArtifactStatus is the condition of a stored artifact.
type ArtifactStatus string

// Artifact statuses: a stowed artifact can be read; a reduced or
// jettisoned one no longer can.
const (
	ArtifactStowed     ArtifactStatus = "stowed"
	ArtifactReduced    ArtifactStatus = "reduced"
	ArtifactJettisoned ArtifactStatus = "jettisoned"
)

// ArtifactInfo is one entry of a voyage's artifact index: a sighting's
// bytes, addressed by the BLAKE3 hash of its JSON, and where they are.
type ArtifactInfo struct {
	Hash       string `json:"hash"`
	Size       int64  `json:"size"`        // uncompressed bytes
	StoredSize int64  `json:"stored_size"` // compressed bytes
	// Offset is where the artifact's frame is in the voyage's pack file,
	// when Blob is 0; Blob is the sequence number of the record holding
	// it in the event log, for a small one.
	Offset int64  `json:"offset"`
	Blob   uint64 `json:"blob,omitempty"`
	// DerivedFrom and Method are set on a summary made by Reduce: the
	// artifact it summarises, and how it was made.
	DerivedFrom string         `json:"derived_from,omitempty"`
	Method      string         `json:"method,omitempty"`
	Status      ArtifactStatus `json:"status"`
	// ReducedTo is the hash of the summary of a reduced artifact.
	ReducedTo string `json:"reduced_to,omitempty"`
	// Reason is why a jettisoned artifact was jettisoned.
	Reason string `json:"reason,omitempty"`
}

func artifactInfo(a *projection.Artifact) ArtifactInfo {
	return ArtifactInfo{
		Hash: a.Hash, Size: a.Size, StoredSize: a.StoredSize, Offset: a.Offset, Blob: a.Blob,
		DerivedFrom: a.DerivedFrom, Method: a.Method, Status: ArtifactStatus(a.Status), ReducedTo: a.ReducedTo,
		Reason: a.Reason,
	}
}

// Cut describes bytes at the end of a voyage's event log that a crashed
// writer left half-written (a write that was never acknowledged): cut off
// by the voyage's next change, which saves them beside the segment first.
type Cut struct {
	File    string `json:"file"`               // the segment file
	Offset  int64  `json:"offset"`             // where the cut begins: the end of the last whole write
	Bytes   int64  `json:"bytes"`              // bytes cut
	SavedTo string `json:"saved_to,omitempty"` // the file holding the cut bytes (empty until cut)
}

func cutOf(c *segment.Cut) *Cut {
	if c == nil {
		return nil
	}
	return &Cut{File: c.File, Offset: c.Offset, Bytes: c.Bytes, SavedTo: c.SavedTo}
}

// The logbook's types, as a voyage hands them out.
type (
	// Who is who acted (identity), in what framing (role: reviewer,
	// coder, ...) and by what engine (method: a model name, "human"). It
	// is recorded on every logbook entry.
	Who = logbook.Who
	// Entry is one logbook entry: a bearing or an action, with who took it.
	Entry = logbook.Entry
	// EntryKind says which: EntryBearing or EntryAction.
	EntryKind = logbook.EntryKind
	// Bearing is what was looked at (its observations) and what it meant
	// (its reading).
	Bearing = logbook.Bearing
	// Reading is a bearing's interpretation, with the challenged attempts
	// before it.
	Reading = logbook.Reading
	// ReadingAttempt is one challenged reading.
	ReadingAttempt = logbook.ReadingAttempt
	// Source says who wrote a reading: SourceAgent or SourceUser.
	Source = logbook.Source
	// ObservationRecord is an observation as the slate and the logbook
	// hold it: its mark, label, and the artifact holding its sighting.
	ObservationRecord = logbook.ObservationRecord
	// ActionRecord is an action as the logbook holds it: its kind,
	// parameters, status and result.
	ActionRecord = logbook.ActionRecord
	// ActionStatus is where an action stands.
	ActionStatus = logbook.ActionStatus
	// ActionResult is what an action left in the world (a SHA, a pull
	// request number, ...).
	ActionResult = logbook.ActionResult
)

// Entry kinds, reading sources and action statuses.
const (
	EntryBearing   = logbook.EntryBearing
	EntryAction    = logbook.EntryAction
	EntryNote      = logbook.EntryNote
	EntryJudgement = logbook.EntryJudgement
	// EntryPolicy records the guard rules the voyage ran under from then
	// on (Entry.Policy).
	EntryPolicy = logbook.EntryPolicy

	SourceAgent = logbook.SourceAgent
	SourceUser  = logbook.SourceUser

	// ActionOutcomeUnknown: the action was intended (recorded before the
	// world was touched) but its outcome never was, as after a crash.
	ActionOutcomeUnknown = logbook.ActionOutcomeUnknown
	ActionPerformed      = logbook.ActionPerformed
	ActionFailed         = logbook.ActionFailed
	// ActionRefused is the status of an action a guard rule refused
	// before its intent was recorded: the world was not touched.
	ActionRefused = logbook.ActionRefused
)

// The failures an observation's sighting records, as package sighting
// defines them.
type (
	// Failure is one thing an observation's sighting records as failed
	// (see Observed.Failures): its kind, the path, URL or focus
	// concerned, and a sentence for people.
	Failure = sighting.Failure
	// FailureKind says how the look failed: FailureMissing, ...
	FailureKind = sighting.FailureKind
)

// Failure kinds.
const (
	FailureMissing    = sighting.FailureMissing
	FailureUnreadable = sighting.FailureUnreadable
	FailureNotStarted = sighting.FailureNotStarted
	FailureExitStatus = sighting.FailureExitStatus
	FailureTimeout    = sighting.FailureTimeout
	FailureSignal     = sighting.FailureSignal
	FailureHTTPStatus = sighting.FailureHTTPStatus
	FailureFetch      = sighting.FailureFetch
)

// DescribeAction renders one action as the story tells it: "committed
// (abc1234)", "created PR #45", ... Branch names and error messages in it
// come from the world as they are: escape them before printing them to a
// terminal (package story does).
func DescribeAction(a *ActionRecord) string { return logbook.DescribeAction(a) }

// ValidateIdentity reports whether name can be an identity: a name, never
// a path (it names the identity's gh configuration directory), printable
// UTF-8 without spaces or a leading dot, of at most 64 bytes.
func ValidateIdentity(name string) error { return logbook.ValidateIdentity(name) }

// RedactPattern is an extra redaction rule (Redaction.Patterns): text
// matching Regexp is hidden, marked with Name (only the first group's
// text when the expression has one).
type RedactPattern = redact.Pattern
