package helm

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/helmlog/helm/artifact"
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

// HintKind names what a caller can do about an error, so that a program
// can say it in its own terms (the CLI, as a command line).
type HintKind string

// Hint kinds.
const (
	// HintVerify: verify the voyage (Home.Verify): its files are damaged.
	HintVerify HintKind = "verify"
	// HintStartVoyage: start another voyage; this one is completed.
	HintStartVoyage HintKind = "start-voyage"
	// HintObserve: observe a mark first; the slate is empty.
	HintObserve HintKind = "observe"
	// HintReadLogbook: read the logbook, for its entries' numbers.
	HintReadLogbook HintKind = "read-logbook"
	// HintReadSlate: read the slate, for the marks on it.
	HintReadSlate HintKind = "read-slate"
	// HintListVoyages: list the voyages, for their ids.
	HintListVoyages HintKind = "list-voyages"
	// HintListArtifacts: list the voyage's artifacts, for their hashes.
	HintListArtifacts HintKind = "list-artifacts"
	// HintReadSummary: the artifact was reduced; read its summary (the
	// hint's text names it).
	HintReadSummary HintKind = "read-summary"
	// HintReopen: a write failed and the change may or may not be
	// recorded; open the voyage again and read its logbook before
	// retrying.
	HintReopen HintKind = "reopen"
	// HintCheckWorld: an action touched the world but its outcome could
	// not be recorded; check the world before performing it again.
	HintCheckWorld HintKind = "check-world"
	// HintAllowSecret: an action's parameters hold a secret; take it out,
	// or allow it (PerformOptions.AllowSecret).
	HintAllowSecret HintKind = "allow-secret"
	// HintFreeSpace: the disk (or the owner's quota) is full; free space,
	// then retry.
	HintFreeSpace HintKind = "free-space"
	// HintRestore: the voyage's files are gone or unusable; restore its
	// directory from a backup, or remove it.
	HintRestore HintKind = "restore"
	// HintGiveWho: give the identity, role or method the error names
	// (Who).
	HintGiveWho HintKind = "give-who"
	// HintResume: the voyage is blocked or partial; resume it.
	HintResume HintKind = "resume"
	// HintPolicy: a guard rule refused the action.
	HintPolicy HintKind = "policy"
	// HintConfirm: a guard rule asks for confirmation.
	HintConfirm HintKind = "confirm"
	// HintOtherHome: the home holds the voyage already (Home.Import);
	// import it into another home, or remove it from this one first.
	HintOtherHome HintKind = "other-home"
	// HintRetry: nothing was recorded, as other writers of a shared
	// store kept changing the voyage; try again.
	HintRetry HintKind = "retry"
	// HintKeepWork: a voyage's working tree holds work that removing it
	// would lose (WorktreeError lists it); keep it first, or remove the
	// working tree anyway (RemoveWorktreeOptions.Force).
	HintKeepWork HintKind = "keep-work"
)

// Hint says what a caller can do about an error, as data: a Kind to switch
// on and a sentence in the library's terms. No error's message includes
// it; a program shows it as it sees fit.
type Hint struct {
	Kind HintKind `json:"kind"`
	Text string   `json:"text"`
}

// hints are the hints the sentinels imply, where no error in the chain
// carries one of its own.
var hints = []struct {
	err  error
	hint Hint
}{
	{ErrVoyageCompleted, Hint{HintStartVoyage, "start another voyage: a completed one takes no more changes"}},
	{ErrVoyagePaused, Hint{HintResume, "resume the voyage first (its status says why it stopped), or start another"}},
	{ErrRefused, Hint{HintPolicy, "do it another way, or ask whoever keeps the policy file; the rule is named above"}},
	{ErrNeedsConfirmation, Hint{HintConfirm, "confirm the action (PerformOptions.Confirmed) once a person has agreed to it"}},
	{ErrEmptySlate, Hint{HintObserve, "observe a mark first, or seal observations made elsewhere (BearingOptions.Observations)"}},
	{ErrNoSuchBearing, Hint{HintReadLogbook, "read the logbook for the bearings' numbers"}},
	{ErrNotUndoable, Hint{HintReadLogbook, "read the logbook: an action can be undone once, when it was performed and records how; the error says why this one cannot"}},
	{ErrNotOnSlate, Hint{HintReadSlate, "read the slate for the marks on it"}},
	{ErrNoVoyage, Hint{HintListVoyages, "list the voyages for their ids"}},
	{ErrAmbiguous, Hint{HintListVoyages, "give more of the id; list the voyages for their ids"}},
	{ErrNoArtifact, Hint{HintListArtifacts, "list the voyage's artifacts for their hashes"}},
	{ErrDamaged, Hint{HintVerify, "verify the voyage to see everything that is damaged; the bytes were left untouched"}},
	{ErrArtifactDamaged, Hint{HintVerify, "verify the voyage to see everything that is damaged; the bytes were left untouched"}},
	{store.ErrDamaged, Hint{HintVerify, "verify the voyage to see everything that is damaged; the bytes were left untouched"}},
	{segment.ErrCorrupt, Hint{HintVerify, "verify the voyage to see everything that is damaged; the bytes were left untouched"}},
	{ErrMissingWho, Hint{HintGiveWho, "give the identity, role and method (Who) the error names"}},
}

// HintOf returns what to do about err: the Hint the outermost error of its
// chain that carries one has (a *VoyageError), else the one
// the sentinel it wraps implies. The zero Hint means none.
func HintOf(err error) Hint {
	if h := carried(err); h.Kind != "" {
		return h
	}
	for _, s := range hints {
		if errors.Is(err, s.err) {
			return s.hint
		}
	}
	if durable.IsNoSpace(err) {
		return Hint{HintFreeSpace, "free disk space (or raise the quota), then retry"}
	}
	return Hint{}
}

// carried walks err's chain, depth first, for a hint an error carries.
func carried(err error) Hint {
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
			return Hint{}
		default:
			return Hint{}
		}
	}
	return Hint{}
}

// VoyageError says what failed (Op), on which voyage, and why (Err); Hint
// says what to do, as data. Its message reads "OP on voyage ID: CAUSE"
// ("OP: CAUSE" for an operation on no voyage yet) and leaves the hint out.
type VoyageError struct {
	Op     string // "observe FileContents: a.go", "take bearing", ...
	Voyage string // voyage id; empty before there is one
	Err    error
	Hint   Hint // zero: see HintOf, which also reads the sentinel Err wraps
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
