package claudecode

import (
	"github.com/helmlog/helm/agent"
	"github.com/helmlog/helm/agent/internal/hookio"
)

// output is Claude Code's hook output: the common systemMessage, the
// decision of Stop and SubagentStop, and hookSpecificOutput.
type output struct {
	Decision           string          `json:"decision,omitempty"`
	Reason             string          `json:"reason,omitempty"`
	SystemMessage      string          `json:"systemMessage,omitempty"`
	HookSpecificOutput *specificOutput `json:"hookSpecificOutput,omitempty"`
}

type specificOutput struct {
	HookEventName            string              `json:"hookEventName"`
	PermissionDecision       string              `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string              `json:"permissionDecisionReason,omitempty"`
	Decision                 *permissionDecision `json:"decision,omitempty"`
}

type permissionDecision struct {
	Behavior string `json:"behavior"`
	Message  string `json:"message,omitempty"`
}

// Answer is what the hook prints on standard output for decision d on
// event ev, and its exit status (always 0: Claude Code reads the JSON
// only then).
//
//   - PreTool: hookSpecificOutput.permissionDecision allow, deny or ask,
//     with d.Reason as permissionDecisionReason. Any other verdict but
//     "" is a deny: a guard never fails open.
//   - Permission (PermissionRequest): hookSpecificOutput.decision with
//     behavior allow, or deny and d.Reason as its message; ask prints
//     nothing, so Claude Code shows its own dialog. Claude Code's own
//     denial (PermissionDenied) takes no decision.
//   - Stop, SubagentStop: {"decision":"block","reason":...} holds the
//     agent for any verdict but allow, ask and "".
//   - Other events take no decision: nothing.
//
// An empty verdict (no rule spoke) prints nothing: Claude Code's own
// permissions decide, as they would without helm.
func Answer(ev agent.Event, d agent.Decision) ([]byte, int) {
	return AnswerWithMessage(ev, d, "")
}

// AnswerWithMessage is Answer with message shown to the user
// (systemMessage): what the hook says when helm could not record the
// event but the agent may go on.
func AnswerWithMessage(ev agent.Event, d agent.Decision, message string) ([]byte, int) {
	out := output{SystemMessage: message}
	reason := d.Reason
	if reason == "" {
		reason = "helm's guard: " + d.Verdict
	}
	switch {
	case ev.Kind == agent.PreTool && d.Verdict != "":
		v := d.Verdict
		if v != agent.Allow && v != agent.Ask {
			v = agent.Deny
		}
		r := d.Reason
		if v == agent.Deny {
			r = reason
		}
		out.HookSpecificOutput = &specificOutput{HookEventName: "PreToolUse", PermissionDecision: v, PermissionDecisionReason: r}
	case ev.Kind == agent.Permission && !isDenied(ev) && d.Verdict != "" && d.Verdict != agent.Ask:
		pd := &permissionDecision{Behavior: agent.Allow}
		if d.Verdict != agent.Allow {
			pd = &permissionDecision{Behavior: agent.Deny, Message: reason}
		}
		out.HookSpecificOutput = &specificOutput{HookEventName: "PermissionRequest", Decision: pd}
	case (ev.Kind == agent.Stop || ev.Kind == agent.SubagentStop) && d.Verdict != "" && d.Verdict != agent.Allow && d.Verdict != agent.Ask:
		out.Decision, out.Reason = agent.Block, reason
	}
	if out == (output{}) {
		return nil, 0
	}
	return hookio.Answer(out), 0
}
