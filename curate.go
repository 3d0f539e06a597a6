package helm

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/policy"
	"github.com/helmlog/helm/projection"
)

// Curation: jettison and reduce change what a voyage keeps, not what
// happened, so they are allowed on a voyage of any status, a closed one
// (completed, failed, cancelled) included, which stays closed with its
// outcome. They are guarded as actions are: each is a policy request
// (action "jettison" or "reduce", status the voyage's), checked against
// the home's rules (Options.Policy) with helm's built-in rules under
// them (policy.WithDefaults): by default an agent (a method other than
// human) may not curate a closed voyage, so that it does not prune the
// evidence of its own finished work. Only a rule of a policy marked
// policy.System can loosen that; a refusal is recorded in the story as
// a refused action naming the rule, as the guard records refusals.

// Curation kinds, as guard rules name them (action = "jettison").
const (
	curateJettison = "jettison"
	curateReduce   = "reduce"
)

// curationRefused is a curation the guard refused: the verdict, once
// the refusal is recorded.
type curationRefused struct{ verdict policy.Verdict }

// checkCuration decides, on the views, whether who may curate (kind)
// the artifact hash: nil when the rules allow it, else the refused
// action event to record in its place (refused says why). params are
// what the refusal records of the request; why is the reason given.
func (v *Voyage) checkCuration(st *projection.State, kind, hash string, params any, who logbook.Who, why string, refused *curationRefused) ([]*projection.Event, error) {
	w := who
	if w.Identity == "" {
		w.Identity = st.Voyage.CurrentIdentity()
	}
	reqs := PolicyRequests(kind, logbook.ActionTarget{Args: []string{hash}}, w)
	status := string(projection.NormalStatus(st.Voyage.Status, st.Voyage.Outcome))
	for i := range reqs {
		reqs[i].Status = status
	}
	verdict := policy.WithDefaults(v.home.opts.Policy).CheckAll(reqs)
	if verdict.Decision == policy.Allow {
		return nil, nil
	}
	w, err := resolveWho(st, who, true) // a refusal is an entry: who took it, in full
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	refused.verdict = verdict
	return []*projection.Event{{Type: projection.ActionRefused, Who: w, Action: &logbook.ActionRecord{
		ID: v.home.opts.NewID().String(), Kind: kind, Params: raw, Why: why, Rule: verdict.RuleName(), Error: refusalText(verdict),
	}}}, nil
}

// foldFromLog folds the views anew from the log when they came from a
// snapshot: a snapshot is a cache the recorded agent can rewrite (its
// checksums recomputed), and a view saying a closed voyage is active
// would let the agent curate its evidence, one saying an artifact was
// jettisoned would have compaction reclaim its bytes. Curation and
// compaction are rare; the views they decide on are the log's.
func (v *Voyage) foldFromLog(ctx context.Context, op string) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.snapSeq == 0 && v.snapFile == nil {
		return nil
	}
	if err := v.fold(v.logScan(ctx)); err != nil {
		return v.fail(op, err, hint.Hint{})
	}
	return nil
}

// refusalText says what the guard decided, with the rule's reason.
func refusalText(verdict policy.Verdict) string {
	s := verdict.String()
	if verdict.Rule != nil && verdict.Rule.Reason != "" {
		s += ": " + verdict.Rule.Reason
	}
	return s
}

// refusedError is the error of a curation the guard refused, whose
// refusal is recorded.
func (v *Voyage) refusedError(op string, r *curationRefused) error {
	sentinel := ErrRefused
	if r.verdict.Decision == policy.Confirm {
		sentinel = ErrNeedsConfirmation // the library offers no confirmation of a curation
	}
	h := hint.Hint{Kind: hint.Policy, Text: "ask a person to do it (method human), or ask whoever keeps " + r.verdict.Source + " to change the rule"}
	if r.verdict.Source == policy.DefaultsSource {
		h.Text = "ask a person to do it (method human); only a rule of the system policy (root's) can let an agent do it, not one of the home's"
	}
	return v.fail(op, fmt.Errorf("%w: %s; the refusal is recorded, the artifact is kept as it was", sentinel, refusalText(r.verdict)), h)
}

// curatedBy returns the event that jettisoned or reduced the artifact
// hash last (nil when none did), read from the log: the artifact index
// keeps what became of an artifact, not who did it or when.
func (v *Voyage) curatedBy(ctx context.Context, hash string) (*Event, error) {
	var found *Event
	for e, err := range v.Events(ctx, 1) {
		if err != nil {
			return nil, err
		}
		if e.Artifact == nil {
			continue
		}
		switch {
		case e.Type == projection.ArtifactJettisoned && e.Artifact.Hash == hash,
			e.Type == projection.ArtifactReduced && e.Artifact.DerivedFrom == hash:
			found = &e
		case e.Type == projection.ArtifactStowed && e.Artifact.Hash == hash:
			found = nil // stowed again since
		}
	}
	return found, nil
}

// goneText says what became of an artifact that is no longer read: who
// jettisoned or reduced it, when, and why or to what.
func goneText(a *projection.Artifact, e *Event) string {
	var s string
	switch a.Status {
	case projection.Jettisoned:
		s = "it was jettisoned"
	case projection.Reduced:
		s = "it was reduced to artifact " + a.ReducedTo
	default:
		return "it is " + string(a.Status)
	}
	if e != nil {
		s += fmt.Sprintf(" by %s (role %s, method %s) at %s", e.Who.Identity, orDash(e.Who.Role), orDash(e.Who.Method), stampOf(e.At))
		if a.Status == projection.Reduced && e.Artifact.Method != "" {
			s += ", the summary made by " + e.Artifact.Method
		}
	}
	if a.Status == projection.Jettisoned && a.Reason != "" {
		s += ", because: " + a.Reason
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
