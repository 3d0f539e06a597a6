package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/exit"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/logbook"
)

// The voyage: start, list, show, resume, complete.

type voyageStartArgs struct {
	Intent string `json:"intent" jsonschema:"what the voyage is for, such as: Resolve #42: fix the widget crash"`
	Kind   string `json:"kind,omitempty" jsonschema:"open-waters (exploring) or resolve-issue (resolving an issue)"`
	Parent string `json:"parent,omitempty" jsonschema:"make it a sub-voyage of this voyage (its id or a prefix): your part of a larger voyage a lead started"`
}

type voyageListArgs struct {
	Status string `json:"status,omitempty" jsonschema:"the voyages to list: active, blocked, partial, completed, failed, cancelled, open (active, blocked or partial), closed or all"`
	Stale  string `json:"stale,omitempty" jsonschema:"list the active voyages with no event for this long, such as 30m or 2h"`
}

type voyageResumeArgs struct {
	voyageArg
	Reason string `json:"reason,omitempty" jsonschema:"why the voyage goes on"`
}

type completeArgs struct {
	voyageArg
	Summary string `json:"summary" jsonschema:"what came of the voyage"`
	Outcome string `json:"outcome,omitempty" jsonschema:"how it ended: completed, blocked or partial (both resumable), failed or cancelled"`
}

func (s *Server) addVoyageTools() {
	addTool(s, &mcp.Tool{Name: "voyage_start", Annotations: records,
		Description: "Start a voyage: a unit of work you record as you go. Returns the voyage, whose id the other tools take as voyage; they act on it when you leave voyage out, for the rest of this session. It records you as its identity, and the git repository helm runs in (its origin, commit and branch: what report diffs against)."},
		func(ctx context.Context, in *voyageStartArgs) (toolOut, error) {
			if s.pinned != "" {
				return toolOut{}, &exit.UsageError{
					Err:  fmt.Errorf("%w: this server acts on voyage %s alone (it was started with --voyage or HELM_VOYAGE)", helm.ErrInvalid, view.Short(s.pinned)),
					Tool: "record on that voyage, leaving voyage out; a new voyage needs a server started without --voyage",
				}
			}
			opts, err := s.ws.StartOptions(ctx, in.Parent)
			if err != nil {
				return toolOut{}, err
			}
			v, err := s.home.Start(ctx, in.Intent, helm.Kind(in.Kind), s.who, &opts)
			if err != nil {
				return toolOut{}, err
			}
			v = s.keep(v)
			s.startedBy(ctx, v.ID())
			return toolOut{data: v.Info()}, nil
		}, enum("kind", string(helm.OpenWaters), string(helm.ResolveIssue)), byDefault("kind", string(helm.OpenWaters)))

	var filters []string
	for _, f := range helm.StatusFilters() {
		filters = append(filters, string(f))
	}
	addTool(s, &mcp.Tool{Name: "voyage_list", Annotations: reads,
		Description: "List the voyages of the helm home, oldest first: each one's id, intent, kind, status, identity, times and crew. Voyages that cannot be read are listed by id under damaged."},
		func(ctx context.Context, in *voyageListArgs) (toolOut, error) {
			var stale time.Duration
			if in.Stale != "" {
				var err error
				if stale, err = time.ParseDuration(in.Stale); err != nil || stale <= 0 {
					return toolOut{}, &exit.UsageError{Err: fmt.Errorf("%w: stale %q is not a positive duration", helm.ErrInvalid, in.Stale), Tool: "give stale as a duration, such as 30m or 2h"}
				}
				if in.Status != string(helm.ListActive) {
					return toolOut{}, &exit.UsageError{Err: fmt.Errorf("%w: stale lists active voyages; status %s selects none of them", helm.ErrInvalid, in.Status), Tool: "leave status out with stale"}
				}
			}
			list, err := s.home.List(ctx, &helm.ListOptions{Status: helm.StatusFilter(in.Status), IdleFor: stale})
			var unreadable *helm.ListError
			if err != nil && !errors.As(err, &unreadable) {
				return toolOut{}, err
			}
			out := struct {
				Voyages []helm.VoyageInfo `json:"voyages"`
				Damaged []string          `json:"damaged,omitempty"`
			}{Voyages: list}
			if out.Voyages == nil {
				out.Voyages = []helm.VoyageInfo{}
			}
			if unreadable != nil {
				out.Damaged = unreadable.Voyages
			}
			return toolOut{data: out}, nil
		}, enum("status", filters...), byDefault("status", string(helm.ListActive)))

	addTool(s, &mcp.Tool{Name: "voyage_show", Annotations: reads,
		Description: "Show a voyage: what it is for, who started it and where, its status, its head (where its tamper-evident chain stands, SEQ:HEX: paste it in a pull request or issue as a witness), how many bearings, actions, notes and judgements its logbook holds, the observations on its slate, and what its artifacts (the stored sightings) add up to (artifact_list lists them)."},
		func(ctx context.Context, in *voyageArg) (toolOut, error) {
			v, err := s.voyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			totals, err := view.TotalsOf(ctx, v)
			if err != nil {
				return toolOut{}, err
			}
			failed, err := view.Entries(ctx, v, &helm.EntriesOptions{OutsideStory: true})
			if err != nil {
				return toolOut{}, err
			}
			head, noHead := headOf(ctx, v)
			if ctx.Err() != nil {
				return toolOut{}, ctx.Err()
			}
			info := v.Info()
			logbookCounts := info.Counts
			info.Counts = helm.LogbookCounts{} // shown once, as "logbook"
			out := struct {
				Voyage        helm.VoyageInfo             `json:"voyage"`
				Head          string                      `json:"head,omitempty"`
				NoHead        string                      `json:"no_head,omitempty"`
				Logbook       helm.LogbookCounts          `json:"logbook"`
				Slate         []logbook.ObservationRecord `json:"slate"`
				Artifacts     view.Totals                 `json:"artifacts"`
				FailedActions []logbook.Entry             `json:"failed_actions,omitempty"`
			}{Voyage: info, Head: head, NoHead: noHead, Logbook: logbookCounts, Slate: v.Slate(), Artifacts: totals, FailedActions: failed}
			if out.Slate == nil {
				out.Slate = []logbook.ObservationRecord{}
			}
			return toolOut{data: out}, nil
		})

	addTool(s, &mcp.Tool{Name: "voyage_resume", Annotations: records,
		Description: "Make a blocked or partial voyage active again, saying why; the resumption is recorded. Completed, failed and cancelled voyages are final."},
		func(ctx context.Context, in *voyageResumeArgs) (toolOut, error) {
			v, err := s.voyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			if err := v.Resume(ctx, in.Reason, s.who); err != nil {
				return toolOut{}, err
			}
			return toolOut{data: v.Info()}, nil
		})

	addTool(s, &mcp.Tool{Name: "complete", Annotations: discards,
		Description: "Complete the voyage with an outcome and a summary of what came of it. Nothing more is recorded on it afterwards, unless it is blocked or partial and resumed (voyage_resume). Returns the voyage and its head after the completion (SEQ:HEX): a witness of the whole voyage, to paste in the pull request or issue."},
		func(ctx context.Context, in *completeArgs) (toolOut, error) {
			v, err := s.voyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			if err := view.TakesChanges(v); err != nil && !errors.Is(err, helm.ErrVoyagePaused) {
				return toolOut{}, err
			}
			if err := v.Complete(ctx, logbook.Outcome(in.Outcome), in.Summary, s.who); err != nil {
				return toolOut{}, err
			}
			// Completed whether or not it has a head.
			head, noHead := headOf(ctx, v)
			return toolOut{data: struct {
				helm.VoyageInfo
				Head   string `json:"head,omitempty"`
				NoHead string `json:"no_head,omitempty"`
			}{v.Info(), head, noHead}}, nil
		}, enum("outcome", outcomeNames()...), byDefault("outcome", string(logbook.OutcomeCompleted)))
}

// outcomeNames are the outcomes a voyage completes with.
func outcomeNames() []string {
	var names []string
	for _, o := range logbook.Outcomes() {
		names = append(names, string(o))
	}
	return names
}

// headOf returns the voyage's head as helm voyage head prints it, or why
// it has none (a voyage compacted before the BLAKE3 chain kept no digest
// of the records it reclaimed).
func headOf(ctx context.Context, v *helm.Voyage) (head, noHead string) {
	h, err := v.Head(ctx)
	if err != nil {
		return "", err.Error()
	}
	return h.String(), ""
}
