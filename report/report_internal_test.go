package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

// TestReportMarkdownKeepsItsStructure: hostile text in every field a
// report shows, and the document is still the report's: its headings
// only, every table row with its columns, no HTML.
func TestReportMarkdownKeepsItsStructure(t *testing.T) {
	hostile := "| x | y |\n# Owned\n<img src=x onerror=alert(1)>\n---\n> quote `code` [l](javascript:x) 1. **b**"
	w := logbook.Who{Identity: "eve|<b>", Role: "# role", Method: "m|m"}
	at := time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC)
	info := helm.VoyageInfo{ID: "a3b0fc12-0000-4000-8000-000000000001", Intent: hostile, Kind: helm.OpenWaters, Identity: "john-agent",
		Created: at, Status: logbook.StatusCompleted, Summary: hostile, CompletedAt: at.Add(time.Hour), Repo: "o/r|x", Branch: "fix`|", Base: "b`ase|",
		Lifecycle: []helm.Transition{{Status: logbook.StatusActive, At: at, Who: w}, {Status: logbook.StatusCompleted, At: at.Add(time.Hour), Who: w, Reason: hostile}},
		Crew:      []string{"eve|<b>"}}
	entries := []logbook.Entry{
		{N: 1, Kind: logbook.EntryBearing, At: at, Who: w, Bearing: &logbook.Bearing{
			Observations: []logbook.ObservationRecord{{Key: "k", Label: hostile}},
			Reading:      logbook.Reading{Text: hostile, History: []logbook.ReadingAttempt{{Text: "old", ChallengedWith: hostile, ChallengedBy: w}}}}},
		{N: 2, Kind: logbook.EntryAction, At: at, Who: w, Action: &logbook.ActionRecord{Kind: "create-pull-request", Status: logbook.ActionPerformed, Why: hostile,
			Result: &logbook.ActionResult{Number: 45, URL: "javascript:alert(1)"}}},
		{N: 3, Kind: logbook.EntryAction, At: at, Who: w, Action: &logbook.ActionRecord{Kind: "merge-pull-request", Status: logbook.ActionRefused,
			Rule: `"agents may not merge" (policy.toml:3)`}},
		{N: 4, Kind: logbook.EntryAction, At: at, Who: w, Action: &logbook.ActionRecord{Kind: "push", Status: logbook.ActionFailed, Error: hostile}},
		{N: 5, Kind: logbook.EntryAction, At: at, Who: w, Action: &logbook.ActionRecord{Kind: "comment-issue", Status: logbook.ActionOutcomeUnknown}},
		{N: 6, Kind: logbook.EntryNote, At: at, Who: w, Note: &logbook.Note{Text: hostile}},
		{N: 7, Kind: logbook.EntryJudgement, At: at, Who: w, Judgement: &logbook.Judgement{Score: 2, Dimension: hostile, Evidence: []int{1}, Text: hostile}},
	}
	legacy := []logbook.Entry{{N: 2, Kind: logbook.EntryAction, At: at, Who: w, Action: &logbook.ActionRecord{Kind: "commit", Status: logbook.ActionFailed, Error: "nothing to commit"}}}
	r := build(info, entries, legacy)
	r.Diff = Diff{Base: "b", Head: "c", Files: []FileChange{{Path: hostile, From: hostile, Added: 1}, {Path: "| a |", Binary: true}}}
	r.SubVoyages = []SubVoyage{{ID: "a3b0fc12-0000-4000-8000-000000000002", Intent: hostile, Status: logbook.StatusActive, Identity: "eve|<b>"}}
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
