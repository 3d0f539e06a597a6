package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/cmd/helm/internal/mcpserver"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/internal/ghtest"
	"github.com/helmlog/helm/logbook"
)

// The MCP server, in-process: helm mcp runs as Main.Run runs it, with the
// harness's home, clock and ids, its server connected to the SDK's client
// over in-memory transports.

// mcpWait bounds what must end by itself (a session's end, a call): a
// guard against a hang, not a latency assertion.
const mcpWait = 30 * time.Second

// mcpClient is a client session on an in-process helm mcp.
type mcpClient struct {
	t    *testing.T
	cs   *mcp.ClientSession
	done chan result
	once sync.Once
}

// mcp starts helm mcp --tools all with args (global flags) in h's home
// and environment, and connects a client to it. The session ends with
// the test, which then requires the server to have ended cleanly.
func (h *harness) mcp(args ...string) *mcpClient {
	h.t.Helper()
	return h.mcpTools("all", args...)
}

// mcpTools is mcp with --tools tools ("": none given, the default set).
func (h *harness) mcpTools(tools string, args ...string) *mcpClient {
	h.t.Helper()
	srvT, cliT := mcp.NewInMemoryTransports()
	m := h.main()
	m.serveMCP = func(ctx context.Context, s *mcp.Server) error { return s.Run(ctx, srvT) }
	args = append(args, "mcp")
	if tools != "" {
		args = append(args, "--tools", tools)
	}
	c := &mcpClient{t: h.t, done: h.runAsync(m, args)}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "helm-test", Version: "1"}, nil).Connect(context.Background(), cliT, nil)
	require.NoError(h.t, err)
	c.cs = cs
	h.t.Cleanup(func() { c.close() })
	return c
}

// runAsync runs helm with args on m, reporting its end on the channel.
func (h *harness) runAsync(m *Main, args []string) chan result {
	done := make(chan result, 1)
	go func() {
		var stdout, stderr bytes.Buffer
		err := m.Run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
		code := ReportError(&stderr, err)
		done <- result{Stdout: stdout.String(), Stderr: stderr.String(), Code: code, Err: err}
	}()
	return done
}

// close ends the session, as a host does, and requires helm mcp to end
// with status 0, having said nothing.
func (c *mcpClient) close() {
	c.once.Do(func() {
		c.t.Helper()
		assert.NoError(c.t, c.cs.Close())
		select {
		case r := <-c.done:
			assert.Equal(c.t, 0, r.Code, "helm mcp ended: %s", r)
			assert.Empty(c.t, r.Stdout, "the protocol went over the transport, nothing else to stdout")
			assert.Empty(c.t, r.Stderr)
		case <-time.After(mcpWait):
			c.t.Errorf("helm mcp still running %s after its session closed", mcpWait)
		}
	})
}

// call calls tool with args.
func (c *mcpClient) call(tool string, args map[string]any) *mcp.CallToolResult {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), mcpWait)
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(c.t, err, "%s %v: a tool's failure is a tool error, never a protocol error", tool, args)
	return res
}

// ok calls tool, requires success, and returns the result's text and its
// structured content decoded into a new T.
func ok[T any](c *mcpClient, tool string, args map[string]any) (string, T) {
	c.t.Helper()
	res := c.call(tool, args)
	text := resultText(res)
	require.False(c.t, res.IsError, "%s %v:\n%s", tool, args, text)
	var out T
	if res.StructuredContent != nil {
		data, err := json.Marshal(res.StructuredContent)
		require.NoError(c.t, err)
		require.NoError(c.t, json.Unmarshal(data, &out), "%s", data)
	}
	return text, out
}

// fails calls tool and requires a tool error, returned with its text.
func (c *mcpClient) fails(tool string, args map[string]any) (string, mcpserver.ToolError) {
	c.t.Helper()
	res := c.call(tool, args)
	text := resultText(res)
	require.True(c.t, res.IsError, "%s %v: want a tool error, got:\n%s", tool, args, text)
	var te mcpserver.ToolError
	data, err := json.Marshal(res.StructuredContent)
	require.NoError(c.t, err)
	require.NoError(c.t, json.Unmarshal(data, &te))
	assert.Equal(c.t, "helm: "+te.Error, strings.SplitN(text, "\n", 2)[0], "the text says what the structured error does")
	return text, te
}

// resultText is the text of a tool's result.
func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// agentEnv sets the server's identity, role and method in h's environment.
func agentEnv(h *harness) {
	h.Env["HELM_IDENTITY"], h.Env["HELM_ROLE"], h.Env["HELM_METHOD"] = "claude-1", "coder", "claude-test"
}

var agentWho = logbook.Who{Identity: "claude-1", Role: "coder", Method: "claude-test"}

// mcpTools are the tools helm mcp --tools all lists, sorted.
var mcpTools = []string{
	"action", "artifact_list", "bearing_challenge", "bearing_take", "close_issue", "comment_issue", "comment_pull_request", "commit",
	"complete", "create_issue", "create_pull_request", "export", "follow", "jettison", "judge", "log", "merge_pull_request", "note", "observe", "push",
	"reply_pull_request", "report", "request_review", "search", "sighting_show", "slate_clear", "slate_erase", "slate_list",
	"stats", "transcript", "undo", "voyage_list", "voyage_resume", "voyage_show", "voyage_start",
}

// TestMCPListsEveryToolWithItsSchema: the tools, each with an input
// schema derived from its Go arguments and a description; a change to a
// schema is a visible diff of testdata/mcp-tools.golden.json (-update
// rewrites it).
func TestMCPListsEveryToolWithItsSchema(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agentEnv(h)
	c := h.mcp()
	ctx := context.Background()
	res, err := c.cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		t.Run(tool.Name, func(t *testing.T) {
			assert.NotEmpty(t, tool.Description)
			assert.True(t, strings.HasSuffix(tool.Description, ".") || strings.Contains(tool.Description, "\n- "), "a description says what the tool does in sentences")
			require.NotNil(t, tool.Annotations)
			schema, ok := tool.InputSchema.(map[string]any)
			require.True(t, ok, "%T", tool.InputSchema)
			assert.Equal(t, "object", schema["type"])
			assert.Equal(t, false, schema["additionalProperties"], "an argument the tool does not know is refused")
			props, _ := schema["properties"].(map[string]any)
			for name, p := range props {
				p := p.(map[string]any)
				assert.NotEmpty(t, p["description"], "argument %s is described", name)
				assert.IsType(t, "", p["type"], "argument %s has one type, as every host reads it", name)
				assert.NotContains(t, []string{"identity", "as", "role", "method"}, name, "no tool acts as someone else")
			}
			for _, r := range schemaList(schema["required"]) {
				assert.Contains(t, props, r)
			}
		})
	}
	assert.Equal(t, mcpTools, slices.Sorted(slices.Values(names)))
	for _, k := range actions.Kinds() {
		assert.Contains(t, names, mcpserver.ToolName(k.Name), "every action of the command line has its tool")
	}

	templates, err := c.cs.ListResourceTemplates(ctx, nil)
	require.NoError(t, err)
	var uris []string
	for _, rt := range templates.ResourceTemplates {
		uris = append(uris, rt.URITemplate)
	}
	assert.ElementsMatch(t, []string{"helm://voyages/{voyage}/story{?offset}", "helm://voyages/{voyage}/sightings/{hash}{?offset}", "helm://voyages/{voyage}/export{?format,offset}"}, uris)

	got, err := json.MarshalIndent(res.Tools, "", "  ")
	require.NoError(t, err)
	golden := filepath.Join("testdata", "mcp-tools.golden.json")
	if *update {
		require.NoError(t, os.WriteFile(golden, append(got, '\n'), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got)+"\n", "the tools' schemas changed: go test ./cmd/helm -run TestMCPListsEveryToolWithItsSchema -update, and read the diff")
}

func schemaList(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, s := range list {
		out = append(out, s.(string))
	}
	return out
}

// TestMCPRecordsAWholeVoyage calls every tool on one voyage, in a git
// repository with the GitHub stand-in, and checks what each recorded:
// through the tools' results, the CLI's views of the same voyage, and
// its events, every one by the server's identity.
func TestMCPRecordsAWholeVoyage(t *testing.T) {
	t.Parallel()
	h, srv, g := newGitHubHarness(t)
	agentEnv(h)
	issue := srv.AddIssue("octo/widgets", ghtest.Issue{Title: "widget crashes", Body: "on init"})
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("status: green\n")) }))
	t.Cleanup(web.Close)
	g.WriteFile(t, "go.mod", "module example.com/widget\n\ngo 1.26\n")
	g.WriteFile(t, "Cargo.toml", "[package]\nname = \"widget\"\n")
	g.Git(t, "add", ".")
	g.Git(t, "commit", "-q", "-m", "widget")
	c := h.mcp()

	_, info := ok[helm.VoyageInfo](c, "voyage_start", map[string]any{"intent": "Resolve #1: fix the widget", "kind": "resolve-issue"})
	id := info.ID
	assert.Equal(t, "claude-1", info.Identity)
	assert.Equal(t, helm.ResolveIssue, info.Kind)
	assert.Equal(t, "octo/widgets", info.Repo, "the repository helm runs in is recorded")
	vid := map[string]any{"voyage": id[:6]} // a prefix will do
	with := func(extra map[string]any) map[string]any {
		out := map[string]any{"voyage": id[:6]}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	_, list := ok[struct{ Voyages []helm.VoyageInfo }](c, "voyage_list", nil)
	require.Len(t, list.Voyages, 1)
	assert.Equal(t, id, list.Voyages[0].ID)

	// Every mark kind, with its own parameters.
	marks := []struct {
		args  map[string]any
		label string
	}{
		{map[string]any{"kind": "file-contents", "paths": []string{"README.md"}}, "FileContents: README.md"},
		{map[string]any{"kind": "directory-tree", "root": ".", "max_depth": 0, "skip": []string{"target"}}, "DirectoryTree @ ."},
		{map[string]any{"kind": "rust-project", "path": "."}, "RustProject @ ."},
		{map[string]any{"kind": "go-project", "path": ".", "include_vendor": true}, "GoProject @ ."},
		{map[string]any{"kind": "github-issue", "number": issue, "focus": []string{"summary", "comments"}}, "GitHubIssue octo/widgets#" + itoa(issue)},
		{map[string]any{"kind": "github-repo", "focus": []string{"issues"}}, "GitHubRepository octo/widgets"},
		{map[string]any{"kind": "context", "description": "the user says init crashes"}, "Context: the user says init crashes"},
		{map[string]any{"kind": "command", "command": []string{"echo", "hi"}, "timeout": "10s"}, `Command: echo hi`},
		{map[string]any{"kind": "web", "url": web.URL}, "Web: " + web.URL},
	}
	for _, m := range marks {
		text, o := ok[view.Observed](c, "observe", with(m.args))
		assert.Contains(t, o.Label, m.label, "%v", m.args)
		assert.Empty(t, o.Failures, "%v", m.args)
		assert.Len(t, o.Artifact, 64)
		assert.True(t, strings.HasPrefix(text, "Observed "), text)
	}
	// A look that failed is recorded all the same, and says so.
	text, missing := ok[view.Observed](c, "observe", with(map[string]any{"kind": "file-contents", "paths": []string{"gone.rs"}}))
	require.Len(t, missing.Failures, 1)
	assert.Contains(t, text, "Observed, but gone.rs could not be read")
	assert.Contains(t, text, "exit status 3")
	assert.Contains(t, text, "slate_erase with the same kind and parameters takes it off the slate", "how to erase it, in tools' words")

	_, slate := ok[struct{ Slate []logbook.ObservationRecord }](c, "slate_list", vid)
	assert.Len(t, slate.Slate, len(marks)+1)
	_, erased := ok[map[string]string](c, "slate_erase", with(map[string]any{"kind": "file-contents", "paths": []string{"./gone.rs"}}))
	assert.Equal(t, "FileContents: gone.rs", erased["label"], "two spellings of a path name one mark")

	_, b := ok[logbook.Entry](c, "bearing_take", with(map[string]any{"reading": "init() dereferences a nil config."}))
	assert.Equal(t, 1, b.N)
	assert.Len(t, b.Bearing.Observations, len(marks))
	assert.Equal(t, logbook.SourceAgent, b.Bearing.Reading.Source)
	_, ch := ok[logbook.Entry](c, "bearing_challenge", with(map[string]any{"n": 1, "feedback": "it is the reload path", "reading": "reload() skips the nil check.", "source": "user"}))
	assert.Equal(t, "reload() skips the nil check.", ch.Bearing.Reading.Text)
	require.Len(t, ch.Bearing.Reading.History, 1)
	_, note := ok[logbook.Entry](c, "note", with(map[string]any{"text": "Fixing reload() first."}))
	assert.Equal(t, 2, note.N)

	ok[map[string]any](c, "observe", with(map[string]any{"kind": "context", "description": "scratch"}))
	_, wiped := ok[map[string]any](c, "slate_clear", vid)
	assert.EqualValues(t, 1, wiped["wiped"])

	// The actions: git, then GitHub through the stand-in.
	g.Git(t, "switch", "-q", "-c", "fix-widget")
	g.WriteFile(t, "widget.rs", "fn reload() { /* nil check */ }\n")
	g.Git(t, "add", "widget.rs")
	dry, d := ok[view.DryRun](c, "commit", with(map[string]any{"message": "Check for nil in reload", "dry_run": true}))
	assert.Contains(t, dry, "nothing is run or recorded")
	assert.Contains(t, d.DryRun, "git -c i18n.commitEncoding=UTF-8 commit -m")
	_, commit := ok[logbook.Entry](c, "commit", with(map[string]any{"message": "Check for nil in reload", "why": "the bearing says so"}))
	sha := g.Git(t, "rev-parse", "HEAD")
	assert.Equal(t, sha, commit.Action.Result.SHA)
	assert.Equal(t, "the bearing says so", commit.Action.Why)
	ok[logbook.Entry](c, "push", vid) // the branch checked out
	assert.Equal(t, sha, g.BareRef(t, "fix-widget"))
	_, pr := ok[logbook.Entry](c, "create_pull_request", with(map[string]any{"title": "Fix reload", "body": "Fixes #" + itoa(issue), "reviewers": []string{"dyreby"}}))
	n := pr.Action.Result.Number
	require.Positive(t, n)
	comment := srv.AddReviewComment("octo/widgets", n, ghtest.ReviewComment{User: "dyreby", Body: "nil?", Path: "widget.rs", Line: 1})
	entries := map[string]logbook.Entry{}
	for _, a := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"comment_pull_request", map[string]any{"number": n, "body": "Ready."}, "commented on PR #" + itoa(n)},
		{"reply_pull_request", map[string]any{"number": n, "comment_id": comment, "body": "Checked."}, "replied on PR #" + itoa(n)},
		{"request_review", map[string]any{"number": n, "reviewers": []string{"alice"}}, "requested review on PR #" + itoa(n) + " from alice"},
		{"merge_pull_request", map[string]any{"number": n, "merge_method": "squash"}, "merged PR #" + itoa(n)},
		{"comment_issue", map[string]any{"number": issue, "body": "Fixed by #" + itoa(n) + "."}, "commented on issue #" + itoa(issue)},
		{"close_issue", map[string]any{"number": issue}, "closed issue #" + itoa(issue)},
		{"create_issue", map[string]any{"title": "Test reload()", "repo": "octo/widgets"}, "created issue #"},
	} {
		text, e := ok[logbook.Entry](c, a.tool, with(a.args))
		assert.Contains(t, text, a.want, a.tool)
		assert.Equal(t, agentWho, e.Who, a.tool)
		entries[a.tool] = e
	}
	assert.Equal(t, "closed", srv.IssueState("octo/widgets", issue))

	// Undo: the follow-up issue is closed again; a merge cannot be undone.
	followUp := entries["create_issue"]
	text, undo := ok[logbook.Entry](c, "undo", with(map[string]any{"n": followUp.N, "why": "filed twice", "dry_run": true}))
	assert.Contains(t, text, "Dry run")
	assert.Contains(t, text, "repos/octo/widgets/issues/"+itoa(followUp.Action.Result.Number))
	text, undo = ok[logbook.Entry](c, "undo", with(map[string]any{"n": followUp.N, "why": "filed twice"}))
	assert.Contains(t, text, "closed issue #"+itoa(followUp.Action.Result.Number)+" (undoes "+itoa(followUp.N)+")")
	assert.Equal(t, followUp.N, undo.Action.Undoes)
	assert.Equal(t, "closed", srv.IssueState("octo/widgets", followUp.Action.Result.Number))
	text, te := c.fails("undo", with(map[string]any{"n": entries["merge_pull_request"].N}))
	assert.Contains(t, text, "a merged pull request cannot be unmerged")
	assert.Equal(t, 2, te.ExitStatus)
	assert.Contains(t, text, "call log, to see which actions were performed and which were undone")

	// Reading it back.
	story, _ := ok[any](c, "log", vid)
	assert.Equal(t, h.ok("--voyage", id, "log"), story, "the story the agent reads is the one helm log tells")
	_, lj := ok[view.Log](c, "log", with(map[string]any{"format": "json"}))
	assert.Len(t, lj.Entries, 13, "a bearing, a note, ten actions and an undo")
	evidence, _ := ok[any](c, "log", with(map[string]any{"evidence": true, "who": "claude-1"}))
	assert.Contains(t, evidence, "Evidence of Context: the user says init crashes")
	_, show := ok[struct {
		Head      string
		Logbook   helm.LogbookCounts
		Artifacts view.Totals
	}](c, "voyage_show", vid)
	assert.Equal(t, h.ok("voyage", "head", id), show.Head+"\n", "the head, as helm voyage head prints it")
	assert.Equal(t, 11, show.Logbook.Actions)
	assert.Equal(t, len(marks)+2, show.Artifacts.Count)
	seen, _ := ok[any](c, "sighting_show", with(map[string]any{"sighting": "command:"}))
	assert.Contains(t, seen, "exit status 0")
	raw, _ := ok[any](c, "sighting_show", with(map[string]any{"sighting": "context:", "format": "json"}))
	assert.True(t, json.Valid([]byte(raw)), raw)
	_, arts := ok[struct {
		Artifacts []view.ArtifactRow
		Next      string
	}](c, "artifact_list", with(map[string]any{"limit": 3}))
	assert.Len(t, arts.Artifacts, 3)
	_, rest := ok[struct{ Artifacts []view.ArtifactRow }](c, "artifact_list", with(map[string]any{"after": arts.Next}))
	assert.Len(t, rest.Artifacts, len(marks)+2-3, "pages do not overlap")
	tr, _ := ok[any](c, "transcript", map[string]any{"voyages": []string{id}})
	assert.Contains(t, tr, "Bearing 1: init() dereferences a nil config.")
	rep, _ := ok[any](c, "report", vid)
	assert.Contains(t, rep, "Resolve #1: fix the widget")

	// The end, a pause and the end again.
	_, blocked := ok[helm.VoyageInfo](c, "complete", with(map[string]any{"summary": "Waiting for a review.", "outcome": "blocked"}))
	assert.Equal(t, logbook.StatusBlocked, blocked.Status)
	_, resumed := ok[helm.VoyageInfo](c, "voyage_resume", with(map[string]any{"reason": "Reviewed."}))
	assert.Equal(t, logbook.StatusActive, resumed.Status)
	_, done := ok[struct {
		helm.VoyageInfo
		Head string
	}](c, "complete", with(map[string]any{"summary": "reload() checks for nil; PR merged."}))
	assert.Equal(t, logbook.StatusCompleted, done.Status)
	assert.Equal(t, h.ok("voyage", "head", id), done.Head+"\n", "the head after the completion")

	// The events, as the CLI exports them: every one the server's.
	types := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(h.ok("transcript", id, "--json")))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct {
			Type string
			Who  logbook.Who
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		types[e.Type]++
		assert.Equal(t, agentWho, e.Who, "%s", sc.Bytes())
	}
	assert.Equal(t, map[string]int{
		"voyage-started": 1, "observed": len(marks) + 2, "mark-erased": 1, "slate-wiped": 1,
		"bearing-taken": 1, "reading-challenged": 1, "note-added": 1,
		"action-intended": 11, "action-performed": 11, "voyage-completed": 2, "voyage-resumed": 1,
	}, types)
	assert.Contains(t, h.ok("--voyage", id, "voyage", "verify"), "OK: nothing damaged")
}

// TestMCPBadInputIsAToolError: bad arguments never end the server or
// record anything; each is a tool error saying what is wrong and what to
// do, as the command line would (exit status 2).
func TestMCPBadInputIsAToolError(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agentEnv(h)
	c := h.mcp()
	_, info := ok[helm.VoyageInfo](c, "voyage_start", map[string]any{"intent": "bad input"})
	v := info.ID
	tests := []struct {
		name string
		tool string
		args map[string]any
		want string // in the error's text
		try  string // in its Try:, when the server gives one
	}{
		{"unknown tool argument", "note", map[string]any{"voyage": v, "text": "x", "as": "root"}, "as", ""},
		{"missing argument", "note", map[string]any{"voyage": v}, "text", ""},
		{"wrong type", "bearing_challenge", map[string]any{"voyage": v, "n": "one", "feedback": "f", "reading": "r"}, "n", ""},
		{"unknown mark kind", "observe", map[string]any{"voyage": v, "kind": "telescope"}, "kind", ""},
		{"parameter of another kind", "observe", map[string]any{"voyage": v, "kind": "context", "description": "x", "root": "."}, "context takes no root", "context takes description (needed)"},
		{"missing mark parameter", "observe", map[string]any{"voyage": v, "kind": "directory-tree"}, "directory-tree needs root", "directory-tree takes root (needed), skip, max_depth"},
		{"timeout of a look with none", "observe", map[string]any{"voyage": v, "kind": "context", "description": "x", "timeout": "1s"}, "context takes no timeout", ""},
		{"bad timeout", "observe", map[string]any{"voyage": v, "kind": "command", "command": []string{"true"}, "timeout": "soon"}, `timeout "soon"`, "30s"},
		{"path with a NUL byte", "observe", map[string]any{"voyage": v, "kind": "file-contents", "paths": []string{"a\x00b"}}, "NUL byte", ""},
		{"skip with a slash", "observe", map[string]any{"voyage": v, "kind": "directory-tree", "root": ".", "skip": []string{"a/b"}}, "invalid mark", ""},
		{"negative depth", "observe", map[string]any{"voyage": v, "kind": "directory-tree", "root": ".", "max_depth": -1}, "negative", ""},
		{"credentials in a URL", "observe", map[string]any{"voyage": v, "kind": "web", "url": "https://user:pw@example.com/"}, "invalid mark", ""},
		{"issue zero", "observe", map[string]any{"voyage": v, "kind": "github-issue", "number": 0, "repo": "o/r"}, "number", ""},
		{"bad focus", "observe", map[string]any{"voyage": v, "kind": "github-issue", "number": 1, "repo": "o/r", "focus": []string{"gossip"}}, "gossip", ""},
		{"empty reading", "bearing_take", map[string]any{"voyage": v, "reading": " "}, "reading", ""},
		{"observation from stdin", "bearing_take", map[string]any{"voyage": v, "reading": "r", "observation_files": []string{"-"}}, "standard input carries the protocol", ""},
		{"observation file not there", "bearing_take", map[string]any{"voyage": v, "reading": "r", "observation_files": []string{"nope.json"}}, "read nope.json", "helm observe KIND ... --out FILE"},
		{"no such bearing", "bearing_challenge", map[string]any{"voyage": v, "n": 7, "feedback": "f", "reading": "r"}, "bearing", "call log"},
		{"bad outcome", "complete", map[string]any{"voyage": v, "summary": "s", "outcome": "sunk"}, "outcome", ""},
		{"no such voyage", "note", map[string]any{"voyage": "ffff", "text": "x"}, "voyage ffff", "voyage_list"},
		{"empty commit message", "commit", map[string]any{"voyage": v, "message": ""}, "invalid action", ""},
		{"bad merge method", "merge_pull_request", map[string]any{"voyage": v, "number": 1, "merge_method": "octopus"}, "merge_method", ""},
		{"stale with a status", "voyage_list", map[string]any{"status": "all", "stale": "1h"}, "stale", "leave status out"},
		{"offset past the end", "log", map[string]any{"voyage": v, "offset": 1 << 20}, "offset", "0"},
		{"no sighting", "sighting_show", map[string]any{"voyage": v, "sighting": "beef"}, "no observation key or artifact hash", "artifact_list"},
		{"both voyages and all", "transcript", map[string]any{"voyages": []string{v}, "all": true}, "both", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, te := c.fails(tt.tool, tt.args)
			t.Log(text)
			assert.Contains(t, text, tt.want)
			if tt.try != "" {
				assert.Contains(t, te.Try, tt.try, text)
			}
			assert.Equal(t, exitUsage, te.ExitStatus, text)
		})
	}
	// Not bad input, but no bearing without an observation: what to do is
	// said in tools' words.
	text, te := c.fails("bearing_take", map[string]any{"voyage": v, "reading": "r"})
	assert.Contains(t, text, "slate is empty")
	assert.Equal(t, "call observe first, or give bearing_take observation_files", te.Try)
	assert.Equal(t, exitFailed, te.ExitStatus)

	// Arguments sent as null are no arguments (the SDK alone would write
	// the schema's defaults into a nil map, and panic).
	_, list := ok[struct{ Voyages []helm.VoyageInfo }](c, "voyage_list", nil)
	assert.Len(t, list.Voyages, 1)
	_, show := ok[struct{ Voyage helm.VoyageInfo }](c, "voyage_show", map[string]any{"voyage": v})
	assert.Equal(t, uint64(1), show.Voyage.Seq, "nothing but the start was recorded")
}

// TestMCPConcurrentCallsOnOneServer: a host may call tools at once; the
// server takes them on one voyage (and on several) as goroutines of one
// process take changes.
func TestMCPConcurrentCallsOnOneServer(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agentEnv(h)
	c := h.mcp()
	var ids []string
	for i := range 2 {
		_, info := ok[helm.VoyageInfo](c, "voyage_start", map[string]any{"intent": "at once " + itoa(i)})
		ids = append(ids, info.ID)
	}
	const callers, each = 8, 10
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			for j := range each {
				id := ids[(i+j)%2]
				ok[view.Observed](c, "observe", map[string]any{"voyage": id, "kind": "context", "description": "caller " + itoa(i) + " look " + itoa(j)})
				ok[any](c, "log", map[string]any{"voyage": id})
			}
		})
	}
	wg.Wait()
	total := 0
	for _, id := range ids {
		var slate []logbook.ObservationRecord
		require.NoError(t, json.Unmarshal([]byte(h.ok("--voyage", id, "slate", "list", "--json")), &slate))
		total += len(slate)
		assert.Contains(t, h.ok("--voyage", id, "voyage", "verify"), "OK: nothing damaged")
	}
	assert.Equal(t, callers*each, total)
}

// TestMCPGuardRules: a denied action is refused naming its rule, and so
// is one a rule asks a person to confirm: over MCP nobody can. Both
// refusals are recorded; nothing runs.
func TestMCPGuardRules(t *testing.T) {
	t.Parallel()
	h, srv, g := newGitHubHarness(t)
	agentEnv(h)
	h.writeHome("policy.toml", readmePolicy+`
[[rule]]
name = "people confirm commits"
action = "commit"
decision = "confirm"
`)
	c := h.mcp()
	_, info := ok[helm.VoyageInfo](c, "voyage_start", map[string]any{"intent": "guarded"})
	pr := srv.AddPull("octo/widgets", ghtest.PullRequest{Title: "Fix widget", Head: "main"})
	g.WriteFile(t, "a.txt", "a\n")
	g.Git(t, "add", "a.txt")
	head := g.Git(t, "rev-parse", "HEAD")
	srv.ClearRequests()

	text, te := c.fails("merge_pull_request", map[string]any{"voyage": info.ID, "number": pr})
	assert.Contains(t, text, `denied by rule "agents may not merge"`)
	assert.Equal(t, exitRefused, te.ExitStatus)
	text, te = c.fails("commit", map[string]any{"voyage": info.ID, "message": "x"})
	assert.Contains(t, text, `rule "people confirm commits"`)
	assert.Equal(t, mcpserver.ConfirmHint, te.Try)
	text, _ = c.fails("observe", map[string]any{"voyage": info.ID, "kind": "command", "command": []string{"sh", "-c", "rm -rf /tmp/nothing"}})
	assert.Contains(t, text, `denied by rule "no rm -rf"`)

	assert.Empty(t, srv.Requests(), "nothing reached GitHub")
	assert.Equal(t, head, g.Git(t, "rev-parse", "HEAD"), "nothing was committed")
	story := h.ok("--voyage", info.ID, "log")
	for _, want := range []string{
		`merge-pull-request denied by rule "agents may not merge"`,
		`commit held for confirmation by rule "people confirm commits"`,
		`observe-command denied by rule "no rm -rf"`,
	} {
		assert.Contains(t, story, want)
	}
	assert.Equal(t, 3, strings.Count(story, "(nothing was run)"), story)
}

// TestMCPSecretsAreRefusedOrRedacted: an action whose parameters hold a
// secret is refused unless allow_secret; what is stored is redacted.
func TestMCPSecretsAreRefusedOrRedacted(t *testing.T) {
	t.Parallel()
	h, _, _ := newGitHubHarness(t)
	agentEnv(h)
	c := h.mcp()
	_, info := ok[helm.VoyageInfo](c, "voyage_start", map[string]any{"intent": "secrets"})
	token := "ghp_" + strings.Repeat("a1B2", 9)
	args := map[string]any{"voyage": info.ID, "title": "Leak", "body": "token " + token}
	_, te := c.fails("create_issue", args)
	assert.Contains(t, te.Try, "allow_secret")
	args["allow_secret"] = true
	ok[logbook.Entry](c, "create_issue", args)
	ok[view.Observed](c, "observe", map[string]any{"voyage": info.ID, "kind": "context", "description": "API_TOKEN=" + token})
	story := h.ok("--voyage", info.ID, "log")
	for _, out := range []string{story, h.ok("--voyage", info.ID, "slate", "list", "--json"), h.ok("--voyage", info.ID, "log", "--json")} {
		assert.NotContains(t, out, token)
	}
	assert.Contains(t, h.ok("--voyage", info.ID, "sighting", "show", "context:"), "[REDACTED")
}

// TestMCPPinnedVoyage: --voyage pins the server to one voyage: tools
// leave voyage out, name no other, start none; the identity defaults to
// the voyage's.
func TestMCPPinnedVoyage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.start("pinned")
	other := h.start("another")
	h.Env["HELM_METHOD"] = "claude-test"
	c := h.mcp("--voyage", id[:8])
	_, e := ok[logbook.Entry](c, "note", map[string]any{"text": "on the pinned voyage"})
	assert.Equal(t, logbook.Who{Identity: "john-agent", Role: "coder", Method: "claude-test"}, e.Who, "the voyage's identity, as for any command")
	ok[logbook.Entry](c, "note", map[string]any{"voyage": id, "text": "named"})
	_, te := c.fails("note", map[string]any{"voyage": other, "text": "elsewhere"})
	assert.Contains(t, te.Error, "acts on voyage "+id[:8]+" alone")
	_, te = c.fails("voyage_start", map[string]any{"intent": "more"})
	assert.Contains(t, te.Error, "acts on voyage "+id[:8]+" alone")
	assert.Contains(t, h.ok("--voyage", id, "log"), "── Note 2 ──")
	assert.NotContains(t, h.ok("--voyage", other, "log"), "Note")

	// The pinned voyage completed: the hint does not send the agent to
	// voyage_start, which a pinned server refuses.
	ok[helm.VoyageInfo](c, "complete", map[string]any{"summary": "done"})
	_, te = c.fails("note", map[string]any{"text": "after the end"})
	assert.Contains(t, te.Try, "this server is pinned to that voyage")
	assert.NotContains(t, te.Try, "call voyage_start")
}

// TestMCPStartNeedsWhoAndAVoyageThatIs: the server resolves who it acts
// as, and the voyage it is pinned to, before it serves: a failure is
// the command line's usage error.
func TestMCPStartNeedsWhoAndAVoyageThatIs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"no identity", map[string]string{"HELM_ROLE": "coder", "HELM_METHOD": "m"}, nil, "Try: helm mcp --as NAME"},
		{"no role", map[string]string{"HELM_IDENTITY": "a", "HELM_METHOD": "m"}, nil, "--role coder"},
		{"no such voyage", map[string]string{"HELM_IDENTITY": "a", "HELM_ROLE": "r", "HELM_METHOD": "m"}, []string{"--voyage", "ffff"}, "--voyage ffff"},
		{"an argument", map[string]string{"HELM_IDENTITY": "a", "HELM_ROLE": "r", "HELM_METHOD": "m"}, []string{"mcp", "extra"}, "mcp takes no arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			for k, v := range tt.env {
				h.Env[k] = v
			}
			m := h.main()
			m.serveMCP = func(context.Context, *mcp.Server) error {
				t.Error("served without who it acts as")
				return nil
			}
			args := tt.args
			if !slices.Contains(args, "mcp") {
				args = append(args, "mcp")
			}
			var r result
			select {
			case r = <-h.runAsync(m, args):
			case <-time.After(mcpWait):
				t.Fatal("helm mcp did not end")
			}
			assert.Equal(t, exitUsage, r.Code, r.String())
			assert.Contains(t, r.Stderr, tt.want)
			assert.Empty(t, r.Stdout)
		})
	}
}

// TestMCPResources: a voyage's story and its sightings are resources; a
// large sighting comes in pages, each saying where the next is, that
// make up the sighting.
func TestMCPResources(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agentEnv(h)
	big := strings.Repeat("line of a large file, ünïcode included\n", 5000) // ~200 KiB
	h.writeFile("big.txt", big)
	c := h.mcp()
	ctx := context.Background()
	_, info := ok[helm.VoyageInfo](c, "voyage_start", map[string]any{"intent": "resources"})
	_, o := ok[view.Observed](c, "observe", map[string]any{"voyage": info.ID, "kind": "file-contents", "paths": []string{"big.txt"}})
	ok[logbook.Entry](c, "bearing_take", map[string]any{"voyage": info.ID, "reading": "a large file"})

	list, err := c.cs.ListResources(ctx, nil)
	require.NoError(t, err)
	require.Len(t, list.Resources, 1, "the story of the voyage the server opened")
	assert.Equal(t, "helm://voyages/"+info.ID+"/story", list.Resources[0].URI)
	story, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: list.Resources[0].URI})
	require.NoError(t, err)
	assert.Equal(t, h.ok("--voyage", info.ID, "log"), story.Contents[0].Text)
	byPrefix, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "helm://voyages/" + info.ID[:8] + "/story"})
	require.NoError(t, err)
	assert.Equal(t, story.Contents[0].Text, byPrefix.Contents[0].Text)

	var whole strings.Builder
	uri := "helm://voyages/" + info.ID + "/sightings/" + o.Artifact[:12]
	pages := 0
	for uri != "" {
		res, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		require.NoError(t, err)
		pages++
		require.LessOrEqual(t, len(res.Contents[0].Text), 64<<10, "a page at most")
		whole.WriteString(res.Contents[0].Text)
		uri = ""
		if len(res.Contents) == 2 {
			assert.Contains(t, res.Contents[1].Text, "[helm: bytes ")
			uri = res.Contents[1].URI
		}
	}
	assert.Greater(t, pages, 2)
	want := h.ok("--voyage", info.ID, "sighting", "show", o.Artifact, "--json")
	assert.Equal(t, strings.TrimSuffix(want, "\n"), whole.String(), "the pages make up the sighting")

	_, err = c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "helm://voyages/" + info.ID + "/sightings/beefbeef"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Resource not found")

	// The tool pages the same way.
	first, _ := ok[any](c, "sighting_show", map[string]any{"voyage": info.ID, "sighting": "file-contents:"})
	assert.Contains(t, first, "call sighting_show again with offset ")
}

// pipeTransports are the two ends of an in-memory connection that, unlike
// a graceful Close, can be cut mid-call: cut closes the client's end as a
// host that dies does.
func pipeTransports() (server, client mcp.Transport, cut func()) {
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	server = &mcp.IOTransport{Reader: c2sR, Writer: s2cW}
	client = &mcp.IOTransport{Reader: s2cR, Writer: c2sW}
	return server, client, func() {
		c2sW.Close()
		s2cR.Close()
	}
}

// TestMCPHostGoingMidCallLeavesTheVoyageConsistent: a host that goes
// while a call runs (a slow command being observed) cancels that call;
// the server goes on serving its other sessions, and the voyage holds
// what was recorded, whole.
func TestMCPHostGoingMidCallLeavesTheVoyageConsistent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agentEnv(h)
	id := h.start("disconnects")
	srvA, cliA, cutA := pipeTransports()
	srvB, cliB := mcp.NewInMemoryTransports()
	m := h.main()
	m.serveMCP = func(ctx context.Context, s *mcp.Server) error {
		a, err := s.Connect(ctx, srvA, nil)
		if err != nil {
			return err
		}
		b, err := s.Connect(ctx, srvB, nil)
		if err != nil {
			return err
		}
		a.Wait() // cut: its error is the pipe's
		return b.Wait()
	}
	done := h.runAsync(m, []string{"mcp"})
	client := mcp.NewClient(&mcp.Implementation{Name: "helm-test", Version: "1"}, nil)
	a, err := client.Connect(context.Background(), cliA, nil)
	require.NoError(t, err)
	b, err := client.Connect(context.Background(), cliB, nil)
	require.NoError(t, err)

	started := filepath.Join(h.Dir, "started")
	call := make(chan error, 1)
	go func() {
		_, err := a.CallTool(context.Background(), &mcp.CallToolParams{Name: "observe", Arguments: map[string]any{
			"voyage": id, "kind": "command", "command": []string{"sh", "-c", "touch started; sleep 60"}}})
		call <- err
	}()
	require.Eventually(t, func() bool { _, err := os.Stat(started); return err == nil }, mcpWait, 10*time.Millisecond, "the command started")
	since := time.Now()
	cutA()
	select {
	case err := <-call:
		assert.Error(t, err, "the call ended with its connection")
	case <-time.After(mcpWait):
		t.Fatal("the call outlived its connection")
	}

	bc := &mcpClient{t: t, cs: b, done: done}
	for i := range 3 {
		ok[view.Observed](bc, "observe", map[string]any{"voyage": id, "kind": "context", "description": "still here " + itoa(i)})
	}
	bc.close()
	t.Logf("the server served on and ended %s after the host went", time.Since(since))
	slate := h.ok("--voyage", id, "slate", "list")
	assert.Contains(t, slate, "3 observations", "the cancelled look recorded nothing")
	assert.NotContains(t, slate, "sleep")
	assert.Contains(t, h.ok("--voyage", id, "voyage", "verify"), "OK: nothing damaged")
}
