package gemini

import (
	"github.com/helmlog/helm/agent"
	"github.com/helmlog/helm/agent/internal/hookio"
)

type output struct {
	Decision      string `json:"decision,omitempty"`
	Reason        string `json:"reason,omitempty"`
	SystemMessage string `json:"systemMessage,omitempty"`
}

// Answer is what the hook prints on standard output for decision d on
// event ev, and its exit status (always 0: Gemini CLI parses the JSON
// then).
//
//   - PreTool (BeforeTool): {"decision":"allow"}, {"decision":"ask"}, or
//     {"decision":"deny","reason":...}, which Gemini CLI sends the agent
//     as the tool's error. Any other verdict but "" is a deny: a guard
//     never fails open.
//   - Stop (AfterAgent): {"decision":"deny","reason":...} rejects the
//     answer and sends the reason as a new prompt, for any verdict but
//     allow, ask and "".
//   - Other events take no decision: nothing.
func Answer(ev agent.Event, d agent.Decision) ([]byte, int) {
	return AnswerWithMessage(ev, d, "")
}

// AnswerWithMessage is Answer with message shown to the user
// (systemMessage): what the hook says when helm could not record.
func AnswerWithMessage(ev agent.Event, d agent.Decision, message string) ([]byte, int) {
	out := output{SystemMessage: message}
	reason := d.Reason
	if reason == "" {
		reason = "helm's guard: " + d.Verdict
	}
	switch {
	case ev.Kind == agent.PreTool && d.Verdict != "":
		switch d.Verdict {
		case agent.Allow, agent.Ask:
			out.Decision, out.Reason = d.Verdict, d.Reason
		default:
			out.Decision, out.Reason = agent.Deny, reason
		}
	case ev.Kind == agent.Stop && d.Verdict != "" && d.Verdict != agent.Allow && d.Verdict != agent.Ask:
		out.Decision, out.Reason = agent.Deny, reason
	}
	if out == (output{}) {
		return nil, 0
	}
	return hookio.Answer(out), 0
}
