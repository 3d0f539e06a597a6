package projection

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/logbook"
)

// oddEvents covers every payload field and the cases the layout must keep
// apart: nil and empty slices and raw messages, absent pointers, zero,
// old, far-future and sub-second times, negative numbers, long strings.
func oddEvents() []*Event {
	at := time.Date(2026, 2, 26, 17, 0, 0, 123456789, time.UTC)
	who := logbook.Who{Identity: "ann", Role: "reviewer", Method: "human"}
	long := strings.Repeat("x", 300)
	obs := logbook.ObservationRecord{Key: "k", Mark: json.RawMessage(`{"kind":"file"}`), Label: "L", Artifact: "h", ObservedAt: at, ObservedBy: who}
	history := []logbook.ReadingAttempt{
		{Text: "first", Source: logbook.SourceAgent, ChallengedWith: "why", ChallengedAt: at, ChallengedBy: who},
		{Text: "second", ChallengedWith: long},
	}
	return []*Event{
		{Type: VoyageStarted, V: 4},
		{Type: VoyageStarted, V: 4, At: time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), Voyage: &VoyageInfo{}},
		{Type: VoyageStarted, V: 4, Voyage: &VoyageInfo{ID: "i", Parent: long, Repo: "o/r", Dir: "/d", Base: "b", Branch: "x", Worktree: "/w"}},
		{Type: VoyageResumed, V: 1},
		{Type: PolicyAdopted, V: 1},
		{Type: PolicyAdopted, V: 1, Policy: &logbook.PolicyRecord{Digest: long, Sources: []string{}}},
		{Type: PolicyChanged, V: 1, N: 1},
		{Type: PolicyChanged, V: 1, N: 2, Policy: &logbook.PolicyRecord{}},
		{Type: PolicyChanged, V: 1, N: 3, Policy: &logbook.PolicyRecord{Digest: long, Sources: []string{}}},
		{Type: ChainRechained, V: 1, N: 1},
		{Type: ChainRechained, V: 1, N: 2, Rechain: &logbook.RechainRecord{}},
		{Type: ChainRechained, V: 1, N: 3, Rechain: &logbook.RechainRecord{Seq: 1 << 40, CRC32C: "0badc0de", Why: long}},
		{Type: IdentityHandedOff, V: 1, N: 1},
		{Type: IdentityHandedOff, V: 1, N: 2, Handoff: &logbook.Handoff{}},
		{Type: IdentityHandedOff, V: 1, N: 3, At: at, Who: who, Handoff: &logbook.Handoff{From: "a", To: long, Why: long, Confirmed: true}},
		{Type: WorktreeRemoved, V: 1},
		{Type: WorktreeRemoved, V: 1, At: at, Who: who, Removal: &Removal{Path: "/src/w-1", Forced: true}},
		{Type: WorktreeRemoved, V: 1, Removal: &Removal{}},
		{Type: VoyageResumed, V: 1, At: at, Who: who, Resumption: &Resumption{}},
		{Type: VoyageResumed, V: 1, Resumption: &Resumption{Reason: long}},
		{Type: NoteAdded, V: 1},
		{Type: NoteAdded, V: 1, N: 1 << 30, Note: &logbook.Note{}},
		{Type: Judged, V: 1, N: 3},
		{Type: Judged, V: 1, N: 1, Judgement: &logbook.Judgement{}},
		{Type: Judged, V: 1, N: 1, Judgement: &logbook.Judgement{Score: -3, Evidence: []int{}, Dimension: long}},
		{Type: Judged, V: 1, N: 1, Judgement: &logbook.Judgement{Score: 10, Evidence: []int{-1, 0, math.MaxInt32}, Text: "t"}},
		{Type: ActionRefused, V: 1},
		{Type: ActionRefused, V: 1, N: 9, Action: &logbook.ActionRecord{ID: "a", Kind: "push", Why: long, Rule: "r"}},
		{Type: VoyageCompleted, V: 1, At: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), Completion: &Completion{Outcome: OutcomeBlocked}},
		{Type: VoyageCompleted, V: 1, At: time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Type: ArtifactStowed, V: 1, At: time.Unix(0, 0).UTC(), Artifact: &ArtifactRef{Hash: long, Size: -1, StoredSize: math.MaxInt64, Offset: math.MinInt64, Blob: math.MaxUint64}},
		{Type: ArtifactReduced, V: 1, At: at, Artifact: &ArtifactRef{Hash: "s", DerivedFrom: "h", Method: "head"}},
		{Type: ArtifactJettisoned, V: 2, At: at, Artifact: &ArtifactRef{Hash: "h", Reason: "holds a customer's data"}},
		{Type: Observed, V: 1, At: at, Who: who, Obs: &obs},
		{Type: Observed, V: 1, Obs: &logbook.ObservationRecord{Mark: json.RawMessage{}}},
		{Type: Observed, V: 1, Obs: &logbook.ObservationRecord{}},
		{Type: MarkErased, V: 1, Key: "k"},
		{Type: MarkErased, V: 1},
		{Type: SlateWiped, V: 1, At: at, Who: who},
		{Type: BearingTaken, V: 3, Bearing: &logbook.Bearing{}},
		{Type: BearingTaken, V: 3, N: 200},
		{Type: BearingTaken, V: 3, N: 2, Bearing: &logbook.Bearing{Observations: []logbook.ObservationRecord{}, Reading: logbook.Reading{History: []logbook.ReadingAttempt{}}}},
		{Type: BearingTaken, V: 3, At: at, Who: who, Bearing: &logbook.Bearing{Observations: []logbook.ObservationRecord{obs, obs, {}}, Reading: logbook.Reading{Text: long, Source: logbook.SourceUser, History: history}}},
		{Type: ReadingChallenged, V: 1, Challenge: &Challenge{Bearing: math.MaxUint64, Feedback: "f", Text: "t", Source: logbook.SourceUser}},
		{Type: ActionIntended, V: 3, N: 4, Action: &logbook.ActionRecord{ID: "a", Kind: "commit", Params: json.RawMessage(`{"message": "spaced"}`), Why: "w"}},
		{Type: ActionIntended, V: 3, Action: &logbook.ActionRecord{ID: "a", Params: json.RawMessage{}}},
		{Type: ActionIntended, V: 3, N: 1},
		{Type: ActionIntended, V: 3, N: 1 << 31, Action: &logbook.ActionRecord{ID: "u", Kind: "close-pull-request", Undoes: 1<<31 - 1}},
		{Type: ActionPerformed, V: 2, At: at, Action: &logbook.ActionRecord{ID: "a", Status: logbook.ActionPerformed, DoneAt: at, Result: &logbook.ActionResult{
			SHA: "abc", Branch: "b", Number: -7, CommentID: math.MinInt64, URL: "https://x/y", Reviewers: []string{"bob", "", long}}}},
		{Type: ActionPerformed, V: 2, Action: &logbook.ActionRecord{ID: "a", Result: &logbook.ActionResult{Reviewers: []string{}}}},
		{Type: ActionPerformed, V: 2, Action: &logbook.ActionRecord{ID: "a", Result: &logbook.ActionResult{}}},
		{Type: ActionPerformed, V: 2, Action: &logbook.ActionRecord{ID: "a", Inverse: &logbook.Inverse{Kind: "k", Params: json.RawMessage(`{"n": [1, 2]}`)}}},
		{Type: ActionPerformed, V: 2, Action: &logbook.ActionRecord{ID: "a", Inverse: &logbook.Inverse{None: long}}},
		{Type: ActionFailed, V: 1, Action: &logbook.ActionRecord{ID: "a", Error: "boom"}},
		{Type: ActionFailed, V: 1},
		{Type: VoyageStarted, V: 4, Voyage: &VoyageInfo{ID: "i", Session: "claude-code:s-1/a-2"}},
		{Type: VoyageStarted, V: 4, Voyage: &VoyageInfo{ID: "i", Fork: &Origin{Voyage: "o", Entry: 3, Seq: 9, Head: "ab"}}},
		{Type: VoyageStarted, V: 4, Voyage: &VoyageInfo{ID: "i", Salvage: &Origin{Voyage: "o", Seq: 9, Head: "ab",
			Lost: &Loss{Seq: 10, File: "/h/events/1.seg", Offset: -1, Reason: "checksum", Records: 4, Bytes: 300, Artifacts: []string{"x", "y"}}}}},
		{Type: VoyageStarted, V: 4, Voyage: &VoyageInfo{ID: "i", Salvage: &Origin{Voyage: "o", Lost: &Loss{}}}},
		{Type: StepRecorded, V: 1, N: 1},
		{Type: StepRecorded, V: 1, N: 2, Step: &logbook.Step{}},
		{Type: StepRecorded, V: 1, N: 3, At: at, Who: who, Step: &logbook.Step{Kind: logbook.StepTool, Agent: "claude-code", Session: "s", ID: "t1",
			Tool: "Bash", Input: json.RawMessage(`{"command": "ls"}`), Text: long, Voyage: "v",
			Decision: &logbook.StepDecision{Verdict: "deny", Rule: "r", Reason: long},
			Result:   &logbook.StepResult{Output: long, Artifact: "h", Failed: true, Duration: -time.Second},
			Usage:    &logbook.Usage{Model: "m", InputTokens: math.MaxInt64, OutputTokens: -1, CacheReadTokens: 3, CacheWriteTokens: 4, CostUSD: 0.0123, Duration: time.Hour}}},
		{Type: StepRecorded, V: 1, N: 4, Step: &logbook.Step{Input: json.RawMessage{}, Usage: &logbook.Usage{CostUSD: math.SmallestNonzeroFloat64}}},
		{Type: StepFinished, V: 1, Step: &logbook.Step{Agent: "a", ID: "t1", Result: &logbook.StepResult{}}},
		{Type: StepFinished, V: 1},
	}
}

func TestBinaryRoundTripIsExact(t *testing.T) {
	t.Parallel()
	for _, e := range append(sampleEvents(), oddEvents()...) {
		data, err := Encode(e)
		require.NoError(t, err)
		require.Equal(t, byte(formatBinary), data[0])
		got, err := Decode(data)
		require.NoError(t, err, "%s % x", e.Type, data)
		require.Equal(t, e, got, "%s % x", e.Type, data)
		again, err := Encode(got)
		require.NoError(t, err)
		require.Equal(t, data, again, "%s: encoding is deterministic", e.Type)
	}
}

func TestJSONStillDecodes(t *testing.T) {
	t.Parallel()
	for _, e := range sampleEvents() {
		data, err := EncodeJSON(e)
		require.NoError(t, err)
		require.Equal(t, byte('{'), data[0])
		got, err := Decode(data)
		require.NoError(t, err)
		assert.Equal(t, e, got, string(data))
		marshalled, err := json.Marshal(e) // what Export writes
		require.NoError(t, err)
		assert.Equal(t, data, marshalled)
	}
}

func TestBinaryIsSmallerThanJSON(t *testing.T) {
	t.Parallel()
	var bin, js int
	for _, e := range typicalMix(10) {
		b, err := Encode(e)
		require.NoError(t, err)
		j, err := EncodeJSON(e)
		require.NoError(t, err)
		bin, js = bin+len(b), js+len(j)
	}
	assert.Less(t, bin, js*2/3, "binary %d bytes, JSON %d", bin, js)
}

func TestEncodeRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		e    *Event
		want string
	}{
		{"unknown type", &Event{Type: "voyage-sunk"}, `unknown type "voyage-sunk"`},
		{"old version", &Event{Type: BearingTaken, V: 1, Bearing: &logbook.Bearing{}}, "only the current version 3"},
		{"foreign number", &Event{Type: Observed, N: 1, Obs: &logbook.ObservationRecord{}}, "records no numbered entry"},
		{"negative number", &Event{Type: NoteAdded, N: -1, Note: &logbook.Note{}}, "has number -1"},
		{"foreign payload", &Event{Type: Observed, Obs: &logbook.ObservationRecord{}, Voyage: &VoyageInfo{}}, "no voyage payload"},
		{"foreign key", &Event{Type: SlateWiped, Key: "k"}, "no key payload"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Encode(tt.e)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// record assembles a binary record by hand.
type record []byte

func (r record) u(v uint64) record  { return binary.AppendUvarint(r, v) }
func (r record) s(s string) record  { return append(r.u(uint64(len(s))), s...) }
func (r record) b(b ...byte) record { return append(r, b...) }

// TestDecodeOldVersions: the layouts written before entries were
// numbered in their events (voyage-started v1, bearing-taken v2,
// action-intended v1), binary and JSON, read into today's events with
// entry number 0, which the fold numbers in order; and those written
// before actions recorded their inverse.
func TestDecodeOldVersions(t *testing.T) {
	t.Parallel()
	who := func(r record) record { return r.b(timeZero).s("ann").s("coder").s("human") }
	action := func(r record) record { return r.b(1).s("a1").s("commit").u(0).s("").b(0).s("").b(timeZero) }
	tests := []struct {
		name string
		data []byte
		want *Event
	}{
		{"voyage-started v1", who(record{formatBinary}.u(1).u(1)).b(1).s("id").s("intent").s("open-waters"),
			&Event{Type: VoyageStarted, V: 4, Voyage: &VoyageInfo{ID: "id", Intent: "intent", Kind: "open-waters"}}},
		{"voyage-started v3", who(record{formatBinary}.u(1).u(3)).b(1).s("id").s("intent").s("open-waters").s("p").s("").s("").s("").s("").s("").s("claude-code:s"),
			&Event{Type: VoyageStarted, V: 4, Voyage: &VoyageInfo{ID: "id", Intent: "intent", Kind: "open-waters", Parent: "p", Session: "claude-code:s"}}},
		{"bearing-taken v2", who(record{formatBinary}.u(7).u(2)).b(1).u(0).s("r").s("agent").u(0),
			&Event{Type: BearingTaken, V: 3, Bearing: &logbook.Bearing{Reading: logbook.Reading{Text: "r", Source: logbook.SourceAgent}}}},
		{"action-intended v1", who(record{formatBinary}.u(9).u(1)).b(1).s("a1").s("commit").u(0).s("").b(0).s("").b(timeZero),
			&Event{Type: ActionIntended, V: 3, Action: &logbook.ActionRecord{ID: "a1", Kind: "commit"}}},
		{"voyage-started v1 JSON", []byte(`{"type":"voyage-started","v":1,"at":"0001-01-01T00:00:00Z","who":{"identity":"ann","role":"coder","method":"human"},"voyage":{"id":"id","intent":"intent","kind":"open-waters"}}`),
			&Event{Type: VoyageStarted, V: 4, Voyage: &VoyageInfo{ID: "id", Intent: "intent", Kind: "open-waters"}}},
		{"bearing-taken v2 JSON", []byte(`{"type":"bearing-taken","v":2,"at":"0001-01-01T00:00:00Z","who":{"identity":"ann","role":"coder","method":"human"},"bearing":{"observations":null,"reading":{"text":"r"}}}`),
			&Event{Type: BearingTaken, V: 3, Bearing: &logbook.Bearing{Reading: logbook.Reading{Text: "r"}}}},
		{"action-intended v1 JSON", []byte(`{"type":"action-intended","v":1,"at":"0001-01-01T00:00:00Z","who":{"identity":"ann","role":"coder","method":"human"},"action":{"id":"a1","kind":"commit"}}`),
			&Event{Type: ActionIntended, V: 3, Action: &logbook.ActionRecord{ID: "a1", Kind: "commit"}}},
		// Before actions recorded their inverse (action-intended v2,
		// action-performed v1): no entry undone, no inverse.
		{"action-intended v2", action(who(record{formatBinary}.u(9).u(2))).s("why").u(3),
			&Event{Type: ActionIntended, V: 3, N: 3, Action: &logbook.ActionRecord{ID: "a1", Kind: "commit", Why: "why"}}},
		{"action-performed v1", action(who(record{formatBinary}.u(10).u(1))),
			&Event{Type: ActionPerformed, V: 2, Action: &logbook.ActionRecord{ID: "a1", Kind: "commit"}}},
		{"action-intended v2 JSON", []byte(`{"type":"action-intended","v":2,"at":"0001-01-01T00:00:00Z","who":{"identity":"ann","role":"coder","method":"human"},"action":{"id":"a1","kind":"commit","why":"why"},"n":3}`),
			&Event{Type: ActionIntended, V: 3, N: 3, Action: &logbook.ActionRecord{ID: "a1", Kind: "commit", Why: "why"}}},
		{"action-performed v1 JSON", []byte(`{"type":"action-performed","v":1,"at":"0001-01-01T00:00:00Z","who":{"identity":"ann","role":"coder","method":"human"},"action":{"id":"a1","kind":"commit"}}`),
			&Event{Type: ActionPerformed, V: 2, Action: &logbook.ActionRecord{ID: "a1", Kind: "commit"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Decode(tt.data)
			require.NoError(t, err)
			tt.want.Who = logbook.Who{Identity: "ann", Role: "coder", Method: "human"}
			assert.Equal(t, tt.want, e)
		})
	}
}

// TestDecodeOldBinaryVersion: bearing-taken v1 stored the reading as a
// bare string; its binary layout reads into today's Reading.
func TestDecodeOldBinaryVersion(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 2, 26, 17, 1, 0, 0, time.UTC)
	mark := `{"kind":"rust-project"}`
	data := record{formatBinary}.u(7).u(1) // bearing-taken, v1
	data = data.b(timeNanos).b(binary.AppendVarint(nil, at.UnixNano())...)
	data = data.s("john-agent").s("coder").s("human") // who
	data = data.b(1).u(1 + 1)                         // a bearing, one observation
	data = data.s("rust-project:.").u(uint64(len(mark)) + 1).b([]byte(mark)...)
	data = data.s("RustProject @ .").s("0f3c").b(timeZero).s("").s("").s("")
	data = data.s("Widget module has a null check missing in init().") // the v1 reading: a bare string
	e, err := Decode(data)
	require.NoError(t, err)
	want := &Event{Type: BearingTaken, V: 3, At: at, Who: logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"},
		Bearing: &logbook.Bearing{
			Observations: []logbook.ObservationRecord{{Key: "rust-project:.", Mark: json.RawMessage(`{"kind":"rust-project"}`), Label: "RustProject @ .", Artifact: "0f3c"}},
			Reading:      logbook.Reading{Text: "Widget module has a null check missing in init()."},
		}}
	assert.Equal(t, want, e)
}

func TestDecodeRefusesBinary(t *testing.T) {
	t.Parallel()
	head := record{formatBinary}.u(4).u(1).b(timeZero).s("").s("").s("") // observed v1
	head = head[:len(head):len(head)]                                    // appends copy
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "empty record"},
		{"future format", []byte{0x02, 1, 1}, "unknown record format 0x02"},
		{"unknown type", record{formatBinary}.u(200).u(1), "unknown type code 200 at offset 1 (written by a newer helm?)"},
		{"type zero", record{formatBinary}.u(0).u(1), "unknown type code 0"},
		{"future version", record{formatBinary}.u(4).u(9), "version 9 is newer than this helm understands"},
		{"version zero", record{formatBinary}.u(7).u(0), "invalid version 0"},
		{"no version", record{formatBinary}.u(4), "version at offset 2: record ends"},
		{"long string", append(head[:len(head)-1:len(head)-1], 0xff, 0xff, 0xff, 0xff, 0x0f), "who at offset 6: length 4294967295 exceeds the 0 bytes left"},
		{"huge count", record{formatBinary}.u(7).u(2).b(timeZero).s("").s("").s("").b(1).u(math.MaxUint64), "bearing observations at offset 8: count"},
		{"count beyond bytes", record{formatBinary}.u(7).u(2).b(timeZero).s("").s("").s("").b(1).u(3).b(0, 0, 0, 0, 0, 0, 0, 0), "count 2 exceeds the 8 bytes left"},
		{"bad flag", head.b(7), "observation at offset 7: presence flag 7 is neither 0 nor 1"},
		{"bad time", record{formatBinary}.u(4).u(1).b(9), "at at offset 3: unknown time encoding 0x09"},
		{"bad nanos", record{formatBinary}.u(4).u(1).b(timeWide, 0).u(1e9), "nanoseconds 1000000000 out of range"},
		{"varint overflow", record{formatBinary}.u(4).u(1).b(timeNanos).b(bytes.Repeat([]byte{0xff}, 11)...), "varint overflows 64 bits"},
		{"trailing", head.b(0, 0), "end at offset 8: 1 trailing bytes"},
		{"truncated", head.b(1), "observation key at offset 8: record ends"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.data)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestDecodeRefusesEveryTruncation cuts and corrupts real records at
// every byte: errors, never panics.
func TestDecodeRefusesEveryTruncation(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 1))
	for _, e := range append(sampleEvents(), oddEvents()...) {
		data, err := Encode(e)
		require.NoError(t, err)
		for n := range len(data) {
			_, err := Decode(data[:n])
			require.Error(t, err, "%s cut at %d", e.Type, n)
			bent := bytes.Clone(data)
			bent[n] ^= byte(1 + r.IntN(255))
			if got, err := Decode(bent); err == nil {
				again, err := Encode(got)
				require.NoError(t, err)
				got2, err := Decode(again)
				require.NoError(t, err)
				require.Equal(t, got, got2)
			}
		}
	}
}

func TestDecodeJSONRefusesForeignPayload(t *testing.T) {
	t.Parallel()
	_, err := Decode([]byte(`{"type":"observed","v":1,"observation":{"key":"k"},"voyage":{"id":"x"}}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no voyage payload")
}

// TestActionFieldsOnlyWhereStored: only an intended action stores why it
// is done and the entry it undoes, only a refused one also the rule, only
// a performed one its inverse (the one action, or why none); a JSON
// event giving them to another type is refused, as Encode could not
// store them (a JSON event decodes to what its binary form decodes to).
func TestActionFieldsOnlyWhereStored(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		`{"type":"action-intended","v":2,"action":{"id":"x","kind":"push","rule":"r"}}`,
		`{"type":"action-performed","v":1,"action":{"id":"x","kind":"push","why":"w"}}`,
		`{"type":"action-failed","v":1,"action":{"id":"x","kind":"push","rule":"r"}}`,
		`{"type":"action-performed","v":2,"action":{"id":"x","kind":"push","undoes":1}}`,
		`{"type":"action-refused","v":1,"action":{"id":"x","kind":"push","undoes":1},"n":2}`,
		`{"type":"action-intended","v":3,"action":{"id":"x","kind":"push","undoes":-1},"n":2}`,
		`{"type":"action-intended","v":3,"action":{"id":"x","kind":"push","undone_by":3},"n":2}`,
		`{"type":"action-intended","v":3,"action":{"id":"x","kind":"push","inverse":{"kind":"k"}},"n":2}`,
		`{"type":"action-failed","v":1,"action":{"id":"x","kind":"push","inverse":{"kind":"k"}}}`,
		`{"type":"action-performed","v":2,"action":{"id":"x","kind":"push","inverse":{}}}`,
		`{"type":"action-performed","v":2,"action":{"id":"x","kind":"push","inverse":{"kind":"k","none":"n"}}}`,
	} {
		_, err := Decode([]byte(s))
		assert.Error(t, err, s)
	}
	for _, s := range []string{
		`{"type":"action-intended","v":2,"action":{"id":"x","kind":"push","why":"w"},"n":1}`,
		`{"type":"action-refused","v":1,"action":{"id":"x","kind":"push","why":"w","rule":"r"},"n":1}`,
		`{"type":"action-intended","v":3,"action":{"id":"x","kind":"delete-remote-branch","undoes":1},"n":2}`,
		`{"type":"action-performed","v":2,"action":{"id":"x","kind":"push","inverse":{"kind":"delete-remote-branch","params":{"branch":"b"}}}}`,
		`{"type":"action-performed","v":2,"action":{"id":"x","kind":"push","inverse":{"none":"it moved a branch that was there"}}}`,
	} {
		e, err := Decode([]byte(s))
		require.NoError(t, err, s)
		data, err := Encode(e)
		require.NoError(t, err)
		again, err := Decode(data)
		require.NoError(t, err)
		assert.Equal(t, inUTC(e), again, s)
	}
}

// inUTC returns e with its times as the binary form keeps them: in UTC,
// and any zero instant as time.Time{}.
func inUTC(e *Event) *Event {
	utc := func(t *time.Time) {
		if t.IsZero() {
			*t = time.Time{}
		} else {
			*t = t.UTC()
		}
	}
	c := *e
	utc(&c.At)
	if c.Obs != nil {
		o := *c.Obs
		utc(&o.ObservedAt)
		c.Obs = &o
	}
	if c.Bearing != nil {
		b := *c.Bearing
		if b.Observations != nil {
			b.Observations = append([]logbook.ObservationRecord{}, b.Observations...)
		}
		for i := range b.Observations {
			utc(&b.Observations[i].ObservedAt)
		}
		if b.Reading.History != nil {
			b.Reading.History = append([]logbook.ReadingAttempt{}, b.Reading.History...)
		}
		for i := range b.Reading.History {
			utc(&b.Reading.History[i].ChallengedAt)
		}
		c.Bearing = &b
	}
	if c.Action != nil {
		a := *c.Action
		utc(&a.DoneAt)
		c.Action = &a
	}
	return &c
}

// An artifact-jettisoned event written at v1 (no reason) still decodes,
// to today's struct with an empty reason.
func TestJettisonedV1DecodesWithoutAReason(t *testing.T) {
	t.Parallel()
	e := &Event{Type: ArtifactJettisoned, At: time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC), Artifact: &ArtifactRef{Hash: "h"}}
	v2, err := Encode(e)
	require.NoError(t, err)
	require.Equal(t, byte(2), v2[2], "format, type code, version")
	require.Equal(t, byte(0), v2[len(v2)-1], "the empty reason")
	v1 := append([]byte(nil), v2[:len(v2)-1]...)
	v1[2] = 1
	got, err := Decode(v1)
	require.NoError(t, err)
	assert.Equal(t, "h", got.Artifact.Hash)
	assert.Empty(t, got.Artifact.Reason)
	assert.Equal(t, 2, got.V, "upcast to the current version")
}
