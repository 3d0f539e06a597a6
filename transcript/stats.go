package transcript

import (
	"slices"
	"strings"
	"time"

	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
)

// Crew figures over a transcript (seed 003's critical steps).
//
// A step is an observation, a bearing, an action (intended or refused;
// its outcome is part of the same step) or a note. A transcript's main
// voyage is one whose parent is not in it; its sub-voyages are those
// started with it as parent (with their own sub-voyages counted in
// theirs). The main voyage's bearings cut the timeline into stages: a
// stage ends with a bearing of the main voyage. In each stage, the steps
// of the main voyage and the most steps any one sub-voyage took count as
// critical, as if the sub-voyages ran side by side:
//
//	CriticalSteps = Σ over stages (S_main + max_i S_sub,i)
//
// An agent host's tool call (Voyage.Step) is a step too; its prompts,
// notifications and the like are not, and are counted apart (Agents).
//
// TotalSteps counts every step, Overhead is TotalSteps − CriticalSteps
// (the steps spent beside the critical path), and Parallelism is
// TotalSteps / CriticalSteps: the work over its critical path, as for any
// parallel computation.

// Stats are the figures of one main voyage and its sub-voyages.
type Stats struct {
	// Main is the main voyage, Subs its sub-voyages in id order.
	Main string   `json:"main"`
	Subs []string `json:"subs"`
	// Intent is the main voyage's, when its start is in the transcript.
	Intent string `json:"intent,omitempty"`
	// Stages is the number of stages: the main voyage's bearings, plus
	// one for the steps after the last.
	Stages        int `json:"stages"`
	TotalSteps    int `json:"total_steps"`
	CriticalSteps int `json:"critical_steps"`
	Overhead      int `json:"overhead"`
	// Parallelism is TotalSteps / CriticalSteps: 1 when every step was on
	// the critical path (the work ran as one line), 2 when the crew did
	// twice the steps of its critical path (on average two ran side by
	// side), and so on; higher is more parallel. It is 0 when there is no
	// step.
	Parallelism float64 `json:"parallelism"`
	// Crew holds each identity's part, by identity.
	Crew []CrewStats `json:"crew"`
	// Judgements are the judgements recorded in these voyages.
	Judgements []JudgementStats `json:"judgements,omitempty"`
	// Agents sums the steps agent hosts reported in these voyages
	// (helm.Voyage.Step): zero when none did.
	Agents logbook.StepStats `json:"agents,omitzero"`
}

// CrewStats is one identity's part in a main voyage and its sub-voyages.
// Active is the time from its first event to its last.
type CrewStats struct {
	Identity     string   `json:"identity"`
	Roles        []string `json:"roles"`
	Steps        int      `json:"steps"`
	Observations int      `json:"observations"`
	Bearings     int      `json:"bearings"`
	Actions      int      `json:"actions"`
	Failures     int      `json:"failures"`
	Refused      int      `json:"refused"`
	Notes        int      `json:"notes"`
	// ToolCalls counts the tool calls agent hosts reported for it.
	ToolCalls int           `json:"tool_calls,omitempty"`
	First     time.Time     `json:"first"`
	Last      time.Time     `json:"last"`
	Active    time.Duration `json:"active_ns"`
}

// JudgementStats is one judgement: who judged which voyage, on what.
type JudgementStats struct {
	Voyage    string `json:"voyage"`
	Entry     int    `json:"entry"`
	Judge     string `json:"judge"`
	Dimension string `json:"dimension"`
	Score     int    `json:"score"`
}

// isStep reports whether a transcript line is a step.
func isStep(l *Line) bool {
	switch l.Type {
	case projection.Observed, projection.BearingTaken, projection.ActionIntended, projection.ActionRefused, projection.NoteAdded:
		return true
	case projection.StepRecorded:
		return l.Step != nil && l.Step.Kind == logbook.StepTool
	}
	return false
}

// StatsOf computes the figures of a transcript in the order Read returns
// it: one Stats for each main voyage in it, in order of their first
// lines.
func StatsOf(lines []Line) []Stats {
	parent := map[string]string{}
	for _, l := range lines {
		parent[l.VoyageID] = l.ParentID
	}
	// root returns the main voyage of v, and the lane v's steps count in:
	// the sub-voyage of the main that v is, or descends from ("" for the
	// main voyage itself).
	root := func(v string) (main, lane string) {
		seen := map[string]bool{}
		for {
			p := parent[v]
			if _, in := parent[p]; p == "" || !in || seen[p] {
				return v, lane
			}
			seen[v] = true
			lane, v = v, p
		}
	}
	type family struct {
		stats   Stats
		stage   int                   // the current stage
		main    []int                 // steps of the main voyage, by stage
		subs    map[string][]int      // steps of each lane, by stage
		crew    map[string]*CrewStats // by identity
		roles   map[string]map[string]bool
		intents map[string]*CrewStats // action id -> who intended it
	}
	var order []string
	families := map[string]*family{}
	for _, l := range lines {
		main, lane := root(l.VoyageID)
		f := families[main]
		if f == nil {
			f = &family{stats: Stats{Main: main, Subs: []string{}, Crew: []CrewStats{}}, main: []int{0}, subs: map[string][]int{},
				crew: map[string]*CrewStats{}, roles: map[string]map[string]bool{}, intents: map[string]*CrewStats{}}
			families[main] = f
			order = append(order, main)
		}
		id := l.Who.Identity
		c := f.crew[id]
		if c == nil {
			c = &CrewStats{Identity: id, First: l.At}
			f.crew[id], f.roles[id] = c, map[string]bool{}
		}
		c.Last = l.At
		if l.Who.Role != "" {
			f.roles[id][l.Who.Role] = true
		}
		if lane != "" && f.subs[lane] == nil {
			f.subs[lane] = make([]int, f.stage+1)
			f.stats.Subs = append(f.stats.Subs, lane)
		}
		if isStep(&l) {
			c.Steps++
			if lane == "" {
				f.main[f.stage]++
			} else {
				s := f.subs[lane]
				for len(s) <= f.stage {
					s = append(s, 0)
				}
				s[f.stage]++
				f.subs[lane] = s
			}
		}
		switch l.Type {
		case projection.VoyageStarted:
			if lane == "" && l.Event.Voyage != nil {
				f.stats.Intent = l.Event.Voyage.Intent
			}
		case projection.Observed:
			c.Observations++
		case projection.BearingTaken:
			c.Bearings++
			if lane == "" { // a bearing of the main voyage ends its stage
				f.stage++
				f.main = append(f.main, 0)
			}
		case projection.ActionIntended:
			c.Actions++
			if l.Action != nil {
				f.intents[l.Action.ID] = c
			}
		case projection.ActionRefused:
			c.Actions++
			c.Refused++
		case projection.ActionFailed:
			if l.Action == nil {
				break
			}
			if who := f.intents[l.Action.ID]; who != nil {
				who.Failures++ // counted for whoever intended it
			}
		case projection.NoteAdded:
			c.Notes++
		case projection.StepRecorded, projection.StepFinished:
			if l.Step == nil {
				break
			}
			if l.Type == projection.StepFinished {
				f.stats.Agents.AddResult(l.Step)
				break
			}
			f.stats.Agents.Add(l.Step)
			if l.Step.Kind == logbook.StepTool {
				c.ToolCalls++
			}
		case projection.Judged:
			if l.Judgement == nil {
				break
			}
			f.stats.Judgements = append(f.stats.Judgements, JudgementStats{Voyage: l.VoyageID, Entry: l.N, Judge: id,
				Dimension: l.Judgement.Dimension, Score: l.Judgement.Score})
		}
	}
	out := make([]Stats, 0, len(order))
	for _, main := range order {
		f := families[main]
		s := f.stats
		s.Stages = len(f.main)
		for stage, n := range f.main {
			most := 0
			for _, steps := range f.subs {
				if stage < len(steps) {
					most = max(most, steps[stage])
				}
			}
			s.CriticalSteps += n + most
			s.TotalSteps += n
		}
		for _, steps := range f.subs {
			for _, n := range steps {
				s.TotalSteps += n
			}
		}
		s.Overhead = s.TotalSteps - s.CriticalSteps
		if s.CriticalSteps > 0 {
			s.Parallelism = float64(s.TotalSteps) / float64(s.CriticalSteps)
		}
		slices.Sort(s.Subs)
		for id, c := range f.crew {
			c.Roles = []string{}
			for r := range f.roles[id] {
				c.Roles = append(c.Roles, r)
			}
			slices.Sort(c.Roles)
			c.Active = c.Last.Sub(c.First)
			s.Crew = append(s.Crew, *c)
		}
		slices.SortFunc(s.Crew, func(a, b CrewStats) int { return strings.Compare(a.Identity, b.Identity) })
		out = append(out, s)
	}
	return out
}
