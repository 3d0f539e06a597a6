package helm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/policy"
	"github.com/helmlog/helm/projection"
)

// The guard: the home's policy (Options.Policy) is checked before an
// action's intent is recorded, and before a command mark runs. A refusal
// is recorded as a refused action, an entry of the story naming the rule,
// and returned as an error matching ErrRefused (ErrNeedsConfirmation for a
// rule that asks for confirmation the caller did not give). The guard
// stops mistakes; a caller that chooses its own identity, or its own
// policy, passes it.

// Targeted is an Action that names what it acts on (the actions
// package's do). An Action that is not is matched by its kind and who
// performs it alone.
type Targeted interface {
	Target(ctx context.Context) (logbook.ActionTarget, error)
}

// ObserveCommand is the action kind guard rules name to match command
// marks: the command's program and arguments are its arguments.
const ObserveCommand = "observe-command"

// guard checks an action of kind, with params, target and who, against
// the home's policy. A refusal is recorded (a refused action entry) and
// returned as the error of op; nil means it may go ahead.
func (v *Voyage) guard(ctx context.Context, op, kind string, params json.RawMessage, target logbook.ActionTarget, who logbook.Who, why string, confirmed bool) error {
	p := policy.WithDefaults(v.home.opts.Policy) // helm's built-in rules under the policy's
	w := who
	if w.Identity == "" {
		v.mu.Lock()
		w.Identity = v.st.Voyage.CurrentIdentity() // as resolveWho will record it
		v.mu.Unlock()
	}
	verdict := p.CheckAll(PolicyRequests(kind, target, w))
	sentinel := ErrRefused
	switch {
	case verdict.Decision == policy.Allow, verdict.Decision == policy.Confirm && confirmed:
		return nil
	case verdict.Decision == policy.Confirm:
		sentinel = ErrNeedsConfirmation
	}
	rule := verdict.RuleName()
	id := v.home.opts.NewID().String()
	_, err := v.commit(ctx, op, func(st *projection.State, _ stower) ([]*projection.Event, error) {
		if err := checkActive(st); err != nil {
			return nil, err
		}
		w, err := resolveWho(st, who, true)
		if err != nil {
			return nil, err
		}
		return []*projection.Event{{Type: projection.ActionRefused, Who: w, Action: &logbook.ActionRecord{
			ID: id, Kind: kind, Params: params, Why: why, Rule: rule, Error: verdict.String(),
		}}}, nil
	})
	if err != nil {
		return err
	}
	h := hint.Hint{Kind: hint.Policy, Text: "do it another way, or ask whoever keeps " + verdict.Source + " to change the rule"}
	if verdict.Source == policy.DefaultsSource {
		h.Text = "ask a person to do it (method human); only a rule of the system policy (root's) can let an agent do it, not one of the home's"
	}
	if sentinel == ErrNeedsConfirmation {
		h = hint.Hint{Kind: hint.Confirm, Text: "confirm the action (PerformOptions.Confirmed, ObserveOptions.Confirmed) once a person has agreed to it"}
	}
	return v.fail(op, fmt.Errorf("%w: %s; the refusal is recorded, nothing was run", sentinel, verdict), h)
}

// guardCommand checks a command mark against the policy before it runs.
func (v *Voyage) guardCommand(ctx context.Context, op string, m marks.Mark, who logbook.Who, confirmed bool) error {
	c, ok := m.(*marks.Command)
	if !ok || v.home.opts.Policy == nil {
		return nil
	}
	params, err := marks.Marshal(m)
	if err != nil {
		return v.fail(op, fmt.Errorf("%w: %v", ErrInvalid, err), hint.Hint{})
	}
	args := append([]string{c.Program}, c.Args...)
	return v.guard(ctx, op, ObserveCommand, params, logbook.ActionTarget{Args: args}, who, "", confirmed)
}

// PolicyRequests are what the guard checks for an action of kind
// performed by who on target: one request for each repository it
// reaches (Repo, then Repos) and each ref it changes (Refs), the
// requests a policy's CheckAll takes and its Explain takes one by one.
// A ref's request names its branch (a ref under refs/heads/) or none.
func PolicyRequests(kind string, target logbook.ActionTarget, who logbook.Who) []policy.Request {
	base := policy.Request{Action: kind, Identity: who.Identity, Role: who.Role, Method: who.Method,
		Repo: target.Repo, Branch: target.Branch, Args: target.Args}
	repos := append([]string{target.Repo}, target.Repos...)
	var out []policy.Request
	for _, repo := range repos {
		r := base
		r.Repo = repo
		if len(target.Refs) == 0 {
			out = append(out, r)
			continue
		}
		for _, u := range target.Refs {
			r.Ref, r.Force, r.Delete = u.Ref, u.Force, u.Delete
			r.Branch, _ = strings.CutPrefix(u.Ref, "refs/heads/")
			if r.Branch == u.Ref {
				r.Branch = ""
			}
			out = append(out, r)
		}
	}
	return out
}
