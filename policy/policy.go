package policy

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

var (
	// ErrDenied is wrapped by Verdict.Err when a rule denies the request.
	ErrDenied = errors.New("denied")
	// ErrNeedsConfirmation is wrapped by Verdict.Err when a rule lets the
	// request run only once a person confirms it.
	ErrNeedsConfirmation = errors.New("held for confirmation")
)

// Decision is what a rule decides for the requests it matches.
type Decision string

// The decisions.
const (
	// Allow lets the request run.
	Allow Decision = "allow"
	// Deny refuses it.
	Deny Decision = "deny"
	// Confirm lets it run only when a person has confirmed it.
	Confirm Decision = "confirm"
	// Ask leaves a tool call to a person: the agent's host asks them. A
	// rule that asks decides an action as Confirm does (the action runs
	// only once a person confirms it), and a rule that confirms decides a
	// tool call as Ask does: the verdict says Confirm for an action and
	// Ask for a tool call, whichever a rule wrote.
	Ask Decision = "ask"
	// Block is a gate's decision: the agent may not stop yet (see
	// Rule.Until).
	Block Decision = "block"
)

// Rule is one [[rule]] table. Every matcher (Action to Args) is a glob
// (see the package documentation); an empty one matches anything.
type Rule struct {
	// Name is shown in messages. Parse names a rule that has none
	// "rule N (line L)".
	Name string
	// Decision is what the rule decides when it matches.
	Decision Decision
	// Action matches the action kind ("push", "merge-pull-request", ...,
	// "observe-command").
	Action string
	// Identity, Role and Method match who acts and how.
	Identity, Role, Method string
	// Actor matches "agent" or "human" (see Request.Actor).
	Actor string
	// Repo matches the repository, OWNER/NAME.
	Repo string
	// Branch matches the branch acted on, resolved.
	Branch string
	// Args matches the arguments joined by single spaces.
	Args string
	// Ref matches the full name of a ref the action updates on a remote
	// (refs/heads/main, refs/tags/v1): a push's every destination, as git
	// resolves it.
	Ref string
	// Status matches the status of the voyage acted on (active, blocked,
	// partial, completed, failed, cancelled): a glob, or "open" (active,
	// blocked, partial) or "closed" (completed, failed, cancelled).
	Status string
	// Force and Delete, when set, match a ref update that is (true) or is
	// not (false) a forced update, or a deletion.
	Force, Delete *bool
	// Tool to Until make the rule a tool-call rule (see IsToolRule),
	// which decides tool calls and gates only.
	//
	// Tool matches the tool's name: a glob, with | between alternatives
	// ("Bash", "Edit|Write", "mcp__*").
	Tool string
	// Command matches a command the call runs: a command and flags
	// ("rm -rf", "git push --force"), matched on the parsed argv in any
	// spelling (see MatchCommand). A command helm cannot know before it
	// runs matches a rule that denies or asks, never one that allows.
	Command string
	// Path matches a path the call touches: a glob on the absolute,
	// cleaned path, or "outside-project" (OutsideProject).
	Path string
	// Host matches a host the call fetches from: a glob, case folded
	// ("*.example.com").
	Host string
	// Event is the event the rule decides: EventTool (the default),
	// EventPermission, EventStop or EventSubagentStop.
	Event string
	// Until makes a stop rule a gate: the agent is held (Block) until
	// the condition holds (UntilBearingSinceEdit, UntilTestsPass).
	Until string
	// Reason, when given, is what the agent is shown when the rule denies,
	// asks or holds it.
	Reason string
	// Line is the 1-based line of the rule's [[rule]] header in its
	// source, or 0 when unknown.
	Line int
}

// Policy is an ordered list of rules read from one source, or a stack of
// policies (see Stack).
type Policy struct {
	// Source names where the rules come from (a file's path) in messages.
	Source string
	// Rules are tried in order; the first that matches decides.
	Rules []Rule
	// Recording is the [hooks] table's recording setting: what an agent
	// host's hook does with a tool call it cannot record (RecordingFailOpen,
	// the default when empty, or RecordingFailClosed).
	Recording string
	// data is the text Parse read, for Digest.
	data []byte
	// layers, on a stack, are the policies it applies, in order.
	layers []*Policy
	// system marks a policy the recorded agent cannot change (System).
	system bool
	// fallback decides what no rule of this policy matches
	// (WithDefaults).
	fallback *Policy
}

// What a hook does with a tool call it cannot record ([hooks] recording).
const (
	// RecordingFailOpen lets the call go as the guard decided, saying
	// on stderr that it was not recorded: the default.
	RecordingFailOpen = "fail-open"
	// RecordingFailClosed denies a tool call that cannot be recorded.
	RecordingFailClosed = "fail-closed"
)

// RecordingFailsClosed reports whether a hook must deny a tool call it
// cannot record: [hooks] recording = "fail-closed" in p or, on a stack,
// in any of its policies (the strictest holds). A nil policy fails open.
func (p *Policy) RecordingFailsClosed() bool {
	if p == nil {
		return false
	}
	if p.Recording == RecordingFailClosed {
		return true
	}
	return slices.ContainsFunc(p.layers, (*Policy).RecordingFailsClosed)
}

// Stack returns the policy that applies each of ps (nil ones left out)
// and decides as the strictest of them: deny over confirm over allow.
// A later policy can therefore tighten what an earlier one allows, never
// loosen what it denies — a system policy stacked under a home's holds
// whatever the home's says. Its Source lists theirs; its Rules are empty.
// A stack of one policy is that policy; of none, nil.
func Stack(ps ...*Policy) *Policy {
	var layers []*Policy
	for _, p := range ps {
		switch {
		case p == nil:
		case p.layers != nil:
			layers = append(layers, p.layers...)
		default:
			layers = append(layers, p)
		}
	}
	switch len(layers) {
	case 0:
		return nil
	case 1:
		return layers[0]
	}
	return &Policy{Source: strings.Join(Sources(&Policy{layers: layers}), ", "), layers: layers}
}

// Sources lists where a policy's rules come from: its Source, or each
// stacked policy's. A nil policy has none.
func Sources(p *Policy) []string {
	if p == nil {
		return nil
	}
	if p.layers == nil {
		return []string{p.Source}
	}
	out := make([]string, len(p.layers))
	for i, l := range p.layers {
		out[i] = l.Source
	}
	return out
}

// Digest identifies a policy's rules: "sha256:" and the hex SHA-256 of the
// file Parse read (what sha256sum prints for it), of a canonical form of
// the rules for a policy built in code, or, for a stack, of each stacked
// policy's source and digest in order. A nil policy's digest is "" (no
// rules). Two policies with one digest decide alike; the voyage records
// the digest it runs under.
func (p *Policy) Digest() string {
	if p == nil {
		return ""
	}
	h := sha256.New()
	switch {
	case p.fallback != nil:
		q := *p
		q.fallback = nil
		fmt.Fprintf(h, "%s\x00%s\n%s\x00%s\n", q.Source, q.Digest(), p.fallback.Source, p.fallback.Digest())
	case p.layers != nil:
		for _, l := range p.layers {
			fmt.Fprintf(h, "%s\x00%s\n", l.Source, l.Digest())
		}
	case p.data != nil:
		h.Write(p.data)
	default:
		for _, r := range p.Rules {
			fmt.Fprintf(h, "%q %q", r.Name, r.Decision)
			pats := r.patterns()
			for _, pat := range pats[:len(pats)-1] {
				fmt.Fprintf(h, " %q", pat)
			}
			if r.Status != "" {
				fmt.Fprintf(h, " status %q", r.Status) // only then: older digests stay
			}
			if r.IsToolRule() || r.Reason != "" {
				// Only then: an action rule's digest is what it always was.
				for _, pat := range [...]string{r.Tool, r.Command, r.Path, r.Host, r.Event, r.Until, r.Reason} {
					fmt.Fprintf(h, " %q", pat)
				}
			}
			h.Write([]byte{'\n'})
		}
		if p.Recording != "" {
			fmt.Fprintf(h, "hooks recording %q\n", p.Recording) // only then: older digests stay
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Request is an action or command about to run, as the rules see it.
type Request struct {
	// Action is the action kind, or "observe-command" for a command.
	Action string
	// Identity, Role and Method say who acts and how.
	Identity, Role, Method string
	// Repo is the repository acted on (OWNER/NAME), empty when unknown.
	Repo string
	// Branch is the branch acted on, resolved, empty when none.
	Branch string
	// Args are the action's arguments, or the command and its
	// arguments.
	Args []string
	// Ref is the full name of a ref the action updates on a remote, empty
	// when none; Force and Delete say the update is forced, or a deletion.
	Ref           string
	Force, Delete bool
	// Status is the status of the voyage acted on, empty when unknown:
	// rules with a status match only requests that give one.
	Status string `json:",omitempty"`
	// Event makes the request a tool call (EventTool, EventPermission) or
	// a stop (EventStop, EventSubagentStop); empty for an action. Tool is
	// the tool's name; Commands every argv the call runs (parsed by the
	// caller; see UnknownCommand); Paths the absolute, cleaned paths it
	// touches; Hosts the hosts it fetches from; Project the project's top
	// directory, for "outside-project".
	Event    string     `json:",omitempty"`
	Tool     string     `json:",omitempty"`
	Commands [][]string `json:",omitempty"`
	Paths    []string   `json:",omitempty"`
	Hosts    []string   `json:",omitempty"`
	Project  string     `json:",omitempty"`
}

// Actor returns "human" when the request's method is "human", else
// "agent".
func (r Request) Actor() string {
	if r.Method == "human" {
		return "human"
	}
	return "agent"
}

// Verdict is the policy's answer to one request.
type Verdict struct {
	// Decision is Allow, Deny or Confirm for an action; Allow, Deny or
	// Ask for a tool call; Block for a gate.
	Decision Decision
	// Rule is the rule that decided, nil when none matched (Allow).
	Rule *Rule
	// Source is the policy's Source, for messages.
	Source string
}

// String says what was decided and by which rule, e.g.
// `denied by rule "agents may not merge" (policy.toml:3)`.
func (v Verdict) String() string {
	verb := "allowed"
	switch v.Decision {
	case Deny:
		verb = ErrDenied.Error()
	case Confirm:
		verb = ErrNeedsConfirmation.Error()
	case Ask:
		verb = "left to a person"
	case Block:
		verb = "held"
	}
	if v.Rule == nil {
		return verb + ": no rule matched"
	}
	return fmt.Sprintf("%s by rule %q (%s)", verb, v.Rule.Name, where(v.Source, v.Rule.Line))
}

// RuleName names the rule that decided and where it is written,
// `"agents may not merge" (policy.toml:3)`; empty when no rule matched.
func (v Verdict) RuleName() string {
	if v.Rule == nil {
		return ""
	}
	return fmt.Sprintf("%q (%s)", v.Rule.Name, where(v.Source, v.Rule.Line))
}

// Err returns nil when the verdict allows the request, else an error
// reading as String that wraps ErrDenied or ErrNeedsConfirmation. A
// caller that has a person's confirmation runs a Confirm request anyway.
func (v Verdict) Err() error {
	var sentinel error
	switch v.Decision {
	case Allow:
		return nil
	case Confirm, Ask:
		sentinel = ErrNeedsConfirmation
	default:
		sentinel = ErrDenied
	}
	if v.Rule == nil {
		return sentinel
	}
	return fmt.Errorf("%w by rule %q (%s)", sentinel, v.Rule.Name, where(v.Source, v.Rule.Line))
}

// where renders source:line, or source alone when the line is unknown.
func where(source string, line int) string {
	if source == "" {
		source = "policy"
	}
	if line > 0 {
		return fmt.Sprintf("%s:%d", source, line)
	}
	return source
}

// Check returns the decision of the first rule that matches r, or Allow
// when none does. A nil policy allows everything.
//
// Check trusts the policy to be valid, as Parse's are (Validate checks one
// built in code); should it not be, a malformed glob matches nothing and
// a decision other than allow or confirm denies.
func (p *Policy) Check(r Request) Verdict {
	if p == nil {
		return Verdict{Decision: Allow}
	}
	if p.fallback != nil {
		q := *p
		q.fallback = nil
		if v := q.Check(r); v.Rule != nil {
			return v
		}
		return p.fallback.Check(r)
	}
	if p.layers != nil {
		return strictest(p.layers, func(l *Policy) Verdict { return l.Check(r) }, false)
	}
	fields := requestFields(r)
	for i := range p.Rules {
		rule := &p.Rules[i]
		if _, ok := rule.matches(r, fields); ok {
			return Verdict{Decision: decisionFor(rule.Decision, r), Rule: rule, Source: p.Source}
		}
	}
	return Verdict{Decision: Allow, Source: p.Source}
}

// decisionFor is what a rule's decision d means for r: for an action,
// Allow, Confirm (a rule that asks) or Deny; for a tool call, Allow, Ask
// (a rule that confirms) or Deny; for a stop, Block. Anything else
// denies.
func decisionFor(d Decision, r Request) Decision {
	switch {
	case d == Allow:
		return Allow
	case !r.IsToolCall() && (d == Confirm || d == Ask):
		return Confirm
	case r.IsToolCall() && (d == Confirm || d == Ask):
		return Ask
	case d == Block && (r.Event == EventStop || r.Event == EventSubagentStop):
		return Block
	}
	return Deny
}

// matches checks the rule against r: an action rule only against an
// action, a tool-call rule only against a tool call or stop.
func (rule *Rule) matches(r Request, fields [len(fieldNames)]string) (miss, bool) {
	switch tool := rule.IsToolRule(); {
	case tool && !r.IsToolCall():
		return miss{"kind", "tool call", "action"}, false
	case !tool && r.IsToolCall():
		return miss{"kind", "action", "tool call"}, false
	case tool:
		return rule.toolMismatch(r)
	}
	if f, ok := rule.mismatch(fields); !ok {
		return miss{fieldNames[f], rule.patterns()[f], fields[f]}, false
	}
	return miss{}, true
}

// CheckAll checks each of rs, the requests one action or tool call makes
// (a push to several URLs, or of several refs; a shell command's every
// command, path and host), and returns the strictest verdict: the first
// deny, else the first confirm (or ask), else the first allow that no
// rule made, else allow. Deny wins: a rule that matches any one of them
// decides for the whole. An allow by a rule holds only when rules
// allowed every request: ls && curl is not allowed by a rule that allows
// ls. No request is allowed.
func (p *Policy) CheckAll(rs []Request) Verdict {
	if len(rs) == 0 {
		return Verdict{Decision: Allow, Source: sourceOf(p)}
	}
	return strictest(rs, p.Check, true)
}

// strictest returns the strictest of check's verdicts over xs (deny or
// block, then confirm or ask, then allow), the first of equals. Among
// allows, unruled ranks over ruled when every x must be allowed by a rule
// (the requests of one call), and below it when any may be (the stacked
// policies of one request: a layer that says nothing leaves it to the
// others).
func strictest[T any](xs []T, check func(T) Verdict, unruledOverRuled bool) Verdict {
	var best Verdict
	bestRank := 0
	for i, x := range xs {
		v := check(x)
		r := rank(v, unruledOverRuled)
		if i == 0 || r > bestRank {
			best, bestRank = v, r
		}
		if best.Decision == Deny || best.Decision == Block {
			break
		}
	}
	return best
}

func rank(v Verdict, unruledOverRuled bool) int {
	switch v.Decision {
	case Allow:
		if (v.Rule == nil) == unruledOverRuled {
			return 1
		}
		return 0
	case Confirm, Ask:
		return 2
	}
	return 3
}

func sourceOf(p *Policy) string {
	if p == nil {
		return ""
	}
	return p.Source
}

// Trace is how one rule fared against a request (see Explain).
type Trace struct {
	// Source is the policy the rule is in, when the policy explained is
	// a stack of several (see Stack).
	Source string
	// Rule is the rule tried.
	Rule *Rule
	// Matched reports that every field of the rule matched.
	Matched bool
	// Field names the first field that did not match ("action", ...),
	// empty when Matched.
	Field string
	// Pattern is that field's glob and Value the request's value for it.
	Pattern, Value string
}

// String renders the trace on one line, e.g.
// `rule "nobody pushes to main" (line 7): branch "fix" does not match "main"`.
func (t Trace) String() string {
	if t.Rule == nil {
		return "no rule"
	}
	name := fmt.Sprintf("rule %q", t.Rule.Name)
	switch {
	case t.Source != "":
		name += " (" + where(t.Source, t.Rule.Line) + ")"
	case t.Rule.Line > 0:
		name += fmt.Sprintf(" (line %d)", t.Rule.Line)
	}
	if t.Matched {
		return fmt.Sprintf("%s: matches: %s", name, t.Rule.Decision)
	}
	return fmt.Sprintf("%s: %s %q does not match %q", name, t.Field, t.Value, t.Pattern)
}

// Explain tries the rules on r in order, as Check does, and says how each
// fared, ending with the first that matches (the one that decides). When
// the last trace did not match, no rule did and the request is allowed. A
// nil policy has no rules. A stack explains each of its policies in
// turn (each trace names its Source); the strictest of their decisions
// holds.
func (p *Policy) Explain(r Request) []Trace {
	if p == nil {
		return nil
	}
	if p.fallback != nil {
		q := *p
		q.fallback = nil
		traces := q.Explain(r)
		for i := range traces { // two sources: each trace names its own
			if traces[i].Source == "" {
				traces[i].Source = q.Source
			}
		}
		if len(traces) > 0 && traces[len(traces)-1].Matched {
			return traces
		}
		for _, t := range p.fallback.Explain(r) {
			if t.Source == "" {
				t.Source = p.fallback.Source
			}
			traces = append(traces, t)
		}
		return traces
	}
	if p.layers != nil {
		var traces []Trace
		for _, l := range p.layers {
			for _, t := range l.Explain(r) {
				if t.Source == "" {
					t.Source = l.Source
				}
				traces = append(traces, t)
			}
		}
		return traces
	}
	fields := requestFields(r)
	var traces []Trace
	for i := range p.Rules {
		rule := &p.Rules[i]
		m, ok := rule.matches(r, fields)
		if ok {
			return append(traces, Trace{Rule: rule, Matched: true})
		}
		traces = append(traces, Trace{Rule: rule, Field: m.field, Pattern: m.pattern, Value: m.value})
	}
	return traces
}

// fieldNames are the matchers' names in the file, in the order they are
// tried.
var fieldNames = [...]string{"action", "identity", "role", "method", "actor", "repo", "branch", "args", "ref", "force", "delete", "status"}

// boolFields are the fields a [[rule]] gives as true or false.
var boolFields = []string{"force", "delete"}

// knownFields are every field a [[rule]] may have.
var knownFields = append(append([]string{"name", "decision"}, fieldNames[:]...), "tool", "command", "path", "host", "event", "until", "reason")

func requestFields(r Request) [len(fieldNames)]string {
	return [...]string{r.Action, r.Identity, r.Role, r.Method, r.Actor(), r.Repo, r.Branch, strings.Join(r.Args, " "),
		r.Ref, strconv.FormatBool(r.Force), strconv.FormatBool(r.Delete), r.Status}
}

func (rule *Rule) patterns() [len(fieldNames)]string {
	return [...]string{rule.Action, rule.Identity, rule.Role, rule.Method, rule.Actor, rule.Repo, rule.Branch, rule.Args,
		rule.Ref, boolPattern(rule.Force), boolPattern(rule.Delete), rule.Status}
}

// boolPattern is a true/false matcher as a glob: "" matches either.
func boolPattern(b *bool) string {
	if b == nil {
		return ""
	}
	return strconv.FormatBool(*b)
}

// mismatch returns the index of the rule's first matcher that values do
// not satisfy, or ok when all do.
func (rule *Rule) mismatch(values [len(fieldNames)]string) (field int, ok bool) {
	for i, pattern := range rule.patterns() {
		if pattern == "" {
			continue
		}
		value := values[i]
		switch fieldNames[i] {
		case "repo":
			// GitHub's owner and repository names are case-insensitive:
			// OCTO/Prod is octo/prod.
			pattern, value = strings.ToLower(pattern), strings.ToLower(value)
		case "status":
			if class, ok := statusClasses[pattern]; ok {
				if value == "" || !slices.Contains(class, value) {
					return i, false
				}
				continue
			}
		}
		if checkGlob(pattern) != nil || !matchGlob(pattern, value) {
			return i, false
		}
	}
	return 0, true
}

// Error is a policy that cannot be used, with where the problem is.
// Parse and Validate return one per problem, joined (errors.Join);
// errors.As finds the first.
type Error struct {
	// Source is the policy's Source.
	Source string
	// Line is the 1-based line of the problem, 0 when unknown.
	Line int
	// Rule is the 1-based position of the [[rule]] at fault, 0 when the
	// problem is outside any rule.
	Rule int
	// Err says what is wrong.
	Err error
}

// Error reads "policy.toml:7: unknown field ...".
func (e *Error) Error() string { return where(e.Source, e.Line) + ": " + e.Err.Error() }

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Load reads and parses the policy file at path, named by path in
// messages. A missing file is an error wrapping fs.ErrNotExist: whether
// that means "no rules" is the caller's decision.
func Load(path string) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read policy: %w", err)
	}
	return Parse(data, path)
}

// Parse reads a policy from the TOML text data; source names it in
// messages and becomes the Policy's Source. An empty text is a policy
// with no rules. Every problem found is reported, each as an *Error
// naming its line where the line can be found.
func Parse(data []byte, source string) (*Policy, error) {
	text := string(data)
	var doc map[string]any
	if _, err := toml.Decode(text, &doc); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &Error{Source: source, Line: pe.Position.Line, Err: errors.New(pe.Message)}
		}
		return nil, &Error{Source: source, Err: err}
	}
	p := &Policy{Source: source, data: append([]byte{}, data...)}
	defs := definitions(text)
	var errs []*Error
	fail := func(line, rule int, format string, args ...any) {
		errs = append(errs, &Error{Source: source, Line: line, Rule: rule, Err: fmt.Errorf(format, args...)})
	}

	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var tables []map[string]any
	for _, k := range keys {
		if k == "hooks" {
			p.Recording = parseHooks(doc[k], defs, fail)
			continue
		}
		if k != "rule" {
			fail(lineOf(defs, 0, len(defs), k), 0, "unknown key %q (a policy holds [[rule]] tables and a [hooks] table)", k)
			continue
		}
		var ok bool
		if tables, ok = ruleTables(doc[k]); !ok {
			fail(lineOf(defs, 0, len(defs), k), 0, "rule is %s: write each rule as a [[rule]] table", typeName(doc[k]))
		}
	}

	spans := ruleSpans(defs, len(tables))
	for i, t := range tables {
		p.Rules = append(p.Rules, parseRule(t, i+1, defs, spans[i], fail))
	}
	if len(errs) > 0 {
		// In the file's order; problems whose line is unknown last.
		order := func(e *Error) int {
			if e.Line == 0 {
				return math.MaxInt
			}
			return e.Line
		}
		slices.SortStableFunc(errs, func(a, b *Error) int { return cmp.Compare(order(a), order(b)) })
		joined := make([]error, len(errs))
		for i, e := range errs {
			joined[i] = e
		}
		return nil, errors.Join(joined...)
	}
	return p, nil
}

// parseHooks reads the [hooks] table: its one key, recording.
func parseHooks(v any, defs []definition, fail func(line, rule int, format string, args ...any)) string {
	t, ok := v.(map[string]any)
	if !ok {
		fail(lineOf(defs, 0, len(defs), "hooks"), 0, "hooks is %s: write it as a [hooks] table", typeName(v))
		return ""
	}
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	recording := ""
	for _, k := range keys {
		line := lineOf(defs, 0, len(defs), "hooks", k)
		if k != "recording" {
			fail(line, 0, "unknown key %q in [hooks] (it holds recording)", k)
			continue
		}
		s, ok := t[k].(string)
		if !ok || (s != RecordingFailOpen && s != RecordingFailClosed) {
			fail(line, 0, "[hooks] recording is %v: write %q or %q", t[k], RecordingFailOpen, RecordingFailClosed)
			continue
		}
		recording = s
	}
	return recording
}

// span is the part of a document's definitions that belongs to one rule:
// defs[lo:hi], its [[rule]] header first.
type span struct{ lo, hi int }

// ruleSpans returns the span of each of the n rules the decoder found, or
// empty spans when the scan found a different number of [[rule]] headers
// (the rules were written inline, or the scan went astray): then no line
// is known.
func ruleSpans(defs []definition, n int) []span {
	spans := make([]span, n)
	var headers []int
	for i, d := range defs {
		if d.array && len(d.path) == 1 && d.path[0] == "rule" {
			headers = append(headers, i)
		}
	}
	if len(headers) != n {
		return spans
	}
	for i, lo := range headers {
		hi := len(defs)
		for j := lo + 1; j < len(defs); j++ {
			// The next [[rule]], or a table outside the rules, ends it.
			if d := defs[j]; d.header && (len(d.path) == 0 || d.path[0] != "rule" || d.array && len(d.path) == 1) {
				hi = j
				break
			}
		}
		spans[i] = span{lo, hi}
	}
	return spans
}

// parseRule reads the n-th [[rule]] table t, whose definitions are
// defs[s.lo:s.hi], reporting each problem to fail.
func parseRule(t map[string]any, n int, defs []definition, s span, fail func(line, rule int, format string, args ...any)) Rule {
	var rule Rule
	if s.hi > s.lo {
		rule.Line = defs[s.lo].line
	}
	fieldLine := func(f string) int {
		if l := lineOf(defs, s.lo, s.hi, "rule", f); l > 0 {
			return l
		}
		return rule.Line
	}
	names := make([]string, 0, len(t))
	for f := range t {
		names = append(names, f)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(fieldLine(a), fieldLine(b)), strings.Compare(a, b)) })
	for _, f := range names {
		if !slices.Contains(knownFields, f) {
			fail(fieldLine(f), n, "unknown field %q in [[rule]] %d (known: %s)", f, n, strings.Join(knownFields, ", "))
			continue
		}
		if slices.Contains(boolFields, f) {
			b, ok := t[f].(bool)
			if !ok {
				fail(fieldLine(f), n, "[[rule]] %d: %s is %s, not true or false", n, f, typeName(t[f]))
				continue
			}
			*rule.flag(f) = &b
			continue
		}
		v, ok := t[f].(string)
		if !ok {
			fail(fieldLine(f), n, "[[rule]] %d: %s is %s, not a string", n, f, typeName(t[f]))
			continue
		}
		*rule.field(f) = v
	}
	if strings.TrimSpace(rule.Name) == "" {
		rule.Name = fmt.Sprintf("rule %d", n)
		if rule.Line > 0 {
			rule.Name += fmt.Sprintf(" (line %d)", rule.Line)
		}
	}
	for _, pr := range rule.problems() {
		fail(fieldLine(pr.field), n, "[[rule]] %d (%q): %s", n, rule.Name, pr.what)
	}
	return rule
}

// ruleTables returns the rule value as tables: [[rule]] decodes as
// []map[string]any, rule = [{...}, ...] as []any of maps.
func ruleTables(v any) ([]map[string]any, bool) {
	switch v := v.(type) {
	case []map[string]any:
		return v, true
	case []any:
		tables := make([]map[string]any, 0, len(v))
		for _, e := range v {
			t, ok := e.(map[string]any)
			if !ok {
				return nil, false
			}
			tables = append(tables, t)
		}
		return tables, true
	}
	return nil, false
}

// typeName names a decoded TOML value's type, with its article.
func typeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case time.Time:
		return "a date-time"
	case map[string]any:
		return "a table"
	case []map[string]any, []any:
		return "an array"
	}
	return fmt.Sprintf("a %T", v)
}

// lineOf returns the line of the first of defs[lo:hi] at or under key, or 0.
func lineOf(defs []definition, lo, hi int, key ...string) int {
	for _, d := range defs[lo:hi] {
		if len(d.path) >= len(key) && slices.Equal(d.path[:len(key)], key) {
			return d.line
		}
	}
	return 0
}

// field returns the rule's field a [[rule]] key sets.
func (rule *Rule) field(name string) *string {
	switch name {
	case "name":
		return &rule.Name
	case "decision":
		return (*string)(&rule.Decision)
	case "tool":
		return &rule.Tool
	case "command":
		return &rule.Command
	case "path":
		return &rule.Path
	case "host":
		return &rule.Host
	case "event":
		return &rule.Event
	case "until":
		return &rule.Until
	case "reason":
		return &rule.Reason
	}
	if name == "status" {
		return &rule.Status
	}
	return [...]*string{&rule.Action, &rule.Identity, &rule.Role, &rule.Method, &rule.Actor, &rule.Repo, &rule.Branch, &rule.Args, &rule.Ref}[slices.Index(fieldNames[:], name)]
}

// flag returns the rule's true/false field a [[rule]] key sets.
func (rule *Rule) flag(name string) **bool {
	if name == "delete" {
		return &rule.Delete
	}
	return &rule.Force
}

// problem is what is wrong with one field of a rule.
type problem struct{ field, what string }

// problems checks the rule's decision and matchers.
func (rule *Rule) problems() []problem {
	var out []problem
	switch rule.Decision {
	case Allow, Deny, Confirm, Ask, Block:
	case "":
		out = append(out, problem{"decision", `no decision: give decision = "allow", "deny", "ask" or "confirm" ("block" for a gate)`})
	default:
		out = append(out, problem{"decision", fmt.Sprintf("decision %q is not allow, deny, ask or confirm (or block, for a gate)", rule.Decision)})
	}
	out = append(out, rule.toolProblems()...)
	for i, pattern := range rule.patterns() {
		if pattern == "" {
			continue
		}
		if err := checkGlob(pattern); err != nil {
			out = append(out, problem{fieldNames[i], fmt.Sprintf("%s %q %v", fieldNames[i], pattern, err)})
		}
	}
	if rule.Actor != "" && checkGlob(rule.Actor) == nil && !matchGlob(rule.Actor, "agent") && !matchGlob(rule.Actor, "human") {
		out = append(out, problem{"actor", fmt.Sprintf("actor %q matches neither agent nor human", rule.Actor)})
	}
	return out
}

// Validate reports what is wrong with a policy built in code, as Parse
// does for a file: a missing or unknown decision, a malformed glob, an
// actor that matches neither agent nor human. Rules are named by their
// position and Line.
func (p *Policy) Validate() error {
	if p == nil {
		return nil
	}
	var errs []error
	for i := range p.Rules {
		rule := &p.Rules[i]
		for _, pr := range rule.problems() {
			errs = append(errs, &Error{Source: p.Source, Line: rule.Line, Rule: i + 1, Err: fmt.Errorf("[[rule]] %d (%q): %s", i+1, rule.Name, pr.what)})
		}
	}
	return errors.Join(errs...)
}
