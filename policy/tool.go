package policy

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Tool calls: a coding agent's host (Claude Code, Gemini CLI) asks,
// through its hooks, whether a tool call may run, and whether the agent
// may stop. The same [[rule]] list decides them (DESIGN: one policy
// language); a rule with any of the fields below is a tool-call rule and
// decides tool calls only, a rule with none an action rule that decides
// actions only.

// Events a tool-call rule names (Rule.Event, Request.Event).
const (
	// EventTool is a tool call about to run (the default of a tool-call
	// rule). A tool rule decides permission requests too: they are
	// tool calls about to run that the host would ask a person about.
	EventTool = "tool"
	// EventPermission is a permission request for a tool call only.
	EventPermission = "permission"
	// EventStop is the agent ending its turn; EventSubagentStop a
	// subagent ending its work. Rules on them are gates (Rule.Until).
	EventStop         = "stop"
	EventSubagentStop = "subagent-stop"
)

// Conditions a gate waits for (Rule.Until).
const (
	// UntilBearingSinceEdit holds the agent until a bearing has been
	// taken since its last edit of a file.
	UntilBearingSinceEdit = "bearing-since-edit"
	// UntilTestsPass holds it until a shell command matching the rule's
	// Command ran without failing after its last edit.
	UntilTestsPass = "tests-pass"
)

// OutsideProject is the path pattern that matches a path outside the
// request's Project.
const OutsideProject = "outside-project"

// actionOnlyFields are the fields only an action rule may have.
var actionOnlyFields = []string{"action", "repo", "branch", "args", "ref", "force", "delete", "status"}

// IsToolRule reports whether the rule decides tool calls (it has a tool,
// command, path, host, event or until), rather than actions.
func (rule *Rule) IsToolRule() bool {
	return rule.Tool != "" || rule.Command != "" || rule.Path != "" || rule.Host != "" || rule.Event != "" || rule.Until != ""
}

// IsGate reports whether the rule is a gate: a rule on a stop event.
func (rule *Rule) IsGate() bool { return rule.Event == EventStop || rule.Event == EventSubagentStop }

// event is the rule's event, EventTool when it names none.
func (rule *Rule) event() string {
	if rule.Event == "" {
		return EventTool
	}
	return rule.Event
}

// IsToolCall reports whether the request is a tool call or a stop (it has
// an Event), rather than an action.
func (r Request) IsToolCall() bool { return r.Event != "" }

// miss is the first field of a rule that a request does not satisfy.
type miss struct{ field, pattern, value string }

// toolMismatch checks a tool-call rule against a tool-call request.
func (rule *Rule) toolMismatch(r Request) (miss, bool) {
	switch e := rule.event(); {
	case e == r.Event, e == EventTool && r.Event == EventPermission:
	default:
		return miss{"event", e, r.Event}, false
	}
	who := [...][3]string{{"identity", rule.Identity, r.Identity}, {"role", rule.Role, r.Role}, {"method", rule.Method, r.Method}, {"actor", rule.Actor, r.Actor()}}
	for _, f := range who {
		if f[1] != "" && (checkGlob(f[1]) != nil || !matchGlob(f[1], f[2])) {
			return miss{f[0], f[1], f[2]}, false
		}
	}
	if rule.IsGate() {
		return miss{}, true // a gate's tool and command say what its condition watches
	}
	if rule.Tool != "" && !matchAlternatives(rule.Tool, r.Tool) {
		return miss{"tool", rule.Tool, r.Tool}, false
	}
	if rule.Command != "" && !rule.matchesCommands(r.Commands) {
		return miss{"command", rule.Command, showCommands(r.Commands)}, false
	}
	// A path or host known only when the call runs may be any: it
	// matches a rule that denies or asks, never one that allows.
	open := rule.Decision != Allow
	if rule.Path != "" && !slices.ContainsFunc(r.Paths, func(p string) bool {
		if _, ok := Unknown(p); ok {
			return open
		}
		return matchPath(rule.Path, p, r.Project)
	}) {
		return miss{"path", rule.Path, showWords(r.Paths)}, false
	}
	if rule.Host != "" && !slices.ContainsFunc(r.Hosts, func(h string) bool {
		if _, ok := Unknown(h); ok {
			return open
		}
		return checkGlob(rule.Host) == nil && matchGlob(strings.ToLower(rule.Host), strings.ToLower(h))
	}) {
		return miss{"host", rule.Host, showWords(r.Hosts)}, false
	}
	return miss{}, true
}

// showWords renders paths or hosts for a trace, an unknown one as
// "<unknown: TEXT>".
func showWords(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		if why, ok := Unknown(w); ok {
			w = "<unknown: " + why + ">"
		}
		out[i] = w
	}
	return strings.Join(out, " ")
}

// matchAlternatives matches value against a glob with | alternatives
// ("Edit|Write", "mcp__*").
func matchAlternatives(pattern, value string) bool {
	for alt := range strings.SplitSeq(pattern, "|") {
		if checkGlob(alt) == nil && matchGlob(alt, value) {
			return true
		}
	}
	return false
}

// matchesCommands reports whether the rule's command pattern matches any
// of the argvs. An unknown command or word matches a rule that denies or
// asks (it could be anything), never one that allows.
func (rule *Rule) matchesCommands(argvs [][]string) bool {
	pat := parseCommandLine(splitPattern(rule.Command))
	open := rule.Decision != Allow
	for _, argv := range argvs {
		if matchCommand(pat, parseCommandLine(argv), open) {
			return true
		}
	}
	return false
}

// MatchCommand reports whether the command pattern (a rule's command
// field, "rm -rf") surely matches argv: an unknown command or word
// matches nothing (it is what a gate asks: did the tests run?).
func MatchCommand(pattern string, argv []string) bool {
	return matchCommand(parseCommandLine(splitPattern(pattern)), parseCommandLine(argv), false)
}

// matchPath matches a path the call touches against a rule's path: a
// glob, or OutsideProject (a path that is not the project's directory or
// under it; every path is outside when the project is unknown).
func matchPath(pattern, p, project string) bool {
	if pattern == OutsideProject {
		if project == "" {
			return true
		}
		rel, err := filepath.Rel(project, p)
		return err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel)
	}
	return checkGlob(pattern) == nil && matchGlob(pattern, p)
}

// showCommands renders argvs for a trace: each joined by spaces, an
// unknown word as written, separated by "; ".
func showCommands(argvs [][]string) string {
	parts := make([]string, 0, len(argvs))
	for _, argv := range argvs {
		parts = append(parts, showWords(argv))
	}
	return strings.Join(parts, "; ")
}

// toolProblems checks a rule's tool-call fields.
func (rule *Rule) toolProblems() []problem {
	if !rule.IsToolRule() {
		if rule.Decision == Block {
			return []problem{{"decision", `decision "block" is for a gate: give event = "stop" and until`}}
		}
		return nil
	}
	var out []problem
	for _, f := range actionOnlyFields {
		if rule.has(f) {
			out = append(out, problem{f, fmt.Sprintf("%s is an action's field; a rule with tool, command, path, host, event or until decides tool calls (write two rules)", f)})
		}
	}
	switch rule.Event {
	case "", EventTool, EventPermission, EventStop, EventSubagentStop:
	default:
		out = append(out, problem{"event", fmt.Sprintf("event %q is not tool, permission, stop or subagent-stop", rule.Event)})
	}
	if rule.Tool != "" {
		for alt := range strings.SplitSeq(rule.Tool, "|") {
			if err := checkGlob(alt); err != nil {
				out = append(out, problem{"tool", fmt.Sprintf("tool %q %v", rule.Tool, err)})
			}
		}
	}
	for _, f := range [...][2]string{{"path", rule.Path}, {"host", rule.Host}} {
		if f[1] != "" && f[1] != OutsideProject {
			if err := checkGlob(f[1]); err != nil {
				out = append(out, problem{f[0], fmt.Sprintf("%s %q %v", f[0], f[1], err)})
			}
		}
	}
	if rule.Command != "" && len(splitPattern(rule.Command)) == 0 {
		out = append(out, problem{"command", "command is blank: give a command and its flags, \"rm -rf\""})
	}
	if rule.IsGate() {
		switch rule.Until {
		case UntilBearingSinceEdit:
		case UntilTestsPass:
			if rule.Command == "" {
				out = append(out, problem{"until", `until = "tests-pass" needs the command that runs the tests: command = "go test"`})
			}
		case "":
			out = append(out, problem{"event", fmt.Sprintf(`a rule on event %q is a gate: give until = "bearing-since-edit" or "tests-pass"`, rule.Event)})
		default:
			out = append(out, problem{"until", fmt.Sprintf("until %q is not bearing-since-edit or tests-pass", rule.Until)})
		}
		if rule.Decision != Block && rule.Decision != "" {
			out = append(out, problem{"decision", fmt.Sprintf(`a gate holds the agent: decision = "block", not %q`, rule.Decision)})
		}
		if rule.Path != "" || rule.Host != "" {
			out = append(out, problem{"path", "a gate has no path or host"})
		}
		return out
	}
	if rule.Until != "" {
		out = append(out, problem{"until", `until is a gate's condition: give event = "stop" or "subagent-stop"`})
	}
	if rule.Decision == Block {
		out = append(out, problem{"decision", `decision "block" is for a gate (event = "stop"); a tool call is allowed, denied or asked`})
	}
	return out
}

// has reports whether the rule gives the field.
func (rule *Rule) has(field string) bool {
	switch field {
	case "force":
		return rule.Force != nil
	case "delete":
		return rule.Delete != nil
	}
	return *rule.field(field) != ""
}

// Gates returns a verdict for every gate of the policy (every stacked
// policy's included) that holds r, a stop or subagent-stop request, in
// order: all of them apply, not the first alone.
func (p *Policy) Gates(r Request) []Verdict {
	if p == nil {
		return nil
	}
	if p.layers != nil {
		var out []Verdict
		for _, l := range p.layers {
			out = append(out, l.Gates(r)...)
		}
		return out
	}
	var out []Verdict
	for i := range p.Rules {
		rule := &p.Rules[i]
		if !rule.IsGate() {
			continue
		}
		if _, ok := rule.toolMismatch(r); ok {
			out = append(out, Verdict{Decision: Block, Rule: rule, Source: p.Source})
		}
	}
	return out
}
