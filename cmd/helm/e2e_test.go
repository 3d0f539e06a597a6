package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/ghtest"
)

// TestEndToEndResolvingAnIssue builds the helm binary and drives it
// through seed 000's "Resolving an Issue" flow: start a resolve-issue
// voyage, orient in the project, read the issue on the GitHub stand-in
// (with the real gh), take a bearing, commit and push to a local bare
// remote, open the pull request, complete, and read the log. The whole
// transcript, with ids, times and hashes normalised, is a golden file.
func TestEndToEndResolvingAnIssue(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "helm")
	build := exec.Command("go", "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	srv := ghtest.NewServer(t)
	g := srv.GitRepo(t, "octo/widgets")
	for n := 1; n < 45; n++ {
		title := "issue " + itoa(n)
		if n == 42 {
			title = "Widget crashes on init"
		}
		num := srv.AddIssue("octo/widgets", ghtest.Issue{Title: title, Body: "Steps: call init() twice.", User: "dyreby"})
		if n == 42 {
			srv.AddIssueComment("octo/widgets", num, "dyreby", "Seen on 0.1.0 too.")
		}
	}
	for name, content := range map[string]string{
		"README.md":  "# widget\n\nA widget that crashes on init.\n",
		"Cargo.toml": "[package]\nname = \"widget\"\nversion = \"0.1.0\"\n",
		"src/lib.rs": "pub fn init() {}\n",
		"go.mod":     "module example.com/widget\n\ngo 1.26\n",
		"widget.go":  "// Package widget makes widgets.\npackage widget\n",
	} {
		g.WriteFile(t, name, content)
	}
	g.Git(t, "add", ".")
	g.Git(t, "commit", "-q", "-m", "widget")

	home := filepath.Join(t.TempDir(), "helm-home")
	require.NoError(t, os.MkdirAll(home, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, "config.toml"), []byte("role = \"coder\"\nmethod = \"human\"\n\n# The stand-in's host and token reach john-agent's gh calls only.\n[identities.john-agent]\npass_env = [\"GH_HOST\", \"GH_ENTERPRISE_TOKEN\"]\n"), 0o600))
	env := append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "HELM_HOME=" + home,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
	}, srv.Env()...)

	var transcript strings.Builder
	// run runs the binary; the transcript records commands whose output
	// is helm's own (record), not that of the installed git's version.
	run := func(record bool, wantCode int, args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = g.Dir, env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var xe *exec.ExitError
		if errors.As(err, &xe) {
			code = xe.ExitCode()
		} else {
			require.NoError(t, err)
		}
		require.Equal(t, wantCode, code, "helm %v\nstdout:\n%s\nstderr:\n%s", args, stdout.String(), stderr.String())
		if !record {
			return stdout.String(), stderr.String()
		}
		fmt.Fprintf(&transcript, "$ helm %s\n%s", shellWords(args), stdout.String())
		if stderr.Len() > 0 {
			fmt.Fprintf(&transcript, "[stderr]\n%s", stderr.String())
		}
		if code != 0 {
			fmt.Fprintf(&transcript, "[exit %d]\n", code)
		}
		transcript.WriteString("\n")
		return stdout.String(), stderr.String()
	}
	helm := func(wantCode int, args ...string) string {
		t.Helper()
		out, _ := run(true, wantCode, args...)
		return out
	}

	id := strings.TrimSpace(helm(0, "voyage", "new", "--as", "john-agent", "--kind", "resolve-issue", "Resolve #42: fix widget crash"))
	require.Len(t, id, 36)
	v := id[:3]
	helm(0, "--voyage", v, "observe", "rust-project", ".", "--out", "../obs.json")
	helm(0, "--voyage", v, "observe", "go-project", ".")
	helm(0, "observe", "github-issue", "42", "--focus", "summary", "--focus", "comments", "--voyage", v)
	helm(0, "--voyage", v, "slate", "list")
	helm(0, "--voyage", v, "bearing", "--reading", "Widget module has a null check missing in init().", "--observation", "../obs.json")
	helm(2, "--voyage", v, "bearing", "challenge", "9", "--with", "x", "--reading", "y")

	g.Git(t, "switch", "-q", "-c", "fix-widget")
	g.WriteFile(t, "src/lib.rs", "pub fn init() { /* null check */ }\n")
	_, stderr := run(false, 3, "--voyage", v, "action", "commit", "--message", "Fix null check in widget init") // nothing staged yet
	assert.Contains(t, stderr, "helm: commit failed on voyage "+id[:8]+" (recorded as a failed action): git -c i18n.commitEncoding=UTF-8 commit")
	assert.Contains(t, stderr, "no changes added to commit", "git's own message")
	g.Git(t, "add", "src/lib.rs")
	helm(0, "--voyage", v, "action", "commit", "--message", "Fix null check in widget init", "--dry-run")
	helm(0, "--voyage", v, "action", "commit", "--message", "Fix null check in widget init")
	sha := g.Git(t, "rev-parse", "HEAD")
	helm(0, "--voyage", v, "action", "push", "--branch", "fix-widget")
	assert.Equal(t, sha, g.BareRef(t, "fix-widget"))
	helm(0, "--voyage", v, "action", "create-pull-request", "--branch", "fix-widget", "--title", "Fix widget crash", "--reviewer", "dyreby")
	assert.Equal(t, []string{"dyreby"}, srv.RequestedReviewers("octo/widgets", 45))
	helm(0, "--voyage", v, "complete", "--summary", "Fixed null check in widget init. PR #45 merged.")
	helm(0, "--voyage", v, "log")
	helm(0, "voyage", "list", "--status", "all")
	helm(0, "--voyage", v, "voyage", "verify")
	helm(0, "log") // no active voyage left: the one just completed, said on stderr

	golden(t, "e2e-resolving-an-issue.golden", normalise(transcript.String(), id, sha, home, g.Dir))
}

func normalise(s, id, sha, home, dir string) string {
	s = strings.ReplaceAll(s, id, "<voyage-id>")
	s = strings.ReplaceAll(s, id[:8], "<id8>")
	s = strings.ReplaceAll(s, sha[:7], "abc1234")
	s = regexp.MustCompile(`--voyage [0-9a-f]{3}\b`).ReplaceAllString(s, "--voyage a3b")
	s = strings.ReplaceAll(s, home, "$HELM_HOME")
	s = strings.ReplaceAll(s, dir, "$WORK")
	for _, r := range []struct{ re, with string }{
		{`\b([0-9]+):[0-9a-f]{64}\b`, "${1}:<chain head>"},
		{`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`, "<time>"},
		{`artifact [0-9a-f]{8}`, "artifact <hash>"},
		{`\d+(\.\d)? (B|KiB|MiB)\b`, "<size>"},
		{`\(devel\)|v\d+\.\d+\.\d+\S*`, "<version>"},
	} {
		s = regexp.MustCompile(r.re).ReplaceAllString(s, r.with)
	}
	return s
}

func shellWords(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\"'#$&*()|;<>?\\") {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		} else {
			out[i] = a
		}
	}
	return strings.Join(out, " ")
}
