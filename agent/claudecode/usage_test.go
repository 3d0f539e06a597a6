package claudecode_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/agent/claudecode"
	"github.com/helmlog/helm/logbook"
)

// standIn is the usage the model stand-in of the captured session gave
// every answer.
var standIn = logbook.Usage{Model: "claude-opus-5-5", InputTokens: 1200, OutputTokens: 34, CacheReadTokens: 800, CacheWriteTokens: 50}

func transcriptFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "transcript", name))
	require.NoError(t, err)
	return b
}

func TestUsageSinceCountsEachMessageOnceWithItsCalls(t *testing.T) {
	data := transcriptFile(t, "session.jsonl")
	msgs, next, err := claudecode.UsageSince(bytes.NewReader(data), 0, false)
	require.NoError(t, err)
	assert.EqualValues(t, len(data), next, "every whole line read")
	var ids []string
	for _, m := range msgs {
		ids = append(ids, m.ID+" "+strings.Join(m.Tools, ","))
		assert.Equal(t, standIn, m.Usage, "%s: the stand-in's model has no price: no cost", m.ID)
	}
	assert.Equal(t, []string{
		"msg_stand_in_001 toolu_01HarnessBashLs0000000", // a text line and a tool_use line: one message
		"msg_stand_in_002 toolu_02HarnessReadNotes000",
		"msg_stand_in_003 toolu_03HarnessEditNotes000",
		"msg_stand_in_004 toolu_04HarnessWriteSummary",
		"msg_stand_in_005 toolu_05HarnessAgentCount00",
		"msg_stand_in_008 toolu_07HarnessBashRmVictim",
		"msg_stand_in_009 ",
		"msg_stand_in_010 ",
	}, ids, "the subagent's messages are in its own transcript")

	sub, _, err := claudecode.UsageSince(bytes.NewReader(transcriptFile(t, "subagent.jsonl")), 0, true)
	require.NoError(t, err)
	require.Len(t, sub, 2)
	assert.Equal(t, []string{"toolu_06HarnessSubBashWc000"}, sub[0].Tools)
}

func TestUsageSinceGoesOnFromTheOffsetAndLeavesAHalfWrittenLine(t *testing.T) {
	data := transcriptFile(t, "session.jsonl")
	cut := bytes.Index(data, []byte(`"msg_stand_in_003"`))
	require.Positive(t, cut)
	first, next, err := claudecode.UsageSince(bytes.NewReader(data[:cut]), 0, false)
	require.NoError(t, err)
	assert.Len(t, first, 2, "the line being written is not read")
	assert.Equal(t, byte('\n'), data[next-1], "the offset is after a whole line")
	rest, end, err := claudecode.UsageSince(bytes.NewReader(data), next, false)
	require.NoError(t, err)
	assert.EqualValues(t, len(data), end)
	require.Len(t, rest, 6)
	assert.Equal(t, "msg_stand_in_003", rest[0].ID)
}

func TestUsageSinceSkipsWhatIsNotAMessage(t *testing.T) {
	long := `{"type":"assistant","message":{"id":"big","usage":{"input_tokens":1},"content":"` + strings.Repeat("x", 5<<20) + `"}}`
	in := strings.Join([]string{
		`not json`,
		`{"type":"user","message":{"id":"u","usage":{"input_tokens":9}}}`,
		long,
		`{"type":"assistant","message":{"id":"m","model":"claude-sonnet-4-5-20250929","usage":{"input_tokens":1000000,"output_tokens":1000000}}}`,
		``,
	}, "\n")
	msgs, next, err := claudecode.UsageSince(strings.NewReader(in), 0, false)
	require.NoError(t, err)
	assert.EqualValues(t, len(in), next)
	require.Len(t, msgs, 1, "a line over the limit is passed over, not parsed")
	assert.Equal(t, "m", msgs[0].ID)
	assert.InDelta(t, 18.0, msgs[0].Usage.CostUSD, 1e-9, "a million tokens in and out at $3 and $15")
}

func TestPriceKnowsOnlyListedModels(t *testing.T) {
	tests := []struct {
		name  string
		model string
		want  float64
		known bool
	}{
		{"dated model id", "claude-opus-4-5-20251101", 5 + 25 + 0.5 + 6.25, true},
		{"undated", "claude-haiku-4-5", 1 + 5 + 0.1 + 1.25, true},
		{"unknown model: no guess", "claude-opus-5-5", 0, false},
		{"empty", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := claudecode.Price(logbook.Usage{Model: tt.model, InputTokens: 1e6, OutputTokens: 1e6, CacheReadTokens: 1e6, CacheWriteTokens: 1e6})
			assert.Equal(t, tt.known, ok)
			assert.InDelta(t, tt.want, got, 1e-9)
		})
	}
}
