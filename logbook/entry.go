// Package logbook holds the entries of a voyage's logbook — bearings and
// actions, each with who took it — and renders the story a person reads.
package logbook

import (
	"encoding/json"
	"slices"
	"time"
)

// Who is the provenance recorded on every logbook entry: who acted
// (identity), in what framing (role: reviewer, coder, ...) and by what
// engine (method: a model name, "human").
type Who struct {
	Identity string `json:"identity"`
	Role     string `json:"role"`
	Method   string `json:"method"`
}

// Source says who authored a reading attempt.
type Source string

// Reading sources.
const (
	SourceAgent Source = "agent"
	SourceUser  Source = "user"
)

// Reading is the short interpretation of a bearing. Text is the accepted
// text; History holds the attempts that were challenged before it, oldest
// first.
type Reading struct {
	Text    string           `json:"text"`
	Source  Source           `json:"source,omitempty"`
	History []ReadingAttempt `json:"history,omitempty"`
}

// ReadingAttempt is one challenged reading: its text, who wrote it, and the
// feedback that challenged it.
type ReadingAttempt struct {
	Text           string    `json:"text"`
	Source         Source    `json:"source,omitempty"`
	ChallengedWith string    `json:"challenged_with"`
	ChallengedAt   time.Time `json:"challenged_at"`
	ChallengedBy   Who       `json:"challenged_by"`
}

// ObservationRecord is one look sealed into a bearing: the mark (as stored by
// marks.Marshal), its one-line label, and the artifact holding its sighting.
type ObservationRecord struct {
	Key        string          `json:"key"`
	Mark       json.RawMessage `json:"mark"`
	Label      string          `json:"label"`
	Artifact   string          `json:"artifact" redact:"address"`
	ObservedAt time.Time       `json:"observed_at"`
	// ObservedBy is who made the observation; a bearing may seal
	// observations that other identities gathered on a shared slate.
	ObservedBy Who `json:"observed_by,omitzero"`
}

// Bearing is what was looked at and what it meant.
type Bearing struct {
	Observations []ObservationRecord `json:"observations"`
	Reading      Reading             `json:"reading"`
}

// ActionStatus says where an action stands.
type ActionStatus string

// Action statuses. An intended action with no recorded outcome (a crash
// between touching the world and recording the result) is ActionOutcomeUnknown.
const (
	ActionOutcomeUnknown ActionStatus = "outcome-unknown"
	ActionPerformed      ActionStatus = "performed"
	ActionFailed         ActionStatus = "failed"
	// ActionRefused: a guard rule refused the action before its intent
	// was recorded; the world was not touched.
	ActionRefused ActionStatus = "refused"
)

// ActionResult is what an action left in the world, as far as helm learned.
// Only the fields that the action kind produces are set.
type ActionResult struct {
	SHA       string   `json:"sha,omitempty"`
	Branch    string   `json:"branch,omitempty"`
	Number    int      `json:"number,omitempty"`
	CommentID int64    `json:"comment_id,omitempty"`
	URL       string   `json:"url,omitempty"`
	Reviewers []string `json:"reviewers,omitempty"`
	// Witness is the line the action wrote into the world naming the
	// voyage at the head of its chain (a commit's trailer, the last line
	// of a pull request's body): "Helm-Voyage: <voyage id> <SEQ>:<HEX>".
	Witness string `json:"witness,omitempty"`
}

// ActionTarget is what an action acts on, resolved, as guard rules
// match it: the repository (OWNER/NAME), the branch, and the action's
// arguments as they are typed on a command line. An action that reaches
// more than one repository (a remote with several URLs) names the others
// in Repos; one that changes refs on a remote (a push) names each in
// Refs. The guard checks every repository with every ref, and the
// strictest verdict holds.
type ActionTarget struct {
	Repo   string
	Branch string
	Args   []string
	Repos  []string
	Refs   []RefUpdate
}

// RefUpdate is a ref an action changes on a remote, as guard rules see
// it: its full name (refs/heads/main), and whether the update is forced
// or deletes it.
type RefUpdate struct {
	Ref           string
	Force, Delete bool
}

// ActionRecord is an operation helm performed in the world.
type ActionRecord struct {
	ID     string          `json:"id"`
	Kind   string          `json:"kind"`
	Params json.RawMessage `json:"params,omitempty"`
	Status ActionStatus    `json:"status,omitempty"` // set by the views, not stored
	Result *ActionResult   `json:"result,omitempty"`
	// Error is the failure message of a failed action.
	Error string `json:"error,omitempty"`
	// Why is the rationale given for the action, if any.
	Why string `json:"why,omitempty"`
	// Rule names the guard rule that refused a refused action, and where
	// it is written ("agents may not merge" (policy.toml:3)).
	Rule string `json:"rule,omitempty"`
	// DoneAt is when the outcome was recorded (zero while unknown).
	DoneAt time.Time `json:"done_at,omitzero"`
	// Undoes is the number of the entry whose action this one takes back
	// (0: none). It is stored with the intent.
	Undoes int `json:"undoes,omitempty"`
	// Inverse is how to take the action back, recorded with its outcome
	// when it was performed (nil: recorded by a version before undo, or
	// the action declares none).
	Inverse *Inverse `json:"inverse,omitempty"`
	// UndoneBy is the number of the entry whose performed action took
	// this one back (set by the views, not stored).
	UndoneBy int `json:"undone_by,omitempty"`
}

// Inverse is how to take an action back: the action that does it (its
// kind and parameters, as an action's are recorded), or, when there is
// none, why (None).
type Inverse struct {
	Kind   string          `json:"kind,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	None   string          `json:"none,omitempty"`
}

// Note is a logbook entry of text alone: a status, a decision.
type Note struct {
	Text string `json:"text"`
}

// Judgement is an evaluation of a voyage by someone who took no part in
// it: a score from 1 to 10 on one dimension, citing entries by number.
type Judgement struct {
	Score     int    `json:"score"`
	Dimension string `json:"dimension"`
	Evidence  []int  `json:"evidence"`
	Text      string `json:"text"`
}

// EntryKind names a kind of logbook entry.
type EntryKind string

// Entry kinds. A refused action is an action entry whose status is
// ActionRefused.
const (
	EntryBearing   EntryKind = "bearing"
	EntryAction    EntryKind = "action"
	EntryNote      EntryKind = "note"
	EntryJudgement EntryKind = "judgement"
	// EntryPolicy records the guard rules the voyage's writers ran under
	// from then on: the policy the voyage started under, and each change.
	EntryPolicy EntryKind = "policy"
	// EntryRechain records that the voyage's log moved from an older
	// segment format's CRC32C chain onto the stored BLAKE3 chain (helm
	// voyage rechain), who moved it and why.
	EntryRechain EntryKind = "rechain"
	// EntryStep is a step an agent host reported at its tool boundary
	// (Step): a prompt, a tool call, a decision, a notification.
	EntryStep EntryKind = "step"
	// EntryHandoff records that the voyage's identity changed from then
	// on (Handoff): who handed it off, from whom, to whom, and why.
	EntryHandoff EntryKind = "handoff"
)

// Handoff is what a handoff recorded: the identity the voyage had (From)
// and the one it has from this entry on (To), why, and whether a person
// confirmed it under a guard rule that asks for confirmation. Earlier
// entries keep the identity they were recorded with; a handoff changes
// no method: each later entry records the method its recorder gives.
type Handoff struct {
	From      string `json:"from"`
	To        string `json:"to"`
	Why       string `json:"why,omitempty"`
	Confirmed bool   `json:"confirmed,omitempty"`
}

// RechainRecord is what a rechain recorded: where the older format's
// CRC32C chain ended (the seq of the last record before the rechain, and
// the chain's sum after it, 8 lowercase hex digits) and why the log was
// moved on. The BLAKE3 chain itself is the same before and after: the
// head after the rechain commits to every record, the old ones included.
type RechainRecord struct {
	Seq    uint64 `json:"seq"`
	CRC32C string `json:"crc32c"`
	Why    string `json:"why"`
}

// PolicyRecord names the guard rules a voyage ran under: the digest of
// the policy (package policy's Digest: "sha256:" and the hex SHA-256 of
// the file; empty when there were no rules) and the files it came from,
// in the order they apply (a system policy, then the home's).
type PolicyRecord struct {
	Digest  string   `json:"digest"`
	Sources []string `json:"sources,omitempty"`
}

// Entry is one logbook entry. N is its number in the story, given when
// it was recorded and never changed; Seq is the sequence number of the
// event that recorded it. Exactly one of Bearing, Action, Note,
// Judgement, Policy, Rechain, Step and Handoff is set, the one Kind names.
type Entry struct {
	N         int            `json:"n"`
	Seq       uint64         `json:"seq"`
	Kind      EntryKind      `json:"kind"`
	At        time.Time      `json:"at"`
	Who       Who            `json:"who"`
	Bearing   *Bearing       `json:"bearing,omitempty"`
	Action    *ActionRecord  `json:"action,omitempty"`
	Note      *Note          `json:"note,omitempty"`
	Judgement *Judgement     `json:"judgement,omitempty"`
	Policy    *PolicyRecord  `json:"policy,omitempty"`
	Rechain   *RechainRecord `json:"rechain,omitempty"`
	Step      *Step          `json:"step,omitempty"`
	Handoff   *Handoff       `json:"handoff,omitempty"`
}

// Clone returns copies of entries that share no memory with them, so
// that what folds further events into the originals changes none of the
// copies.
func Clone(entries []Entry) []Entry {
	out := slices.Clone(entries)
	for i := range out {
		if b := out[i].Bearing; b != nil {
			c := *b
			c.Observations = slices.Clone(b.Observations)
			c.Reading.History = slices.Clone(b.Reading.History)
			out[i].Bearing = &c
		}
		if a := out[i].Action; a != nil {
			c := *a
			if a.Inverse != nil {
				inv := *a.Inverse
				c.Inverse = &inv
			}
			out[i].Action = &c
		}
		if n := out[i].Note; n != nil {
			c := *n
			out[i].Note = &c
		}
		if j := out[i].Judgement; j != nil {
			c := *j
			c.Evidence = slices.Clone(j.Evidence)
			out[i].Judgement = &c
		}
		if r := out[i].Rechain; r != nil {
			c := *r
			out[i].Rechain = &c
		}
		if s := out[i].Step; s != nil {
			out[i].Step = s.Clone()
		}
		if h := out[i].Handoff; h != nil {
			c := *h
			out[i].Handoff = &c
		}
	}
	return out
}
