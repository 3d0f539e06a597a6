package toolguard

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/helmlog/helm/agent"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/policy"
)

// MaxHolds is how many times a gate holds the same stop: when the host
// says the agent is already going on because a gate held it
// (Event.StopActive) and the gate has held it MaxHolds times since the
// person's last prompt, Gate lets it go, with a reason that is recorded
// — seed 003's nudge, not a cage: an agent that cannot meet the
// condition must not loop for ever.
const MaxHolds = 3

// editTools are the tools that change files.
var editTools = []string{"Edit", "MultiEdit", "Write", "NotebookEdit", "write_file", "replace", "edit"}

// shellTools run shell commands.
var shellTools = []string{"Bash", "run_shell_command"}

// Gate answers an agent that wants to stop (a Stop or SubagentStop
// event): every gate of p on that event (policy.Gates) must hold over
// entries, the voyage's (the sub-voyage's, for a subagent), or the agent
// is held: Verdict Block with the gate's reason. A gate holds when:
//
//   - until = "bearing-since-edit": no tool step edited a file
//     (Edit, Write, MultiEdit, NotebookEdit) after the last bearing;
//   - until = "tests-pass": a shell step whose command matches the
//     gate's command ("go test") ran without failing after the last edit
//     (or nothing was edited).
//
// A denied edit changed nothing and does not count. When every gate
// holds, or p has none, the decision is NoDecision. After MaxHolds holds
// of the same gate while the host says the agent is already going on
// because of one, the agent is let go: Verdict Allow, with the reason.
func Gate(p *policy.Policy, ev agent.Event, who logbook.Who, entries []logbook.Entry) agent.Decision {
	event := ""
	switch ev.Kind {
	case agent.Stop:
		event = policy.EventStop
	case agent.SubagentStop:
		event = policy.EventSubagentStop
	default:
		return NoDecision
	}
	req := policy.Request{Event: event, Identity: who.Identity, Role: who.Role, Method: who.Method}
	for _, v := range p.Gates(req) {
		why, ok := holds(v.Rule, entries)
		if ok {
			continue
		}
		reason := v.Rule.Reason
		if reason == "" {
			reason = why
		}
		d := agent.Decision{Verdict: agent.Block, Rule: v.RuleName(), Reason: reason}
		if n := holdsSincePrompt(entries, d.Rule); ev.StopActive && n >= MaxHolds {
			return agent.Decision{Verdict: agent.Allow, Rule: d.Rule, Reason: fmt.Sprintf("let go after %d holds, though the gate's condition still fails: %s", n, why)}
		}
		return d
	}
	return NoDecision
}

// holds evaluates a gate's condition over entries, and says what is
// missing when it does not hold.
func holds(rule *policy.Rule, entries []logbook.Entry) (string, bool) {
	lastEdit, lastBearing := -1, -1
	for i, e := range entries {
		switch {
		case e.Kind == logbook.EntryBearing:
			lastBearing = i
		case isEdit(e):
			lastEdit = i
		}
	}
	switch rule.Until {
	case policy.UntilBearingSinceEdit:
		if lastEdit > lastBearing {
			return "files were edited since the last bearing: take a bearing (helm bearing) before you stop", false
		}
		return "", true
	case policy.UntilTestsPass:
		if lastEdit < 0 {
			return "", true
		}
		for _, e := range entries[lastEdit+1:] {
			if passed(e, rule.Command) {
				return "", true
			}
		}
		return fmt.Sprintf("files were edited since %q last passed: run it and see it pass before you stop", rule.Command), false
	}
	return fmt.Sprintf("the gate's condition %q is unknown", rule.Until), false
}

// isEdit reports whether e is a tool step that edited a file and was not
// denied.
func isEdit(e logbook.Entry) bool {
	s := e.Step
	return e.Kind == logbook.EntryStep && s != nil && s.Kind == logbook.StepTool && slices.Contains(editTools, s.Tool) &&
		(s.Decision == nil || s.Decision.Verdict != agent.Deny)
}

// passed reports whether e is a shell step that ran a command matching
// pattern and did not fail.
func passed(e logbook.Entry, pattern string) bool {
	s := e.Step
	if e.Kind != logbook.EntryStep || s == nil || s.Kind != logbook.StepTool || !slices.Contains(shellTools, s.Tool) ||
		s.Result == nil || s.Result.Failed || s.Decision != nil && s.Decision.Verdict == agent.Deny {
		return false
	}
	var in struct {
		Command string `json:"command"`
	}
	src := s.Text
	if json.Unmarshal(s.Input, &in) == nil && in.Command != "" {
		src = in.Command
	}
	return endsWith(src, pattern, 0)
}

// endsWith reports whether the exit status of the script src is that of
// a command matching pattern, which then surely ran: its last statement
// is the command, or ends a chain of && (go test ./... || true, go test
// | tee log, go test &, a function never called, an if whose condition
// failed: the status is another's). A shell's -c script is read the
// same way.
func endsWith(src, pattern string, depth int) bool {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil || len(f.Stmts) == 0 || depth > maxDepth || len(src) > MaxScriptBytes {
		return false
	}
	return stmtEndsWith(f.Stmts[len(f.Stmts)-1], pattern, depth)
}

func stmtEndsWith(st *syntax.Stmt, pattern string, depth int) bool {
	for !st.Background && !st.Negated && !st.Coprocess {
		switch c := st.Cmd.(type) {
		case *syntax.BinaryCmd:
			if c.Op != syntax.AndStmt {
				return false
			}
			st = c.Y
		case *syntax.Subshell:
			if len(c.Stmts) == 0 {
				return false
			}
			st = c.Stmts[len(c.Stmts)-1]
		case *syntax.Block:
			if len(c.Stmts) == 0 {
				return false
			}
			st = c.Stmts[len(c.Stmts)-1]
		case *syntax.CallExpr:
			var b strings.Builder
			if err := syntax.NewPrinter().Print(&b, st); err != nil {
				return false
			}
			argvs, _, _, err := Commands(b.String(), "")
			if err != nil || len(argvs) == 0 {
				return false
			}
			if script, ok := dashCScript(argvs[0]); ok {
				return endsWith(script, pattern, depth+1)
			}
			return slices.ContainsFunc(argvs, func(argv []string) bool {
				return policy.MatchCommand(pattern, argv) && runsTests(argv)
			})
		default:
			return false
		}
	}
	return false
}

// dashCScript is the script of sh -c SCRIPT (bash, zsh, ...).
func dashCScript(argv []string) (string, bool) {
	switch path.Base(argv[0]) {
	case "sh", "bash", "zsh", "dash", "ksh":
	default:
		return "", false
	}
	for i := 1; i+1 < len(argv); i++ {
		if a := argv[i]; len(a) > 1 && a[0] == '-' && strings.ContainsRune(a, 'c') {
			return argv[i+1], true
		}
	}
	return "", false
}

// runsTests reports whether a go test command runs the tests: -list,
// -exec, -n and -c build or list them without running them (or run
// something else in their place).
func runsTests(argv []string) bool {
	if len(argv) < 2 || path.Base(argv[0]) != "go" || argv[1] != "test" {
		return true
	}
	for _, a := range argv[2:] {
		if a == "--" {
			break
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if strings.HasPrefix(a, "-") && slices.Contains([]string{"list", "exec", "n", "c", "h", "help"}, name) {
			return false
		}
	}
	return true
}

// holdsSincePrompt counts the message steps a gate named rule held since
// the person's last prompt.
func holdsSincePrompt(entries []logbook.Entry, rule string) int {
	n := 0
	for _, e := range entries {
		s := e.Step
		if e.Kind != logbook.EntryStep || s == nil {
			continue
		}
		switch {
		case s.Kind == logbook.StepPrompt:
			n = 0
		case s.Kind == logbook.StepMessage && s.Decision != nil && s.Decision.Verdict == agent.Block && s.Decision.Rule == rule:
			n++
		}
	}
	return n
}
