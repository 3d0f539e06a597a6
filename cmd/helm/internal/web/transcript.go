package web

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/transcript"
)

// The transcript page: the events of several voyages (a voyage and its
// sub-voyages, or every voyage) as one timeline, one lane (column) per
// identity, with each main voyage's critical-steps figures drawn as a
// small bar chart (SVG, drawn by the server).

// transcriptMax is the most lines the page shows: the latest ones.
const transcriptMax = 5000

type transcriptPage struct {
	Title   string
	Voyage  *helm.VoyageInfo // the voyage asked for, nil for every voyage
	Lanes   []lane
	Rows    []row
	Cut     int // lines left out, the earliest
	Charts  []chart
	Damaged []damagedRow
	Intents map[string]string
}

type lane struct {
	Identity string
	Roles    []string
}

type row struct {
	At     time.Time
	Voyage string
	Intent string
	Lane   int
	Icon   string
	Kind   string
	Text   string
	Links  []string
	Mark   string // failed, refused
}

func (s *Server) transcriptPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := transcriptPage{Title: "Transcript", Intents: map[string]string{}}
	all, err := s.home.List(ctx, nil)
	var le *helm.ListError
	if errors.As(err, &le) {
		for i, id := range le.Voyages {
			p.Damaged = append(p.Damaged, damagedRow{ID: id, Error: le.Errs[i].Error()})
		}
	} else if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	var ids []string
	if q := r.URL.Query().Get("voyage"); q != "" {
		r.SetPathValue("id", q)
		id, err := s.voyageID(r)
		if err != nil {
			s.fail(w, r, 0, err)
			return
		}
		ids = []string{id}
		for i := range all {
			if all[i].ID == id {
				p.Voyage = &all[i]
				p.Title = "Transcript: " + all[i].Intent
			}
		}
	} else {
		for _, v := range all {
			ids = append(ids, v.ID)
		}
	}
	for _, v := range all {
		p.Intents[v.ID] = v.Intent
	}
	var lines []transcript.Line
	if len(ids) > 0 {
		lines, err = transcript.Read(ctx, s.home, ids, &transcript.Options{Descendants: true})
		if err != nil {
			s.fail(w, r, 0, err)
			return
		}
	}
	for _, st := range transcript.StatsOf(lines) {
		p.Charts = append(p.Charts, chartOf(st))
	}
	// Lanes in the order identities first appear.
	laneOf := map[string]int{}
	for _, l := range lines {
		who := l.Who.Identity
		i, ok := laneOf[who]
		if !ok {
			i = len(p.Lanes)
			laneOf[who] = i
			p.Lanes = append(p.Lanes, lane{Identity: who})
		}
		if l.Who.Role != "" && !slices.Contains(p.Lanes[i].Roles, l.Who.Role) {
			p.Lanes[i].Roles = append(p.Lanes[i].Roles, l.Who.Role)
		}
	}
	if len(lines) > transcriptMax {
		p.Cut = len(lines) - transcriptMax
		lines = lines[p.Cut:]
	}
	for i := range lines {
		l := &lines[i]
		rw := row{At: l.At, Voyage: l.VoyageID, Intent: p.Intents[l.VoyageID], Lane: laneOf[l.Who.Identity], Kind: string(l.Type), Text: l.Describe()}
		rw.Icon, rw.Mark = lineIcon(l)
		for _, k := range l.Links {
			switch k.Rel {
			case transcript.LinkFollowed:
				rw.Links = append(rw.Links, fmt.Sprintf("after bearing %d", k.Entry))
			case transcript.LinkSealed:
				rw.Links = append(rw.Links, "sealed: "+k.Label)
			}
		}
		p.Rows = append(p.Rows, rw)
	}
	s.render(w, r, http.StatusOK, "transcript", p)
}

// lineIcon is the icon of a transcript line's kind of event, and its
// mark when it records a failure or a refusal.
func lineIcon(l *transcript.Line) (icon, mark string) {
	switch l.Type {
	case projection.VoyageStarted:
		return "▶", ""
	case projection.VoyageCompleted:
		if l.Completion != nil && l.Completion.Outcome != projection.OutcomeCompleted {
			return "■", string(l.Completion.Outcome)
		}
		return "■", ""
	case projection.VoyageResumed:
		return "↻", ""
	case projection.Observed, projection.MarkErased, projection.SlateWiped:
		return "◌", ""
	case projection.BearingTaken:
		return "◎", ""
	case projection.ReadingChallenged:
		return "≠", "challenged"
	case projection.ActionIntended, projection.ActionPerformed:
		return "⚙", ""
	case projection.ActionFailed:
		return "✗", "failed"
	case projection.ActionRefused:
		return "⊘", "refused"
	case projection.NoteAdded:
		return "✎", ""
	case projection.Judged:
		return "⚖", ""
	case projection.StepRecorded, projection.StepFinished:
		if l.Step == nil {
			break
		}
		switch {
		case l.Step.Decision != nil && l.Step.Decision.Verdict == "deny":
			return "⊘", "refused"
		case l.Step.Result != nil && l.Step.Result.Failed:
			return "✗", "failed"
		}
		return stepIcon(l.Step.Kind), ""
	}
	return "•", ""
}

// chart is one main voyage's figures as horizontal bars.
type chart struct {
	Main        string
	Intent      string
	Subs        int
	Parallelism string
	Width       int
	Height      int
	BarX        int
	BarH        int
	Bars        []bar
	// Agents are the agent totals of the voyage and its sub-voyages.
	Agents []string
}

type bar struct {
	Label  string
	Value  int
	Class  string
	Y      int // the bar's top
	TextY  int // its label's baseline
	W      int // its length
	ValueX int
}

// Bar chart geometry, in SVG user units.
const (
	chartLabelW = 150
	chartBarMax = 300
	chartBarH   = 16
	chartGap    = 6
)

func chartOf(st transcript.Stats) chart {
	c := chart{Main: st.Main, Intent: st.Intent, Subs: len(st.Subs), Parallelism: fmt.Sprintf("%.2f", st.Parallelism), Agents: agentFigures(st.Agents)}
	c.Bars = []bar{
		{Label: "total steps", Value: st.TotalSteps, Class: "total"},
		{Label: "critical steps", Value: st.CriticalSteps, Class: "critical"},
		{Label: "overhead", Value: st.Overhead, Class: "overhead"},
	}
	for _, m := range st.Crew {
		c.Bars = append(c.Bars, bar{Label: m.Identity, Value: m.Steps, Class: "crew"})
	}
	most := 1
	for _, b := range c.Bars {
		most = max(most, b.Value)
	}
	for i := range c.Bars {
		b := &c.Bars[i]
		b.Y = i * (chartBarH + chartGap)
		b.TextY = b.Y + chartBarH - 4
		b.W = b.Value * chartBarMax / most
		b.ValueX = chartLabelW + b.W + 4
	}
	c.BarX, c.BarH = chartLabelW, chartBarH
	c.Width = chartLabelW + chartBarMax + 40
	c.Height = len(c.Bars)*(chartBarH+chartGap) - chartGap
	return c
}
