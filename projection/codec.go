package projection

// # The stored form of an event
//
// Encode writes an event as one binary record; Decode reads it back (and
// also reads the JSON form: see below). The record is the payload of one
// segment-log record, so it carries no length or checksum of its own.
//
//	+--------+---------+---------+------+-----------------------+---------
//	| format | type    | version | at   | who                   | payload
//	| 0x01   | uvarint | uvarint | time | str    str    str     | fields of the type,
//	| 1 byte |  code   |         |      | ident. role   method  | by version (below)
//	+--------+---------+---------+------+-----------------------+---------
//
// Primitives (uvarint and varint are encoding/binary's LEB128 forms;
// varint is zig-zag):
//
//	str     uvarint n, then n bytes (not necessarily UTF-8)
//	raw     uvarint 0 = nil; n+1, then n bytes (json.RawMessage)
//	list    uvarint 0 = nil slice; n+1, then n elements (so nil and
//	        empty slices stay distinct, as JSON's null and [] are)
//	opt     byte 0 = nil pointer; 1, then the pointee
//	time    byte 0x00: the zero time.Time
//	        byte 0x01, varint unix nanoseconds (years 1678 to 2262)
//	        byte 0x02, varint unix seconds, uvarint nanoseconds (any
//	        other time)
//	        Times decode in UTC, without a monotonic reading.
//	who     str identity, str role, str method
//
// The format byte 0x01 can never begin a JSON record ('{' or white
// space), so Decode tells the two forms apart by the first byte alone.
// A new record format would take a new format byte.
//
// Type codes are fixed forever (typeCodes): append new types at the end,
// never reorder or reuse a code. A code this helm does not know is an
// error: a newer helm wrote the record.
//
// Payloads at the current versions (fields in this order):
//
//	voyage-started v4       opt{str id, str intent, str kind, str parent,
//	                            str repo, str dir, str base, str branch,
//	                            str worktree, str session, opt origin
//	                            (fork), opt origin (salvage)} (v3 ended
//	                            after session, v2 after worktree, v1
//	                            after kind)
//	voyage-completed v1     opt{str outcome, str summary}
//	voyage-resumed v1       opt{str reason}
//	worktree-removed v1     opt{str path, opt forced}
//	artifact-stowed v1,     opt{str hash, varint size, varint stored_size,
//	artifact-reduced v1,        varint offset, uvarint blob,
//	                            str derived_from, str method}
//	artifact-jettisoned v2      (and, on artifact-jettisoned v2, str reason;
//	                            v1 had none)
//	observed v1             opt{observation}
//	mark-erased v1          str key
//	slate-wiped v1          (nothing)
//	bearing-taken v3        opt{list observation, reading} uvarint n
//	                        (v2 had no n)
//	reading-challenged v1   opt{uvarint bearing, str feedback, str text, str source}
//	action-intended v3      opt{action, str why, uvarint undoes} uvarint n
//	                        (v2 had no undoes; v1: opt{action})
//	action-performed v2     opt{action, inverse} (v1: opt{action})
//	action-failed v1        opt{action}
//	action-refused v1       opt{action, str why, str rule} uvarint n
//	note-added v1           opt{str text} uvarint n
//	judged v1               opt{varint score, str dimension,
//	                            list varint evidence, str text} uvarint n
//	policy-adopted v1       opt{str digest, list str sources}
//	policy-changed v1       opt{str digest, list str sources} uvarint n
//	step-recorded v1        opt{step} uvarint n
//	step-finished v1        opt{step}
//	identity-handed-off v1  opt{handoff} uvarint n
//
//	action       str id, str kind, raw params, str status, opt result,
//	             str error, time done_at
//	observation  str key, raw mark, str label, str artifact,
//	             time observed_at, who observed_by
//	reading      str text, str source, list attempt
//	attempt      str text, str source, str challenged_with,
//	             time challenged_at, who challenged_by
//	result       str sha, str branch, varint number, varint comment_id,
//	             str url, list str reviewers
//	inverse      opt{str kind, raw params, str none}
//	step         str kind, str agent, str session, str id, str tool,
//	             raw input, str text, str voyage,
//	             opt{str verdict, str rule, str reason},
//	             opt{str output, str artifact, opt failed, varint duration},
//	             opt usage
//	usage        str model, varint input_tokens, varint output_tokens,
//	             varint cache_read_tokens, varint cache_write_tokens,
//	             f64 cost_usd, varint duration
//	f64          8 bytes, little-endian IEEE 754 (math.Float64bits)
//	origin       str voyage, uvarint entry, uvarint seq, str head,
//	             opt{uvarint seq, str file, varint offset, str reason,
//	             uvarint records, varint bytes, list str artifacts}
//
// Nothing follows the payload: trailing bytes are an error.
//
// Raw fields (a mark, action params) are kept byte for byte: unlike
// json.Marshal, Encode neither validates nor compacts them (helm makes
// them with json.Marshal), so the JSON export of an event whose raw field
// is not JSON fails there rather than at Encode.
//
// # Versions
//
// currentVersion is the source of truth: Encode writes only the current
// layout of each type. When a type's layout changes, bump its version and
// keep the old layout readable: decodePayload switches on the version and
// reads an old layout straight into today's struct (filling what the old
// layout lacked), as decodeBearingV1 does for the bare-string reading of
// bearing-taken v1. (Bearing v1 predates this codec and was only ever
// written as JSON; its binary layout, opt{list observation, str reading},
// is kept as the worked example.) A JSON record goes through the JSON
// upcasters instead.
//
// # Hostile input
//
// Every length and count is checked against the bytes left before
// anything is sliced or allocated, so a short or forged record is an
// error naming the field and offset, never a panic or a huge allocation.
//
// # Sharing
//
// Decode converts the record to a string once and every decoded string is
// a substring of it: one allocation for all the strings of an event, which
// keeps the whole record alive while any of them is. A json.RawMessage
// field, being mutable, gets a copy of its own. Nothing decoded shares the
// caller's buffer.

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/helmlog/helm/logbook"
)

// formatBinary is the first byte of a binary record.
const formatBinary = 0x01

// typeCodes maps a binary type code to its Type. Never reorder or reuse:
// new types are appended.
var typeCodes = [...]Type{
	1:  VoyageStarted,
	2:  VoyageCompleted,
	3:  ArtifactStowed,
	4:  Observed,
	5:  MarkErased,
	6:  SlateWiped,
	7:  BearingTaken,
	8:  ReadingChallenged,
	9:  ActionIntended,
	10: ActionPerformed,
	11: ActionFailed,
	12: ArtifactReduced,
	13: ArtifactJettisoned,
	14: VoyageResumed,
	15: NoteAdded,
	16: Judged,
	17: ActionRefused,
	18: WorktreeRemoved,
	19: PolicyAdopted,
	20: PolicyChanged,
	21: ChainRechained,
	22: StepRecorded,
	23: StepFinished,
	24: IdentityHandedOff,
}

// codeOf is the inverse of typeCodes.
var codeOf = func() map[Type]uint64 {
	m := make(map[Type]uint64, len(typeCodes))
	for code, t := range typeCodes {
		if t != "" {
			m[t] = uint64(code)
		}
	}
	return m
}()

// Time encodings.
const (
	timeZero  = 0x00
	timeNanos = 0x01
	timeWide  = 0x02
)

// Unix seconds whose nanoseconds surely fit an int64.
const maxNanoSec = 9_223_372_035

// payloadName is the payload each type carries: the JSON name of its
// Event field ("" for none).
func payloadName(t Type) string {
	switch t {
	case VoyageStarted:
		return "voyage"
	case VoyageCompleted:
		return "completion"
	case VoyageResumed:
		return "resumption"
	case WorktreeRemoved:
		return "removal"
	case NoteAdded:
		return "note"
	case Judged:
		return "judgement"
	case PolicyAdopted, PolicyChanged:
		return "policy"
	case ChainRechained:
		return "rechain"
	case StepRecorded, StepFinished:
		return "step"
	case IdentityHandedOff:
		return "handoff"
	case ArtifactStowed, ArtifactReduced, ArtifactJettisoned:
		return "artifact"
	case Observed:
		return "observation"
	case MarkErased:
		return "key"
	case BearingTaken:
		return "bearing"
	case ReadingChallenged:
		return "challenge"
	case ActionIntended, ActionPerformed, ActionFailed, ActionRefused:
		return "action"
	}
	return ""
}

// checkPayloads refuses an event carrying a payload its type does not:
// such an event could not be stored, nor folded sensibly.
func checkPayloads(e *Event) error {
	want := payloadName(e.Type)
	for _, p := range [...]struct {
		name string
		set  bool
	}{
		{"voyage", e.Voyage != nil},
		{"completion", e.Completion != nil},
		{"resumption", e.Resumption != nil},
		{"removal", e.Removal != nil},
		{"note", e.Note != nil},
		{"judgement", e.Judgement != nil},
		{"policy", e.Policy != nil},
		{"rechain", e.Rechain != nil},
		{"artifact", e.Artifact != nil},
		{"observation", e.Obs != nil},
		{"key", e.Key != ""},
		{"bearing", e.Bearing != nil},
		{"challenge", e.Challenge != nil},
		{"action", e.Action != nil},
		{"step", e.Step != nil},
		{"handoff", e.Handoff != nil},
	} {
		if p.set && p.name != want {
			return fmt.Errorf("a %s event has no %s payload, but this one carries one", e.Type, p.name)
		}
	}
	if a := e.Action; a != nil {
		// Only an intent stores why; only a refusal also the rule.
		if a.Why != "" && e.Type != ActionIntended && e.Type != ActionRefused {
			return fmt.Errorf("a %s event stores no rationale (why), but this one has one", e.Type)
		}
		if a.Rule != "" && e.Type != ActionRefused {
			return fmt.Errorf("a %s event names no guard rule, but this one names one", e.Type)
		}
		if a.Undoes != 0 && e.Type != ActionIntended {
			return fmt.Errorf("a %s event names no entry it undoes, but this one names %d", e.Type, a.Undoes)
		}
		if a.Undoes < 0 || a.Undoes > maxEntryNumber {
			return fmt.Errorf("a %s event undoes entry %d, which is not an entry number", e.Type, a.Undoes)
		}
		if a.UndoneBy != 0 {
			return fmt.Errorf("a %s event stores no undone_by (the views set it), but this one has %d", e.Type, a.UndoneBy)
		}
		if inv := a.Inverse; inv != nil {
			if e.Type != ActionPerformed {
				return fmt.Errorf("a %s event records no inverse, but this one has one", e.Type)
			}
			if (inv.Kind == "") == (inv.None == "") {
				return fmt.Errorf("an action's inverse names either the action that undoes it or why there is none (kind %q, none %q)", inv.Kind, inv.None)
			}
		}
	}
	if st := e.Step; st != nil && st.Usage != nil && (math.IsNaN(st.Usage.CostUSD) || math.IsInf(st.Usage.CostUSD, 0)) {
		return fmt.Errorf("a %s event's cost is %v, not a number of dollars", e.Type, st.Usage.CostUSD)
	}
	if e.Type == StepFinished && e.Step != nil && e.Step.Result == nil {
		return fmt.Errorf("a %s event attaches a result to its step, but this one has none", e.Type)
	}
	if e.N > maxEntryNumber {
		return fmt.Errorf("a %s event records entry %d, beyond the last number an entry can have (%d)", e.Type, e.N, maxEntryNumber)
	}
	if e.N < 0 || e.N != 0 && !IsEntry(e.Type) {
		return fmt.Errorf("a %s event records no numbered entry, but this one has number %d", e.Type, e.N)
	}
	return nil
}

// Encode returns the stored form of e: the binary record described at the
// top of this file, at its type's current version. Zero e.V is set to
// the current version; any other version than the current is an error,
// as is a payload the type does not carry. The same event always encodes
// to the same bytes.
func Encode(e *Event) ([]byte, error) {
	code, ok := codeOf[e.Type]
	if !ok {
		return nil, fmt.Errorf("encode event: unknown type %q", e.Type)
	}
	cur := currentVersion[e.Type]
	if e.V == 0 {
		e.V = cur
	}
	if e.V != cur {
		return nil, fmt.Errorf("encode %s event: version %d, but only the current version %d can be written", e.Type, e.V, cur)
	}
	if err := checkPayloads(e); err != nil {
		return nil, fmt.Errorf("encode %s event: %w", e.Type, err)
	}
	w := encoder{b: make([]byte, 0, 512)} // most events fit: one allocation
	w.b = append(w.b, formatBinary)
	w.uvarint(code)
	w.uvarint(uint64(cur))
	w.time(e.At)
	w.who(e.Who)
	switch e.Type {
	case VoyageStarted:
		if w.opt(e.Voyage != nil) {
			w.str(e.Voyage.ID)
			w.str(e.Voyage.Intent)
			w.str(e.Voyage.Kind)
			w.str(e.Voyage.Parent)
			w.str(e.Voyage.Repo)
			w.str(e.Voyage.Dir)
			w.str(e.Voyage.Base)
			w.str(e.Voyage.Branch)
			w.str(e.Voyage.Worktree)
			w.str(e.Voyage.Session)
			w.origin(e.Voyage.Fork)
			w.origin(e.Voyage.Salvage)
		}
	case VoyageCompleted:
		if w.opt(e.Completion != nil) {
			w.str(string(e.Completion.Outcome))
			w.str(e.Completion.Summary)
		}
	case VoyageResumed:
		if w.opt(e.Resumption != nil) {
			w.str(e.Resumption.Reason)
		}
	case WorktreeRemoved:
		if r := e.Removal; w.opt(r != nil) {
			w.str(r.Path)
			w.opt(r.Forced)
		}
	case NoteAdded:
		if w.opt(e.Note != nil) {
			w.str(e.Note.Text)
		}
	case Judged:
		if j := e.Judgement; w.opt(j != nil) {
			w.judgement(j)
		}
	case PolicyAdopted, PolicyChanged:
		if p := e.Policy; w.opt(p != nil) {
			w.policy(p)
		}
	case ChainRechained:
		if r := e.Rechain; w.opt(r != nil) {
			w.rechain(r)
		}
	case StepRecorded, StepFinished:
		if st := e.Step; w.opt(st != nil) {
			w.step(st)
		}
	case IdentityHandedOff:
		if h := e.Handoff; w.opt(h != nil) {
			w.handoff(h)
		}
	case ArtifactStowed, ArtifactReduced, ArtifactJettisoned:
		if a := e.Artifact; w.opt(a != nil) {
			w.artifactRef(a)
			if e.Type == ArtifactJettisoned {
				w.str(a.Reason)
			}
		}
	case Observed:
		if w.opt(e.Obs != nil) {
			w.observation(e.Obs)
		}
	case MarkErased:
		w.str(e.Key)
	case SlateWiped:
	case BearingTaken:
		if b := e.Bearing; w.opt(b != nil) {
			w.bearing(b)
		}
	case ReadingChallenged:
		if c := e.Challenge; w.opt(c != nil) {
			w.uvarint(c.Bearing)
			w.str(c.Feedback)
			w.str(c.Text)
			w.str(string(c.Source))
		}
	case ActionIntended, ActionPerformed, ActionFailed, ActionRefused:
		if a := e.Action; w.opt(a != nil) {
			w.action(a)
			switch e.Type {
			case ActionIntended:
				w.str(a.Why)
				w.uvarint(uint64(a.Undoes))
			case ActionPerformed:
				w.inverse(a.Inverse)
			case ActionRefused:
				w.str(a.Why)
				w.str(a.Rule)
			}
		}
	}
	if IsEntry(e.Type) {
		w.uvarint(uint64(e.N))
	}
	return w.b, nil
}

// EncodeJSON returns the JSON form of e, the export and interchange form
// that Decode also reads. Zero e.V is set to the current version.
func EncodeJSON(e *Event) ([]byte, error) {
	if e.V == 0 {
		e.V = currentVersion[e.Type]
	}
	data, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encode %s event as JSON: %w", e.Type, err)
	}
	return data, nil
}

// Decode parses a stored event, binary or JSON, and returns it at its
// type's current version. An unknown type or a version newer than this
// code knows is an error: a newer helm wrote this voyage.
func Decode(data []byte) (*Event, error) {
	if len(data) == 0 {
		return nil, errors.New("decode event: empty record")
	}
	switch data[0] {
	case formatBinary:
		return decodeBinary(data, nil)
	case '{', ' ', '\t', '\r', '\n':
		return decodeJSON(data)
	}
	return nil, fmt.Errorf("decode event: unknown record format 0x%02x (written by a newer helm?)", data[0])
}

type encoder struct{ b []byte }

func (w *encoder) uvarint(v uint64) {
	if v < 0x80 {
		w.b = append(w.b, byte(v))
		return
	}
	w.b = binary.AppendUvarint(w.b, v)
}

func (w *encoder) varint(v int64) { w.uvarint(uint64(v<<1) ^ uint64(v>>63)) }

func (w *encoder) str(s string) {
	w.uvarint(uint64(len(s)))
	w.b = append(w.b, s...)
}

func (w *encoder) raw(p []byte) {
	if p == nil {
		w.b = append(w.b, 0)
		return
	}
	w.uvarint(uint64(len(p)) + 1)
	w.b = append(w.b, p...)
}

// opt writes a presence flag and returns it.
func (w *encoder) opt(present bool) bool {
	if present {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
	return present
}

// list writes a list's count and reports whether elements follow.
func (w *encoder) list(isNil bool, n int) bool {
	if isNil {
		w.b = append(w.b, 0)
		return false
	}
	w.uvarint(uint64(n) + 1)
	return n > 0
}

func (w *encoder) time(t time.Time) {
	if t.IsZero() {
		w.b = append(w.b, timeZero)
		return
	}
	sec, nsec := t.Unix(), int64(t.Nanosecond())
	if -maxNanoSec <= sec && sec <= maxNanoSec {
		w.b = append(w.b, timeNanos)
		w.varint(sec*1e9 + nsec)
		return
	}
	w.b = append(w.b, timeWide)
	w.varint(sec)
	w.uvarint(uint64(nsec))
}

func (w *encoder) who(x logbook.Who) {
	w.str(x.Identity)
	w.str(x.Role)
	w.str(x.Method)
}

// artifactRef writes what decoder.artifactRef reads: an ArtifactRef but
// its Reason.
func (w *encoder) artifactRef(a *ArtifactRef) {
	w.str(a.Hash)
	w.varint(a.Size)
	w.varint(a.StoredSize)
	w.varint(a.Offset)
	w.uvarint(a.Blob)
	w.str(a.DerivedFrom)
	w.str(a.Method)
}

func (d *decoder) artifactRef(a *ArtifactRef) {
	a.Hash = d.string("artifact hash")
	a.Size = d.varint("artifact size")
	a.StoredSize = d.varint("artifact stored_size")
	a.Offset = d.varint("artifact offset")
	a.Blob = d.uvarint("artifact blob")
	a.DerivedFrom = d.string("artifact derived_from")
	a.Method = d.string("artifact method")
}

// bearing writes what decodeBearing reads.
func (w *encoder) bearing(b *logbook.Bearing) {
	if w.list(b.Observations == nil, len(b.Observations)) {
		for i := range b.Observations {
			w.observation(&b.Observations[i])
		}
	}
	w.str(b.Reading.Text)
	w.str(string(b.Reading.Source))
	if w.list(b.Reading.History == nil, len(b.Reading.History)) {
		for _, h := range b.Reading.History {
			w.str(h.Text)
			w.str(string(h.Source))
			w.str(h.ChallengedWith)
			w.time(h.ChallengedAt)
			w.who(h.ChallengedBy)
		}
	}
}

// judgement writes what decoder.judgement reads.
// policy writes str digest, list str sources.
func (w *encoder) policy(p *logbook.PolicyRecord) {
	w.str(p.Digest)
	if w.list(p.Sources == nil, len(p.Sources)) {
		for _, s := range p.Sources {
			w.str(s)
		}
	}
}

// origin writes a fork's or a salvage's origin (voyage-started v4).
func (w *encoder) origin(o *Origin) {
	if !w.opt(o != nil) {
		return
	}
	w.str(o.Voyage)
	w.uvarint(uint64(o.Entry))
	w.uvarint(o.Seq)
	w.str(o.Head)
	if l := o.Lost; w.opt(l != nil) {
		w.uvarint(l.Seq)
		w.str(l.File)
		w.varint(l.Offset)
		w.str(l.Reason)
		w.uvarint(l.Records)
		w.varint(l.Bytes)
		if w.list(l.Artifacts == nil, len(l.Artifacts)) {
			for _, a := range l.Artifacts {
				w.str(a)
			}
		}
	}
}

// origin reads what encoder.origin writes.
func (d *decoder) origin(field string) *Origin {
	if !d.opt(field) {
		return nil
	}
	o := &Origin{Voyage: d.string(field + " voyage")}
	o.Entry = int(d.uvarint(field + " entry"))
	o.Seq = d.uvarint(field + " seq")
	o.Head = d.string(field + " head")
	if d.opt(field + " lost") {
		l := &Loss{Seq: d.uvarint(field + " lost seq"), File: d.string(field + " lost file"), Offset: d.varint(field + " lost offset"),
			Reason: d.string(field + " lost reason"), Records: d.uvarint(field + " lost records"), Bytes: d.varint(field + " lost bytes")}
		if n, isNil := d.list(field+" lost artifacts", minString); !isNil {
			l.Artifacts = make([]string, n)
			for i := range l.Artifacts {
				l.Artifacts[i] = d.string(field + " lost artifact")
			}
		}
		o.Lost = l
	}
	return o
}

func (w *encoder) rechain(r *logbook.RechainRecord) {
	w.uvarint(r.Seq)
	w.str(r.CRC32C)
	w.str(r.Why)
}

// rechain reads what encoder.rechain writes.
// handoff is str(from to why) opt(confirmed).
func (w *encoder) handoff(h *logbook.Handoff) {
	w.str(h.From)
	w.str(h.To)
	w.str(h.Why)
	w.opt(h.Confirmed)
}

func (d *decoder) handoff() logbook.Handoff {
	return logbook.Handoff{From: d.string("handoff from"), To: d.string("handoff to"), Why: d.string("handoff why"), Confirmed: d.opt("handoff confirmed")}
}

func (d *decoder) rechain() logbook.RechainRecord {
	return logbook.RechainRecord{Seq: d.uvarint("rechain seq"), CRC32C: d.string("rechain crc32c"), Why: d.string("rechain why")}
}

// step writes what decoder.step reads.
func (w *encoder) step(s *logbook.Step) {
	w.str(string(s.Kind))
	w.str(s.Agent)
	w.str(s.Session)
	w.str(s.ID)
	w.str(s.Tool)
	w.raw(s.Input)
	w.str(s.Text)
	w.str(s.Voyage)
	if d := s.Decision; w.opt(d != nil) {
		w.str(d.Verdict)
		w.str(d.Rule)
		w.str(d.Reason)
	}
	if r := s.Result; w.opt(r != nil) {
		w.str(r.Output)
		w.str(r.Artifact)
		w.opt(r.Failed)
		w.varint(int64(r.Duration))
	}
	if u := s.Usage; w.opt(u != nil) {
		w.str(u.Model)
		w.varint(u.InputTokens)
		w.varint(u.OutputTokens)
		w.varint(u.CacheReadTokens)
		w.varint(u.CacheWriteTokens)
		w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(u.CostUSD))
		w.varint(int64(u.Duration))
	}
}

// step reads what encoder.step writes.
func (d *decoder) step(s *logbook.Step) {
	s.Kind = logbook.StepKind(d.string("step kind"))
	s.Agent = d.string("step agent")
	s.Session = d.string("step session")
	s.ID = d.string("step id")
	s.Tool = d.string("step tool")
	s.Input = d.rawMessage("step input")
	s.Text = d.string("step text")
	s.Voyage = d.string("step voyage")
	if d.opt("step decision") {
		s.Decision = &logbook.StepDecision{Verdict: d.string("decision verdict"), Rule: d.string("decision rule"), Reason: d.string("decision reason")}
	}
	if d.opt("step result") {
		s.Result = &logbook.StepResult{Output: d.string("result output"), Artifact: d.string("result artifact"),
			Failed: d.opt("result failed"), Duration: time.Duration(d.varint("result duration"))}
	}
	if d.opt("step usage") {
		u := &logbook.Usage{Model: d.string("usage model"), InputTokens: d.varint("usage input_tokens"),
			OutputTokens: d.varint("usage output_tokens"), CacheReadTokens: d.varint("usage cache_read_tokens"),
			CacheWriteTokens: d.varint("usage cache_write_tokens")}
		at := d.off
		if u.CostUSD = math.Float64frombits(d.u64("usage cost_usd")); math.IsNaN(u.CostUSD) || math.IsInf(u.CostUSD, 0) {
			d.fail("usage cost_usd", at, "%v is not a cost", u.CostUSD)
		}
		u.Duration = time.Duration(d.varint("usage duration"))
		s.Usage = u
	}
}

// u64 reads 8 bytes, little-endian.
func (d *decoder) u64(field string) uint64 {
	if d.off+8 > len(d.buf) {
		d.fail(field, d.off, "record ends")
		return 0
	}
	v := binary.LittleEndian.Uint64(d.buf[d.off:])
	d.off += 8
	return v
}

// policy reads what encoder.policy writes.
func (d *decoder) policy() logbook.PolicyRecord {
	p := logbook.PolicyRecord{Digest: d.string("policy digest")}
	if n, isNil := d.list("policy sources", minString); !isNil {
		p.Sources = make([]string, n)
		for i := range p.Sources {
			p.Sources[i] = d.string("policy source")
		}
	}
	return p
}

func (w *encoder) judgement(j *logbook.Judgement) {
	w.varint(int64(j.Score))
	w.str(j.Dimension)
	if w.list(j.Evidence == nil, len(j.Evidence)) {
		for _, n := range j.Evidence {
			w.varint(int64(n))
		}
	}
	w.str(j.Text)
}

// action writes what decodeAction reads.
func (w *encoder) action(a *logbook.ActionRecord) {
	w.str(a.ID)
	w.str(a.Kind)
	w.raw(a.Params)
	w.str(string(a.Status))
	if r := a.Result; w.opt(r != nil) {
		w.str(r.SHA)
		w.str(r.Branch)
		w.varint(int64(r.Number))
		w.varint(r.CommentID)
		w.str(r.URL)
		if w.list(r.Reviewers == nil, len(r.Reviewers)) {
			for _, s := range r.Reviewers {
				w.str(s)
			}
		}
	}
	w.str(a.Error)
	w.time(a.DoneAt)
}

// inverse writes opt(str(kind) raw(params) str(none)).
func (w *encoder) inverse(inv *logbook.Inverse) {
	if w.opt(inv != nil) {
		w.str(inv.Kind)
		w.raw(inv.Params)
		w.str(inv.None)
	}
}

func (w *encoder) observation(o *logbook.ObservationRecord) {
	w.str(o.Key)
	w.raw(o.Mark)
	w.str(o.Label)
	w.str(o.Artifact)
	w.time(o.ObservedAt)
	w.who(o.ObservedBy)
}

// decoder reads one binary record. Its first error sticks: it moves the
// offset to the end, so later reads fail fast and return zero values, and
// decodeBinary reports the first error. The fast paths are small enough
// to inline; the failures are out of line.
type decoder struct {
	buf []byte
	str string // string(buf): decoded strings are substrings of it
	off int
	err error
	// intern, when set, makes decoded strings and raw values copies of
	// their own, one per distinct value, instead of substrings of str.
	intern *interner
	// reuse, when set, is the Decoder whose events are reused and whose
	// arena holds str; kept is then buf's copy there (nil: str is a
	// string of its own), which raw values share.
	reuse *Decoder
	kept  []byte
}

//go:noinline
func (d *decoder) fail(field string, at int, format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%s at offset %d: %s", field, at, fmt.Sprintf(format, args...))
	}
	d.off = len(d.buf)
}

func (d *decoder) byte(field string) byte {
	if d.off < len(d.buf) {
		b := d.buf[d.off]
		d.off++
		return b
	}
	d.fail(field, d.off, "record ends")
	return 0
}

func (d *decoder) uvarint(field string) uint64 {
	if d.off < len(d.buf) && d.buf[d.off] < 0x80 {
		d.off++
		return uint64(d.buf[d.off-1])
	}
	return d.uvarintSlow(field)
}

func (d *decoder) uvarintSlow(field string) uint64 {
	v, n := binary.Uvarint(d.buf[d.off:])
	switch {
	case n > 0:
		d.off += n
		return v
	case n == 0:
		d.fail(field, d.off, "record ends inside a varint")
	default:
		d.fail(field, d.off, "varint overflows 64 bits")
	}
	return 0
}

func (d *decoder) varint(field string) int64 {
	u := d.uvarint(field)
	return int64(u>>1) ^ -int64(u&1)
}

// tooLong fails a length or count n read at offset at.
func (d *decoder) tooLong(field string, at int, what string, n uint64) {
	d.fail(field, at, "%s %d exceeds the %d bytes left", what, n, len(d.buf)-d.off)
}

func (d *decoder) string(field string) string {
	if off := d.off; off < len(d.buf) {
		// The common case: a one-byte length that fits.
		if n := int(d.buf[off]); n < 0x80 && n < len(d.buf)-off && d.intern == nil {
			d.off = off + 1 + n
			return d.str[off+1 : d.off]
		}
	}
	return d.stringSlow(field)
}

func (d *decoder) stringSlow(field string) string {
	at := d.off
	n := d.uvarint(field)
	if n > uint64(len(d.buf)-d.off) {
		d.tooLong(field, at, "length", n)
		return ""
	}
	s := d.str[d.off : d.off+int(n)]
	d.off += int(n)
	if d.intern != nil {
		return d.intern.str(s)
	}
	return s
}

// rawMessage reads a raw field into a copy of its own: a RawMessage is
// mutable, so it may not share the record's string. (A Decoder's copy of
// the record holds it: its bytes there are the raw value's alone, no
// decoded string covers them, and its capacity ends with it.)
func (d *decoder) rawMessage(field string) json.RawMessage {
	at := d.off
	u := d.uvarint(field)
	if u == 0 {
		return nil // also after an error
	}
	if u-1 > uint64(len(d.buf)-d.off) {
		d.tooLong(field, at, "length", u-1)
		return nil
	}
	end := d.off + int(u-1)
	var p json.RawMessage
	switch {
	case d.intern != nil:
		p = d.intern.raw(d.buf[d.off:end])
	case d.kept != nil:
		p = d.kept[d.off:end:end] // capped: an append copies
	default:
		p = append(json.RawMessage{}, d.buf[d.off:end]...)
	}
	d.off = end
	return p
}

// opt reads a presence flag.
func (d *decoder) opt(field string) bool {
	at := d.off
	switch b := d.byte(field); b {
	case 0:
		return false
	case 1:
		return true
	default:
		d.fail(field, at, "presence flag %d is neither 0 nor 1", b)
	}
	return false
}

// list reads a list's count; minSize is the fewest bytes an element
// takes, so a count the bytes left cannot hold is refused before
// anything is allocated.
func (d *decoder) list(field string, minSize int) (n int, isNil bool) {
	at := d.off
	u := d.uvarint(field)
	if u == 0 {
		return 0, true // also after an error
	}
	if u-1 > uint64((len(d.buf)-d.off)/minSize) {
		d.tooLong(field, at, "count", u-1)
		return 0, true
	}
	return int(u - 1), false
}

func (d *decoder) time(field string) time.Time {
	at := d.off
	switch b := d.byte(field); b {
	case timeZero:
		return time.Time{} // also after an error
	case timeNanos:
		return time.Unix(0, d.varint(field)).UTC()
	case timeWide:
		sec := d.varint(field)
		nsec := d.uvarint(field)
		if nsec >= 1e9 {
			d.fail(field, at, "nanoseconds %d out of range", nsec)
			return time.Time{}
		}
		return time.Unix(sec, int64(nsec)).UTC()
	default:
		d.fail(field, at, "unknown time encoding 0x%02x", b)
	}
	return time.Time{}
}

func (d *decoder) who(field string) logbook.Who {
	return logbook.Who{Identity: d.string(field), Role: d.string(field), Method: d.string(field)}
}

// Fewest bytes an element of each list takes.
const (
	minObservation = 8 // 4 strs/raws, a time, a who
	minAttempt     = 7 // 3 strs, a time, a who
	minString      = 1
)

func (d *decoder) observation(o *logbook.ObservationRecord) {
	o.Key = d.string("observation key")
	o.Mark = d.rawMessage("observation mark")
	o.Label = d.string("observation label")
	o.Artifact = d.string("observation artifact")
	o.ObservedAt = d.time("observation observed_at")
	o.ObservedBy = d.who("observation observed_by")
}

func (d *decoder) observations() []logbook.ObservationRecord {
	n, isNil := d.list("bearing observations", minObservation)
	if isNil {
		return nil
	}
	obs := make([]logbook.ObservationRecord, n)
	for i := range obs {
		d.observation(&obs[i])
	}
	return obs
}

// boxed allocates an Event and its payload together: one allocation
// instead of two for the common events.
type boxed[P any] struct {
	e Event
	p P
}

// decodeBinary decodes a binary record (data[0] == formatBinary), with
// the Decoder dc when it is not nil.
func decodeBinary(data []byte, dc *Decoder) (*Event, error) {
	d := decoder{buf: data, off: 1, reuse: dc}
	at := d.off
	code := d.uvarint("type")
	if d.err != nil {
		return nil, fmt.Errorf("decode event: %w", d.err)
	}
	if code == 0 || code >= uint64(len(typeCodes)) {
		return nil, fmt.Errorf("decode event: unknown type code %d at offset %d (written by a newer helm?)", code, at)
	}
	t := typeCodes[code]
	v := d.uvarint("version")
	cur := currentVersion[t]
	switch {
	case d.err != nil:
		return nil, fmt.Errorf("decode %s event: %w", t, d.err)
	case v > uint64(cur):
		return nil, fmt.Errorf("decode %s event: version %d is newer than this helm understands (%d); upgrade helm", t, v, cur)
	case v < 1:
		return nil, fmt.Errorf("decode %s event: invalid version %d", t, v)
	}
	if dc != nil {
		d.str, d.kept = dc.keep(data)
	} else {
		d.str = string(data)
	}
	when := d.time("at")
	who := d.who("who")
	e := d.payload(t, int(v))
	if d.err == nil && d.off != len(d.buf) {
		d.fail("end", d.off, "%d trailing bytes", len(d.buf)-d.off)
	}
	if d.err != nil {
		return nil, fmt.Errorf("decode %s event: %w", t, d.err)
	}
	e.Type, e.V, e.At, e.Who = t, cur, when, who
	// What Encode could not store is not an event, binary or JSON (a
	// step-finished event without its result, found by FuzzDecode).
	if err := checkPayloads(e); err != nil {
		return nil, fmt.Errorf("decode %s event: %w", t, err)
	}
	return e, nil
}

// payload decodes the payload of a type at version v (1 <= v <= current)
// into a new Event. A layout that changed is read by version here, into
// today's structs.
func (d *decoder) payload(t Type, v int) *Event {
	switch t {
	case VoyageStarted:
		if !d.opt("voyage") {
			return &Event{}
		}
		x := &boxed[VoyageInfo]{}
		x.p = VoyageInfo{ID: d.string("voyage id"), Intent: d.string("voyage intent"), Kind: d.string("voyage kind")}
		if v >= 2 {
			x.p.Parent = d.string("voyage parent")
			x.p.Repo = d.string("voyage repo")
			x.p.Dir = d.string("voyage dir")
			x.p.Base = d.string("voyage base")
			x.p.Branch = d.string("voyage branch")
			x.p.Worktree = d.string("voyage worktree")
		}
		if v >= 3 {
			x.p.Session = d.string("voyage session")
		}
		if v >= 4 {
			x.p.Fork = d.origin("voyage fork")
			x.p.Salvage = d.origin("voyage salvage")
		}
		x.e.Voyage = &x.p
		return &x.e
	case VoyageCompleted:
		if !d.opt("completion") {
			return &Event{}
		}
		x := &boxed[Completion]{}
		x.p = Completion{Outcome: Outcome(d.string("completion outcome")), Summary: d.string("completion summary")}
		x.e.Completion = &x.p
		return &x.e
	case VoyageResumed:
		if !d.opt("resumption") {
			return &Event{}
		}
		return &Event{Resumption: &Resumption{Reason: d.string("resumption reason")}}
	case WorktreeRemoved:
		if !d.opt("removal") {
			return &Event{}
		}
		return &Event{Removal: &Removal{Path: d.string("removal path"), Forced: d.opt("removal forced")}}
	case NoteAdded:
		e := &Event{}
		if d.opt("note") {
			e.Note = &logbook.Note{Text: d.string("note text")}
		}
		e.N = d.entryNumber()
		return e
	case PolicyAdopted, PolicyChanged:
		e := &Event{}
		if d.opt("policy") {
			p := d.policy()
			e.Policy = &p
		}
		if t == PolicyChanged {
			e.N = d.entryNumber()
		}
		return e
	case ChainRechained:
		e := &Event{}
		if d.opt("rechain") {
			r := d.rechain()
			e.Rechain = &r
		}
		e.N = d.entryNumber()
		return e
	case IdentityHandedOff:
		e := &Event{}
		if d.opt("handoff") {
			h := d.handoff()
			e.Handoff = &h
		}
		e.N = d.entryNumber()
		return e
	case StepRecorded, StepFinished:
		x := &boxed[logbook.Step]{}
		if d.opt("step") {
			d.step(&x.p)
			x.e.Step = &x.p
		}
		if t == StepRecorded {
			x.e.N = d.entryNumber()
		}
		return &x.e
	case Judged:
		e := &Event{}
		if d.opt("judgement") {
			e.Judgement = d.judgement()
		}
		e.N = d.entryNumber()
		return e
	case ArtifactStowed, ArtifactReduced, ArtifactJettisoned:
		if !d.opt("artifact") {
			return &Event{}
		}
		x := box(d.reuse.artifactBox())
		a := &x.p
		d.artifactRef(a)
		if t == ArtifactJettisoned && v >= 2 {
			a.Reason = d.string("artifact reason")
		}
		x.e.Artifact = a
		return &x.e
	case Observed:
		if !d.opt("observation") {
			return &Event{}
		}
		x := box(d.reuse.obsBox())
		d.observation(&x.p)
		x.e.Obs = &x.p
		return &x.e
	case MarkErased:
		return &Event{Key: d.string("key")}
	case SlateWiped:
		return &Event{}
	case BearingTaken:
		if !d.opt("bearing") {
			if v >= 3 {
				return &Event{N: d.entryNumber()}
			}
			return &Event{}
		}
		x := box(d.reuse.bearingBox())
		switch v {
		case 1:
			d.decodeBearingV1(&x.p)
		default:
			d.decodeBearing(&x.p)
		}
		x.e.Bearing = &x.p
		if v >= 3 {
			x.e.N = d.entryNumber()
		}
		return &x.e
	case ReadingChallenged:
		if !d.opt("challenge") {
			return &Event{}
		}
		x := &boxed[Challenge]{}
		c := &x.p
		c.Bearing = d.uvarint("challenge bearing")
		c.Feedback = d.string("challenge feedback")
		c.Text = d.string("challenge text")
		c.Source = logbook.Source(d.string("challenge source"))
		x.e.Challenge = c
		return &x.e
	case ActionIntended, ActionPerformed, ActionFailed, ActionRefused:
		if !d.opt("action") {
			if t == ActionRefused || t == ActionIntended && v >= 2 {
				return &Event{N: d.entryNumber()}
			}
			return &Event{}
		}
		x := &boxed[logbook.ActionRecord]{}
		d.decodeAction(&x.p)
		x.e.Action = &x.p
		switch {
		case t == ActionIntended && v >= 2:
			x.p.Why = d.string("action why")
			if v >= 3 {
				x.p.Undoes = d.entryRef("action undoes")
			}
			x.e.N = d.entryNumber()
		case t == ActionPerformed && v >= 2:
			x.p.Inverse = d.inverse()
		case t == ActionRefused:
			x.p.Why = d.string("action why")
			x.p.Rule = d.string("action rule")
			x.e.N = d.entryNumber()
		}
		return &x.e
	}
	d.fail("type", 1, "no payload decoder for %s", t) // typeCodes and this switch should agree
	return &Event{}
}

// maxEntryNumber is the largest entry number an event may carry, in
// either encoding.
const maxEntryNumber = 1 << 31

// entryNumber reads the number of the entry an event records.
func (d *decoder) entryNumber() int { return d.entryRef("entry number") }

// entryRef reads an entry number, the field named what.
func (d *decoder) entryRef(what string) int {
	at := d.off
	n := d.uvarint(what)
	if n > maxEntryNumber {
		d.fail(what, at, "%d is out of range", n)
		return 0
	}
	return int(n)
}

func (d *decoder) judgement() *logbook.Judgement {
	j := &logbook.Judgement{}
	at := d.off
	score := d.varint("judgement score")
	if j.Score = int(score); int64(j.Score) != score {
		d.fail("judgement score", at, "%d overflows int", score)
	}
	j.Dimension = d.string("judgement dimension")
	if n, isNil := d.list("judgement evidence", 1); !isNil {
		j.Evidence = make([]int, n)
		for i := range j.Evidence {
			at := d.off
			v := d.varint("judgement evidence")
			if j.Evidence[i] = int(v); int64(j.Evidence[i]) != v {
				d.fail("judgement evidence", at, "%d overflows int", v)
			}
		}
	}
	j.Text = d.string("judgement text")
	return j
}

// decodeBearing reads bearing-taken v2 and v3: observations and a Reading.
func (d *decoder) decodeBearing(b *logbook.Bearing) {
	b.Observations = d.observations()
	r := &b.Reading
	r.Text = d.string("reading text")
	r.Source = logbook.Source(d.string("reading source"))
	n, isNil := d.list("reading history", minAttempt)
	if isNil {
		return
	}
	r.History = make([]logbook.ReadingAttempt, n)
	for i := range r.History {
		h := &r.History[i]
		h.Text = d.string("attempt text")
		h.Source = logbook.Source(d.string("attempt source"))
		h.ChallengedWith = d.string("attempt challenged_with")
		h.ChallengedAt = d.time("attempt challenged_at")
		h.ChallengedBy = d.who("attempt challenged_by")
	}
}

// decodeBearingV1 reads bearing-taken v1, whose reading was a bare
// string, into today's Bearing: the string becomes Reading.Text.
func (d *decoder) decodeBearingV1(b *logbook.Bearing) {
	b.Observations = d.observations()
	b.Reading = logbook.Reading{Text: d.string("reading")}
}

// inverse reads what encoder.inverse writes.
func (d *decoder) inverse() *logbook.Inverse {
	if !d.opt("action inverse") {
		return nil
	}
	at := d.off
	inv := &logbook.Inverse{Kind: d.string("inverse kind"), Params: d.rawMessage("inverse params"), None: d.string("inverse none")}
	if (inv.Kind == "") == (inv.None == "") {
		// As checkPayloads refuses it: what Encode cannot write is no event.
		d.fail("action inverse", at, "an inverse names either the action that undoes it or why there is none (kind %q, none %q)", inv.Kind, inv.None)
	}
	return inv
}

func (d *decoder) decodeAction(a *logbook.ActionRecord) {
	a.ID = d.string("action id")
	a.Kind = d.string("action kind")
	a.Params = d.rawMessage("action params")
	a.Status = logbook.ActionStatus(d.string("action status"))
	if d.opt("action result") {
		r := &logbook.ActionResult{}
		r.SHA = d.string("result sha")
		r.Branch = d.string("result branch")
		at := d.off
		num := d.varint("result number")
		if r.Number = int(num); int64(r.Number) != num {
			d.fail("result number", at, "%d overflows int", num)
		}
		r.CommentID = d.varint("result comment_id")
		r.URL = d.string("result url")
		if n, isNil := d.list("result reviewers", minString); !isNil {
			r.Reviewers = make([]string, n)
			for i := range r.Reviewers {
				r.Reviewers[i] = d.string("result reviewer")
			}
		}
		a.Result = r
	}
	a.Error = d.string("action error")
	a.DoneAt = d.time("action done_at")
}
