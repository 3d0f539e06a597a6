package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/exit"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/search"
	"github.com/helmlog/helm/transcript"
)

// Finding: search across voyages, and the figures of a voyage (stats).

type searchArgs struct {
	Words string `json:"words,omitempty" jsonschema:"words to find (every one, any case) in entries and inside sightings: file contents, command output, pages"`
	In    string `json:"in,omitempty" jsonschema:"where words are looked for: entries or sightings (default both)"`
	Text  string `json:"text,omitempty" jsonschema:"text the entries hold (any case): readings, notes, judgements, actions, intents, summaries"`
	Mark  string `json:"mark,omitempty" jsonschema:"a mark's key or its start (file-contents:, github-pr:octo/widgets#45): the bearings that sealed such an observation"`
	PR    int    `json:"pr,omitempty" jsonschema:"a pull request's number: the actions on it, looks at it, mentions of #N"`
	Issue int    `json:"issue,omitempty" jsonschema:"an issue's number: the actions on it, looks at it, mentions of #N"`
	Who   string `json:"who,omitempty" jsonschema:"an identity: what it recorded"`
	Limit int    `json:"limit,omitempty" jsonschema:"the most hits to give (default 50)"`
}

type statsArgs struct {
	Voyages []string `json:"voyages,omitempty" jsonschema:"the voyages (ids or prefixes), each with its sub-voyages (default: this server's voyage)"`
	All     bool     `json:"all,omitempty" jsonschema:"take every voyage of the home"`
}

func (s *Server) addFindTools() {
	addTool(s, &mcp.Tool{Name: "search", Annotations: reads,
		Description: "Find across the home's voyages, as helm search does: words in entries and inside sightings, or by text, mark, pull request, issue or identity (given together, all must match), oldest first, each hit with its voyage, entry number and what matched (a sighting's hit: its mark, artifact and a snippet). A pinned server finds in its voyage alone."},
		func(ctx context.Context, in *searchArgs) (toolOut, error) {
			q := &search.Query{Words: in.Words, Text: in.Text, Mark: in.Mark, PR: in.PR, Issue: in.Issue, Who: in.Who}
			switch in.In {
			case "":
			case "entries":
				q.In = search.InEntries
			case "sightings":
				q.In = search.InSightings
			default:
				return toolOut{}, &exit.UsageError{Err: fmt.Errorf("search: in %q is neither entries nor sightings", in.In), Tool: "give in: entries or sightings, or leave it out for both"}
			}
			hits, err := search.Run(ctx, s.home, q)
			var unreadable *helm.ListError
			if err != nil && !errors.As(err, &unreadable) {
				if errors.Is(err, helm.ErrInvalid) {
					return toolOut{}, &exit.UsageError{Err: err, Tool: "give words, text, mark, pr, issue or who"}
				}
				return toolOut{}, err
			}
			if s.pinned != "" {
				hits = slices.DeleteFunc(hits, func(h search.Hit) bool { return h.Voyage != s.pinned })
			}
			out := struct {
				Hits    []search.Hit `json:"hits"`
				More    int          `json:"more,omitempty"`
				Damaged []string     `json:"damaged,omitempty"`
			}{Hits: hits}
			if limit := cmp.Or(in.Limit, 50); len(hits) > limit {
				out.Hits, out.More = hits[:limit], len(hits)-limit
			}
			if out.Hits == nil {
				out.Hits = []search.Hit{}
			}
			if unreadable != nil && s.pinned == "" {
				out.Damaged = unreadable.Voyages
			}
			return toolOut{data: out}, nil
		}, minimum("pr", 1), minimum("issue", 1), minimum("limit", 1))

	addTool(s, &mcp.Tool{Name: "stats", Annotations: reads,
		Description: "The figures of a voyage and its sub-voyages, as helm stats gives them: stages, steps (total, critical, overhead), parallelism, each identity's part, what agent hosts reported, and the judgements."},
		func(ctx context.Context, in *statsArgs) (toolOut, error) {
			ids, err := s.crewIDs(ctx, in.Voyages, in.All)
			if err != nil {
				return toolOut{}, err
			}
			lines, err := transcript.Read(ctx, s.home, ids, &transcript.Options{Descendants: true})
			if err != nil {
				return toolOut{}, err
			}
			stats := transcript.StatsOf(lines)
			if stats == nil {
				stats = []transcript.Stats{}
			}
			return toolOut{data: map[string]any{"stats": stats}}, nil
		})
}

// judgeArgs are judge's arguments.
type judgeArgs struct {
	voyageArg
	Score     int    `json:"score" jsonschema:"the score, from 1 to 10"`
	Dimension string `json:"dimension" jsonschema:"what is judged: correctness, care, ..."`
	Evidence  []int  `json:"evidence" jsonschema:"the numbers of the entries the judgement rests on"`
	Text      string `json:"text" jsonschema:"what the judge says"`
}

func (s *Server) addJudgeTool() {
	addTool(s, &mcp.Tool{Name: "judge", Annotations: records,
		Description: "Judge a voyage: a score from 1 to 10 on one dimension, citing the entries it rests on. The judge (this server's identity) must have recorded nothing in the voyage; a completed voyage may be judged."},
		func(ctx context.Context, in *judgeArgs) (toolOut, error) {
			if len(in.Evidence) == 0 || slices.ContainsFunc(in.Evidence, func(n int) bool { return n < 1 }) {
				return toolOut{}, &exit.UsageError{Err: fmt.Errorf("%w: evidence %v: the judgement rests on entries, numbered from 1", helm.ErrInvalid, in.Evidence), Tool: "give evidence: the numbers of entries, as log shows them"}
			}
			v, err := s.voyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			e, err := v.Judge(ctx, logbook.Judgement{Score: in.Score, Dimension: in.Dimension, Evidence: in.Evidence, Text: in.Text}, s.who)
			if err != nil {
				return toolOut{}, err
			}
			return entryOut(fmt.Sprintf("Judgement %d recorded for voyage %s", e.N, view.Short(v.ID())), e)
		}, minimum("score", 1), func(sc *jsonschema.Schema) { sc.Properties["score"].Maximum = new(float64(10)) })
}
