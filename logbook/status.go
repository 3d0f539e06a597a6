package logbook

import "slices"

// Status is where a voyage stands: active, or the outcome it was
// completed with.
type Status string

// Voyage statuses. Blocked and partial voyages may be resumed;
// completed, failed and cancelled ones are final.
const (
	StatusActive    Status = "active"
	StatusBlocked   Status = "blocked"
	StatusPartial   Status = "partial"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusCancelled Status = "cancelled"
)

// Resumable reports whether a voyage in this status may be resumed.
func (s Status) Resumable() bool { return s == StatusBlocked || s == StatusPartial }

// Final reports whether a voyage in this status takes no more changes.
func (s Status) Final() bool { return s != StatusActive && !s.Resumable() }

// Outcome is how a voyage ended; each outcome is also the status it
// leaves the voyage in.
type Outcome string

// Outcomes a voyage can be completed with.
const (
	OutcomeCompleted Outcome = "completed"
	OutcomeBlocked   Outcome = "blocked"
	OutcomeFailed    Outcome = "failed"
	OutcomePartial   Outcome = "partial"
	OutcomeCancelled Outcome = "cancelled"
)

var outcomes = []Outcome{OutcomeCompleted, OutcomeBlocked, OutcomeFailed, OutcomePartial, OutcomeCancelled}

// Outcomes returns the outcomes a voyage can be completed with, in the
// order they are documented.
func Outcomes() []Outcome { return slices.Clone(outcomes) }

// ArtifactStatus is the condition of a stored artifact: a stowed one can
// be read; a reduced or jettisoned one no longer can.
type ArtifactStatus string

// Artifact statuses.
const (
	ArtifactStowed     ArtifactStatus = "stowed"
	ArtifactReduced    ArtifactStatus = "reduced"
	ArtifactJettisoned ArtifactStatus = "jettisoned"
)
