package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/transcript"
)

// follow: a voyage's events after a sequence number, waiting a bounded
// time for new ones when there are none yet (a long poll), for a client
// without resource subscriptions (subscribe.go).

type followArgs struct {
	voyageArg
	After int  `json:"after,omitempty" jsonschema:"give the events after this sequence number (0: from the start; next of the previous call)"`
	Wait  *int `json:"wait,omitempty" jsonschema:"when none are there yet, wait this many seconds for one (default 20, at most 120; 0 waits not)"`
	Limit int  `json:"limit,omitempty" jsonschema:"the most events to give (default 100)"`
}

// followedEvent is an event as follow gives it: one line.
type followedEvent struct {
	Seq  uint64    `json:"seq"`
	N    int       `json:"n,omitempty"`
	At   time.Time `json:"at"`
	Who  string    `json:"who"`
	Type string    `json:"type"`
	Text string    `json:"text"`
}

// maxFollowWait bounds how long one follow call waits.
const maxFollowWait = 120

func followed(l transcript.Line) followedEvent {
	return followedEvent{Seq: l.Seq, N: l.N, At: l.At, Who: l.Who.Identity, Type: string(l.Type), Text: l.Describe()}
}

func (s *Server) addFollowTool() {
	addTool(s, &mcp.Tool{Name: "follow", Annotations: reads,
		Description: "Follow a voyage as it is recorded, by any process: the events after sequence number after; when there are none yet, waits up to wait seconds for the next. Call again with after set to next. ended says the voyage is closed: nothing more comes unless it is resumed."},
		func(ctx context.Context, in *followArgs) (toolOut, error) {
			wait := 20
			if in.Wait != nil {
				wait = *in.Wait // the schema bounds it
			}
			limit := in.Limit
			if limit == 0 {
				limit = 100
			}
			v, err := s.voyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			after := uint64(in.After)
			lines, err := transcript.Read(ctx, s.home, []string{v.ID()}, nil)
			if err != nil {
				return toolOut{}, err
			}
			lines = slices.DeleteFunc(lines, func(l transcript.Line) bool { return l.VoyageID != v.ID() || l.Seq <= after })
			slices.SortFunc(lines, func(a, b transcript.Line) int { return cmp.Compare(a.Seq, b.Seq) })
			if len(lines) == 0 && wait > 0 && v.Info().Status == logbook.StatusActive {
				wctx, cancel := context.WithTimeout(ctx, time.Duration(wait)*time.Second)
				for l, err := range transcript.Follow(wctx, v, after+1) {
					if err != nil {
						if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
							break // waited: nothing came
						}
						cancel()
						return toolOut{}, err
					}
					lines = append(lines, l)
					break // something came: give it now
				}
				cancel()
				if err := v.Refresh(ctx); err != nil {
					return toolOut{}, err
				}
			}
			out := struct {
				Voyage string          `json:"voyage"`
				Status logbook.Status  `json:"status"`
				Events []followedEvent `json:"events"`
				Next   uint64          `json:"next"`
				More   bool            `json:"more,omitempty"`
				Ended  bool            `json:"ended,omitempty"`
			}{Voyage: v.ID(), Events: []followedEvent{}, Next: after}
			if len(lines) > limit {
				lines, out.More = lines[:limit], true
			}
			for _, l := range lines {
				out.Events = append(out.Events, followed(l))
				out.Next = l.Seq
			}
			info := v.Info()
			out.Status, out.Ended = info.Status, info.Status != logbook.StatusActive && !out.More
			return toolOut{data: out}, nil
		}, minimum("after", 0), minimum("wait", 0), func(sc *jsonschema.Schema) { sc.Properties["wait"].Maximum = new(float64(maxFollowWait)) }, minimum("limit", 1))
}
