package policy

import (
	"slices"
	"sync"
)

// helm's built-in rules: what holds when no rule the recorded agent
// cannot change says otherwise. They are rules of the same language,
// checked by the same code and explained by Explain; WithDefaults puts
// them under a policy.

// DefaultsSource is the Source of helm's built-in rules, as messages name
// it: `denied by rule "..." (helm's built-in rules:3)`.
const DefaultsSource = "helm's built-in rules"

// Handoff is the action kind rules name to match a voyage's handoff:
// the change of the identity its later entries are recorded as, and
// whose credentials its later actions use.
const Handoff = "handoff"

// defaultsText is helm's built-in rules. Curation after completion: the
// evidence of a closed voyage is jettisoned or reduced by a person, so
// that an agent does not prune the record of its own finished work.
// Handoff: a voyage is handed to another identity by a person, so that
// an agent does not choose whose credentials its later actions run
// with.
const defaultsText = `[[rule]]
name = "a person jettisons a closed voyage's evidence"
action = "jettison"
status = "closed"
actor = "agent"
decision = "deny"
reason = "an agent does not prune the evidence of a closed voyage; a person may, or a system policy rule may allow it"

[[rule]]
name = "a person reduces a closed voyage's evidence"
action = "reduce"
status = "closed"
actor = "agent"
decision = "deny"
reason = "an agent does not prune the evidence of a closed voyage; a person may, or a system policy rule may allow it"

[[rule]]
name = "a person hands a voyage off"
action = "handoff"
actor = "agent"
decision = "deny"
reason = "only a person (method human) hands a voyage to another identity, unless a system policy rule allows it"
`

// statusClasses are the status patterns that name a class of statuses:
// open (may still change) and closed (ended for good).
var statusClasses = map[string][]string{
	"open":   {"active", "blocked", "partial"},
	"closed": {"completed", "failed", "cancelled"},
}

var defaults = sync.OnceValue(func() *Policy {
	p, err := Parse([]byte(defaultsText), DefaultsSource)
	if err != nil {
		panic("policy: helm's built-in rules do not parse: " + err.Error())
	}
	return p
})

// Defaults returns helm's built-in rules: an agent (a method other than
// human) may not hand a voyage to another identity, nor jettison or
// reduce an artifact of a closed voyage (completed, failed or
// cancelled). The caller must not change it.
func Defaults() *Policy { return defaults() }

// System returns p marked as a system policy: rules the recorded agent
// cannot change (a root-owned file, say), the only ones that may loosen
// helm's built-in rules (see WithDefaults). A nil policy stays nil.
func System(p *Policy) *Policy {
	if p == nil {
		return nil
	}
	q := *p
	q.system = true
	return &q
}

// WithDefaults returns p with helm's built-in rules (Defaults) under it.
// They hold whatever a policy the agent could change says: a rule of
// the system policy (see System), tried first, decides what it matches,
// so a system rule may loosen them; any other policy's rules are
// stacked over them (Stack), and can tighten them, never loosen them.
// A nil policy gives the built-in rules alone.
func WithDefaults(p *Policy) *Policy {
	d := Defaults()
	switch {
	case p == nil:
		return d
	case p.layers == nil && p.system:
		return withFallback(p, d)
	case p.layers == nil:
		return Stack(d, p)
	}
	i := slices.IndexFunc(p.layers, func(l *Policy) bool { return l.system })
	if i < 0 {
		return Stack(append([]*Policy{d}, p.layers...)...)
	}
	layers := slices.Clone(p.layers)
	layers[i] = withFallback(layers[i], d)
	return Stack(layers...)
}

// withFallback returns p whose requests no rule of p matches are decided
// by fallback.
func withFallback(p, fallback *Policy) *Policy {
	q := *p
	q.fallback = fallback
	if q.Source == "" {
		q.Source = "policy"
	}
	return &q
}
