package codex

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"time"

	"github.com/helmlog/helm/agent"
	"github.com/helmlog/helm/agent/internal/hookio"
	"github.com/helmlog/helm/agent/internal/jsonl"
	"github.com/helmlog/helm/logbook"
)

// MaxLine bounds one line of a rollout (16 MiB).
const MaxLine = jsonl.MaxLine

// LineError is a rollout line that could not be read: its number (from
// 1) and why.
type LineError = jsonl.LineError

// ErrNotRollout is a file that is not a Codex CLI rollout.
var ErrNotRollout = errors.New("not a Codex CLI rollout")

// Transcript reads a Codex CLI rollout from r into helm's agent events,
// in order: each prompt of the user (Prompt; the context Codex adds,
// <environment_context> and <user_instructions>, is not one), each tool
// call (PreTool, then PostTool with its output: a shell call's argv as
// its command, apply_patch with its patch, local shell calls and web
// searches too), the agent's answer at the end of each turn (Stop), and
// each compaction (Compaction, with Codex's summary). token_count events
// give usage (the turn's model; tokens from last_token_usage, or the
// difference of total_token_usage): on the first call the model's
// response asked for, else on the turn's Stop. Each event has the time of
// its line.
//
// The whole of r is read first: a line that is not JSON, longer than
// MaxLine, or not Codex's is an error (a *LineError naming it) and the
// only value yielded.
func Transcript(r io.Reader) iter.Seq2[agent.Event, error] {
	events, err := ReadTranscript(r)
	return func(yield func(agent.Event, error) bool) {
		if err != nil {
			yield(agent.Event{}, err)
			return
		}
		for _, ev := range events {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

type rline struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

type rpayload struct {
	Type string `json:"type"`
	// session_meta
	ID         string `json:"id"`
	Cwd        string `json:"cwd"`
	CLIVersion string `json:"cli_version"`
	// turn_context
	Model string `json:"model"`
	// response_item
	Role    string `json:"role"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
	Action    *struct {
		Type    string   `json:"type"`
		Command []string `json:"command"`
		Query   string   `json:"query"`
		Workdir string   `json:"working_directory"`
	} `json:"action"`
	// event_msg
	Message string `json:"message"`
	Info    *struct {
		Total *tokens `json:"total_token_usage"`
		Last  *tokens `json:"last_token_usage"`
	} `json:"info"`
}

type tokens struct {
	Input     int64 `json:"input_tokens"`
	Cached    int64 `json:"cached_input_tokens"`
	Output    int64 `json:"output_tokens"`
	Reasoning int64 `json:"reasoning_output_tokens"`
}

func (t tokens) minus(o tokens) tokens {
	return tokens{t.Input - o.Input, t.Cached - o.Cached, t.Output - o.Output, t.Reasoning - o.Reasoning}
}

// ReadTranscript is Transcript as a slice.
func ReadTranscript(r io.Reader) ([]agent.Event, error) {
	lines, err := jsonl.Read(r, "Codex CLI rollout")
	if err != nil {
		return nil, err
	}
	var (
		events   []agent.Event
		session  string
		cwd      string
		model    string
		calls    = map[string]int{} // call_id: its PreTool's index
		answered []int              // the calls of the model's response since the last token_count
		pending  *logbook.Usage     // usage no call took, for the turn's Stop
		total    tokens
		inTurn   bool
		lastText string
		lastAt   time.Time
		prompts  []rline // user_message events: the prompts, when the rollout has them
	)
	parsed := make([]struct {
		l rline
		p rpayload
		n int
	}, 0, len(lines))
	for _, ln := range lines {
		var l rline
		if err := json.Unmarshal(ln.Data, &l); err != nil {
			return nil, &LineError{Line: ln.N, Err: fmt.Errorf("%w: %v", ErrNotRollout, err)}
		}
		if l.Type == "" || len(l.Payload) == 0 {
			what := "has no type and payload"
			if l.Type == "user" || l.Type == "assistant" {
				what = "is a Claude Code transcript line"
			}
			return nil, &LineError{Line: ln.N, Err: fmt.Errorf("%w: the line %s", ErrNotRollout, what)}
		}
		var p rpayload
		if err := json.Unmarshal(l.Payload, &p); err != nil {
			return nil, &LineError{Line: ln.N, Err: fmt.Errorf("%w: its %s payload: %v", ErrNotRollout, l.Type, err)}
		}
		if l.Type == "session_meta" && session == "" {
			if p.ID == "" {
				return nil, &LineError{Line: ln.N, Err: fmt.Errorf("%w: session_meta without an id", ErrNotRollout)}
			}
			session, cwd = p.ID, p.Cwd
		}
		if l.Type == "event_msg" && p.Type == "user_message" {
			prompts = append(prompts, l)
		}
		parsed = append(parsed, struct {
			l rline
			p rpayload
			n int
		}{l, p, ln.N})
	}
	if session == "" {
		return nil, fmt.Errorf("%w: no session_meta line names the session", ErrNotRollout)
	}
	base := func(kind agent.Kind, l rline) agent.Event {
		ev := agent.Event{Agent: Agent, Kind: kind, Session: session, Cwd: cwd}
		if at, err := time.Parse(time.RFC3339Nano, l.Timestamp); err == nil {
			ev.At = at
		}
		return ev
	}
	endTurn := func() {
		if !inTurn || lastText == "" && pending == nil {
			inTurn, answered = false, nil
			return
		}
		ev := base(agent.Stop, rline{})
		ev.At, ev.Text, ev.Usage = lastAt, lastText, pending
		events = append(events, ev)
		inTurn, lastText, pending, answered = false, "", nil, nil
	}
	prompt := func(l rline, text string) {
		endTurn()
		ev := base(agent.Prompt, l)
		ev.Text = text
		events = append(events, ev)
	}
	call := func(l rline, id, name string, input json.RawMessage) {
		inTurn = true
		ev := base(agent.PreTool, l)
		ev.Tool = &agent.ToolCall{ID: id, Name: name, Input: input}
		calls[id] = len(events)
		answered = append(answered, len(events))
		events = append(events, ev)
	}
	result := func(l rline, id string, out json.RawMessage) {
		i, ok := calls[id]
		if !ok {
			return // an output whose call this rollout does not hold
		}
		pre := events[i].Tool
		tc := &agent.ToolCall{ID: id, Name: pre.Name, Input: pre.Input, Response: hookio.Raw(out)}
		_, _, tc.Failed = output(tc.Response)
		ev := base(agent.PostTool, l)
		ev.Tool = tc
		events = append(events, ev)
	}
	for _, x := range parsed {
		l, p := x.l, x.p
		switch l.Type {
		case "turn_context":
			if p.Model != "" {
				model = p.Model
			}
			if p.Cwd != "" {
				cwd = p.Cwd
			}
		case "compacted":
			endTurn()
			ev := base(agent.Compaction, l)
			ev.Text = p.Message
			events = append(events, ev)
		case "event_msg":
			switch p.Type {
			case "user_message":
				prompt(l, p.Message)
			case "token_count":
				if p.Info == nil {
					continue
				}
				var t tokens
				switch {
				case p.Info.Last != nil:
					t = *p.Info.Last
				case p.Info.Total != nil:
					t = p.Info.Total.minus(total)
				default:
					continue
				}
				if p.Info.Total != nil {
					total = *p.Info.Total
				}
				u := &logbook.Usage{Model: model, InputTokens: max(t.Input-t.Cached, 0), CacheReadTokens: max(t.Cached, 0), OutputTokens: max(t.Output, 0)}
				if len(answered) > 0 {
					ev := &events[answered[0]]
					if ev.Usage == nil {
						ev.Usage = u
					} else {
						ev.Usage.Add(*u)
					}
				} else if pending == nil {
					pending = u
				} else {
					pending.Add(*u)
				}
				answered = nil
			}
		case "response_item":
			switch p.Type {
			case "message":
				var parts []string
				for _, c := range p.Content {
					if c.Text != "" {
						parts = append(parts, c.Text)
					}
				}
				text := strings.Join(parts, "\n")
				switch p.Role {
				case "user":
					if len(prompts) == 0 && !isContext(text) {
						prompt(l, text)
					}
				case "assistant":
					inTurn, lastText = true, text
					if at, err := time.Parse(time.RFC3339Nano, l.Timestamp); err == nil {
						lastAt = at
					}
				}
			case "function_call":
				input, err := callInput(p.Name, p.Arguments)
				if err != nil {
					return nil, &LineError{Line: x.n, Err: fmt.Errorf("%w: function_call %s: %v", ErrNotRollout, p.CallID, err)}
				}
				name := p.Name
				switch name {
				case "container.exec", "shell_command", "local_shell":
					name = "shell"
				}
				if name == "shell" {
					name, input = shellOrPatch(input)
				}
				call(l, p.CallID, name, input)
			case "custom_tool_call":
				input, _ := json.Marshal(map[string]string{"input": p.Input})
				call(l, p.CallID, p.Name, input)
			case "local_shell_call":
				if p.Action == nil {
					continue
				}
				in := map[string]any{"command": p.Action.Command}
				if p.Action.Workdir != "" {
					in["workdir"] = p.Action.Workdir
				}
				input, _ := json.Marshal(in)
				name, input := shellOrPatch(input)
				call(l, p.CallID, name, input)
			case "web_search_call":
				if p.Action == nil {
					continue
				}
				input, _ := json.Marshal(map[string]string{"query": p.Action.Query})
				id := fmt.Sprintf("web_search-%d", x.n)
				call(l, id, "web_search", input)
				result(l, id, nil)
			case "function_call_output", "custom_tool_call_output":
				result(l, p.CallID, p.Output)
			}
		}
	}
	endTurn()
	return events, nil
}

// callInput is a function call's arguments, a JSON object in a string.
func callInput(name, args string) (json.RawMessage, error) {
	if strings.TrimSpace(args) == "" {
		return nil, nil
	}
	if !json.Valid([]byte(args)) {
		if name == "apply_patch" {
			b, _ := json.Marshal(map[string]string{"input": args})
			return b, nil
		}
		return nil, errors.New("its arguments are not JSON")
	}
	return hookio.Object(json.RawMessage(args), "arguments")
}

// shellOrPatch: a shell call whose argv is ["apply_patch", PATCH] is an
// apply_patch with its patch.
func shellOrPatch(input json.RawMessage) (string, json.RawMessage) {
	var in struct {
		Command []string `json:"command"`
	}
	if json.Unmarshal(input, &in) == nil && len(in.Command) == 2 && (in.Command[0] == "apply_patch" || in.Command[0] == "applypatch") {
		b, _ := json.Marshal(map[string]string{"input": in.Command[1]})
		return "apply_patch", b
	}
	return "shell", input
}

// isContext says a user message is context Codex adds, not a prompt.
func isContext(text string) bool {
	t := strings.TrimSpace(text)
	for _, p := range []string{"<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<user_shell_command>", "<turn_aborted>"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return t == ""
}
