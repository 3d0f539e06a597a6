package settings

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type testHandler struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

var testHost = Host{
	Name:    "claude-code",
	Events:  []Event{{"PreToolUse", "*"}, {"Stop", ""}},
	Handler: func(c string) any { return testHandler{"command", c, 30} },
}

const cmd = "/usr/local/bin/helm hook claude-code --as john --role coder --method claude-code"

func TestInstallOnAnAbsentFileWritesANewDocument(t *testing.T) {
	got, err := testHost.Install(nil, cmd)
	require.NoError(t, err)
	assert.Equal(t, `{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/helm hook claude-code --as john --role coder --method claude-code",
            "timeout": 30
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/helm hook claude-code --as john --role coder --method claude-code",
            "timeout": 30
          }
        ]
      }
    ]
  }
}
`, string(got))
}

// Settings files as people and other tools leave them.
var handEdited = []struct{ name, doc string }{
	{"other keys", "{\n  \"model\": \"opus\",\n  \"permissions\": {\"allow\": [\"Bash(go test:*)\"]}\n}\n"},
	{"other hooks on the same event", `{
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [ { "type": "command", "command": "/opt/lint/check.sh" } ]
            }
        ],
        "PostToolUse": [ { "matcher": "Edit", "hooks": [ { "type": "command", "command": "gofmt -w" } ] } ]
    },
    "env": { "A": "1" }
}
`},
	{"tabs and odd spacing", "{\n\t\"z\" :  1 ,\n\t\"hooks\" : {\n\t\t\"Stop\" : [ {\"hooks\":[{\"type\":\"command\",\"command\":\"say done\"}]} ]\n\t},   \n\t\"a\":[1,2]\n}"},
	{"unicode escapes and key order", `{"b":"caf\u00e9 \ud83d\ude00","a":"\/x","hooks":{}}`},
	{"compact, one line", `{"model":"opus","hooks":{"Stop":[]}}`},
	{"crlf", "{\r\n  \"model\": \"opus\"\r\n}\r\n"},
	{"empty object", "{}"},
	{"spaces around", "  \n{ \"x\": null }  \n"},
}

func TestInstallKeepsEveryOtherByte(t *testing.T) {
	for _, tt := range handEdited {
		t.Run(tt.name, func(t *testing.T) {
			doc := []byte(tt.doc)
			once, err := testHost.Install(doc, cmd)
			require.NoError(t, err)
			assert.True(t, json.Valid(once), "%s", once)
			twice, err := testHost.Install(once, cmd)
			require.NoError(t, err)
			assert.Equal(t, string(once), string(twice), "a second install changes nothing")

			st, err := testHost.Installed(once)
			require.NoError(t, err)
			assert.Equal(t, Status{Events: []string{"PreToolUse", "Stop"}, Missing: []string{}, Commands: []string{cmd}, Programs: []string{"/usr/local/bin/helm"}}, st)
			assert.True(t, st.Complete())

			back, err := testHost.Uninstall(once)
			require.NoError(t, err)
			if strings.Contains(tt.doc, `"hooks":{}`) || strings.Contains(tt.doc, `"Stop":[]`) {
				// Empty hooks containers hold nothing; uninstall leaves none.
				assert.True(t, json.Valid(back))
				return
			}
			assert.Equal(t, tt.doc, string(back), "uninstall gives back the bytes install was given")
		})
	}
}

func TestInstallKeepsOtherToolsHooksAndTheirOrder(t *testing.T) {
	doc := handEdited[1].doc
	got, err := testHost.Install([]byte(doc), cmd)
	require.NoError(t, err)
	s := string(got)
	assert.Less(t, strings.Index(s, "/opt/lint/check.sh"), strings.Index(s, cmd), "helm's group comes after the others")
	assert.Contains(t, s, `"hooks": [ { "type": "command", "command": "/opt/lint/check.sh" } ]`)
	assert.Contains(t, s, "\"PostToolUse\": [ { \"matcher\": \"Edit\", \"hooks\": [ { \"type\": \"command\", \"command\": \"gofmt -w\" } ] } ]")
	// helm's entries are indented as their neighbours are: four spaces.
	assert.Contains(t, s, "\n            {\n                \"matcher\": \"*\",")
}

func TestInstallReplacesHelmsOwnEntries(t *testing.T) {
	old := `{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"/old/helm hook claude-code --as x"},{"type":"command","command":"other"}]},{"matcher":"Bash","hooks":[{"type":"command","command":"'/opt/my helm' hook claude-code"}]}]}}`
	got, err := testHost.Install([]byte(old), cmd)
	require.NoError(t, err)
	st, err := testHost.Installed(got)
	require.NoError(t, err)
	assert.Equal(t, []string{cmd}, st.Commands, "the old commands are gone")
	assert.Equal(t, 1, strings.Count(string(got), `"command":"other"`), "another tool's handler in helm's group stays")
	assert.Equal(t, 2, strings.Count(string(got), cmd))
}

func TestUninstallRemovesOnlyHelmsHandlers(t *testing.T) {
	doc := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"say done"},{"type":"command","command":"helm hook claude-code"}]}]}}`
	got, err := testHost.Uninstall([]byte(doc))
	require.NoError(t, err)
	assert.Equal(t, `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"say done"}]}]}}`, string(got))
	got, err = testHost.Uninstall([]byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"helm hook gemini-cli"}]}]}}`))
	require.NoError(t, err)
	assert.Contains(t, string(got), "gemini-cli", "another host's helm hook is not this host's")
}

func TestSettingsThatAreNotAJSONObjectAreRefusedWithTheirPosition(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"line comment", "{\n  // mine\n  \"a\": 1\n}", "line 2, column 3: a comment"},
		{"block comment", "{ /* x */ }", "line 1, column 3: a comment"},
		{"trailing comma", "{\n  \"a\": 1,\n}", "line 3, column 1: not JSON"},
		{"an array", "[]", "line 1, column 1: the settings are not a JSON object"},
		{"hooks not an object", `{"hooks": []}`, `line 1, column 11: "hooks" is not an object`},
		{"event not a list", `{"hooks": {"Stop": {}}}`, "hooks.Stop is not a list"},
		{"hooks twice", `{"hooks": {}, "hooks": {"Stop": []}}`, `line 1, column 15: key "hooks" is given twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := testHost.Install([]byte(tt.doc), cmd)
			var se *SyntaxError
			require.True(t, errors.As(err, &se), "%v", err)
			assert.Contains(t, err.Error(), tt.want)
			_, err = testHost.Installed([]byte(tt.doc))
			assert.Error(t, err)
		})
	}
}

func TestIsHelmReadsTheCommandsWords(t *testing.T) {
	tests := []struct {
		name, command string
		want          bool
	}{
		{"plain", "/usr/bin/helm hook claude-code", true},
		{"quoted path with spaces", "'/Users/a b/bin/helm' hook claude-code --as x", true},
		{"test binary", "/tmp/go-build1/helm.test hook claude-code", true},
		{"another host", "helm hook gemini-cli", false},
		{"another program", "/opt/lint/check.sh hook claude-code", false},
		{"a pipeline is not helm's", "helm hook claude-code | tee log", false},
		{"unclosed quote", "'helm hook claude-code", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, IsHelm("claude-code", tt.command))
		})
	}
}

func TestQuoteSplitsBack(t *testing.T) {
	argv := []string{"/Users/a b/bin/helm", "hook", "claude-code", "--as", "o'neil", "--home", "/h/$HOME", ""}
	q := Quote(argv)
	assert.Equal(t, `'/Users/a b/bin/helm' hook claude-code --as 'o'\''neil' --home '/h/$HOME' ''`, q)
	got, ok := Split(q)
	require.True(t, ok)
	assert.Equal(t, argv, got)
}

func FuzzSettingsEditor(f *testing.F) {
	for _, tt := range handEdited {
		f.Add([]byte(tt.doc))
	}
	f.Add([]byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"helm hook claude-code"}]}]}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		once, err := testHost.Install(doc, cmd)
		if err != nil {
			return
		}
		require.True(t, json.Valid(once), "%q", once)
		twice, err := testHost.Install(once, cmd)
		require.NoError(t, err)
		assert.Equal(t, string(once), string(twice))
		st, err := testHost.Installed(once)
		require.NoError(t, err)
		assert.True(t, st.Complete())
		back, err := testHost.Uninstall(once)
		require.NoError(t, err)
		require.True(t, json.Valid(back))
		st, err = testHost.Installed(back)
		require.NoError(t, err)
		assert.Empty(t, st.Events)
		before, err := testHost.Installed(doc)
		if err != nil || len(before.Commands) > 0 || len(strings.TrimSpace(string(doc))) == 0 || hasEmptyHooks(doc) {
			return
		}
		assert.Equal(t, string(doc), string(back), "install then uninstall is the identity on a helm-free document")
	})
}

// hasEmptyHooks says doc is an empty object or has an empty hooks
// object or event list: helm fills those, and uninstalling gives back
// "{}" for the first and nothing for the others.
func hasEmptyHooks(doc []byte) bool {
	root, err := parse(doc)
	if err != nil {
		return true
	}
	if len(root.members) == 0 {
		return true // { } becomes {}
	}
	_, hooks := root.member("hooks")
	if hooks == nil {
		return false
	}
	if len(hooks.members) == 0 {
		return true
	}
	for _, m := range hooks.members {
		if len(m.val.elems) == 0 {
			return true
		}
	}
	return false
}
