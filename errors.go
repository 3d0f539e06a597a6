package helm

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/internal/durable"
	"github.com/helmlog/helm/segment"
	"github.com/helmlog/helm/store"
)

// Sentinel errors, matched with errors.Is. The errors helm returns wrap
// them with what failed and where (a *VoyageError), and carry what to do
// as data (HintOf).
var (
	// ErrVoyageCompleted: nothing is observed, sealed or performed on a
	// completed voyage.
	ErrVoyageCompleted = errors.New("voyage is completed")
	// ErrVoyagePaused: nothing is observed, sealed or performed on a
	// blocked or partial voyage until it is resumed.
	ErrVoyagePaused = errors.New("voyage is paused")
	// ErrNotResumable: only a blocked or partial voyage can be resumed.
	ErrNotResumable = errors.New("voyage cannot be resumed")
	// ErrJudgeTookPart: a judgement is by an identity that recorded
	// nothing in the voyage.
	ErrJudgeTookPart = errors.New("the judge took part in the voyage")
	// ErrRefused: a guard rule refused the action; nothing was run.
	ErrRefused = errors.New("refused by a guard rule")
	// ErrNeedsConfirmation: a guard rule lets the action run only when
	// the caller confirms it (PerformOptions.Confirmed).
	ErrNeedsConfirmation = errors.New("needs confirmation")
	// ErrNoVoyage: no voyage matches the id or prefix.
	ErrNoVoyage = errors.New("no such voyage")
	// ErrAmbiguous: a prefix matches more than one voyage.
	ErrAmbiguous = errors.New("ambiguous voyage prefix")
	// ErrNotUndoable: an undo names an entry that cannot be undone: not
	// an action performed with a recorded inverse (a merge has none), an
	// undo itself, or one undone already.
	ErrNotUndoable = errors.New("cannot be undone")
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
	// ErrDamaged: the voyage's files are damaged. Every *DamageError
	// matches it, whatever found the damage (the event log's checks, an
	// artifact's address, the voyage's own layout).
	ErrDamaged = errors.New("voyage is damaged")
	// ErrArtifactDamaged: an artifact's bytes do not match its BLAKE3
	// address (matched by every *artifact.DamageError, and so by the
	// *DamageError that reports one).
	ErrArtifactDamaged = artifact.ErrDamaged
	// ErrArtifactGone: the artifact was jettisoned or reduced.
	ErrArtifactGone = errors.New("artifact no longer stowed")
	// ErrNoArtifact: the voyage holds no artifact with that hash.
	ErrNoArtifact = errors.New("no such artifact")
)

// hints are the hints the sentinels imply, where no error in the chain
// carries one of its own.
var hints = []struct {
	err  error
	hint hint.Hint
}{
	{ErrVoyageCompleted, hint.Hint{Kind: hint.StartVoyage, Text: "start another voyage: a completed one takes no more changes"}},
	{ErrVoyagePaused, hint.Hint{Kind: hint.Resume, Text: "resume the voyage first (its status says why it stopped), or start another"}},
	{ErrRefused, hint.Hint{Kind: hint.Policy, Text: "do it another way, or ask whoever keeps the policy file; the rule is named above"}},
	{ErrNeedsConfirmation, hint.Hint{Kind: hint.Confirm, Text: "confirm the action (PerformOptions.Confirmed) once a person has agreed to it"}},
	{ErrEmptySlate, hint.Hint{Kind: hint.Observe, Text: "observe a mark first, or seal observations made elsewhere (BearingOptions.Observations)"}},
	{ErrNoSuchBearing, hint.Hint{Kind: hint.ReadLogbook, Text: "read the logbook for the bearings' numbers"}},
	{ErrNotUndoable, hint.Hint{Kind: hint.ReadLogbook, Text: "read the logbook: an action can be undone once, when it was performed and records how; the error says why this one cannot"}},
	{ErrNotOnSlate, hint.Hint{Kind: hint.ReadSlate, Text: "read the slate for the marks on it"}},
	{ErrNoVoyage, hint.Hint{Kind: hint.ListVoyages, Text: "list the voyages for their ids"}},
	{ErrAmbiguous, hint.Hint{Kind: hint.ListVoyages, Text: "give more of the id; list the voyages for their ids"}},
	{ErrNoArtifact, hint.Hint{Kind: hint.ListArtifacts, Text: "list the voyage's artifacts for their hashes"}},
	{ErrDamaged, hint.Hint{Kind: hint.Verify, Text: "verify the voyage to see everything that is damaged; the bytes were left untouched"}},
	{ErrArtifactDamaged, hint.Hint{Kind: hint.Verify, Text: "verify the voyage to see everything that is damaged; the bytes were left untouched"}},
	{store.ErrDamaged, hint.Hint{Kind: hint.Verify, Text: "verify the voyage to see everything that is damaged; the bytes were left untouched"}},
	{segment.ErrCorrupt, hint.Hint{Kind: hint.Verify, Text: "verify the voyage to see everything that is damaged; the bytes were left untouched"}},
	{ErrMissingWho, hint.Hint{Kind: hint.GiveWho, Text: "give the identity, role and method (Who) the error names"}},
}

// HintOf returns what to do about err: the Hint the outermost error of its
// chain that carries one has (a *VoyageError), else the one
// the sentinel it wraps implies. The zero Hint means none.
func HintOf(err error) hint.Hint {
	if h := carried(err); h.Kind != "" {
		return h
	}
	for _, s := range hints {
		if errors.Is(err, s.err) {
			return s.hint
		}
	}
	if durable.IsNoSpace(err) {
		return hint.Hint{Kind: hint.FreeSpace, Text: "free disk space (or raise the quota), then retry"}
	}
	return hint.Hint{}
}

// carried walks err's chain, depth first, for a hint an error carries.
func carried(err error) hint.Hint {
	for err != nil {
		if e, ok := err.(*VoyageError); ok && e.Hint.Kind != "" {
			return e.Hint
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if h := carried(e); h.Kind != "" {
					return h
				}
			}
			return hint.Hint{}
		default:
			return hint.Hint{}
		}
	}
	return hint.Hint{}
}

// VoyageError says what failed (Op), on which voyage, and why (Err); Hint
// says what to do, as data. Its message reads "OP on voyage ID: CAUSE"
// ("OP: CAUSE" for an operation on no voyage yet) and leaves the hint out.
type VoyageError struct {
	Op     string // "observe FileContents: a.go", "take bearing", ...
	Voyage string // voyage id; empty before there is one
	Err    error
	Hint   hint.Hint // zero: see HintOf, which also reads the sentinel Err wraps
}

func (e *VoyageError) Error() string {
	if e.Voyage == "" {
		return fmt.Sprintf("%s: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("%s on voyage %s: %v", e.Op, e.Voyage, e.Err)
}

func (e *VoyageError) Unwrap() error { return e.Err }

// DamageError is damage found in a voyage's files: which file, where in
// it, and what is wrong. Home.Verify lists every one it finds; a read or a
// change that meets damage returns one (inside a *VoyageError). Err is
// what found it: a *segment.CorruptionError (the event log's checks), an
// *artifact.DamageError (an artifact's address), or the voyage's own
// checks. Its JSON form keeps the fields.
type DamageError struct {
	Voyage string `json:"voyage,omitempty"`
	// File is the damaged file's path (the event log's directory when
	// the damage is the log's as a whole).
	File string `json:"file"`
	// Offset is the byte offset in File where the damage was found.
	Offset int64 `json:"offset"`
	// Seq is the sequence number of the log record concerned, if any.
	Seq uint64 `json:"seq,omitempty"`
	// Artifact is the hash of the damaged artifact, for damaged evidence.
	Artifact string `json:"artifact,omitempty"`
	Reason   string `json:"reason"`
	Err      error  `json:"-"`
}

func (e *DamageError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	s := fmt.Sprintf("voyage %s is damaged: %s", e.Voyage, e.File)
	if e.Offset != 0 {
		s += fmt.Sprintf(" at offset %d", e.Offset)
	}
	if e.Seq != 0 {
		s += fmt.Sprintf(", record %d", e.Seq)
	}
	return s + ": " + e.Reason
}

// Unwrap returns what found the damage.
func (e *DamageError) Unwrap() error { return e.Err }

// Is reports whether target is ErrDamaged.
func (e *DamageError) Is(target error) bool { return target == ErrDamaged }

// damageOf returns err as a *DamageError of voyage id when it reports
// damage (a *DamageError, a *segment.CorruptionError, an
// *artifact.DamageError, a shared store's *store.DamageError), and nil
// otherwise.
func damageOf(id string, err error) *DamageError {
	var de *DamageError
	if errors.As(err, &de) {
		return de
	}
	var ce *segment.CorruptionError
	if errors.As(err, &ce) {
		file := ce.Dir
		if ce.File != "" {
			file = filepath.Join(ce.Dir, ce.File)
		}
		return &DamageError{Voyage: id, File: file, Offset: ce.Offset, Seq: ce.Seq, Reason: ce.Reason, Err: err}
	}
	var ae *artifact.DamageError
	if errors.As(err, &ae) {
		return &DamageError{Voyage: id, File: ae.File, Offset: ae.Offset, Seq: ae.Record, Artifact: ae.Hash, Reason: ae.Reason, Err: err}
	}
	var se *store.DamageError
	if errors.As(err, &se) {
		return &DamageError{Voyage: id, File: se.Where, Seq: se.Seq, Reason: se.Reason, Err: err}
	}
	return nil
}

// ListError names the voyages List could not read, and why.
type ListError struct {
	Voyages []string
	Errs    []error
}

func (e *ListError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d voyage(s) could not be read:", len(e.Voyages))
	for i, id := range e.Voyages {
		err := e.Errs[i]
		var ve *VoyageError
		if errors.As(err, &ve) && ve.Voyage == id {
			err = ve.Err // the line names the voyage already
		}
		fmt.Fprintf(&b, "\n  %s: %v", id, err)
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
	return fmt.Sprintf("voyage prefix %q matches %d voyages: %s",
		e.Prefix, len(e.Candidates), strings.Join(e.Candidates, ", "))
}

func (e *AmbiguousError) Is(target error) bool { return target == ErrAmbiguous }
