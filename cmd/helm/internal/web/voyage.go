package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

// The voyage page: the voyage's header, a vertical timeline of its
// lifecycle and logbook entries (bearings with their sealed observations,
// challenges as a diff, actions with their results, notes, judgements),
// and the slate beside it. The page holds the sequence number it shows,
// from which live.js asks /events for what comes next.

type voyagePage struct {
	Title  string
	Info   helm.VoyageInfo
	Parent *helm.VoyageInfo
	Subs   []helm.VoyageInfo
	Items  []item
	Slate  slateView
	Counts helm.LogbookCounts
	// Agents are the agent totals of the voyage's steps (prompts, tool
	// calls, tokens, dollars, model time), as phrases; none when no
	// agent host reported a step.
	Agents []string
	Torn   *helm.Cut
}

// slateView is the side panel: the observations not sealed yet.
type slateView struct {
	Observations []obsView
}

// item is one mark on the timeline: a logbook entry or a change of the
// voyage's status. DOM is its element's id, which live updates replace.
type item struct {
	DOM   string
	Kind  string // bearing, action, note, judgement, started, completed, resumed, ...
	Icon  string
	Title string
	At    time.Time
	Who   logbook.Who
	// Mark qualifies the item: failed, refused, unknown (an action's
	// outcome), challenged (a bearing).
	Mark string

	Bearing   *bearingView
	Action    *actionView
	Note      string
	Judgement *logbook.Judgement
	Step      *stepView
	Reason    string // a change of status: the summary or the reason
}

type bearingView struct {
	Reading      string
	Source       logbook.Source
	Observations []obsView
	Challenges   []challengeView
}

// challengeView is one challenge of a reading: the reading before, the
// one after, the feedback, and the words that changed.
type challengeView struct {
	Feedback string
	At       time.Time
	By       logbook.Who
	Old, New string
	Diff     []diffOp
}

type actionView struct {
	Kind     string
	Status   logbook.ActionStatus
	Describe string
	Why      string
	Error    string
	Rule     string
	DoneAt   time.Time
	Result   *logbook.ActionResult
	Link     string // the result's URL, when it is an http(s) one
	Params   string // the parameters, indented JSON
}

func (s *Server) voyagePage(w http.ResponseWriter, r *http.Request) {
	v, err := s.openVoyage(r)
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	defer v.Close()
	p := voyagePage{Info: v.Info(), Torn: v.Storage().Torn}
	p.Title = p.Info.Intent
	p.Counts = v.Info().Counts
	b := &budget{left: pageSightingBudget}
	var agents logbook.StepStats
	if p.Items, err = s.timeline(r.Context(), v, p.Info, b, &agents); err != nil {
		s.fail(w, r, 0, err)
		return
	}
	p.Agents = agentFigures(agents)
	p.Slate = s.slate(r.Context(), v, b)
	// Relatives: the parent and the sub-voyages, as far as they can be
	// listed (a damaged one is on the voyages page).
	all, _ := s.home.List(r.Context(), nil)
	for i := range all {
		switch {
		case all[i].ID == p.Info.Parent:
			p.Parent = &all[i]
		case all[i].Parent == p.Info.ID:
			p.Subs = append(p.Subs, all[i])
		}
	}
	s.render(w, r, http.StatusOK, "voyage", p)
}

// timeline merges the lifecycle and the logbook by time: the start first,
// then each entry, each later change of status placed after the entries
// recorded before it. The agent steps on the way are summed into agents.
func (s *Server) timeline(ctx context.Context, v *helm.Voyage, info helm.VoyageInfo, b *budget, agents *logbook.StepStats) ([]item, error) {
	var out []item
	life := lifecycleItems(info)
	if len(life) > 0 {
		out = append(out, life[0])
		life = life[1:]
	}
	for e, err := range v.Entries(ctx, nil) {
		if err != nil {
			return nil, err
		}
		for len(life) > 0 && life[0].At.Before(e.At) {
			out = append(out, life[0])
			life = life[1:]
		}
		if e.Step != nil {
			agents.Add(e.Step)
		}
		out = append(out, s.entryItem(ctx, v, e, b))
	}
	return append(out, life...), nil
}

// lifecycleItems are the voyage's changes of status as timeline items.
func lifecycleItems(info helm.VoyageInfo) []item {
	var out []item
	for i, t := range info.Lifecycle {
		it := item{DOM: "life-" + itoa(i), At: t.At, Who: t.Who, Reason: t.Reason}
		switch {
		case i == 0:
			it.Kind, it.Icon, it.Title, it.Reason = "started", "▶", "Started", info.Intent
		case t.Status == logbook.StatusActive:
			it.Kind, it.Icon, it.Title = "resumed", "↻", "Resumed"
		default:
			it.Kind, it.Icon, it.Title = string(t.Status), "■", "Completed: "+string(t.Status)
			if t.Status != logbook.StatusCompleted {
				it.Mark = string(t.Status)
			}
		}
		out = append(out, it)
	}
	return out
}

// entryItem renders one logbook entry as a timeline item.
func (s *Server) entryItem(ctx context.Context, v *helm.Voyage, e logbook.Entry, b *budget) item {
	it := item{DOM: "entry-" + itoa(e.N), Kind: string(e.Kind), At: e.At, Who: e.Who}
	switch e.Kind {
	case logbook.EntryBearing:
		it.Icon, it.Title = "◎", "Bearing "+itoa(e.N)
		bv := &bearingView{Reading: e.Bearing.Reading.Text, Source: e.Bearing.Reading.Source}
		for _, o := range e.Bearing.Observations {
			bv.Observations = append(bv.Observations, s.observation(ctx, v, o, it.DOM, b))
		}
		h := e.Bearing.Reading.History
		for i, a := range h {
			next := e.Bearing.Reading.Text
			if i+1 < len(h) {
				next = h[i+1].Text
			}
			bv.Challenges = append(bv.Challenges, challengeView{Feedback: a.ChallengedWith, At: a.ChallengedAt, By: a.ChallengedBy,
				Old: a.Text, New: next, Diff: diffWords(a.Text, next)})
		}
		if len(h) > 0 {
			it.Mark = "challenged"
		}
		it.Bearing = bv
	case logbook.EntryAction:
		a := e.Action
		it.Icon, it.Title = "⚙", "Action "+itoa(e.N)+": "+a.Kind
		av := &actionView{Kind: a.Kind, Status: a.Status, Describe: logbook.DescribeAction(a), Why: a.Why, Error: a.Error,
			Rule: a.Rule, DoneAt: a.DoneAt, Result: a.Result}
		if a.Result != nil {
			if u, err := url.Parse(a.Result.URL); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
				av.Link = u.String()
			}
		}
		if len(a.Params) > 0 {
			var x any
			if json.Unmarshal(a.Params, &x) == nil {
				if pretty, err := json.MarshalIndent(x, "", "  "); err == nil {
					av.Params = string(pretty)
				}
			}
		}
		switch a.Status {
		case logbook.ActionFailed:
			it.Icon, it.Mark = "✗", "failed"
		case logbook.ActionRefused:
			it.Icon, it.Mark = "⊘", "refused"
		case logbook.ActionOutcomeUnknown:
			it.Icon, it.Mark = "?", "unknown"
		}
		it.Action = av
	case logbook.EntryNote:
		it.Icon, it.Title, it.Note = "✎", "Note "+itoa(e.N), e.Note.Text
	case logbook.EntryJudgement:
		j := *e.Judgement
		j.Evidence = slices.Clone(j.Evidence)
		it.Icon, it.Title, it.Judgement = "⚖", "Judgement "+itoa(e.N), &j
	case logbook.EntryPolicy:
		it.Icon, it.Title, it.Note = "§", "Policy "+itoa(e.N), "no guard rules"
		if p := e.Policy; p != nil && p.Digest != "" {
			it.Note = "guard rules " + p.Digest + " from " + strings.Join(p.Sources, ", ")
		}
	case logbook.EntryStep:
		if e.Step == nil {
			it.Icon, it.Title = "•", "Step "+itoa(e.N)
			break
		}
		s.stepItem(ctx, v, e, &it, b)
	case logbook.EntryRechain:
		it.Icon, it.Title, it.Note = "⛓", "Rechain "+itoa(e.N), logbook.DescribeRechain(e.Rechain, e.Who)
	case logbook.EntryHandoff:
		it.Icon, it.Title, it.Note = "⇄", "Handoff "+itoa(e.N), logbook.DescribeHandoff(e.Handoff, e.Who)
	default:
		it.Icon, it.Title = "•", string(e.Kind)+" "+itoa(e.N)
	}
	return it
}

// slate renders the observations on the slate.
func (s *Server) slate(ctx context.Context, v *helm.Voyage, b *budget) slateView {
	var sv slateView
	for i, o := range v.Slate() {
		sv.Observations = append(sv.Observations, s.observation(ctx, v, o, "slate-"+itoa(i), b))
	}
	return sv
}

func itoa(n int) string { return strconv.Itoa(n) }
