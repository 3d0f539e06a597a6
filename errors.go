package helm

import (
	"errors"
	"fmt"
	"strings"

	"github.com/helmlog/helm/artifact"
)

// Sentinel errors, matched with errors.Is. The errors helm returns wrap
// them with the voyage and what to do.
var (
	// ErrVoyageCompleted: nothing is observed, sealed or performed on a
	// completed voyage.
	ErrVoyageCompleted = errors.New("voyage is completed")
	// ErrNoVoyage: no voyage matches the id or prefix.
	ErrNoVoyage = errors.New("no such voyage")
	// ErrAmbiguous: a prefix matches more than one voyage.
	ErrAmbiguous = errors.New("ambiguous voyage prefix")
	// ErrNoSuchBearing: a challenge names an entry that is not a bearing.
	ErrNoSuchBearing = errors.New("no such bearing")
	// ErrEmptySlate: a bearing needs at least one observation.
	ErrEmptySlate = errors.New("slate is empty")
	// ErrNotOnSlate: erase names a mark that is not on the slate.
	ErrNotOnSlate = errors.New("mark is not on the slate")
	// ErrMissingWho: an identity, role or method could not be resolved.
	ErrMissingWho = errors.New("identity, role or method missing")
	// ErrInvalid: the caller's input is invalid (empty intent, bad outcome, ...).
	ErrInvalid = errors.New("invalid input")
	// ErrArtifactDamaged: an artifact's bytes do not match its BLAKE3
	// address (matched by every *artifact.DamageError).
	ErrArtifactDamaged = artifact.ErrDamaged
	// ErrArtifactGone: the artifact was jettisoned or reduced.
	ErrArtifactGone = errors.New("artifact no longer stowed")
	// ErrNoArtifact: the voyage holds no artifact with that hash.
	ErrNoArtifact = errors.New("no such artifact")
	// ErrDamaged: the voyage's files are damaged in a way its log's own
	// checks do not cover (segment.ErrCorrupt covers those).
	ErrDamaged = errors.New("voyage is damaged")
)

// VoyageError says which voyage an operation failed on, and what to do.
type VoyageError struct {
	Op     string // "observe", "take bearing", ...
	Voyage string // voyage id
	Err    error
	Hint   string
}

func (e *VoyageError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on voyage %s: %v", e.Op, e.Voyage, e.Err)
	if e.Hint != "" {
		b.WriteString(" (" + e.Hint + ")")
	}
	return b.String()
}

func (e *VoyageError) Unwrap() error { return e.Err }

// ListError names the voyages List could not read, and why.
type ListError struct {
	Voyages []string
	Errs    []error
}

func (e *ListError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d voyage(s) could not be read (run `helm --voyage ID voyage verify` on each):", len(e.Voyages))
	for i, id := range e.Voyages {
		fmt.Fprintf(&b, "\n  %s: %v", id, e.Errs[i])
	}
	return b.String()
}

// Unwrap returns the underlying errors, for errors.Is and errors.As.
func (e *ListError) Unwrap() []error { return e.Errs }

// AmbiguousError lists the voyages a prefix matches.
type AmbiguousError struct {
	Prefix     string
	Candidates []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("voyage prefix %q matches %d voyages: %s; give more of the id",
		e.Prefix, len(e.Candidates), strings.Join(e.Candidates, ", "))
}

func (e *AmbiguousError) Is(target error) bool { return target == ErrAmbiguous }
