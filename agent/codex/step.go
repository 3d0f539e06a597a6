package codex

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/helmlog/helm/agent"
	"github.com/helmlog/helm/agent/internal/hookio"
	"github.com/helmlog/helm/logbook"
)

// StepOf is the step a person reads of ev: its kind, and for a tool call
// the text of the call (shell: the command line, the script of a
// `bash -lc SCRIPT`; apply_patch: the patch; web_search: the query;
// update_plan and any other tool: its name and input) and, after it ran,
// its output and how it ended.
func StepOf(ev agent.Event) logbook.Step { return hookio.Step(ev, tools{}) }

type tools struct{}

func (tools) Text(name string, input json.RawMessage) string {
	f := hookio.Fields(input)
	switch name {
	case "shell":
		return CommandText(input)
	case "apply_patch":
		return hookio.Str(f, "input")
	case "web_search":
		return hookio.Str(f, "query")
	}
	return name + " " + hookio.JSONText(input)
}

// CommandText is a shell call's command as a person reads it: the
// script of `bash -lc SCRIPT` (sh, zsh, -c), else the argv quoted as a
// shell would need it; a command given as one string is that string.
func CommandText(input json.RawMessage) string {
	var in struct {
		Command json.RawMessage `json:"command"`
	}
	_ = json.Unmarshal(input, &in)
	var s string
	if json.Unmarshal(in.Command, &s) == nil {
		return s
	}
	var argv []string
	if json.Unmarshal(in.Command, &argv) != nil {
		return hookio.JSONText(in.Command)
	}
	if len(argv) == 3 && (argv[1] == "-lc" || argv[1] == "-c") {
		switch argv[0] {
		case "bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh", "/usr/bin/bash", "/usr/bin/zsh":
			return argv[2]
		}
	}
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = quote(a)
	}
	return strings.Join(q, " ")
}

// plainWord and exitCodeLine are compiled on first use: every start of
// the helm program runs this package's initialisation.
var plainWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`) })

func quote(s string) string {
	if plainWord().MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Result is a call's output: for a command, its output and a line with
// a non-zero exit status.
func (tools) Result(tc *agent.ToolCall) string {
	out, code, _ := output(tc.Response)
	if code != 0 {
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		out += fmt.Sprintf("exit status %d", code)
	}
	if tc.Failed && tc.Error != "" && tc.Error != out {
		if out != "" {
			out += "\n"
		}
		out += "error: " + tc.Error
	}
	return out
}

var exitCodeLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^Exit code: (-?\d+)\n`) })

// output reads a function_call_output's output: the text, the exit
// status it reports, and whether it says it failed. Codex writes it as a
// string, as a JSON object in a string ({"output", "metadata":
// {"exit_code"}}), as text headed "Exit code: N", or as an object
// {"content", "success"}.
func output(raw json.RawMessage) (text string, code int, failed bool) {
	var obj struct {
		Content *string `json:"content"`
		Success *bool   `json:"success"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Content != nil {
		raw, _ = json.Marshal(*obj.Content)
		failed = obj.Success != nil && !*obj.Success
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return hookio.JSONText(raw), 0, failed
	}
	var exec struct {
		Output   *string `json:"output"`
		Metadata struct {
			ExitCode int `json:"exit_code"`
		} `json:"metadata"`
	}
	if strings.HasPrefix(strings.TrimSpace(s), "{") && json.Unmarshal([]byte(s), &exec) == nil && exec.Output != nil {
		return *exec.Output, exec.Metadata.ExitCode, failed || exec.Metadata.ExitCode != 0
	}
	if m := exitCodeLine().FindStringSubmatch(s); m != nil {
		code, _ = strconv.Atoi(m[1])
		if _, body, ok := strings.Cut(s, "Output:\n"); ok {
			s = body
		}
		return s, code, failed || code != 0
	}
	return s, 0, failed
}
