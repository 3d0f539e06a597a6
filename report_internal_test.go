package helm

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMarkdownEscaperShowsHostileTextAsWritten(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "Fix the widget crash", "Fix the widget crash"},
		{"heading", "# Heading", `\# Heading`},
		{"heading later in a line is text", "see #42", "see #42"},
		{"pipe", "a | b", `a \| b`},
		{"html", "<script>alert(1)</script>", `\<script\>alert(1)\</script\>`},
		{"line breaks", "one\ntwo\r\nthree\rfour", "one two three four"},
		{"leading spaces would make code", "    indented", "indented"},
		{"ordered list", "1. first", `1\. first`},
		{"ordered list with paren", "12) twelfth", `12\) twelfth`},
		{"number that is text", "1.5 times", `1\.5 times`},
		{"quote", "> quoted", `\> quoted`},
		{"bullets", "- item", `\- item`},
		{"plus bullet", "+ item", `\+ item`},
		{"setext underline", "===", `\===`},
		{"code", "`rm -rf /`", "\\`rm -rf /\\`"},
		{"link", "[click](javascript:alert(1))", `\[click\](javascript:alert(1))`},
		{"emphasis", "**bold** _em_ ~~gone~~", `\*\*bold\*\* \_em\_ \~\~gone\~\~`},
		{"entity", "&lt;b&gt;", `\&lt;b\&gt;`},
		{"math", "$x^2$", `\$x^2\$`},
		{"backslash", `a\b`, `a\\b`},
		{"terminal escape", "\x1b[2Kgone", `\\x1b\[2Kgone`},
		{"bidi override", "abc\u202edef", `abc\\u202edef`},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, mdInline(tt.in))
		})
	}
}

func TestMarkdownHeadingKeepsItsClosingHashes(t *testing.T) {
	assert.Equal(t, `Fix the crash \#`, mdHeading("Fix the crash #"))
	assert.Equal(t, `Fix # ##\#`, mdHeading("Fix # ###"))
	assert.Equal(t, `a\\\#`, mdHeading(`a\#`), "a backslash of the text, then the # escaped")
	assert.Equal(t, `Resolve #42: fix`, mdHeading("Resolve #42: fix"))
	assert.Equal(t, `\#`, mdHeading("#"))
}

func TestMarkdownLinksOnlyPlainWebAddresses(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"https://github.com/octo/widgets/pull/45", "<https://github.com/octo/widgets/pull/45>"},
		{"http://127.0.0.1:8080/o/r/pull/1", "<http://127.0.0.1:8080/o/r/pull/1>"},
		{"javascript:alert(1)", ""},
		{"https://a.example/x>y", ""},
		{"https://a.example/x y", ""},
		{"https://a.example/\x1b[2K", ""},
		{"https://a.example/é", ""},
		{"/relative", ""},
		{"", ""},
	} {
		assert.Equal(t, tt.want, mdLink(tt.in), "%q", tt.in)
	}
	assert.Equal(t, "a3b0fc12-0000", mdCode("a3b0fc12-0000"))
	assert.Equal(t, "", mdCode("`; x"), "a code span holds nothing that could end it")
}

// TestReportMarkdownKeepsItsStructure: hostile text in every field a
// report shows, and the document is still the report's: its headings
// only, every table row with its columns, no HTML.
func TestReportMarkdownKeepsItsStructure(t *testing.T) {
	hostile := "| x | y |\n# Owned\n<img src=x onerror=alert(1)>\n---\n> quote `code` [l](javascript:x) 1. **b**"
	w := Who{Identity: "eve|<b>", Role: "# role", Method: "m|m"}
	at := time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC)
	info := VoyageInfo{ID: "a3b0fc12-0000-4000-8000-000000000001", Intent: hostile, Kind: OpenWaters, Identity: "john-agent",
		Created: at, Status: StatusCompleted, Summary: hostile, CompletedAt: at.Add(time.Hour), Repo: "o/r|x", Branch: "fix`|", Base: "b`ase|",
		Lifecycle: []Transition{{Status: StatusActive, At: at, Who: w}, {Status: StatusCompleted, At: at.Add(time.Hour), Who: w, Reason: hostile}},
		Crew:      []string{"eve|<b>"}}
	entries := []Entry{
		{N: 1, Kind: EntryBearing, At: at, Who: w, Bearing: &Bearing{
			Observations: []ObservationRecord{{Key: "k", Label: hostile}},
			Reading:      Reading{Text: hostile, History: []ReadingAttempt{{Text: "old", ChallengedWith: hostile, ChallengedBy: w}}}}},
		{N: 2, Kind: EntryAction, At: at, Who: w, Action: &ActionRecord{Kind: "create-pull-request", Status: ActionPerformed, Why: hostile,
			Result: &ActionResult{Number: 45, URL: "javascript:alert(1)"}}},
		{N: 3, Kind: EntryAction, At: at, Who: w, Action: &ActionRecord{Kind: "merge-pull-request", Status: ActionRefused,
			Rule: `"agents may not merge" (policy.toml:3)`}},
		{N: 4, Kind: EntryAction, At: at, Who: w, Action: &ActionRecord{Kind: "push", Status: ActionFailed, Error: hostile}},
		{N: 5, Kind: EntryAction, At: at, Who: w, Action: &ActionRecord{Kind: "comment-issue", Status: ActionOutcomeUnknown}},
		{N: 6, Kind: EntryNote, At: at, Who: w, Note: &Note{Text: hostile}},
		{N: 7, Kind: EntryJudgement, At: at, Who: w, Judgement: &Judgement{Score: 2, Dimension: hostile, Evidence: []int{1}, Text: hostile}},
	}
	legacy := []Entry{{N: 2, Kind: EntryAction, At: at, Who: w, Action: &ActionRecord{Kind: "commit", Status: ActionFailed, Error: "nothing to commit"}}}
	r := buildReport(info, entries, legacy)
	r.Diff = Diff{Base: "b", Head: "c", Files: []FileChange{{Path: hostile, From: hostile, Added: 1}, {Path: "| a |", Binary: true}}}
	r.SubVoyages = []SubVoyage{{ID: "a3b0fc12-0000-4000-8000-000000000002", Intent: hostile, Status: StatusActive, Identity: "eve|<b>"}}
	r.Unreadable = []string{"a3b0fc12-0000-4000-8000-000000000003"}

	var b bytes.Buffer
	require.NoError(t, r.WriteMarkdown(&b))
	md := b.String()
	columns := 0 // in the table being read
	for i, line := range strings.Split(strings.TrimSuffix(md, "\n"), "\n") {
		if strings.HasPrefix(line, "#") {
			assert.Regexp(t, `^(## Voyage report: |### (Crew|Lifecycle|Files changed|Bearings|Actions|Failed or refused actions|Notes|Judgements|Sub-voyages)$)`, line, "line %d", i+1)
		}
		if strings.HasPrefix(line, "|") {
			n := unescapedCount(line, '|')
			if columns == 0 {
				columns = n
			}
			assert.Equal(t, columns, n, "line %d has its table's columns: %s", i+1, line)
		} else {
			columns = 0
		}
		assert.Zero(t, unescapedCount(strings.ReplaceAll(line, "<https://", ""), '<'), "line %d holds no HTML: %s", i+1, line)
		assert.Zero(t, unescapedCount(line, '`')%2, "line %d has whole code spans: %s", i+1, line)
		for _, start := range []string{"---", "> #", "1. ", "<"} {
			assert.False(t, strings.HasPrefix(line, start), "line %d starts a block: %s", i+1, line)
		}
	}
	assert.Contains(t, md, "### Failed or refused actions\n\n"+
		"- **Action 3** · merge-pull-request refused by rule \"agents may not merge\" (policy.toml:3) (nothing was run) · eve\\|\\<b\\> (# role)\n"+
		"- **Action 4** · push failed: \\| x \\| y \\| … · eve\\|\\<b\\> (# role)\n"+
		"- **Action 5** · comment-issue: outcome unknown (intended, no result was recorded) · eve\\|\\<b\\> (# role)\n"+
		"- **Action 2** · commit failed: nothing to commit · eve\\|\\<b\\> (# role) (taken out of the story by an older helm)\n")
	assert.Contains(t, md, "- **Action 2** · created PR #45 · ", "no link to a javascript: address")
	assert.Contains(t, md, "- `a3b0fc12-0000-4000-8000-000000000003` could not be read: it may be a sub-voyage\n")
	assert.Contains(t, md, "base `bae`", "a code span keeps only what it can hold")
	require.Len(t, r.Crew, 1)
	assert.Equal(t, CrewMember{Identity: "eve|<b>", Roles: []string{"# role"}, Methods: []string{"m|m"}, Entries: 7, Bearings: 1, Actions: 4, Notes: 1, Judgements: 1},
		r.Crew[0], "the legacy action is not an entry of the story")
}

// unescapedCount counts the bytes c in line not escaped by a backslash.
func unescapedCount(line string, c byte) int {
	n := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case c:
			n++
		}
	}
	return n
}
