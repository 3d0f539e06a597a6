package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/exit"
	"github.com/helmlog/helm/cmd/helm/internal/markkind"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/internal/safetext"
	"github.com/helmlog/helm/logbook"
)

// The slate: observe, list, erase, clear.

// observeArgs are observe's arguments: the mark (its kind and that kind's
// parameters) and how to look.
type observeArgs struct {
	voyageArg
	Kind string `json:"kind" jsonschema:"the kind of mark to look at; each takes the parameters named after it in their descriptions"`
	markkind.Params
	Timeout string `json:"timeout,omitempty" jsonschema:"command: kill the program (and its children) after this long, such as 30s or 10m (default 2m)"`
}

// eraseArgs name a mark on the slate, as observe named it.
type eraseArgs struct {
	voyageArg
	Kind string `json:"kind" jsonschema:"the kind of the mark to take off the slate; the mark is named with the parameters that observed it"`
	markkind.Params
}

// markOf builds the mark kind and p name, anchored at helm's working
// directory: a parameter the kind does not take is bad input, not ignored.
func (s *Server) markOf(kind string, p *markkind.Params) (*markkind.Kind, error) {
	k := markkind.Named(kind)
	if k == nil { // the schema's enumeration lets none through
		return nil, &exit.UsageError{Err: fmt.Errorf("%w: kind %q is not one of %s", helm.ErrInvalid, kind, strings.Join(markkind.Names(), ", "))}
	}
	for _, name := range p.Given() {
		if !k.Takes(name) {
			return nil, &exit.UsageError{
				Err:  fmt.Errorf("%w: %s takes no %s", helm.ErrInvalid, k.Name, name),
				Tool: k.Name + " takes " + k.Parameters(),
			}
		}
	}
	if k.Arg != "" && !slices.Contains(p.Given(), k.Arg) {
		return nil, &exit.UsageError{Err: fmt.Errorf("%w: %s needs %s", helm.ErrInvalid, k.Name, k.Arg), Tool: k.Name + " takes " + k.Parameters()}
	}
	return k, nil
}

// markKindsDescription lists the mark kinds, for observe's description
// (each parameter's description names the kinds that take it).
func markKindsDescription() string {
	var b strings.Builder
	for _, k := range markkind.Kinds {
		fmt.Fprintf(&b, "\n- %s: %s", k.Name, k.Summary)
	}
	return b.String()
}

func (s *Server) addSlateTools() {
	kinds := markkind.Names()
	markEdits := []schemaEdit{enum("kind", kinds...), minimum("number", 1)}
	addTool(s, &mcp.Tool{Name: "observe", Annotations: looks,
		Description: "Look at a mark and put the observation (mark, sighting, time) on the voyage's slate, replacing an earlier observation of the same mark; bearing_take seals the slate. Returns the observation's key and artifact (sighting_show shows what was seen). A look that failed (a file not there, a program's non-zero exit or timeout, an HTTP error) is recorded all the same and listed under failures. Relative paths are taken from helm's working directory. The kinds (each parameter names the kinds taking it):" + markKindsDescription()},
		func(ctx context.Context, in *observeArgs) (toolOut, error) {
			k, err := s.markOf(in.Kind, &in.Params)
			if err != nil {
				return toolOut{}, err
			}
			var o markkind.ObserveFlags // no timeout: the mark's default
			if in.Timeout != "" {
				if k.ObserveFlags == nil {
					return toolOut{}, &exit.UsageError{Err: fmt.Errorf("%w: %s takes no timeout", helm.ErrInvalid, k.Name), Tool: k.Name + " takes " + k.Parameters()}
				}
				if o.Timeout, err = time.ParseDuration(in.Timeout); err != nil || o.Timeout <= 0 {
					return toolOut{}, &exit.UsageError{Err: fmt.Errorf("%w: timeout %q is not a positive duration", helm.ErrInvalid, in.Timeout), Tool: "give timeout as a duration, such as 30s or 10m"}
				}
			}
			m, err := s.ws.Mark(ctx, k, &in.Params)
			if err != nil {
				return toolOut{}, err
			}
			v, err := s.activeVoyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			obs, err := s.ws.Observe(ctx, v, s.who, m, in.Repo, o)
			if err != nil {
				return toolOut{}, err
			}
			res := view.ObservedOf(v, obs)
			text := res.Line()
			if len(res.Failures) > 0 {
				msgs := make([]string, len(res.Failures))
				for i, f := range res.Failures {
					msgs[i] = safetext.Line(f.Message)
				}
				text += "\nObserved, but " + strings.Join(msgs, "; ") + ". The observation is recorded all the same (" + exitMeanings[exit.Recorded] + "); slate_erase with the same kind and parameters takes it off the slate."
			}
			data, err := json.Marshal(res)
			if err != nil {
				return toolOut{}, err
			}
			return toolOut{text: text + "\n" + string(data), data: res}, nil
		}, markEdits...)

	addTool(s, &mcp.Tool{Name: "slate_list", Annotations: reads,
		Description: "List the observations on the voyage's slate: those gathered since the last bearing, each with its mark's key and label, its artifact and when it was made."},
		func(ctx context.Context, in *voyageArg) (toolOut, error) {
			v, err := s.voyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			slate := v.Slate()
			if slate == nil {
				slate = []logbook.ObservationRecord{}
			}
			return toolOut{data: map[string]any{"voyage": v.ID(), "slate": slate}}, nil
		})

	addTool(s, &mcp.Tool{Name: "slate_erase", Annotations: discards,
		Description: "Take one mark's observation off the slate, without taking a bearing. Name the mark with the kind and parameters that observed it."},
		func(ctx context.Context, in *eraseArgs) (toolOut, error) {
			k, err := s.markOf(in.Kind, &in.Params)
			if err != nil {
				return toolOut{}, err
			}
			v, err := s.activeVoyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			m, err := s.ws.Mark(ctx, k, &in.Params)
			if err != nil {
				return toolOut{}, err
			}
			if err := v.Erase(ctx, m.Key(), s.who); err != nil {
				return toolOut{}, err
			}
			return toolOut{data: map[string]string{"voyage": v.ID(), "erased": m.Key(), "label": m.String()}}, nil
		}, markEdits...)

	addTool(s, &mcp.Tool{Name: "slate_clear", Annotations: discards,
		Description: "Wipe the voyage's slate: drop every observation gathered since the last bearing, without taking one."},
		func(ctx context.Context, in *voyageArg) (toolOut, error) {
			v, err := s.activeVoyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			n := len(v.Slate())
			if err := v.Wipe(ctx, s.who); err != nil {
				return toolOut{}, err
			}
			return toolOut{data: map[string]any{"voyage": v.ID(), "wiped": n}}, nil
		})
}
