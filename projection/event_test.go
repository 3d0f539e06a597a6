package projection

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/logbook"
)

func TestDecodeUpcastsV1Bearing(t *testing.T) {
	t.Parallel()
	f, err := os.Open("testdata/v1-voyage.jsonl")
	require.NoError(t, err)
	defer f.Close()
	var st State
	sc := bufio.NewScanner(f)
	for seq := uint64(1); sc.Scan(); seq++ {
		e, err := Decode(sc.Bytes())
		require.NoError(t, err, "line %d", seq)
		assert.Equal(t, currentVersion[e.Type], e.V, "decoded events carry the current version")
		require.NoError(t, st.Apply(seq, e))
	}
	require.NoError(t, sc.Err())
	require.Len(t, st.Entries, 1)
	b := st.Entries[0].Bearing
	require.NotNil(t, b)
	assert.Equal(t, "Widget module has a null check missing in init().", b.Reading.Text)
	assert.Equal(t, "RustProject @ .", b.Observations[0].Label)
	assert.Empty(t, st.Slate, "the bearing sealed the slate")
	assert.Equal(t, "john-agent", st.Voyage.Identity)
}

func TestDecodeRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, data, want string
	}{
		{"not json", `{`, "decode event"},
		{"unknown type", `{"type":"voyage-sunk","v":1}`, `unknown type "voyage-sunk"`},
		{"future version", `{"type":"observed","v":9}`, "newer than this helm understands"},
		{"version zero", `{"type":"bearing-taken","v":0}`, "invalid version 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.data))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	t.Parallel()
	for _, e := range sampleEvents() {
		data, err := Encode(e)
		require.NoError(t, err)
		got, err := Decode(data)
		require.NoError(t, err)
		assert.Equal(t, e, got, string(data))
	}
}

func sampleEvents() []*Event {
	at := time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC)
	who := logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}
	obs := logbook.ObservationRecord{Key: "context:x", Mark: json.RawMessage(`{"kind":"context","description":"x"}`), Label: "Context: x", Artifact: "ab", ObservedAt: at}
	return []*Event{
		{Type: VoyageStarted, V: 4, At: at, Who: who, Voyage: &VoyageInfo{ID: "id", Intent: "i", Kind: "open-waters", Parent: "p", Repo: "o/r", Dir: "/src/r", Base: "abc", Branch: "main"}},
		{Type: ArtifactStowed, V: 1, At: at, Who: who, Artifact: &ArtifactRef{Hash: "ab", Size: 10, StoredSize: 5, Offset: 8}},
		{Type: Observed, V: 1, At: at, Who: who, Obs: &obs},
		{Type: BearingTaken, V: 3, N: 1, At: at, Who: who, Bearing: &logbook.Bearing{Observations: []logbook.ObservationRecord{obs}, Reading: logbook.Reading{Text: "r", Source: logbook.SourceAgent}}},
		{Type: ReadingChallenged, V: 1, At: at, Who: who, Challenge: &Challenge{Bearing: 4, Feedback: "f", Text: "t", Source: logbook.SourceUser}},
		{Type: ActionIntended, V: 3, N: 2, At: at, Who: who, Action: &logbook.ActionRecord{ID: "a1", Kind: "commit", Params: json.RawMessage(`{"message":"m"}`), Why: "the fix is ready"}},
		{Type: ActionPerformed, V: 2, At: at, Who: who, Action: &logbook.ActionRecord{ID: "a1", Kind: "commit", Result: &logbook.ActionResult{SHA: "abc"},
			Inverse: &logbook.Inverse{Kind: "reset-commit", Params: json.RawMessage(`{"sha":"abc"}`)}}},
		{Type: NoteAdded, V: 1, N: 3, At: at, Who: who, Note: &logbook.Note{Text: "waiting for review"}},
		{Type: ActionRefused, V: 1, N: 4, At: at, Who: who, Action: &logbook.ActionRecord{ID: "a2", Kind: "merge-pull-request", Params: json.RawMessage(`{"number":4}`), Why: "ship it", Rule: `"agents may not merge" (policy.toml:1)`}},
		{Type: VoyageCompleted, V: 1, At: at, Who: who, Completion: &Completion{Outcome: OutcomeBlocked, Summary: "s"}},
		{Type: VoyageResumed, V: 1, At: at, Who: who, Resumption: &Resumption{Reason: "reviewed"}},
		{Type: WorktreeRemoved, V: 1, At: at, Who: who, Removal: &Removal{Path: "/src/widgets-a3b00001"}},
		{Type: Judged, V: 1, N: 5, At: at, Who: logbook.Who{Identity: "judge", Role: "reviewer", Method: "human"}, Judgement: &logbook.Judgement{Score: 7, Dimension: "correctness", Evidence: []int{1, 2}, Text: "sound"}},
		{Type: PolicyAdopted, V: 1, At: at, Who: who, Policy: &logbook.PolicyRecord{Digest: "sha256:" + strings.Repeat("cd", 32), Sources: []string{"/home/j/.helm/policy.toml"}}},
		{Type: PolicyChanged, V: 1, N: 6, At: at, Who: who, Policy: &logbook.PolicyRecord{Digest: "sha256:" + strings.Repeat("ab", 32), Sources: []string{"/etc/helm/policy.toml", "/home/j/.helm/policy.toml"}}},
		{Type: ChainRechained, V: 1, N: 7, At: at, Who: logbook.Who{Identity: "ann", Role: "maintainer", Method: "human"}, Rechain: &logbook.RechainRecord{Seq: 41, CRC32C: "9f2c41d0", Why: "witness its history"}},
		{Type: IdentityHandedOff, V: 1, N: 8, At: at, Who: logbook.Who{Identity: "ann", Role: "lead", Method: "human"}, Handoff: &logbook.Handoff{From: "john-agent", To: "ann", Why: "taking over"}},
	}
}

func FuzzDecode(f *testing.F) {
	for _, e := range append(sampleEvents(), oddEvents()...) {
		data, err := Encode(e)
		require.NoError(f, err)
		f.Add(data)
		if data, err := EncodeJSON(e); err == nil { // an empty raw message has no JSON form
			f.Add(data)
		}
	}
	f.Add([]byte(`{"type":"bearing-taken","v":1,"bearing":{"reading":"x"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := Decode(data)
		if err != nil {
			return
		}
		// Whatever decodes, binary or JSON, re-encodes (binary) and
		// decodes to the same event, times in UTC; the encoding is
		// deterministic; and folding the event never panics.
		again, err := Encode(e)
		require.NoError(t, err)
		e2, err := Decode(again)
		require.NoError(t, err)
		require.Equal(t, inUTC(e), e2)
		if data[0] == formatBinary {
			require.Equal(t, e, e2, "binary decodes exactly")
		}
		third, err := Encode(e2)
		require.NoError(t, err)
		require.Equal(t, again, third, "encoding is deterministic")
		var st State
		_ = st.Apply(1, e)
	})
}
