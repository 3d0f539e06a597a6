package toolguard_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/agent"
	"github.com/helmlog/helm/cmd/helm/internal/toolguard"
	"github.com/helmlog/helm/logbook"
)

// The attacks: the test is the recorded agent, which chooses the spelling
// of its command, the tool, the input and the files in its project, to
// run what a rule denies or to make the guard answer too late. Each case
// fails when the attack succeeds. guard_matrix_test.go holds the plain
// spellings; these are the ones that broke the guard once (and the near
// misses that must stay allowed, so that a fix cannot deny everything).

// attackRules are the rules of the brief: the Bash rules, the file tools'
// path rule and WebFetch's host allow-list.
const attackRules = `[[rule]]
name = "no rm -rf"
tool = "Bash"
command = "rm -rf"
decision = "deny"

[[rule]]
name = "no force pushes"
command = "git push --force"
decision = "deny"

[[rule]]
name = "stay in the project"
tool = "Read|Edit|Write"
path = "outside-project"
decision = "deny"

[[rule]]
name = "our docs"
tool = "WebFetch"
host = "docs.example.com"
decision = "allow"

[[rule]]
name = "no other host"
tool = "WebFetch"
host = "*"
decision = "deny"
`

const (
	rmRule   = `"no rm -rf" (policy.toml:1)`
	pushRule = `"no force pushes" (policy.toml:7)`
)

// TestAttackCommandSpellings: spellings of rm -rf and git push --force
// that bash runs as such.
func TestAttackCommandSpellings(t *testing.T) {
	t.Parallel()
	p := parse(t, attackRules)
	dir := t.TempDir()
	require.NoError(t, os.Symlink("/bin/rm", filepath.Join(dir, "del")))
	for _, tc := range []struct {
		name, cmd string
		rule      string // "" when no rule may decide
	}{
		// GNU getopt_long takes any unambiguous prefix of a long option.
		{"rm's long options abbreviated", `rm --rec --for x`, rmRule},
		{"rm --recursive --fo", `rm --recursive --fo x`, rmRule},
		{"git push --forc", `git push --forc origin main`, pushRule},
		{"git push --force-w, an abbreviated --force-with-lease", `git push --force-w origin main`, pushRule},
		{"git push --mirror force-updates every ref", `git push --mirror origin`, pushRule},
		{"git push --mir", `git push --mir origin`, pushRule},
		{"remote.*.mirror from -c", `git -c remote.origin.mirror=true push origin`, pushRule},
		{"a + refspec from -c", `git -c 'remote.origin.push=+refs/heads/*:refs/heads/*' push origin`, pushRule},
		{"timeout --sig abbreviated takes a value", `timeout --sig KILL 5 rm -rf x`, rmRule},
		{"nice --adj abbreviated takes a value", `nice --adj 5 rm -rf x`, rmRule},
		{"sudo --us abbreviated takes a value", `sudo --us root rm -rf x`, rmRule},
		{"xargs --max-a abbreviated takes a value", `xargs --max-a 1 rm -rf x`, rmRule},
		{"env -a names argv0", `env -a foo rm -rf x`, rmRule},

		// env -S in every spelling, and env's assignments.
		{"env -S with its string attached", `env -S'rm -rf x'`, rmRule},
		{"env -vS combined", `env -vS 'rm -rf x'`, rmRule},
		{"env -iS attached", `env -iS'rm -rf x'`, rmRule},
		{"env --split abbreviated", `env --split 'rm -rf x'`, rmRule},
		{"env -S's \\_ separates words", `env -S 'rm\_-rf\_x'`, rmRule},
		{"env -S's ${VAR} is unknown", `env -S 'rm ${F} x'`, rmRule},
		{"env assigns any NAME=, a function bash imports", `env 'BASH_FUNC_ls%%=() { rm -rf x; }' bash -c ls`, rmRule},

		// Code bash runs from its variables, traps and aliases.
		{"trap", `trap 'rm -rf x' EXIT`, rmRule},
		{"trap with -- and a signal list", `trap -- "rm -rf x" INT TERM`, rmRule},
		{"PS4 with set -x", `PS4='$(rm -rf x)'; set -x; true`, rmRule},
		{"PROMPT_COMMAND exported to an interactive bash", `export PROMPT_COMMAND='rm -rf x'; bash -i <<< true`, rmRule},
		{"PS1 declared", `declare PS1='$(rm -rf x)'`, rmRule},
		{"BASH_ENV names a file bash sources", `BASH_ENV=./evil.sh bash -c true`, rmRule},
		{"ENV through env", `env ENV=./evil.sh sh -i`, rmRule},
		{"an alias used on a later line", "shopt -s expand_aliases\nalias r=rm\nr -rf x", rmRule},
		{"an alias that is the whole command", "alias r='rm -rf'", rmRule},
		{"an alias defined through eval", "eval 'alias r=\"rm -rf\"'", rmRule},
		{"GIT_SSH_COMMAND", `GIT_SSH_COMMAND='rm -rf x' git fetch`, rmRule},
		{"PAGER", `PAGER='rm -rf x' git log`, rmRule},
		{"LD_PRELOAD loads code", `LD_PRELOAD=./x.so ls`, rmRule},

		// git runs code from its configuration.
		{"git -c alias.x=!", `git -c alias.x='!rm -rf x' x`, rmRule},
		{"git -c alias to push -f", `git -c alias.p=push p -f origin`, pushRule},
		{"git -c core.pager", `git -c core.pager='rm -rf x' log`, rmRule},
		{"git -c core.sshCommand", `git -c core.sshCommand='rm -rf x' fetch`, rmRule},
		{"git -c core.hooksPath runs hooks helm does not read", `git -c core.hooksPath=./h commit -m x`, rmRule},
		{"git config writes an alias", `git config alias.x '!rm -rf x'`, rmRule},
		{"git config --global writes a pager", `git config --global core.pager 'rm -rf x'`, rmRule},
		{"git ext:: transport", `git -c protocol.ext.allow=always clone 'ext::sh -c rm% -rf% x' y`, rmRule},

		// Programs that run a command line.
		{"toybox", `toybox rm -rf x`, rmRule},
		{"coreutils multi-call", `coreutils --coreutils-prog=rm -rf x`, rmRule},
		{"flock -c", `flock lk -c 'rm -rf x'`, rmRule},
		{"flock --command", `flock --command 'rm -rf x' lk`, rmRule},
		{"script -c", `script -qc 'rm -rf x' /dev/null`, rmRule},
		{"su -c", `su -c 'rm -rf x'`, rmRule},
		{"ssh's remote command", `ssh localhost rm -rf x`, rmRule},
		{"ssh's remote command quoted", `ssh -p 22 localhost 'rm -rf x'`, rmRule},

		// Bytes bash drops.
		{"a NUL in $'…' ends it", `$'rm\x00zz' -rf x`, rmRule},
		{"a NUL in a flag", `rm $'-rf\0' x`, rmRule},
		{"a line continuation inside a flag", "rm -r\\\nf x", rmRule},

		// A link in the project to rm, made by an earlier call.
		{"a symlink to rm", `./del -rf x`, rmRule},
		{"a symlink to rm, by an absolute path", `$'DIR/del' -rf x`, rmRule},

		// Near misses: what bash does not run as rm -rf stays undecided.
		{"a hyphen look-alike is no flag", "rm \u2010rf x", ""},
		{"a zero-width joiner makes another name", "rm\u200d -rf x", ""},
		{"an alias never used", "alias ll='ls -l'", ""},
		{"a trap that removes a file", `trap 'rm -f x' EXIT`, ""},
		{"git push --force-if-includes alone", `git push --force-if-includes origin main`, ""},
		{"git config of a plain key", `git config user.name ann`, ""},
		{"ssh without a command", `ssh -p 22 localhost`, ""},
		{"env -S of a plain command", `env -S'ls -l'`, ""},
		{"a quoted PS1 in single quotes to echo", `echo 'PS1=$(rm -rf x)'`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, err := toolguard.Decide(p, bash(strings.ReplaceAll(tc.cmd, "DIR", dir), dir), agentWho, "")
			require.NoError(t, err)
			if tc.rule == "" {
				assert.Equal(t, toolguard.NoDecision, d, "%q", tc.cmd)
				return
			}
			assert.Equal(t, agent.Deny, d.Verdict, "%q: %+v", tc.cmd, d)
			assert.Equal(t, tc.rule, d.Rule, "%q", tc.cmd)
		})
	}
}

// TestAttackPaths: paths that lead out of the project, for the file tools
// and for the paths a shell command names.
func TestAttackPaths(t *testing.T) {
	t.Parallel()
	p := parse(t, `[[rule]]
name = "stay in the project"
path = "outside-project"
decision = "deny"
`)
	root := t.TempDir()
	project := filepath.Join(root, "proj")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "secret", "deep"), 0o700))
	require.NoError(t, os.MkdirAll(filepath.Join(project, "src"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(root, "secret", "key"), []byte("k"), 0o600))
	// proj/link is secret/deep: link/.. is secret for the kernel, proj
	// for a lexical clean.
	require.NoError(t, os.Symlink(filepath.Join(root, "secret", "deep"), filepath.Join(project, "link")))
	// proj/rel is a relative link ../secret.
	require.NoError(t, os.Symlink("../secret", filepath.Join(project, "rel")))
	// proj/loop links to itself.
	require.NoError(t, os.Symlink("loop", filepath.Join(project, "loop")))
	tool := func(name, input string) agent.Event {
		input = strings.ReplaceAll(input, "PROJ", project)
		return agent.Event{Kind: agent.PreTool, Cwd: project, Project: project, Tool: &agent.ToolCall{Name: name, Input: json.RawMessage(input)}}
	}
	for _, tc := range []struct {
		name    string
		ev      agent.Event
		verdict string
	}{
		{"Bash: .. after a symlinked directory", bash("cat link/../key", project), agent.Deny},
		{"Bash: a relative symlink", bash("cat rel/key", project), agent.Deny},
		{"Bash: cd -P through the link, then ..", bash("cd -P link && cat ../key", project), agent.Deny},
		{"Read: .. after a symlinked directory", tool("Read", `{"file_path":"PROJ/link/../key"}`), agent.Deny},
		{"Read: a NUL byte in the path", tool("Read", `{"file_path":"\u0000/etc/passwd"}`), agent.Deny},
		{"Read: a symlink loop stays undecided", tool("Read", `{"file_path":"PROJ/loop/x"}`), ""},
		{"Read: duplicate keys, the last wins as in JavaScript", tool("Read", `{"file_path":"PROJ/src/a","file_path":"/etc/passwd"}`), agent.Deny},
		{"Read: a null file_path and a path", tool("Read", `{"file_path":null,"path":"/etc/passwd"}`), agent.Deny},
		{"Read: an escaped slash", tool("Read", `{"file_path":"\u002fetc/passwd"}`), agent.Deny},
		{"Read: // and /./ and a trailing /", tool("Read", `{"file_path":"//etc/./passwd/"}`), agent.Deny},
		{"Glob: .. after a symlinked directory", tool("Glob", `{"pattern":"link/../*"}`), agent.Deny},
		{"Glob: .. after a wildcard", tool("Glob", `{"pattern":"*/../../secret/*"}`), agent.Deny},
		{"Glob in the project", tool("Glob", `{"pattern":"src/**/*.go"}`), ""},
		{"NotebookEdit", tool("NotebookEdit", `{"notebook_path":"/etc/x.ipynb","new_source":""}`), agent.Deny},
		{"an MCP tool's path", tool("mcp__fs__read_file", `{"path":"/etc/passwd"}`), agent.Deny},
		{"an MCP tool's nested paths", tool("mcp__fs__read_many", `{"files":[{"filePath":"PROJ/src/a"},{"filePath":"/etc/passwd"}]}`), agent.Deny},
		{"an MCP tool's file:// URI", tool("mcp__fs__read", `{"uri":"file:///etc/passwd"}`), agent.Deny},
		{"an MCP tool in the project", tool("mcp__fs__read_file", `{"path":"PROJ/src/a","limit":5}`), ""},
		{"an MCP tool's text is no path", tool("mcp__notes__add", `{"text":"see /etc/passwd"}`), ""},
		{"Bash in the project", bash("cat src/../src/a", project), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, _ := toolguard.Decide(p, tc.ev, agentWho, "")
			assert.Equal(t, tc.verdict, d.Verdict, "%+v", d)
		})
	}
}

// TestAttackHosts: URLs whose host is not the one a reader sees.
func TestAttackHosts(t *testing.T) {
	t.Parallel()
	p := parse(t, attackRules+`
[[rule]]
name = "shell docs"
tool = "Bash"
host = "docs.example.com"
decision = "allow"

[[rule]]
name = "shell hosts"
tool = "Bash|mcp__*"
host = "*"
decision = "deny"
`)
	dir := t.TempDir()
	fetch := func(u string) agent.Event {
		in, _ := json.Marshal(map[string]string{"url": u, "prompt": "read"})
		return agent.Event{Kind: agent.PreTool, Cwd: dir, Tool: &agent.ToolCall{Name: "WebFetch", Input: in}}
	}
	mcp := func(input string) agent.Event {
		return agent.Event{Kind: agent.PreTool, Cwd: dir, Tool: &agent.ToolCall{Name: "mcp__fetch__fetch", Input: json.RawMessage(input)}}
	}
	for _, tc := range []struct {
		name    string
		ev      agent.Event
		verdict string
	}{
		{"userinfo before the host", fetch("https://docs.example.com@evil.example/"), agent.Deny},
		{"a trailing dot", fetch("https://docs.example.com./"), agent.Deny},
		{"a backslash, a slash to a browser", fetch(`https://evil.example\@docs.example.com/`), agent.Deny},
		{"one slash", fetch("https:/evil.example/"), agent.Deny},
		{"no slash", fetch("https:docs.example.com"), agent.Deny},
		{"a tab a browser drops", fetch("https://evil.example	@docs.example.com/"), agent.Deny},
		{"an IPv6 literal", fetch("http://[::1]/"), agent.Deny},
		{"punycode of a look-alike", fetch("https://xn--dcs-zmc.example.com/"), agent.Deny},
		{"a look-alike in Unicode", fetch("https://dоcs.example.com/"), agent.Deny},
		{"a fragment hiding the host", fetch("https://evil.example#@docs.example.com/"), agent.Deny},
		{"upper case is the same host", fetch("https://DOCS.EXAMPLE.COM/"), agent.Allow},
		{"a port is the same host", fetch("https://docs.example.com:8443/"), agent.Allow},
		{"an MCP tool's url", mcp(`{"url":"https://evil.example/"}`), agent.Deny},
		{"curl an IP as a number", bash("curl 2130706433", dir), agent.Deny},
		{"curl a single label", bash("curl -s intranet", dir), agent.Deny},
		{"curl reads its URLs from a file", bash("curl -K urls.txt", dir), agent.Deny},
		{"wget reads its URLs from a file", bash("wget -i urls.txt", dir), agent.Deny},
		{"curl's output file is no host", bash("curl -o out.html https://docs.example.com/", dir), ""},
		{"curl's attached output file is no host", bash("curl -oout.html --retry 3 https://docs.example.com/", dir), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, _ := toolguard.Decide(p, tc.ev, agentWho, "")
			assert.Equal(t, tc.verdict, d.Verdict, "%+v", d)
		})
	}
}

// TestAttackTestsPassGate: a shell step whose exit status is not its
// tests' does not let the agent stop.
func TestAttackTestsPassGate(t *testing.T) {
	t.Parallel()
	p := parse(t, `[[rule]]
name = "tests pass"
event = "stop"
until = "tests-pass"
command = "go test"
decision = "block"
`)
	stop := agent.Event{Kind: agent.Stop}
	for _, tc := range []struct {
		name, cmd string
		verdict   string
	}{
		{"|| true hides a failure", "go test ./... || true", agent.Block},
		{"; true hides a failure", "go test ./...; true", agent.Block},
		{"a pipe's status is its last command's", "go test ./... | tee log", agent.Block},
		{"never run in an if that is false", "if false; then go test ./...; fi", agent.Block},
		{"run in the background", "go test ./... &", agent.Block},
		{"in a function never called", "f() { go test ./...; }", agent.Block},
		{"go test -exec /bin/true runs no test", "go test -exec /bin/true ./...", agent.Block},
		{"go test -list lists them", "go test -list . ./...", agent.Block},
		{"after a cd, with &&", "cd x && go test -race ./...", ""},
		{"alone", "go test ./...", ""},
		{"with a variable", "CGO_ENABLED=0 go test ./...", ""},
		{"sh -c of it", "sh -c 'go test ./...'", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := toolguard.Gate(p, stop, agentWho, []logbook.Entry{edit(), ran(tc.cmd, false)})
			assert.Equal(t, tc.verdict, d.Verdict, "%+v", d)
		})
	}
}

// TestAttackPathologicalInputsAreBounded: the host lets a call go ahead
// when its hook does not answer in time, so an input that makes the
// guard work for seconds is a bypass. Past its bounds (stated in
// toolguard's limits) the guard stops reading: what it did not read is
// an unknown command, which a rule that denies denies. The bounds are
// counted (bytes, commands, words, depth), never timed.
func TestAttackPathologicalInputsAreBounded(t *testing.T) {
	t.Parallel()
	p := parse(t, attackRules)
	dir := t.TempDir()
	distinct := func(n int) string {
		var b strings.Builder
		b.WriteString("echo")
		for i := range n {
			fmt.Fprintf(&b, " w%d", i)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name, cmd string
		why       string // what the reason says helm did not read
	}{
		{"a script longer than the bound", "echo " + strings.Repeat("a", toolguard.MaxScriptBytes), "bytes"},
		{"more words than the bound", distinct(toolguard.MaxWords + 1), "words"},
		{"more commands than the bound", strings.Repeat("true && ", toolguard.MaxCommands) + "true", "commands"},
		{"a here-document to sh with more commands", "sh <<EOF\n" + strings.Repeat("echo hi\n", toolguard.MaxCommands+1) + "EOF", "commands"},
		{"brackets nested past the bound", strings.Repeat("$(", toolguard.MaxNesting+1) + "true" + strings.Repeat(")", toolguard.MaxNesting+1), "nest"},
		{"subshells nested past the bound", strings.Repeat("(", toolguard.MaxNesting+1) + "rm -r x" + strings.Repeat(")", toolguard.MaxNesting+1), "nest"},
		{"brace expansions past the words bound", "echo " + strings.Repeat("{a,b,c,d,e,f,g,h}{a,b,c,d,e,f,g,h} ", toolguard.MaxWords/64+1), "words"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmd := tc.cmd
			argvs, _, _, _ := toolguard.Commands(cmd, dir)
			assert.LessOrEqual(t, len(argvs), toolguard.MaxCommands+1, "the argvs past the bound are not built")
			d, err := toolguard.Decide(p, bash(cmd, dir), agentWho, "")
			require.NoError(t, err)
			assert.Equal(t, agent.Deny, d.Verdict)
			assert.Equal(t, rmRule, d.Rule)
			assert.Contains(t, d.Reason, "helm cannot tell what this command runs: ")
			assert.Contains(t, d.Reason, tc.why)
			assert.Less(t, len(d.Reason), 1000, "a reason quotes a bounded part of the command")
		})
	}
	// Deeply nested JSON is refused by the decoder.
	deep := strings.Repeat(`{"a":`, 100000) + "1" + strings.Repeat("}", 100000)
	d, err := toolguard.Decide(p, agent.Event{Kind: agent.PreTool, Cwd: dir, Tool: &agent.ToolCall{Name: "mcp__x__y", Input: json.RawMessage(`{"x":` + deep + `}`)}}, agentWho, "")
	require.ErrorIs(t, err, toolguard.ErrInput)
	assert.Equal(t, agent.Deny, d.Verdict)
}

// TestAttackInterpretersAreMatchedByName: what an interpreter runs is out
// of helm's reach (python -c, perl -e, awk's system, a Makefile), so a
// policy names the interpreter itself, and that rule holds in every
// spelling of its call. A rule names one command: python3 is not python.
func TestAttackInterpretersAreMatchedByName(t *testing.T) {
	t.Parallel()
	p := parse(t, `[[rule]]
name = "no python"
command = "python"
decision = "deny"

[[rule]]
name = "no awk"
command = "awk"
decision = "deny"
`)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, cmd, verdict string
	}{
		{"python -c", `python -c 'import shutil; shutil.rmtree("x")'`, agent.Deny},
		{"by its path, behind env", `/usr/bin/env /usr/bin/python -c 'print(1)'`, agent.Deny},
		{"in a here-document to sh", "sh <<'EOF'\npython - <<'PY'\nimport os\nPY\nEOF", agent.Deny},
		{"from a trap", `trap 'python x.py' EXIT`, agent.Deny},
		{"awk's system()", `awk 'BEGIN { system("rm -rf x") }'`, agent.Deny},
		{"python3 is another command", `python3 -c 'print(1)'`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, err := toolguard.Decide(p, bash(tc.cmd, dir), agentWho, "")
			require.NoError(t, err)
			assert.Equal(t, tc.verdict, d.Verdict, "%q: %+v", tc.cmd, d)
		})
	}
}
