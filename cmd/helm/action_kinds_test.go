package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/cmd/helm/internal/mcpserver"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/runner"
)

// The action kinds are described once (actions.Kinds); `helm action
// KIND` and the MCP tool of each are made from that description.

// actionCommand is the `helm action KIND` command of h's helm.
func actionCommand(t *testing.T, h *harness, kind string) *cobra.Command {
	t.Helper()
	root := newRootCmd(&app{main: h.main()}, nil)
	c, rest, err := root.Find([]string{"action", kind})
	require.NoError(t, err)
	require.Empty(t, rest, "helm action %s is a command", kind)
	require.Equal(t, kind, c.Name())
	return c
}

// listTools lists the tools of c's server by name.
func listTools(t *testing.T, c *mcpClient) map[string]*mcp.Tool {
	t.Helper()
	res, err := c.cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	tools := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		tools[tool.Name] = tool
	}
	return tools
}

// pflagTypes are the flag types of each parameter type.
var pflagTypes = map[actions.Type]string{actions.String: "string", actions.Int: "int64", actions.Bool: "bool", actions.List: "stringArray"}

// jsonTypes are the JSON schema types of each parameter type.
var jsonTypes = map[actions.Type]string{actions.String: "string", actions.Int: "integer", actions.Bool: "boolean", actions.List: "array"}

// assertCommandFollowsKind checks that c, the command of kind k, takes
// each of k's parameters: the number as its argument N, each other as a
// flag of its type (flags names it: by parameter), and --repo when k acts
// on GitHub.
func assertCommandFollowsKind(t *testing.T, k actions.Kind, c *cobra.Command, flags map[string]string) {
	t.Helper()
	usage := strings.TrimPrefix(c.Use, k.Name+" ")
	for _, p := range k.Params {
		if p.Name == "number" {
			assert.True(t, strings.HasPrefix(usage, "N "), "%s: the number is the first argument: %s", k.Name, c.Use)
			assert.Nil(t, c.Flags().Lookup("number"), "%s: no flag for the number", k.Name)
			continue
		}
		name := flags[p.Name]
		f := c.Flags().Lookup(name)
		if !assert.NotNil(t, f, "%s: --%s for parameter %s", k.Name, name, p.Name) {
			continue
		}
		assert.Equal(t, pflagTypes[p.Type], f.Value.Type(), "%s --%s", k.Name, name)
		if p.Required {
			assert.Contains(t, usage, "--"+name, "%s: the usage names --%s", k.Name, name)
			assert.NotContains(t, usage, "[--"+name, "%s: --%s is needed, not optional", k.Name, name)
		} else {
			assert.Contains(t, usage, "[--"+name, "%s: --%s is optional", k.Name, name)
		}
		for _, v := range p.Enum {
			assert.Contains(t, usage, v, "%s: the usage names the values of --%s", k.Name, name)
		}
	}
	assert.Equal(t, k.GitHub, c.Flags().Lookup("repo") != nil, "%s: --repo when it acts on GitHub", k.Name)
	for _, name := range []string{"dry-run", "why", "yes", "allow-secret"} {
		assert.NotNil(t, c.Flags().Lookup(name), "%s --%s", k.Name, name)
	}
	assert.Equal(t, k.Summary, c.Short, "%s: the help says what it does", k.Name)
}

// assertToolFollowsKind checks that tool, the MCP tool of kind k, takes
// each of k's parameters with its type, description, values and limits,
// needs those k needs, and takes besides only what every action tool
// does.
func assertToolFollowsKind(t *testing.T, k actions.Kind, tool *mcp.Tool) {
	t.Helper()
	schema, ok := tool.InputSchema.(map[string]any)
	require.True(t, ok, "%T", tool.InputSchema)
	props, _ := schema["properties"].(map[string]any)
	var required []string
	for _, p := range k.Params {
		prop, ok := props[p.Name].(map[string]any)
		if !assert.True(t, ok, "%s: argument %s", tool.Name, p.Name) {
			continue
		}
		assert.Equal(t, jsonTypes[p.Type], prop["type"], "%s %s", tool.Name, p.Name)
		assert.Equal(t, p.Doc, prop["description"], "%s %s", tool.Name, p.Name)
		if p.Type == actions.List {
			assert.Equal(t, map[string]any{"type": "string"}, prop["items"], "%s %s", tool.Name, p.Name)
		}
		assert.Equal(t, p.Enum, schemaList(prop["enum"]), "%s %s", tool.Name, p.Name)
		if p.Positive {
			assert.Equal(t, float64(1), prop["minimum"], "%s %s", tool.Name, p.Name)
		} else {
			assert.NotContains(t, prop, "minimum", "%s %s", tool.Name, p.Name)
		}
		if p.Required {
			required = append(required, p.Name)
		}
	}
	assert.Equal(t, required, schemaList(schema["required"]), "%s: the arguments needed, in the kind's order", tool.Name)
	common := []string{"voyage", "dry_run", "why", "allow_secret"}
	if k.GitHub {
		common = append(common, "repo")
	}
	for _, name := range common {
		assert.Contains(t, props, name, tool.Name)
	}
	assert.Len(t, props, len(k.Params)+len(common), "%s: no other argument", tool.Name)
	assert.Equal(t, false, schema["additionalProperties"], tool.Name)
	assert.True(t, strings.HasPrefix(tool.Description, upperFirst(k.Summary)+". "), "%s: %s", tool.Name, tool.Description)
	require.NotNil(t, tool.Annotations)
	assert.Equal(t, k.Irreversible, tool.Annotations.DestructiveHint != nil && *tool.Annotations.DestructiveHint, "%s: destructive when nothing takes it back", tool.Name)
}

// TestEveryActionKindIsACommandAndATool: each kind of the table is a
// command whose flags and arguments are its parameters, and a tool whose
// schema they are: names, types, docs, values, limits, what is needed.
func TestEveryActionKindIsACommandAndATool(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	agentEnv(h)
	tools := listTools(t, h.mcp())
	kinds := actions.Kinds()
	require.NotEmpty(t, kinds)
	for _, k := range kinds {
		t.Run(k.Name, func(t *testing.T) {
			flags := map[string]string{}
			for _, p := range cliParams(k) {
				flags[p.Name] = p.flag
			}
			assertCommandFollowsKind(t, k, actionCommand(t, h, k.Name), flags)
			tool, found := tools[mcpserver.ToolName(k.Name)]
			require.True(t, found, "tool %s", mcpserver.ToolName(k.Name))
			assertToolFollowsKind(t, k, tool)
		})
	}
}

// TestActionWordsSpellOnlyWhatTheTableHas: the command line's spelling of
// the kinds names kinds and parameters the table has, so that a renamed
// one cannot leave its flag behind unnoticed.
func TestActionWordsSpellOnlyWhatTheTableHas(t *testing.T) {
	t.Parallel()
	for name, w := range actionWords {
		k, ok := actions.KindNamed(name)
		if !assert.True(t, ok, "actionWords spells %s, which is no kind", name) {
			continue
		}
		for param := range w.params {
			assert.True(t, slices.ContainsFunc(k.Params, func(p actions.Param) bool { return p.Name == param }), "actionWords spells parameter %s of %s, which it does not have", param, name)
		}
	}
}

// tagRelease is the action of a kind helm does not have, for the test
// below: it touches nothing, and says what it was given.
type tagRelease struct {
	Number  int64    `json:"number"`
	Name    string   `json:"name"`
	Notes   string   `json:"notes,omitempty"`
	Draft   bool     `json:"draft,omitempty"`
	Labels  []string `json:"labels,omitempty"`
	Channel string   `json:"channel,omitempty"`
	runner  *runner.Runner
}

func (*tagRelease) Kind() string { return "tag-release" }

func (a *tagRelease) Perform(context.Context) (logbook.ActionResult, error) {
	return logbook.ActionResult{Number: int(a.Number)}, nil
}

func (a *tagRelease) DryRun(context.Context) string {
	return fmt.Sprintf("tag release %d %q of %s: notes %q, draft %t, labels %q, channel %q", a.Number, a.Name, a.runner.Repository, a.Notes, a.Draft, a.Labels, a.Channel)
}

func (a *tagRelease) Target(context.Context) (actions.Target, error) {
	return actions.Target{Repo: a.runner.Repository, Args: []string{fmt.Sprint(a.Number), "--name", a.Name}}, nil
}

// tagReleaseKind is a kind added to the table, and nowhere else.
var tagReleaseKind = actions.Kind{
	Name: "tag-release", Summary: "tag a release", GitHub: true,
	Params: []actions.Param{
		{Name: "number", Type: actions.Int, Doc: "the release's number", Required: true, Positive: true},
		{Name: "name", Type: actions.String, Doc: "the release's name", Required: true},
		{Name: "notes", Type: actions.String, Doc: "the release notes"},
		{Name: "draft", Type: actions.Bool, Doc: "make it a draft"},
		{Name: "labels", Type: actions.List, Doc: "labels to put on it"},
		{Name: "release_channel", Type: actions.String, Doc: "where it goes", Enum: []string{"stable", "beta"}},
	},
	Build: func(r *runner.Runner, v actions.Values) (actions.Action, error) {
		if strings.TrimSpace(v.String("name")) == "" {
			return nil, fmt.Errorf("tag-release: %w: name is empty", actions.ErrInvalid)
		}
		return &tagRelease{Number: v.Int("number"), Name: v.String("name"), Notes: v.String("notes"), Draft: v.Bool("draft"),
			Labels: v.List("labels"), Channel: v.String("release_channel"), runner: r}, nil
	},
}

// TestANewActionKindIsACommandAndATool: a kind added to the table, with no
// other edit, is a command (its help, flags, argument, dry run, the
// action performed and recorded, bad usage refused) and a tool (its
// schema, its dry run saying the same, the action performed and
// recorded).
func TestANewActionKindIsACommandAndATool(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ActionKinds = append(actions.Kinds(), tagReleaseKind)
	id := h.start("a release")
	k := tagReleaseKind

	help := h.ok("action", "tag-release", "--help")
	assert.Contains(t, help, "Usage: helm action tag-release N --name NAME [--notes NOTES] [--draft] [--labels LABELS]... [--release-channel stable|beta] [--repo OWNER/NAME] [--dry-run]\n")
	assert.Contains(t, help, "\nTag a release.\n")
	assert.Regexp(t, `--name NAME +the release's name, NAME\n`, help)
	assert.Regexp(t, `--draft +make it a draft\n`, help)
	assert.Contains(t, h.ok("action", "--help"), "tag-release")
	assertCommandFollowsKind(t, k, actionCommand(t, h, k.Name), map[string]string{
		"name": "name", "notes": "notes", "draft": "draft", "labels": "labels", "release_channel": "release-channel"})

	cliDry := h.ok("action", "tag-release", "7", "--name", "v1.0", "--labels", "a,b", "--labels", "c", "--draft", "--release-channel", "beta", "--repo", "octo/widgets", "--dry-run")
	assert.Contains(t, cliDry, `tag release 7 "v1.0" of octo/widgets: notes "", draft true, labels ["a" "b" "c"], channel "beta"`)
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"tag-release", "7"}, "helm: action tag-release: --name NAME is required\n"},
		{[]string{"tag-release", "--name", "v1"}, "helm: action tag-release: missing N\n"},
		{[]string{"tag-release", "seven", "--name", "v1"}, "N must be a positive number"},
		{[]string{"tag-release", "7", "8", "--name", "v1"}, "one N expected, got 2 arguments"},
		{[]string{"tag-release", "7", "--name", " "}, "tag-release: invalid action: name is empty"},
	} {
		r := h.fails(2, append([]string{"action"}, bad.args...)...)
		assert.Contains(t, r.Stderr, bad.want, "%v", bad.args)
		assert.Contains(t, r.Stderr, "Try: helm action tag-release --help", "%v", bad.args)
	}
	out := h.ok("action", "tag-release", "7", "--name", "v1.0", "--repo", "octo/widgets")
	assert.True(t, strings.HasPrefix(out, "Action 1 performed for voyage a3b00001\n"), out)

	agentEnv(h)
	c := h.mcp("--voyage", id)
	tool, found := listTools(t, c)["tag_release"]
	require.True(t, found, "the kind is a tool")
	assertToolFollowsKind(t, k, tool)
	_, dry := ok[view.DryRun](c, "tag_release", map[string]any{
		"number": 7, "name": "v1.0", "labels": []string{"a,b", "c"}, "draft": true, "release_channel": "beta", "repo": "octo/widgets", "dry_run": true})
	assert.Equal(t, "tag-release", dry.Kind)
	assert.Equal(t, strings.TrimSpace(strings.SplitN(cliDry, "\n", 2)[1]), dry.DryRun, "the tool's dry run is the command's")
	text, te := c.fails("tag_release", map[string]any{"number": 7})
	assert.Contains(t, text, "name")
	assert.Equal(t, exitUsage, te.ExitStatus)
	_, e := ok[logbook.Entry](c, "tag_release", map[string]any{"number": 8, "name": "v2.0", "repo": "octo/widgets"})
	assert.Equal(t, 2, e.N)
	assert.Equal(t, agentWho, e.Who)

	var lj view.Log
	require.NoError(t, json.Unmarshal([]byte(h.ok("--voyage", id, "log", "--json")), &lj))
	require.Len(t, lj.Entries, 2)
	for i, want := range []string{`{"number":7,"name":"v1.0"}`, `{"number":8,"name":"v2.0"}`} {
		require.NotNil(t, lj.Entries[i].Action)
		assert.Equal(t, "tag-release", lj.Entries[i].Action.Kind)
		assert.JSONEq(t, want, string(lj.Entries[i].Action.Params), "the parameters recorded")
	}
}

// TestNoActionFlagShadowsAGlobalFlag: a parameter whose flag is spelled
// like one of helm's global flags (--as, --voyage, --home, ...) would
// quietly take its place on that command: the table's flags and the
// global ones stay apart.
func TestNoActionFlagShadowsAGlobalFlag(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	root := newRootCmd(&app{main: h.main()}, nil)
	require.NotNil(t, root.PersistentFlags().Lookup("as"), "the global flags are where the test looks")
	for _, k := range actions.Kinds() {
		for _, p := range cliParams(k) {
			assert.Nil(t, root.PersistentFlags().Lookup(p.flag), "helm action %s --%s shadows the global flag --%s", k.Name, p.flag, p.flag)
		}
	}
}
