package policy

// Handoff is the action kind rules name to match a voyage's handoff:
// the change of the identity its later entries are recorded as, and
// whose credentials its later actions use.
const Handoff = "handoff"

// BuiltinSource names helm's built-in rules in messages.
const BuiltinSource = "helm's built-in rules"

// Builtin returns helm's built-in rules. They decide what no rule of the
// policies in force matches: a rule of the home's (or the system's)
// policy that matches the same request decides instead, so a policy
// loosens a built-in rule by allowing what it denies, in the one list
// of rules, checked by the same code (CheckWithBuiltin,
// ExplainWithBuiltin).
//
// The one rule today: a voyage is handed to another identity by a
// person. An agent that could hand a voyage off would choose whose
// credentials its later actions run with; the method must be exactly
// "human" (Request.Actor), however else it is spelled.
func Builtin() *Policy {
	return &Policy{Source: BuiltinSource, Rules: []Rule{{
		Name:     "a person hands a voyage off",
		Decision: Deny,
		Action:   Handoff,
		Actor:    "agent",
		Reason:   "only a person (method human) hands a voyage to another identity, unless a rule of the policy allows it",
	}}}
}

// CheckWithBuiltin returns p's verdict on rs (CheckAll) when a rule of
// p matched, and otherwise the built-in rules' verdict (Builtin). A nil
// policy leaves every request to the built-in rules.
func (p *Policy) CheckWithBuiltin(rs []Request) Verdict {
	if v := p.CheckAll(rs); v.Rule != nil {
		return v
	}
	return Builtin().CheckAll(rs)
}

// ExplainWithBuiltin explains r as CheckWithBuiltin decides it: p's
// rules (Explain), then, when none of them matched, the built-in rules,
// each trace naming BuiltinSource.
func (p *Policy) ExplainWithBuiltin(r Request) []Trace {
	traces := p.Explain(r)
	if p.Check(r).Rule != nil {
		return traces
	}
	for _, t := range Builtin().Explain(r) {
		t.Source = BuiltinSource
		traces = append(traces, t)
	}
	return traces
}
