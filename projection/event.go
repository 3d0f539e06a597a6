package projection

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/helmlog/helm/logbook"
)

// Type names an event. The names are part of the JSON form, and each type
// has a fixed code in the binary form (typeCodes in codec.go): never
// rename or renumber one; add a new type or a new version instead.
type Type string

// The event types of a voyage.
const (
	VoyageStarted      Type = "voyage-started"
	VoyageCompleted    Type = "voyage-completed"
	ArtifactStowed     Type = "artifact-stowed"
	Observed           Type = "observed"
	MarkErased         Type = "mark-erased"
	SlateWiped         Type = "slate-wiped"
	BearingTaken       Type = "bearing-taken"
	ReadingChallenged  Type = "reading-challenged"
	ActionIntended     Type = "action-intended"
	ActionPerformed    Type = "action-performed"
	ActionFailed       Type = "action-failed"
	ArtifactReduced    Type = "artifact-reduced"
	ArtifactJettisoned Type = "artifact-jettisoned"
	VoyageResumed      Type = "voyage-resumed"
	NoteAdded          Type = "note-added"
	Judged             Type = "judged"
	ActionRefused      Type = "action-refused"
	WorktreeRemoved    Type = "worktree-removed"
	// PolicyAdopted records the guard rules a voyage starts under, with
	// its start (not an entry: the story's numbers do not depend on
	// whether the home has rules).
	PolicyAdopted Type = "policy-adopted"
	// PolicyChanged records the guard rules a voyage's writers run under
	// from then on, when they differ from the last recorded: an entry of
	// the story.
	PolicyChanged Type = "policy-changed"
	// ChainRechained records that the log moved from an older segment
	// format's CRC32C chain onto the stored BLAKE3 chain: an entry of
	// the story, the first record of the log's first format-4 segment.
	ChainRechained Type = "chain-rechained"
	// StepRecorded records a step an agent host reported at its tool
	// boundary (logbook.Step): a prompt, a tool call, a decision, a
	// notification. An entry of the story.
	StepRecorded Type = "step-recorded"
	// StepFinished attaches a tool call's result (and what it cost) to
	// the open tool step of the same agent, session and id, as
	// action-performed completes an action's intent. Not an entry.
	StepFinished Type = "step-finished"
	// IdentityHandedOff records that the voyage's identity changed from
	// then on (logbook.Handoff): the identity the voyage had, the one it
	// has now, who handed it off and why. An entry of the story; earlier
	// entries keep the identity they were recorded with.
	IdentityHandedOff Type = "identity-handed-off"
)

// currentVersion is the schema version each event type is written with.
// Older versions are brought up to date on decode: by the upcasters for
// the JSON form, by the binary decoder's version switch (codec.go) for
// the binary form.
var currentVersion = map[Type]int{
	VoyageStarted:      4, // v1 had no parent, repository or base commit; v2 no session; v3 no fork or salvage
	VoyageCompleted:    1,
	ArtifactStowed:     1,
	Observed:           1,
	MarkErased:         1,
	SlateWiped:         1,
	BearingTaken:       3, // v1 stored the reading as a bare string; v2 had no entry number
	ReadingChallenged:  1,
	ActionIntended:     3, // v1 had no entry number and no rationale; v2 no entry it undoes
	ActionPerformed:    2, // v1 had no inverse
	ActionFailed:       1,
	ArtifactReduced:    1,
	ArtifactJettisoned: 2, // v1 had no reason
	VoyageResumed:      1,
	NoteAdded:          1,
	Judged:             1,
	ActionRefused:      1,
	WorktreeRemoved:    1,
	PolicyAdopted:      1,
	PolicyChanged:      1,
	ChainRechained:     1,
	StepRecorded:       1,
	StepFinished:       1,
	IdentityHandedOff:  1,
}

// Event is one change to a voyage. Exactly one payload field is set, the
// one its Type names; Who is the resolved identity, role and method of the
// caller that caused it.
type Event struct {
	// Seq is the event's sequence number in its voyage's log. It is the
	// record's position, not part of the stored event: set on events read
	// from a log (helm.Voyage.Events), so that a replay numbers them as
	// the log did.
	Seq  uint64      `json:"seq,omitempty"`
	Type Type        `json:"type"`
	V    int         `json:"v"`
	At   time.Time   `json:"at"`
	Who  logbook.Who `json:"who"`
	// N is the number of the story entry the event records (bearing
	// taken, action intended or refused, note added, judged), given when
	// it is recorded. Events written before numbers were stored have 0:
	// the fold numbers them in order, as helm did then.
	N int `json:"n,omitempty"`

	Voyage     *VoyageInfo                `json:"voyage,omitempty"`
	Completion *Completion                `json:"completion,omitempty"`
	Resumption *Resumption                `json:"resumption,omitempty"`
	Removal    *Removal                   `json:"removal,omitempty"`
	Artifact   *ArtifactRef               `json:"artifact,omitempty"`
	Obs        *logbook.ObservationRecord `json:"observation,omitempty"`
	Key        string                     `json:"key,omitempty"`
	// Bearing is the payload of BearingTaken. Its Observations are nil
	// when the bearing seals the slate as the events before it left it
	// (what helm writes); a list names them outright.
	Bearing   *logbook.Bearing       `json:"bearing,omitempty"`
	Challenge *Challenge             `json:"challenge,omitempty"`
	Action    *logbook.ActionRecord  `json:"action,omitempty"`
	Note      *logbook.Note          `json:"note,omitempty"`
	Judgement *logbook.Judgement     `json:"judgement,omitempty"`
	Policy    *logbook.PolicyRecord  `json:"policy,omitempty"`
	Rechain   *logbook.RechainRecord `json:"rechain,omitempty"`
	// Step is the payload of StepRecorded (the step) and StepFinished
	// (the agent, session and id of the tool call it finishes, with its
	// result and usage).
	Step *logbook.Step `json:"step,omitempty"`
	// Handoff is the payload of IdentityHandedOff.
	Handoff *logbook.Handoff `json:"handoff,omitempty"`
}

// IsEntry reports whether events of type t record a story entry (and
// so carry its number).
func IsEntry(t Type) bool {
	switch t {
	case BearingTaken, ActionIntended, ActionRefused, NoteAdded, Judged, PolicyChanged, ChainRechained, StepRecorded, IdentityHandedOff:
		return true
	}
	return false
}

// VoyageInfo is the payload of VoyageStarted. Parent is the voyage this
// one is a sub-voyage of; Repo, Dir, Base and Branch describe the git
// repository it started in (OWNER/NAME when its origin names one, the
// working tree's top directory, HEAD's commit, the branch checked out);
// Worktree is a working tree made for the voyage alone. Session is the
// agent host's session the voyage records, keyed by its host
// ("claude-code:<session id>", "claude-code:<session id>/<agent id>" for
// a subagent): how a hook finds the voyage of a session again.
type VoyageInfo struct {
	ID       string `json:"id"`
	Intent   string `json:"intent"`
	Kind     string `json:"kind"`
	Parent   string `json:"parent,omitempty"`
	Repo     string `json:"repo,omitempty"`
	Dir      string `json:"dir,omitempty"`
	Base     string `json:"base,omitempty"`
	Branch   string `json:"branch,omitempty"`
	Worktree string `json:"worktree,omitempty"`
	Session  string `json:"session,omitempty"`
	// Fork is set on a voyage forked from another (v4): its first records
	// after this event are the origin's up to the record Fork names.
	Fork *Origin `json:"fork,omitempty"`
	// Salvage is set on a voyage salvaged from a damaged one (v4): its
	// first records after this event are the origin's intact ones up to
	// the record Salvage names, and Salvage.Lost says what was not.
	Salvage *Origin `json:"salvage,omitempty"`
}

// Origin names the voyage whose records a fork or a salvage carried, and
// how far: every record after the voyage-started event, up to and
// including record Seq, is the origin's record of the same sequence
// number (the origin's own voyage-started, at 1, is replaced; the bytes
// of an artifact that was not carried are left out, its event kept).
// Head is the origin's chain (package chain) at Seq, 64 lowercase hex
// digits: the link that lets Verify check the carried records against
// the origin while it is at hand.
type Origin struct {
	Voyage string `json:"voyage"`
	// Entry is the number of the origin's story entry the fork was taken
	// at (its event is record Seq); 0 for a salvage.
	Entry int    `json:"entry,omitempty"`
	Seq   uint64 `json:"seq"`
	Head  string `json:"head"`
	// Lost is what a salvage could not carry (nil for a fork).
	Lost *Loss `json:"lost,omitempty"`
}

// Loss is what a salvage found damaged and did not carry. Seq, File,
// Offset and Reason are where the first damage was found and why (Seq 0:
// damage of the log as a whole, such as a cache proving it was rolled
// back); Records counts the records of the origin's log read after the
// last one carried (those past a damaged record cannot be read, and those
// a rollback removed are gone: neither is counted), and Bytes their bytes
// and, when the damage is at a place in a segment file, the log's bytes
// from there to its end; Artifacts are the artifacts whose bytes were
// damaged, whose events were carried but whose bytes were not.
type Loss struct {
	Seq       uint64   `json:"seq,omitempty"`
	File      string   `json:"file,omitempty"`
	Offset    int64    `json:"offset,omitempty"`
	Reason    string   `json:"reason"`
	Records   uint64   `json:"records"`
	Bytes     int64    `json:"bytes"`
	Artifacts []string `json:"artifacts,omitempty"`
}

// Removal is the payload of WorktreeRemoved: the voyage's working tree
// was removed, with its uncommitted changes when Forced.
type Removal struct {
	Path   string `json:"path"`
	Forced bool   `json:"forced,omitempty"`
}

// Resumption is the payload of VoyageResumed: why a blocked or partial
// voyage is active again.
type Resumption struct {
	Reason string `json:"reason,omitempty"`
}

// Outcome is how a voyage ended (logbook.Outcome: declared once). The
// facade checks outcomes before a completion is recorded; the views fold
// whatever was recorded.
type Outcome = logbook.Outcome

// Outcomes a voyage can be completed with.
const (
	OutcomeCompleted = logbook.OutcomeCompleted
	OutcomeBlocked   = logbook.OutcomeBlocked
	OutcomeFailed    = logbook.OutcomeFailed
	OutcomePartial   = logbook.OutcomePartial
	OutcomeCancelled = logbook.OutcomeCancelled
)

// Completion is the payload of VoyageCompleted.
type Completion struct {
	Outcome Outcome `json:"outcome"`
	Summary string  `json:"summary,omitempty"`
}

// ArtifactRef is the payload of the artifact events: where a sighting's
// compressed bytes are stored. Hash is the BLAKE3 of the uncompressed JSON.
// Small artifacts live in the event log itself, in a blob record of the
// same batch as their event (Blob is its sequence number); large ones in
// the voyage's pack file at Offset (Blob is 0).
type ArtifactRef struct {
	Hash       string `json:"hash" redact:"address"`
	Size       int64  `json:"size"`        // uncompressed bytes
	StoredSize int64  `json:"stored_size"` // compressed bytes
	Offset     int64  `json:"offset"`      // frame offset in the pack file, when Blob is 0
	Blob       uint64 `json:"blob,omitempty"`
	// DerivedFrom and Method are set on ArtifactReduced: the artifact
	// this one summarises, and how the summary was made.
	DerivedFrom string `json:"derived_from,omitempty" redact:"address"`
	Method      string `json:"method,omitempty"`
	// Reason is why an artifact was jettisoned (ArtifactJettisoned v2).
	Reason string `json:"reason,omitempty"`
}

// Challenge is the payload of ReadingChallenged. Bearing is the sequence
// number of the BearingTaken event, which stays stable while the story's
// entry numbers may shift.
type Challenge struct {
	Bearing  uint64         `json:"bearing"`
	Feedback string         `json:"feedback"`
	Text     string         `json:"text"`
	Source   logbook.Source `json:"source"`
}

// upcaster rewrites the JSON of an event of version v into version v+1.
type upcaster func(raw map[string]json.RawMessage) error

// upcasters[type][v] upgrades version v of type to v+1.
var upcasters = map[Type]map[int]upcaster{
	BearingTaken:    {1: upcastBearingV1, 2: upcastNothing},
	VoyageStarted:   {1: upcastNothing, 2: upcastNothing, 3: upcastNothing},
	ActionIntended:  {1: upcastNothing, 2: upcastNothing},
	ActionPerformed: {1: upcastNothing},
}

// upcastNothing upgrades a version whose successor only added fields
// that may be absent (an entry number of 0: numbered by the fold).
func upcastNothing(map[string]json.RawMessage) error { return nil }

// upcastBearingV1: v1 stored "bearing": {"observations": [...], "reading": "text"}.
func upcastBearingV1(raw map[string]json.RawMessage) error {
	var b struct {
		Observations json.RawMessage `json:"observations"`
		Reading      string          `json:"reading"`
	}
	if err := json.Unmarshal(raw["bearing"], &b); err != nil {
		return err
	}
	next, err := json.Marshal(map[string]any{
		"observations": b.Observations,
		"reading":      logbook.Reading{Text: b.Reading},
	})
	if err != nil {
		return err
	}
	raw["bearing"] = next
	return nil
}

// decodeJSON parses the JSON form of an event, upcasting older versions
// to the current one.
func decodeJSON(data []byte) (*Event, error) {
	var e Event
	full := json.Unmarshal(data, &e)
	if full == nil && e.V == currentVersion[e.Type] && e.V != 0 {
		return checkedJSON(&e) // the common case: one parse
	}
	// An older version may not even fit today's types: read the head alone.
	var head struct {
		Type Type `json:"type"`
		V    int  `json:"v"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("decode event: %w", err)
	}
	cur, ok := currentVersion[head.Type]
	switch {
	case !ok:
		return nil, fmt.Errorf("decode event: unknown type %q (written by a newer helm?)", head.Type)
	case head.V > cur:
		return nil, fmt.Errorf("decode %s event: version %d is newer than this helm understands (%d); upgrade helm", head.Type, head.V, cur)
	case head.V < 1:
		return nil, fmt.Errorf("decode %s event: invalid version %d", head.Type, head.V)
	case head.V == cur:
		return nil, fmt.Errorf("decode %s event: %w", head.Type, full)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("decode %s event: %w", head.Type, err)
	}
	for v := head.V; v < cur; v++ {
		up := upcasters[head.Type][v]
		if up == nil {
			return nil, fmt.Errorf("decode %s event: no upcaster from version %d", head.Type, v)
		}
		if err := up(raw); err != nil {
			return nil, fmt.Errorf("decode %s event: upcast v%d: %w", head.Type, v, err)
		}
	}
	raw["v"], _ = json.Marshal(cur)
	data, err := json.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("decode %s event: %w", head.Type, err)
	}
	e = Event{}
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, fmt.Errorf("decode %s event: %w", head.Type, err)
	}
	return checkedJSON(&e)
}

// checkedJSON refuses a decoded JSON event that Encode could not store:
// one carrying a payload its type does not.
func checkedJSON(e *Event) (*Event, error) {
	if err := checkPayloads(e); err != nil {
		return nil, fmt.Errorf("decode %s event: %w", e.Type, err)
	}
	return e, nil
}
