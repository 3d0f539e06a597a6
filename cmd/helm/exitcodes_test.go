package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exitTable is docs/design.md's exit-code table: code → whether a
// command exiting with it has recorded something ("nothing": it has not).
func exitTable(t *testing.T) map[int]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "design.md"))
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(data), "### Exit codes\n")
	require.True(t, ok, "docs/design.md has an Exit codes section")
	row := regexp.MustCompile(`(?m)^\| (\d+) \| [^|]+ \| ([^|]+) \|`)
	out := map[int]string{}
	for _, m := range row.FindAllStringSubmatch(table, -1) {
		n, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		out[n] = strings.TrimSpace(m[2])
	}
	require.Len(t, out, 6, "the table in docs/design.md: %v", out)
	return out
}

// exitMention finds an exit status a help text names: "exits 3",
// "exit 2", "exit status 1".
var exitMention = regexp.MustCompile(`\bexit(?:s| status)?,? (\d+)\b`)

// TestHelpExitCodesMatchTheTable: the codes helm exits with are the
// table's, and every --help that names an exit status names one of
// them with the table's meaning: 1 and 2 record nothing, 3 and 4 have
// recorded what happened (an action --help that said a recorded failure
// exits 1, when it exits 3, fails here).
func TestHelpExitCodesMatchTheTable(t *testing.T) {
	t.Parallel()
	table := exitTable(t)
	for _, code := range []int{exitOK, exitFailed, exitUsage, exitRecorded, exitRefused, exitInterrupted} {
		assert.Contains(t, table, code, "exit status %d is in docs/design.md's table", code)
	}
	h := newHarness(t)
	root := h.ok("--help")
	for code := range table {
		assert.Regexp(t, `\b`+strconv.Itoa(code)+`\b`, root, "helm --help names exit status %d", code)
	}
	var mentions int
	var visit func(path []string, c *cobra.Command)
	visit = func(path []string, c *cobra.Command) {
		help := h.ok(append(append([]string(nil), path...), "--help")...)
		for _, para := range paragraphs(help) {
			for _, sentence := range sentences(para) {
				for _, m := range exitMention.FindAllStringSubmatch(sentence, -1) {
					mentions++
					code, _ := strconv.Atoi(m[1])
					what := "helm " + strings.Join(path, " ") + " --help: " + sentence
					if !assert.Contains(t, table, code, "an exit status the table has: %s", what) {
						continue
					}
					switch code {
					case exitFailed, exitUsage:
						assert.NotRegexp(t, `(?i)\b(is|are|was|were) recorded|recorded too|recorded as`, unsaid.ReplaceAllString(sentence, ""),
							"exit %d records nothing: %s", code, what)
					case exitRecorded, exitRefused:
						assert.Contains(t, para, "record", "exit %d has recorded what happened: %s", code, what)
					}
				}
			}
		}
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() {
				visit(append(append([]string(nil), path...), s.Name()), s)
			}
		}
	}
	visit(nil, commandTree(h))
	assert.Greater(t, mentions, 10, "the help texts name exit statuses")
}

// unsaid are the phrases in which "recorded" says nothing was: "nothing
// is recorded", "before anything is recorded", "as it is recorded".
var unsaid = regexp.MustCompile(`(?i)\b(nothing|anything|before \w+|as it) (is |was )?recorded`)

// paragraphs splits a help text into its paragraphs and flag lines, each
// with its lines joined.
func paragraphs(text string) []string {
	var out []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, " "))
			cur = nil
		}
	}
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "-") {
			flush()
		}
		if trimmed != "" {
			cur = append(cur, trimmed)
		}
	}
	flush()
	return out
}

// sentences splits a paragraph into sentences (and clauses after ";").
func sentences(para string) []string {
	return regexp.MustCompile(`[.;]\s`).Split(para, -1)
}

// TestReadmeExitTableIsTheDesigns: the README's exit-status table lists
// the codes of docs/design.md's, no more, and says of each what the
// design says: whether something was recorded.
func TestReadmeExitTableIsTheDesigns(t *testing.T) {
	t.Parallel()
	table := exitTable(t)
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	row := regexp.MustCompile(`(?m)^\| (\d+) \| ([^|]+) \|$`)
	readme := map[int]string{}
	for _, m := range row.FindAllStringSubmatch(string(data), -1) {
		n, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		readme[n] = m[2]
	}
	codes := func(m map[int]string) []int {
		var out []int
		for n := range m {
			out = append(out, n)
		}
		slices.Sort(out)
		return out
	}
	require.Equal(t, codes(table), codes(readme), "the README's exit table has the codes of docs/design.md's")
	for n, recorded := range table {
		if recorded == "nothing" {
			assert.Contains(t, readme[n], "nothing was recorded", "README: exit %d records nothing, as docs/design.md says", n)
		}
	}
	assert.Contains(t, readme[exitRecorded], "recorded", "README: exit 3 has recorded what happened")
	assert.Contains(t, readme[exitRefused], "refusal is recorded", "README: exit 4 records the refusal")
}
