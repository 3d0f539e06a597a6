// Package hint names what a caller can do about an error helm returns,
// as data: a Kind to switch on and a sentence in the library's terms.
// helm.HintOf(err) finds the hint of an error; no error's message
// includes it, so that a program can say it in its own terms (the CLI,
// as a command line; the MCP server, as a tool to call).
package hint

// Kind names what a caller can do about an error.
type Kind string

// Hint says what a caller can do about an error: a Kind to switch on and
// a sentence for people. The zero Hint means none.
type Hint struct {
	Kind Kind   `json:"kind"`
	Text string `json:"text"`
}

// Kinds of hint.
const (
	// Verify: verify the voyage (Home.Verify): its files are damaged.
	Verify Kind = "verify"
	// StartVoyage: start another voyage; this one is completed.
	StartVoyage Kind = "start-voyage"
	// Observe: observe a mark first; the slate is empty.
	Observe Kind = "observe"
	// ReadLogbook: read the logbook, for its entries' numbers.
	ReadLogbook Kind = "read-logbook"
	// ReadSlate: read the slate, for the marks on it.
	ReadSlate Kind = "read-slate"
	// ListVoyages: list the voyages, for their ids.
	ListVoyages Kind = "list-voyages"
	// ListArtifacts: list the voyage's artifacts, for their hashes.
	ListArtifacts Kind = "list-artifacts"
	// ReadSummary: the artifact was reduced; read its summary (the
	// hint's text names it).
	ReadSummary Kind = "read-summary"
	// Reopen: a write failed and the change may or may not be
	// recorded; open the voyage again and read its logbook before
	// retrying.
	Reopen Kind = "reopen"
	// CheckWorld: an action touched the world but its outcome could
	// not be recorded; check the world before performing it again.
	CheckWorld Kind = "check-world"
	// AllowSecret: an action's parameters hold a secret; take it out,
	// or allow it (PerformOptions.AllowSecret).
	AllowSecret Kind = "allow-secret"
	// FreeSpace: the disk (or the owner's quota) is full; free space,
	// then retry.
	FreeSpace Kind = "free-space"
	// Restore: the voyage's files are gone or unusable; restore its
	// directory from a backup, or remove it.
	Restore Kind = "restore"
	// GiveWho: give the identity, role or method the error names
	// (Who).
	GiveWho Kind = "give-who"
	// Resume: the voyage is blocked or partial; resume it.
	Resume Kind = "resume"
	// Policy: a guard rule refused the action.
	Policy Kind = "policy"
	// Confirm: a guard rule asks for confirmation.
	Confirm Kind = "confirm"
	// OtherHome: the home holds the voyage already (Home.Import);
	// import it into another home, or remove it from this one first.
	OtherHome Kind = "other-home"
	// Retry: nothing was recorded, as other writers of a shared
	// store kept changing the voyage; try again.
	Retry Kind = "retry"
	// KeepWork: a voyage's working tree holds work that removing it
	// would lose (WorktreeError lists it); keep it first, or remove the
	// working tree anyway (RemoveWorktreeOptions.Force).
	KeepWork Kind = "keep-work"
	// Witness: a witness cannot be written or read as given (a
	// parameter holds a Helm-Voyage line, which is helm's to write; a
	// witness repository is shallow or holds no witness of the voyage);
	// the hint's text says what to change.
	Witness Kind = "witness"
)
