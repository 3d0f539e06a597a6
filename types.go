package helm

import (
	"slices"
	"time"

	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
)

// The types a caller holds. The voyage's own (Kind, VoyageInfo,
// Transition, ArtifactInfo, Cut) are defined here; the record's (Who,
// Entry, Status, Outcome, ArtifactStatus, ...) are package logbook's,
// declared once there for the views and this facade alike.

// Kind is the kind of a voyage, which frames its first bearing.
type Kind string

// Voyage kinds.
const (
	OpenWaters   Kind = "open-waters"
	ResolveIssue Kind = "resolve-issue"
)

// kinds lists the voyage kinds.
var kinds = []Kind{OpenWaters, ResolveIssue}

// VoyageInfo describes a voyage: what it is for, who started it, and where
// it stands. Its JSON form is stable.
type VoyageInfo struct {
	ID     string `json:"id"`
	Intent string `json:"intent"`
	Kind   Kind   `json:"kind"`
	// Identity is the identity the voyage started with, and
	// CurrentIdentity the one it has now: Identity until a handoff
	// (Home.Handoff), then the identity the last handoff named. What is
	// recorded without naming an identity is recorded as
	// CurrentIdentity, and acts with its credentials.
	Identity        string    `json:"identity"`
	CurrentIdentity string    `json:"current_identity,omitempty"`
	Created         time.Time `json:"created"`
	// Parent is the voyage this one is a sub-voyage of.
	Parent string `json:"parent,omitempty"`
	// Repo, Dir, Base and Branch describe the git repository the voyage
	// started in (StartOptions); Worktree a working tree of its own.
	Repo     string `json:"repo,omitempty"`
	Dir      string `json:"dir,omitempty"`
	Base     string `json:"base,omitempty"`
	Branch   string `json:"branch,omitempty"`
	Worktree string `json:"worktree,omitempty"`
	// Session is the agent host's session the voyage records
	// (StartOptions.Session): "claude-code:<session id>", and
	// "claude-code:<session id>/<agent id>" for a subagent's sub-voyage.
	Session string `json:"session,omitempty"`
	// Fork names the voyage this one was forked from (StartOptions.ForkOf),
	// the entry it was forked at, and the origin's head there; Salvage
	// the damaged voyage it was salvaged from (Home.Salvage), and what
	// was lost. Both nil for a voyage started afresh.
	Fork    *projection.Origin `json:"fork,omitempty"`
	Salvage *projection.Origin `json:"salvage,omitempty"`
	// WorktreeRemoved is when Worktree was removed.
	WorktreeRemoved time.Time      `json:"worktree_removed,omitzero"`
	Status          logbook.Status `json:"status"`
	// Outcome, Summary and CompletedAt are those of the last completion,
	// while the voyage is not active.
	Outcome     logbook.Outcome `json:"outcome,omitempty"`
	Summary     string          `json:"summary,omitempty"`
	CompletedAt time.Time       `json:"completed_at,omitzero"`
	// Lifecycle is every change of status, the start first.
	Lifecycle []Transition `json:"lifecycle,omitempty"`
	// Crew lists, sorted, every identity that recorded an event.
	Crew []string `json:"crew,omitempty"`
	// Handoffs are the story's handoff entries, oldest first: each
	// change of the voyage's identity, who made it, when and why.
	Handoffs []logbook.Entry `json:"handoffs,omitempty"`
	// Seq is the sequence number of the voyage's last event that this
	// description includes, and LastAt that event's time.
	Seq    uint64    `json:"seq"`
	LastAt time.Time `json:"last_at,omitzero"`
	// Counts counts the story's entries, of each kind, as of Seq: set by
	// Voyage.Info, which keeps them as events fold (it costs the same
	// however long the voyage, and reads nothing). A listing
	// (Home.List) leaves them zero: open the voyage for them.
	Counts LogbookCounts `json:"counts,omitzero"`
}

// Transition is one change of a voyage's status: its start, a
// completion (Reason is the summary) or a resumption (why).
type Transition struct {
	Status logbook.Status `json:"status"`
	At     time.Time      `json:"at"`
	Who    logbook.Who    `json:"who"`
	Reason string         `json:"reason,omitempty"`
}

func lifecycleOf(in []projection.Transition) []Transition {
	if in == nil {
		return nil
	}
	out := make([]Transition, len(in))
	for i, t := range in {
		out[i] = Transition{Status: logbook.Status(t.Status), At: t.At, Who: t.Who, Reason: t.Reason}
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
		ID: p.ID, Intent: p.Intent, Kind: Kind(p.Kind), Identity: p.Identity, CurrentIdentity: p.CurrentIdentity(), Created: p.Created,
		Parent: p.Parent, Repo: p.Repo, Dir: p.Dir, Base: p.Base, Branch: p.Branch, Worktree: p.Worktree,
		Session: p.Session, Fork: p.Fork, Salvage: p.Salvage, WorktreeRemoved: p.WorktreeRemoved,
		Status:  logbook.Status(projection.NormalStatus(p.Status, p.Outcome)),
		Outcome: logbook.Outcome(p.Outcome), Summary: p.Summary, CompletedAt: p.CompletedAt,
		Lifecycle: lifecycleOf(p.Lifecycle), Crew: slices.Clone(p.Crew), Handoffs: logbook.Clone(p.Handoffs), Seq: p.Seq, LastAt: p.LastAt,
	}
}

// view is the inverse of voyageInfo.
func (i VoyageInfo) view() projection.VoyageView {
	return projection.VoyageView{
		ID: i.ID, Intent: i.Intent, Kind: string(i.Kind), Identity: i.Identity, Current: i.CurrentIdentity, Created: i.Created,
		Parent: i.Parent, Repo: i.Repo, Dir: i.Dir, Base: i.Base, Branch: i.Branch, Worktree: i.Worktree,
		Session: i.Session, Fork: i.Fork, Salvage: i.Salvage, WorktreeRemoved: i.WorktreeRemoved,
		Status: projection.Status(i.Status), Outcome: projection.Outcome(i.Outcome), Summary: i.Summary, CompletedAt: i.CompletedAt,
		Lifecycle: lifecycleView(i.Lifecycle), Crew: i.Crew, Handoffs: i.Handoffs, Seq: i.Seq, LastAt: i.LastAt,
	}
}

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
	DerivedFrom string                 `json:"derived_from,omitempty"`
	Method      string                 `json:"method,omitempty"`
	Status      logbook.ArtifactStatus `json:"status"`
	// ReducedTo is the hash of the summary of a reduced artifact.
	ReducedTo string `json:"reduced_to,omitempty"`
	// Reason is why a jettisoned artifact was jettisoned.
	Reason string `json:"reason,omitempty"`
	// CuratedBy and CuratedAt say who jettisoned or reduced the
	// artifact, and when: set by Voyage.ArtifactInfo (which reads the
	// log for them), not by Voyage.Artifacts.
	CuratedBy *logbook.Who `json:"curated_by,omitempty"`
	CuratedAt time.Time    `json:"curated_at,omitzero"`
}

func artifactInfo(a *projection.Artifact) ArtifactInfo {
	return ArtifactInfo{
		Hash: a.Hash, Size: a.Size, StoredSize: a.StoredSize, Offset: a.Offset, Blob: a.Blob,
		DerivedFrom: a.DerivedFrom, Method: a.Method, Status: logbook.ArtifactStatus(a.Status), ReducedTo: a.ReducedTo,
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
