package logbook

import (
	"encoding/json"
	"slices"
	"time"
)

// Steps are what an agent host (Claude Code, Gemini CLI, ...) reported at
// its own tool boundary through its hooks, or what its session log held:
// a person's prompt, a tool call with its input, the guard's decision and
// its result, a permission request, a notification, a compaction, a
// subagent, the end of a turn or of the session. helm did not do them; it
// heard them.

// StepKind names what a step was.
type StepKind string

// Step kinds.
const (
	// StepPrompt is a person's prompt to the agent (Text).
	StepPrompt StepKind = "prompt"
	// StepTool is a tool call: its tool, input, the guard's decision
	// and, once it ran, its result.
	StepTool StepKind = "tool"
	// StepPermission is a permission request the host showed (or would
	// have shown) for a tool call, and its decision.
	StepPermission StepKind = "permission"
	// StepNotification is a notification the host sent (Text).
	StepNotification StepKind = "notification"
	// StepCompaction is a compaction of the agent's context (Text: its
	// trigger, "manual" or "auto").
	StepCompaction StepKind = "compaction"
	// StepSubagent is a subagent's start or stop (Text: its type; the
	// subagent's own steps are in its sub-voyage, named by Voyage).
	StepSubagent StepKind = "subagent"
	// StepMessage is the agent's answer at the end of a turn (Text), and
	// the decision of a gate that held it, if one did.
	StepMessage StepKind = "message"
	// StepSession is the session starting, resuming or ending (Text: the
	// host's source or reason).
	StepSession StepKind = "session"
)

// Step is one step of an agent's session. Agent names the host
// ("claude-code"), Session its session id, and ID the host's id of the
// step (a tool call's tool_use_id, a prompt's id), which ties a tool
// call's result to its call. Text is what a person reads of it: a
// prompt, a Bash command, an edit as a unified diff, a URL. Input is the
// tool's input as the host sent it (redacted like all text).
type Step struct {
	Kind    StepKind        `json:"kind"`
	Agent   string          `json:"agent"`
	Session string          `json:"session,omitempty"`
	ID      string          `json:"id,omitempty"`
	Tool    string          `json:"tool,omitempty"`
	Input   json.RawMessage `json:"input,omitempty"`
	Text    string          `json:"text,omitempty"`
	// Voyage is the sub-voyage a subagent step opened or closed.
	Voyage   string        `json:"voyage,omitempty"`
	Decision *StepDecision `json:"decision,omitempty"`
	Result   *StepResult   `json:"result,omitempty"`
	Usage    *Usage        `json:"usage,omitempty"`
}

// StepDecision is what the guard decided at the tool boundary: allow,
// deny (Reason is what the agent was shown) or ask, and the rule that
// decided, with where it is written ("no rm -rf" (policy.toml:3)); Rule
// is empty when no rule matched and the host's own default held. For a
// gate at the end of a turn, "block" holds the agent with Reason.
type StepDecision struct {
	Verdict string `json:"verdict"`
	Rule    string `json:"rule,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// StepResult is what a tool call returned: its output (inline while it is
// short) or the artifact holding it (evidence), whether it failed, and how
// long it ran.
type StepResult struct {
	Output   string        `json:"output,omitempty"`
	Artifact string        `json:"artifact,omitempty" redact:"address"`
	Failed   bool          `json:"failed,omitempty"`
	Duration time.Duration `json:"duration,omitempty"`
}

// Usage is what a step cost, where the host reported it: the model, its
// tokens (input, output, read from and written to the prompt cache), the
// cost in US dollars and how long the model took.
type Usage struct {
	Model            string        `json:"model,omitempty"`
	InputTokens      int64         `json:"input_tokens,omitempty"`
	OutputTokens     int64         `json:"output_tokens,omitempty"`
	CacheReadTokens  int64         `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64         `json:"cache_write_tokens,omitempty"`
	CostUSD          float64       `json:"cost_usd,omitempty"`
	Duration         time.Duration `json:"duration,omitempty"`
}

// Add sums o into u; Model is kept when both name the same one and
// cleared when they differ.
func (u *Usage) Add(o Usage) {
	if u.InputTokens == 0 && u.OutputTokens == 0 && u.CacheReadTokens == 0 && u.CacheWriteTokens == 0 && u.CostUSD == 0 && u.Duration == 0 && u.Model == "" {
		u.Model = o.Model
	} else if u.Model != o.Model {
		u.Model = ""
	}
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CacheReadTokens += o.CacheReadTokens
	u.CacheWriteTokens += o.CacheWriteTokens
	u.CostUSD += o.CostUSD
	u.Duration += o.Duration
}

// StepStats sums the steps agent hosts reported (package transcript's
// stats and package report say them): the prompts, the tool
// calls (and among them those the guard denied and those that failed),
// and what the steps cost where the hosts said: tokens by kind, dollars,
// and the time the model took.
type StepStats struct {
	Prompts          int           `json:"prompts"`
	ToolCalls        int           `json:"tool_calls"`
	DeniedCalls      int           `json:"denied_calls"`
	FailedCalls      int           `json:"failed_calls"`
	InputTokens      int64         `json:"input_tokens"`
	OutputTokens     int64         `json:"output_tokens"`
	CacheReadTokens  int64         `json:"cache_read_tokens"`
	CacheWriteTokens int64         `json:"cache_write_tokens"`
	CostUSD          float64       `json:"cost_usd"`
	ModelTime        time.Duration `json:"model_time_ns"`
}

// Add counts a step as the story holds it (Entry.Step): its
// kind, its decision, and its result and usage, a call's result included.
func (a *StepStats) Add(s *Step) {
	switch s.Kind {
	case StepPrompt:
		a.Prompts++
	case StepTool:
		a.ToolCalls++
		if s.Decision != nil && s.Decision.Verdict == "deny" {
			a.DeniedCalls++
		}
	}
	a.AddResult(s)
}

// AddResult counts what a call's result brings when it is attached to
// the call later (a step-finished event's step): whether it failed, and
// its usage.
func (a *StepStats) AddResult(s *Step) {
	if s.Kind == StepTool && s.Result != nil && s.Result.Failed {
		a.FailedCalls++
	}
	if u := s.Usage; u != nil {
		a.InputTokens += u.InputTokens
		a.OutputTokens += u.OutputTokens
		a.CacheReadTokens += u.CacheReadTokens
		a.CacheWriteTokens += u.CacheWriteTokens
		a.CostUSD += u.CostUSD
		a.ModelTime += u.Duration
	}
}

// Clone returns a copy of s that shares no memory with it.
func (s *Step) Clone() *Step {
	c := *s
	c.Input = slices.Clone(s.Input)
	if s.Decision != nil {
		d := *s.Decision
		c.Decision = &d
	}
	if s.Result != nil {
		r := *s.Result
		c.Result = &r
	}
	if s.Usage != nil {
		u := *s.Usage
		c.Usage = &u
	}
	return &c
}
