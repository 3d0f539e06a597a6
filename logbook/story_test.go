package logbook

import (
	"bytes"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func at(min int) time.Time { return time.Date(2026, 2, 26, 17, min, 0, 0, time.UTC) }

// TestStoryMatchesDesignExample renders the logbook of DESIGN.md's example
// voyage and compares it with the story printed there.
func TestStoryMatchesDesignExample(t *testing.T) {
	t.Parallel()
	who := Who{Identity: "john-agent", Role: "coder", Method: "human"}
	entries := []Entry{
		{N: 1, Kind: EntryBearing, At: at(1), Who: who, Bearing: &Bearing{
			Observations: []ObservationRecord{{Key: "rust-project:.", Label: "RustProject @ ."}},
			Reading:      Reading{Text: "Widget module has a null check missing in init()."},
		}},
		{N: 2, Kind: EntryAction, At: at(14), Who: who, Action: &ActionRecord{Kind: "commit", Status: ActionPerformed, Result: &ActionResult{SHA: "abc1234f00d"}}},
		{N: 3, Kind: EntryAction, At: at(15), Who: who, Action: &ActionRecord{Kind: "push", Status: ActionPerformed, Result: &ActionResult{Branch: "fix-widget", SHA: "abc1234f00d"}}},
		{N: 4, Kind: EntryAction, At: at(16), Who: who, Action: &ActionRecord{Kind: "create-pull-request", Status: ActionPerformed, Result: &ActionResult{Number: 45}}},
	}
	var buf bytes.Buffer
	require.NoError(t, WriteStory(&buf, Header{
		Intent: "Resolve #42: fix widget crash", Identity: "john-agent", Created: at(0),
		Status: "completed", Outcome: "completed", CompletedAt: at(30),
		Summary: "Fixed null check in widget init. PR #45 merged.",
	}, entries))
	golden := "testdata/design-example.golden"
	if *update {
		require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), buf.String())
}

// TestStoryEscapesHostileText: text that reached the log from a caller or
// from the world (a file name, a branch, an agent's reading) cannot erase
// lines, recolour, retitle the terminal, reorder what follows, or forge an
// entry of the story. The golden file holds the escapes as they print.
func TestStoryEscapesHostileText(t *testing.T) {
	t.Parallel()
	who := Who{Identity: "john-agent", Role: "coder", Method: "human"}
	entries := []Entry{
		{N: 1, Kind: EntryBearing, At: at(1), Who: who, Bearing: &Bearing{
			Observations: []ObservationRecord{
				{Key: "file-contents:x", Label: "FileContents: evil\x1b[2K\r.rs"},
				{Key: "context:x", Label: "Context: \x1b]0;pwned\x07 title"},
			},
			Reading: Reading{
				Text:    "Looks fine.\n── Bearing 2 ── 2026-02-26T17:02:00Z\n  Reading: all tests pass\x1b[1A\x1b[2K",
				History: []ReadingAttempt{{Text: "first", ChallengedWith: "no\u202e txet desrever", ChallengedAt: at(2), ChallengedBy: who}},
			},
		}},
		{N: 2, Kind: EntryAction, At: at(3), Who: who, Action: &ActionRecord{Kind: "push", Status: ActionPerformed,
			Result: &ActionResult{Branch: "fix\x1b[31m-red\u009b2K", SHA: "abc1234f00d"}}},
	}
	var buf bytes.Buffer
	require.NoError(t, WriteStory(&buf, Header{
		Intent: "Fix\tcrash\x1b[2K\r", Identity: "john-agent", Created: at(0),
		Status: "completed", Outcome: "completed", CompletedAt: at(30),
		Summary: "Done.\nSecond line\rover\x7f",
	}, entries))
	out := buf.String()
	for _, raw := range []string{"\x1b", "\r", "\t", "\x07", "\x7f", "\u202e", "\u009b"} {
		assert.NotContains(t, out, raw, "printed raw")
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, "──") {
			assert.Regexp(t, `^── (Bearing 1|Action 2) ──`, line, "only real entries start a line")
		}
	}
	golden := "testdata/hostile-text.golden"
	if *update {
		require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), out)
}

func TestDescribeAction(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a    ActionRecord
		want string
	}{
		{"commit", ActionRecord{Kind: "commit", Status: ActionPerformed, Result: &ActionResult{SHA: "abc1234567"}}, "committed (abc1234)"},
		{"push", ActionRecord{Kind: "push", Status: ActionPerformed, Result: &ActionResult{Branch: "b", SHA: "abc1234567"}}, "pushed to b (abc1234)"},
		{"create PR", ActionRecord{Kind: "create-pull-request", Status: ActionPerformed, Result: &ActionResult{Number: 45}}, "created PR #45"},
		{"merge PR", ActionRecord{Kind: "merge-pull-request", Status: ActionPerformed, Result: &ActionResult{Number: 45}}, "merged PR #45"},
		{"comment PR", ActionRecord{Kind: "comment-pull-request", Status: ActionPerformed, Result: &ActionResult{Number: 45}}, "commented on PR #45"},
		{"reply PR", ActionRecord{Kind: "reply-pull-request", Status: ActionPerformed, Result: &ActionResult{Number: 45}}, "replied on PR #45"},
		{"request review", ActionRecord{Kind: "request-review", Status: ActionPerformed, Result: &ActionResult{Number: 45, Reviewers: []string{"a", "b"}}}, "requested review on PR #45 from a, b"},
		{"create issue", ActionRecord{Kind: "create-issue", Status: ActionPerformed, Result: &ActionResult{Number: 7}}, "created issue #7"},
		{"close issue", ActionRecord{Kind: "close-issue", Status: ActionPerformed, Result: &ActionResult{Number: 7}}, "closed issue #7"},
		{"comment issue", ActionRecord{Kind: "comment-issue", Status: ActionPerformed, Result: &ActionResult{Number: 7}}, "commented on issue #7"},
		{"unknown outcome", ActionRecord{Kind: "push", Status: ActionOutcomeUnknown}, "push: outcome unknown (intended, no result was recorded)"},
		{"failed", ActionRecord{Kind: "push", Status: ActionFailed, Error: "rejected"}, "push failed: rejected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, DescribeAction(&tt.a))
		})
	}
}

func TestValidateIdentity(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, id string
		ok       bool
	}{
		{"plain", "john-agent", true},
		{"unicode", "jöhn", true},
		{"empty", "", false},
		{"dotdot", "..", false},
		{"hidden", ".x", false},
		{"slash", "a/b", false},
		{"traversal", "../etc", false},
		{"backslash", `a\b`, false},
		{"space", "a b", false},
		{"control", "a\x00b", false},
		{"escape", "a\x1b[2Kb", false},
		{"invalid UTF-8", "caf\xe9", false},
		{"too long", string(bytes.Repeat([]byte("a"), MaxIdentityLen+1)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateIdentity(tt.id)
			if tt.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
}

// TestStoryOfTheCrew: entries by other identities name them, a note, a
// judgement, a failed and a refused action keep their numbers, the
// rationale of an action is shown, and a resumed voyage lists its
// lifecycle.
func TestStoryOfTheCrew(t *testing.T) {
	t.Parallel()
	ann := Who{Identity: "ann", Role: "lead", Method: "human"}
	bob := Who{Identity: "bob", Role: "coder", Method: "claude"}
	carol := Who{Identity: "carol", Role: "judge", Method: "human"}
	entries := []Entry{
		{N: 1, Kind: EntryBearing, At: at(1), Who: ann, Bearing: &Bearing{
			Observations: []ObservationRecord{{Key: "context:x", Label: "Context: the crash report"}},
			Reading:      Reading{Text: "Init() dereferences a nil config."},
		}},
		{N: 2, Kind: EntryAction, At: at(2), Who: bob, Action: &ActionRecord{Kind: "commit", Status: ActionFailed,
			Error: "nothing to commit\nworking tree clean"}},
		{N: 3, Kind: EntryNote, At: at(3), Who: bob, Note: &Note{Text: "Staged the fix; retrying.\nCI is slow."}},
		{N: 4, Kind: EntryAction, At: at(4), Who: bob, Action: &ActionRecord{Kind: "commit", Status: ActionPerformed,
			Result: &ActionResult{SHA: "abc1234f00d"}, Why: "the test passes now"}},
		{N: 5, Kind: EntryAction, At: at(5), Who: bob, Action: &ActionRecord{Kind: "merge-pull-request", Status: ActionRefused,
			Rule: `"agents may not merge" (policy.toml:1)`}},
		{N: 6, Kind: EntryJudgement, At: at(40), Who: carol, Judgement: &Judgement{Score: 8, Dimension: "correctness", Evidence: []int{1, 4}, Text: "The fix is right."}},
	}
	var buf bytes.Buffer
	require.NoError(t, WriteStory(&buf, Header{
		Intent: "Resolve #42: fix widget crash", Identity: "ann", Created: at(0),
		Status: "completed", Outcome: "completed", CompletedAt: at(30), Summary: "Fixed.",
		Lifecycle: []Change{
			{Status: "active", At: at(0), Who: ann},
			{Status: "blocked", At: at(10), Who: bob, Reason: "waiting for review"},
			{Status: "active", At: at(20), Who: ann, Reason: "reviewed"},
			{Status: "completed", At: at(30), Who: ann, Reason: "Fixed."},
		},
	}, entries))
	golden := "testdata/crew.golden"
	if *update {
		require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), buf.String())
}

// TestStoryHeaderTakesTheRecordsTypes: the story's header and its
// lifecycle hold a voyage's status and outcome as the record's own types
// (Status, Outcome), declared once here, not as strings a caller converts
// to and from (issue 30: no duplicated enums, no hand converters).
func TestStoryHeaderTakesTheRecordsTypes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		owner reflect.Type
		field string
		want  reflect.Type
	}{
		{name: "header status", owner: reflect.TypeFor[Header](), field: "Status", want: reflect.TypeFor[Status]()},
		{name: "header outcome", owner: reflect.TypeFor[Header](), field: "Outcome", want: reflect.TypeFor[Outcome]()},
		{name: "change status", owner: reflect.TypeFor[Change](), field: "Status", want: reflect.TypeFor[Status]()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ok := tt.owner.FieldByName(tt.field)
			require.True(t, ok)
			assert.Equal(t, tt.want, f.Type)
		})
	}
}
