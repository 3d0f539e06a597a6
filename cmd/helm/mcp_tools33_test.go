package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/internal/ghtest"
)

// Issue 33's MCP tools: the default list (action for every action kind),
// --tools, judge, search, stats, jettison, export, follow.

// TestAttackGroupedActionCannotPassTheGuard: the recorded agent starts
// its own server with --tools all (allowed) and calls the grouped action
// tool for actions the policy refuses, and undo of nothing: each is a
// tool error naming the rule, recorded, and nothing reaches git or
// GitHub; bad params are refused against the kind's own schema.
func TestAttackGroupedActionCannotPassTheGuard(t *testing.T) {
	t.Parallel()
	h, srv, g := newGitHubHarness(t)
	agentEnv(h)
	h.writeHome("policy.toml", readmePolicy+`
[[rule]]
name = "people confirm commits"
action = "commit"
decision = "confirm"
`)
	c := h.mcp() // --tools all
	_, info := ok[helm.VoyageInfo](c, "voyage_start", map[string]any{"intent": "guarded"})
	pr := srv.AddPull("octo/widgets", ghtest.PullRequest{Title: "Fix widget", Head: "main"})
	g.WriteFile(t, "a.txt", "a\n")
	g.Git(t, "add", "a.txt")
	head := g.Git(t, "rev-parse", "HEAD")
	srv.ClearRequests()

	text, te := c.fails("action", map[string]any{"voyage": info.ID, "kind": "merge-pull-request", "params": map[string]any{"number": pr}})
	assert.Contains(t, text, `denied by rule "agents may not merge"`)
	assert.Equal(t, exitRefused, te.ExitStatus)
	text, te = c.fails("action", map[string]any{"voyage": info.ID, "kind": "commit", "params": map[string]any{"message": "x"}, "why": "try the group"})
	assert.Contains(t, text, `rule "people confirm commits"`)
	assert.Equal(t, exitRefused, te.ExitStatus)

	for _, tt := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"a parameter the kind does not take", map[string]any{"kind": "commit", "params": map[string]any{"message": "x", "force": true}}, "params"},
		{"a needed parameter missing", map[string]any{"kind": "commit", "params": map[string]any{}}, "message"},
		{"a parameter of the wrong type", map[string]any{"kind": "merge-pull-request", "params": map[string]any{"number": "one"}}, "params"},
		{"a kind there is not", map[string]any{"kind": "format-disk", "params": map[string]any{}}, "kind"},
		{"repo on a git action", map[string]any{"kind": "commit", "params": map[string]any{"message": "x"}, "repo": "octo/widgets"}, "takes no repo"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.args["voyage"] = info.ID
			text, te := c.fails("action", tt.args)
			assert.Equal(t, exitUsage, te.ExitStatus, text)
			assert.Contains(t, text, tt.want)
		})
	}

	assert.Empty(t, srv.Requests(), "nothing reached GitHub")
	assert.Equal(t, head, g.Git(t, "rev-parse", "HEAD"), "nothing was committed")
	story := h.ok("--voyage", info.ID, "log")
	assert.Contains(t, story, `merge-pull-request denied by rule "agents may not merge"`)
	assert.Contains(t, story, `commit held for confirmation by rule "people confirm commits"`)
	assert.Equal(t, 2, strings.Count(story, "(nothing was run)"), "each refusal recorded, the bad input not:\n%s", story)
}

// TestMCPActionToolPerformsAndUndoes: the default server's action tool
// commits as the commit tool does, dry runs included, and undo takes it
// back.
func TestMCPActionToolPerformsAndUndoes(t *testing.T) {
	t.Parallel()
	h, _, g := newGitHubHarness(t)
	agentEnv(h)
	c := h.mcpTools("")
	_, info := ok[helm.VoyageInfo](c, "voyage_start", map[string]any{"intent": "commit through action"})
	g.WriteFile(t, "a.txt", "a\n")
	g.Git(t, "add", "a.txt")
	head := g.Git(t, "rev-parse", "HEAD")
	text, _ := ok[map[string]any](c, "action", map[string]any{"voyage": info.ID, "kind": "commit", "params": map[string]any{"message": "add a"}, "dry_run": true})
	assert.Contains(t, text, "commit -m 'add a'")
	assert.Equal(t, head, g.Git(t, "rev-parse", "HEAD"), "a dry run runs nothing")
	text, _ = ok[map[string]any](c, "action", map[string]any{"voyage": info.ID, "kind": "commit", "params": map[string]any{"message": "add a"}, "why": "a is needed"})
	assert.Contains(t, text, "Action 1 performed")
	assert.NotEqual(t, head, g.Git(t, "rev-parse", "HEAD"))
	text, _ = ok[map[string]any](c, "action", map[string]any{"voyage": info.ID, "kind": "undo", "params": map[string]any{"n": 1}, "why": "not yet"})
	assert.Contains(t, text, "Action 2 performed")
	assert.Equal(t, head, g.Git(t, "rev-parse", "HEAD"), "undone: reset to its parent")
}

// TestMCPToolsFlagRefusesUnknownNames: --tools takes sets and tool names;
// an unknown one is bad usage naming the valid ones, before anything.
func TestMCPToolsFlagRefusesUnknownNames(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agentEnv(h)
	r := h.run("mcp", "--tools", "record,telescope")
	assert.Equal(t, exitUsage, r.Code, "%s", r)
	assert.Contains(t, r.Stderr, `"telescope" is no tool set or tool`)
	assert.Contains(t, r.Stderr, "record (the default), read and all")
	assert.Contains(t, r.Stderr, "voyage_start")
	assert.Contains(t, r.Stderr, "Try: ")

	_, names := toolListBytes(t, "read,judge")
	assert.Contains(t, names, "judge")
	assert.Contains(t, names, "search")
	assert.NotContains(t, names, "action")
}

// TestMCPNewToolsReadAndRecord: judge, search, stats, jettison and
// export, through the in-process client, against what the CLI shows of
// the same voyage.
func TestMCPNewToolsReadAndRecord(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agentEnv(h)
	c := h.mcp()
	_, info := ok[helm.VoyageInfo](c, "voyage_start", map[string]any{"intent": "find the albatross"})
	_, obs := ok[view.Observed](c, "observe", map[string]any{"voyage": info.ID, "kind": "context", "description": "a customer's secret name"})
	ok[map[string]any](c, "bearing_take", map[string]any{"voyage": info.ID, "reading": "the albatross is near"})
	ok[map[string]any](c, "note", map[string]any{"voyage": info.ID, "text": "sighted the albatross"})

	_, found := ok[struct {
		Hits []struct {
			Voyage string `json:"voyage"`
			N      int    `json:"n"`
		} `json:"hits"`
	}](c, "search", map[string]any{"text": "albatross"})
	require.NotEmpty(t, found.Hits)
	assert.Equal(t, info.ID, found.Hits[0].Voyage)
	_, te := c.fails("search", map[string]any{})
	assert.Equal(t, exitUsage, te.ExitStatus, "an empty query would match everything")
	require.NoError(t, os.WriteFile(filepath.Join(h.Dir, "log.txt"), []byte("the petrel flew over the mast\n"), 0o644))
	ok[view.Observed](c, "observe", map[string]any{"voyage": info.ID, "kind": "file-contents", "paths": []string{"log.txt"}})
	_, inside := ok[struct {
		Hits []struct {
			Voyage  string `json:"voyage"`
			Kind    string `json:"kind"`
			Snippet string `json:"snippet"`
		} `json:"hits"`
	}](c, "search", map[string]any{"words": "petrel mast", "in": "sightings"})
	require.Len(t, inside.Hits, 1, "words inside a file's contents")
	assert.Equal(t, info.ID, inside.Hits[0].Voyage)
	assert.Contains(t, inside.Hits[0].Snippet, "petrel")
	_, te = c.fails("search", map[string]any{"words": "petrel", "in": "everywhere"})
	assert.Equal(t, exitUsage, te.ExitStatus)

	_, stats := ok[struct {
		Stats []struct {
			Main       string `json:"main"`
			TotalSteps int    `json:"total_steps"`
		} `json:"stats"`
	}](c, "stats", map[string]any{"voyages": []string{info.ID}})
	require.Len(t, stats.Stats, 1)
	assert.Equal(t, info.ID, stats.Stats[0].Main)

	// The judge is another identity: a server of its own.
	h2 := newHarness(t)
	h2.Home, h2.Dir, h2.Env["HELM_HOME"] = h.Home, h.Dir, h.Home
	h2.Env["HELM_IDENTITY"], h2.Env["HELM_ROLE"], h2.Env["HELM_METHOD"] = "carol", "judge", "human"
	j := h2.mcp()
	text, _ := ok[map[string]any](j, "judge", map[string]any{"voyage": info.ID, "score": 8, "dimension": "care", "evidence": []int{1}, "text": "well looked"})
	assert.Contains(t, text, "Judgement 3 recorded")
	_, te = c.fails("judge", map[string]any{"voyage": info.ID, "score": 9, "dimension": "care", "evidence": []int{1}, "text": "my own work"})
	assert.NotZero(t, te.ExitStatus, "the voyage's own identity may not judge it")

	_, exp := ok[struct {
		URI   string `json:"uri"`
		Bytes int64  `json:"bytes"`
	}](c, "export", map[string]any{"voyage": info.ID})
	require.NotZero(t, exp.Bytes)
	res, err := c.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: exp.URI})
	require.NoError(t, err)
	assert.Len(t, res.Contents[0].Text, int(exp.Bytes), "the resource holds what the tool measured")
	assert.Equal(t, strings.TrimSpace(h.ok("voyage", "export", info.ID, "--format", "jsonl")), strings.TrimSpace(res.Contents[0].Text), "the archive helm voyage export writes")

	_, jet := ok[map[string]string](c, "jettison", map[string]any{"voyage": info.ID, "artifact": obs.Artifact[:12], "reason": "a customer's data"})
	assert.Equal(t, obs.Artifact, jet["jettisoned"])
	assert.Contains(t, h.ok("--voyage", info.ID, "artifact", "list"), "jettisoned")
}

// TestMCPFollowGivesWhatComesAndWaitsBounded: follow gives the events
// after a sequence number; with none yet it waits for the next one,
// recorded by another process, and gives it; on a closed voyage it says
// ended at once.
func TestMCPFollowGivesWhatComesAndWaitsBounded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agentEnv(h)
	c := h.mcp()
	_, info := ok[helm.VoyageInfo](c, "voyage_start", map[string]any{"intent": "follow me"})
	type followed struct {
		Events []struct {
			Seq  uint64 `json:"seq"`
			Text string `json:"text"`
		} `json:"events"`
		Next  uint64 `json:"next"`
		Ended bool   `json:"ended"`
	}
	_, first := ok[followed](c, "follow", map[string]any{"voyage": info.ID, "wait": 0})
	require.NotEmpty(t, first.Events)
	assert.False(t, first.Ended)

	got := make(chan followed, 1)
	go func() {
		res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "follow", Arguments: map[string]any{"voyage": info.ID, "after": first.Next, "wait": 120}})
		if err != nil || res.IsError {
			got <- followed{}
			return
		}
		var f followed
		data, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(data, &f)
		got <- f
	}()
	h.ok("--voyage", info.ID, "note", "recorded by another process")
	select {
	case f := <-got:
		require.Len(t, f.Events, 1)
		assert.Contains(t, f.Events[0].Text, "recorded by another process")
		assert.Greater(t, f.Next, first.Next)
	case <-time.After(mcpWait):
		t.Fatalf("follow gave nothing within %s", mcpWait)
	}

	ok[map[string]any](c, "complete", map[string]any{"voyage": info.ID, "summary": "done"})
	_, last := ok[followed](c, "follow", map[string]any{"voyage": info.ID, "after": 1 << 40, "wait": 120})
	assert.True(t, last.Ended, "a closed voyage: nothing more comes, said at once")
	_, te := c.fails("follow", map[string]any{"voyage": info.ID, "wait": 121})
	assert.Equal(t, exitUsage, te.ExitStatus, "the wait is bounded")
}

// TestAttackFollowAPathLikeVoyage: the recorded agent names the voyage
// to follow by a path (another home's voyage, or out of the voyages
// directory): refused as a voyage there is not, nothing read.
func TestAttackFollowAPathLikeVoyage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agentEnv(h)
	h.start("this home's")
	other := newHarness(t)
	other.start("the other home's first")
	otherID := other.start("another home's") // not this home's: the harnesses number alike
	c := h.mcp()
	for _, tt := range []struct{ name, voyage string }{
		{"another home's voyage by id", otherID},
		{"a path to it", other.Home + "/voyages/" + otherID},
		{"dot-dot", "../" + otherID},
		{"dot-dot to the home", ".."},
		{"dot", "."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			text, te := c.fails("follow", map[string]any{"voyage": tt.voyage, "wait": 0})
			assert.NotEqual(t, 0, te.ExitStatus)
			assert.NotContains(t, text, "another home's", "nothing of the other home is read")
		})
	}
}
