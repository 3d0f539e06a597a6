package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The identity, role and method the hooked session is recorded under:
// they come from the hook's configuration (helm hook install's command
// line), never from the payload.
const (
	hookIdentity = "claude-1"
	hookRole     = "coder"
	hookMethod   = "claude-code"
)

// The guard rule the scripted rm -r -f meets: one policy language, the
// same [[rule]] list as action rules (DESIGN "One policy language").
const claudePolicy = `[[rule]]
name = "no-rm-rf"
tool = "Bash"
command = "rm -rf"
decision = "deny"
reason = "` + claudePolicyReason + `"
`

const claudePolicyReason = "rm -rf is denied in this project"

// hookHelm runs a built helm against one home, in a directory.
type hookHelm struct {
	t    *testing.T
	bin  string
	home string
	env  []string // beside HELM_HOME
}

// run runs helm with args in dir and returns its stdout, stderr and exit
// code.
func (h hookHelm) run(dir string, args ...string) (string, string, int) {
	h.t.Helper()
	cmd := exec.Command(h.bin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HELM_HOME=" + h.home}, h.env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		code = xe.ExitCode()
	} else {
		require.NoError(h.t, err)
	}
	return stdout.String(), stderr.String(), code
}

// must runs helm and requires exit 0.
func (h hookHelm) must(dir string, args ...string) string {
	h.t.Helper()
	out, errOut, code := h.run(dir, args...)
	require.Equal(h.t, 0, code, "helm %s: %s%s", strings.Join(args, " "), out, errOut)
	return out
}

// skipWithout skips t, naming what is missing, when this build of helm
// has no command WORDS (its help is not the command's: helm answers
// --help after an unknown command with its own usage), or the command
// has no flag.
func (h hookHelm) skipWithout(t *testing.T, flag string, words ...string) {
	t.Helper()
	out, errOut, code := h.run("", append(words, "--help")...)
	name := "helm " + strings.Join(words, " ")
	if code != 0 || !strings.HasPrefix(out, "Usage: "+name+" ") && !strings.HasPrefix(out, "Usage: "+name+"\n") {
		t.Skipf("%s is not in this build of helm yet (issue 32): its --help printed %q%s", name, firstLine(out), strings.TrimSpace(errOut))
	}
	if flag != "" && !strings.Contains(out, flag) {
		t.Skipf("%s has no %s yet (issue 32)", name, flag)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestClaudeCodeSessionIsRecorded: the real Claude Code, with helm's
// hooks installed by helm hook install claude-code --project, runs the
// scripted session (a prompt, Bash, Read, Edit, Write, a subagent, a
// denied rm -r -f, a resume); helm records it as a voyage with the
// subagent's sub-voyage, the guard's denial keeps the file, and the
// session's own transcript imported gives the same steps.
//
// What helm does not have yet is skipped by name (each part in its own
// subtest), never passed over.
func TestClaudeCodeSessionIsRecorded(t *testing.T) {
	program := findClaudeCode(t)
	helm := hookHelm{t: t, bin: buildHelm(t), home: filepath.Join(t.TempDir(), "helm-home")}
	helm.skipWithout(t, "--project", "hook", "install")
	helm.skipWithout(t, "", "hook", "claude-code")

	s := runScriptedSession(t, program, claudePolicyReason, func(s *claudeSession) {
		// The session's hooks run helm with this home and the
		// machine's user home of the session.
		s.extraEnv = append(s.extraEnv, "HELM_HOME="+helm.home)
		helm.env = []string{"HOME=" + s.home}
		require.NoError(t, os.MkdirAll(helm.home, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(helm.home, "policy.toml"), []byte(claudePolicy), 0o600))
		helm.must(s.project, "hook", "install", "claude-code", "--project",
			"--as", hookIdentity, "--role", hookRole, "--method", hookMethod)
		status := helm.must(s.project, "hook", "status")
		assert.Contains(t, status, "claude-code", "helm hook status shows what it installed")
	})
	t.Logf("the hooked session took %s", s.elapsed)
	n := newNormaliser(s.claudeSession)

	// The session is one voyage (the resume continued it), the subagent
	// its sub-voyage.
	var voyages []struct {
		ID       string `json:"id"`
		Parent   string `json:"parent"`
		Identity string `json:"identity"`
		Status   string `json:"status"`
	}
	require.NoError(t, json.Unmarshal([]byte(helm.must(s.project, "voyage", "list", "--status", "all", "--json")), &voyages))
	require.Len(t, voyages, 2, "one voyage for the session (resumed, not a second one) and one for its subagent")
	main, sub := voyages[0], voyages[1]
	if main.Parent != "" {
		main, sub = sub, main
	}
	assert.Empty(t, main.Parent)
	assert.Equal(t, main.ID, sub.Parent, "the subagent's voyage is a sub-voyage of the session's")
	assert.Equal(t, hookIdentity, main.Identity, "the identity comes from the hook's configuration")
	assert.Equal(t, "partial", main.Status, "SessionEnd leaves the voyage resumable")

	t.Run("story", func(t *testing.T) {
		story := helm.must(s.project, "log", "--voyage", main.ID)
		for _, want := range []string{scriptPrompt, scriptResumePrompt, "ls", "notes.md", "summary.md", scriptDeniedCommand, "no-rm-rf"} {
			assert.Contains(t, story, want)
		}
		evidence := helm.must(s.project, "log", "--evidence", "--voyage", main.ID)
		for _, want := range []string{"  Output:\n    notes.md\n    victim\n", "    +status: final\n"} {
			assert.Contains(t, evidence, want, "--evidence shows the tools' results, indented under their step")
		}
		subEvidence := helm.must(s.project, "log", "--evidence", "--voyage", sub.ID)
		assert.Contains(t, subEvidence, "    3 notes.md", "the subagent's call, with its result, is in its sub-voyage")
		// What differs between runs beside what n replaces: the home,
		// the voyages' ids, the calls' durations, and which step a
		// model message's usage lands on — the hook reads it from the
		// transcript, which Claude Code writes on its own schedule, so
		// on a busy machine a message's usage may reach the next step.
		// The stats subtest checks the sums, which do not move.
		stable := func(text string) []byte {
			text = usagePattern.ReplaceAllString(text, "")
			text = strings.ReplaceAll(text, helm.home, "<helm-home>")
			text = strings.ReplaceAll(text, main.ID[:8], "<voyage-1>")
			text = strings.ReplaceAll(text, sub.ID[:8], "<voyage-2>")
			text = durationPattern.ReplaceAllString(text, "(<duration>)")
			return n.text([]byte(text))
		}
		compareGoldens(t, filepath.Join(claudeGoldens, "helm"), map[string][]byte{
			"log.golden":          stable(story),
			"log-evidence.golden": stable(evidence),
		})
	})

	t.Run("denial", func(t *testing.T) {
		steps := voyageSteps(t, helm, s.project, main.ID)
		var denied []map[string]any
		for _, st := range steps {
			if d, ok := st["decision"].(map[string]any); ok && d["verdict"] == "deny" {
				denied = append(denied, st)
			}
		}
		require.Len(t, denied, 1, "the voyage records the one denied call")
		assert.Equal(t, "Bash", denied[0]["tool"])
		assert.Equal(t, idRm, denied[0]["id"])
		text, _ := denied[0]["text"].(string)
		assert.Equal(t, scriptDeniedCommand, strings.SplitN(text, "\n", 2)[0], "the command, then its description")
		rule, _ := denied[0]["decision"].(map[string]any)["rule"].(string)
		assert.True(t, strings.HasPrefix(rule, `"no-rm-rf" (`), "with the rule that made it, and where it is written: %q", rule)
	})

	t.Run("stats", func(t *testing.T) {
		var stats []map[string]any
		require.NoError(t, json.Unmarshal([]byte(helm.must(s.project, "stats", "--voyage", main.ID, "--json")), &stats))
		require.Len(t, stats, 1)
		// What the agent hosts reported, the sub-voyages' included.
		tokens, ok := stats[0]["agents"].(map[string]any)
		require.True(t, ok, "helm stats --json has what agent hosts reported (agents): %v", stats[0])
		// The parent's 6 calls and the subagent's 1; one denied.
		assert.EqualValues(t, 7, tokens["tool_calls"])
		assert.EqualValues(t, 1, tokens["denied_calls"])
		// Every answer of the stand-in carries the same usage; the session
		// asked it 10 times (8 the parent's, the resume's included; 2 the
		// subagent's). A message split into several transcript lines
		// counts once.
		assert.EqualValues(t, 10*usageInput, tokens["input_tokens"])
		assert.EqualValues(t, 10*usageOutput, tokens["output_tokens"])
		assert.EqualValues(t, 10*usageCacheRead, tokens["cache_read_tokens"])
		assert.EqualValues(t, 10*usageCacheCreate, tokens["cache_write_tokens"])
	})

	t.Run("import", func(t *testing.T) {
		imported := hookHelm{t: t, bin: helm.bin, home: filepath.Join(t.TempDir(), "import-home"), env: helm.env}
		imported.skipWithout(t, "--from", "voyage", "import")
		transcript := filepath.Join(s.transcriptDir(), scriptSessionID+".jsonl")
		imported.must(s.project, "voyage", "import", "--from", "claude-code", transcript,
			"--as", hookIdentity, "--role", hookRole, "--method", hookMethod)
		var got []struct {
			ID     string `json:"id"`
			Parent string `json:"parent"`
		}
		require.NoError(t, json.Unmarshal([]byte(imported.must(s.project, "voyage", "list", "--status", "all", "--json")), &got))
		require.Len(t, got, 2, "the session's voyage and its subagent's")
		imain, isub := got[0], got[1]
		if imain.Parent != "" {
			imain, isub = isub, imain
		}
		assert.Equal(t, imain.ID, isub.Parent)
		// The same prompts, tool calls, results and subagents as the
		// hooks recorded (decisions and notifications exist only in a
		// hooked session).
		assert.Equal(t, sharedView(voyageSteps(t, helm, s.project, main.ID)), sharedView(voyageSteps(t, imported, s.project, imain.ID)))
		assert.Equal(t, sharedView(voyageSteps(t, helm, s.project, sub.ID)), sharedView(voyageSteps(t, imported, s.project, isub.ID)))
	})
}

// durationPattern is a call's duration as the story prints it.
var durationPattern = regexp.MustCompile(`\(\d+(\.\d+)?(ns|µs|ms|s)\)`)

// usagePattern matches the line that tells a step's model usage in helm
// log (with its line end).
var usagePattern = regexp.MustCompile(`(?m)^ *usage: .*\n`)

// voyageSteps returns the steps helm log --json prints for the voyage:
// every object under a "step" key, in order.
func voyageSteps(t *testing.T, helm hookHelm, dir, voyage string) []map[string]any {
	t.Helper()
	var doc any
	require.NoError(t, json.Unmarshal([]byte(helm.must(dir, "log", "--json", "--voyage", voyage)), &doc))
	var steps []map[string]any
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if st, ok := v["step"].(map[string]any); ok {
				steps = append(steps, st)
			}
			for k, c := range v {
				if k != "step" {
					walk(c)
				}
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(doc)
	require.NotEmpty(t, steps, "helm log --json shows the voyage's steps")
	return steps
}

// sharedView keeps what a hooked session and an imported transcript both
// know of each prompt, tool call and subagent: kind, tool, id, text and
// the result of a call that ran.
func sharedView(steps []map[string]any) []string {
	var out []string
	for _, st := range steps {
		switch st["kind"] {
		case "prompt", "tool", "subagent":
		default:
			continue
		}
		line, _ := json.Marshal([]any{st["kind"], st["tool"], st["id"], st["text"]})
		d, _ := st["decision"].(map[string]any)
		if r, ok := st["result"].(map[string]any); ok && (d == nil || d["verdict"] != "deny") {
			res, _ := json.Marshal([]any{r["output"], r["artifact"], r["failed"]})
			line = append(line, res...)
		}
		out = append(out, string(line))
	}
	return out
}
