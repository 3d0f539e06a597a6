package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/cmd/helm/internal/exit"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/internal/safetext"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/runner"
)

// Actions: one tool per action kind (Config.Kinds, actions.Kinds), its
// input schema and description made from the kind, and undo.

// actionArgs are what every action tool takes besides the action's own
// parameters.
type actionArgs struct {
	DryRun      bool   `json:"dry_run,omitempty" jsonschema:"give back exactly what would run (the git or gh commands); run and record nothing"`
	Why         string `json:"why,omitempty" jsonschema:"the rationale for the action, shown with it in the story"`
	AllowSecret bool   `json:"allow_secret,omitempty" jsonschema:"perform it although its parameters hold what looks like a secret (a token in a message or a body); the log records them redacted. Without it such an action is refused"`
}

// actionTool are the arguments of an action tool that are not the
// action's parameters: where it acts and how.
type actionTool struct {
	voyageArg
	Repo string `json:"repo,omitempty" jsonschema:"the repository as OWNER/NAME (default: the one the origin remote of helm's working directory names)"`
	actionArgs
}

// actionSchema is the input schema of kind k's tool: the voyage, the
// kind's parameters, the repository of a GitHub action, and how to
// perform it.
func actionSchema(k actions.Kind) *jsonschema.Schema {
	common, err := jsonschema.For[actionTool](nil)
	if err != nil {
		panic(err)
	}
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
	add := func(name string, p *jsonschema.Schema) {
		if _, ok := s.Properties[name]; ok {
			panic(fmt.Sprintf("action %s: two arguments called %s", k.Name, name))
		}
		s.Properties[name] = p
		s.PropertyOrder = append(s.PropertyOrder, name)
	}
	add("voyage", common.Properties["voyage"])
	for _, p := range k.Params {
		if _, ok := common.Properties[p.Name]; ok {
			panic(fmt.Sprintf("action %s: parameter %s has the name of an argument every action tool takes", k.Name, p.Name))
		}
		ps := &jsonschema.Schema{Description: p.Doc}
		switch p.Type {
		case actions.String:
			ps.Type = "string"
		case actions.Int:
			ps.Type = "integer"
		case actions.Bool:
			ps.Type = "boolean"
		case actions.List:
			ps.Type, ps.Items = "array", &jsonschema.Schema{Type: "string"}
		default:
			panic(fmt.Sprintf("action %s: parameter %s of type %d", k.Name, p.Name, p.Type))
		}
		for _, v := range p.Enum {
			ps.Enum = append(ps.Enum, v)
		}
		if p.Positive {
			ps.Minimum = new(float64(1))
		}
		add(p.Name, ps)
		if p.Required {
			s.Required = append(s.Required, p.Name)
		}
	}
	for _, name := range []string{"repo", "dry_run", "why", "allow_secret"} {
		if name != "repo" || k.GitHub {
			add(name, common.Properties[name])
		}
	}
	return s
}

// actionValues decodes the arguments of kind k's tool (the schema has
// checked them) into the action's parameters and the rest.
func actionValues(k actions.Kind, args json.RawMessage) (actions.Values, actionTool, error) {
	var t actionTool
	var in map[string]json.RawMessage
	if err := errors.Join(json.Unmarshal(args, &t), json.Unmarshal(args, &in)); err != nil {
		return nil, actionTool{}, &exit.UsageError{Err: fmt.Errorf("%w: %v", helm.ErrInvalid, err)}
	}
	v := actions.Values{}
	for _, p := range k.Params {
		raw, ok := in[p.Name]
		if !ok {
			continue
		}
		var err error
		switch p.Type {
		case actions.String:
			v[p.Name], err = decodeAs[string](raw)
		case actions.Int:
			v[p.Name], err = decodeAs[int64](raw) // a number too large for one is refused here
		case actions.Bool:
			v[p.Name], err = decodeAs[bool](raw)
		case actions.List:
			v[p.Name], err = decodeAs[[]string](raw)
		}
		if err != nil {
			return nil, actionTool{}, &exit.UsageError{Err: fmt.Errorf("%w: %s: %v", helm.ErrInvalid, p.Name, err)}
		}
	}
	return v, t, nil
}

func decodeAs[T any](raw json.RawMessage) (T, error) {
	var v T
	err := json.Unmarshal(raw, &v)
	return v, err
}

// addAction adds the tool of action kind k.
func (s *Server) addAction(k actions.Kind) {
	ann := changes
	if k.Irreversible {
		ann = overwrites
	}
	t := &mcp.Tool{Name: ToolName(k.Name), Annotations: ann, InputSchema: actionSchema(k),
		Description: upperFirst(k.Summary) + ". The intent is recorded before git or gh runs, the outcome after (a failure too, as a failed action: exit status 3); guard rules are checked first, and one that asks a person to confirm refuses it here. dry_run shows what would run."}
	mcp.AddTool(s.server, t, func(ctx context.Context, req *mcp.CallToolRequest, in json.RawMessage) (*mcp.CallToolResult, any, error) {
		// Leaving voyage out acts on the session's voyage, as in every
		// tool (addTool).
		ctx = context.WithValue(ctx, sessionKey{}, req.Session)
		return s.call(ctx, t.Name, func(ctx context.Context) (toolOut, error) {
			v, opts, err := actionValues(k, in)
			if err != nil {
				return toolOut{}, err
			}
			return s.perform(ctx, k, opts, func(r *runner.Runner) (actions.Action, error) { return k.Build(r, v) })
		})
	})
}

// ToolName is the tool of an action kind: create-pull-request is
// create_pull_request.
func ToolName(kind string) string { return strings.ReplaceAll(kind, "-", "_") }

// upperFirst is s with its first letter in upper case: a summary as a
// sentence.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func (s *Server) addActionTools() {
	for _, k := range s.kinds {
		if s.want[ToolName(k.Name)] {
			s.addAction(k)
		}
	}
	if s.want["action"] {
		s.addActionGroup()
	}
}

// perform performs the action build makes from in's arguments, as helm
// action does: built first (bad parameters are bad input), on an active
// voyage, its defaults resolved from the world, then shown (dry_run) or
// performed past the guard, never confirmed.
func (s *Server) perform(ctx context.Context, k actions.Kind, in actionTool, build func(r *runner.Runner) (actions.Action, error)) (toolOut, error) {
	r := &runner.Runner{} // filled in below: the action holds it
	act, err := build(r)
	if err != nil {
		return toolOut{}, err
	}
	v, err := s.activeVoyage(ctx, in.Voyage)
	if err != nil {
		return toolOut{}, err
	}
	rr, err := s.ws.Runner(s.who.Identity, in.Repo)
	if err != nil {
		return toolOut{}, err
	}
	*r = *rr
	// A GitHub action needs a GitHub repository: repo, else the one the
	// origin remote names. Without one it could only fail once its
	// intent was recorded (exit 3); it is refused now, nothing recorded,
	// and so is its dry run, as helm action refuses it.
	if k.GitHub {
		if _, err := r.Repo(ctx); err != nil {
			return toolOut{}, &exit.UsageError{
				Err:  fmt.Errorf("%s: %w: no GitHub repository to act on; nothing was recorded", k.Name, err),
				Tool: "give repo as OWNER/NAME, or have a person point the origin remote at GitHub (git remote set-url origin https://github.com/OWNER/NAME)",
			}
		}
	}
	if res, ok := act.(actions.Resolver); ok {
		if err := res.Resolve(ctx); err != nil {
			if errors.Is(err, actions.ErrDetachedHead) {
				return toolOut{}, &exit.Hinted{Err: err, Tool: "give branch, or check a branch out in helm's working directory first"}
			}
			return toolOut{}, err
		}
	}
	return s.performOn(ctx, v, act, in.actionArgs, 0)
}

// undoArgs are the undo tool's arguments.
type undoArgs struct {
	voyageArg
	N      int    `json:"n" jsonschema:"the number of the entry whose action to take back (log shows the entries; an entry undone shows undone by M)"`
	DryRun bool   `json:"dry_run,omitempty" jsonschema:"give back exactly what would run (the git or gh commands); run and record nothing"`
	Why    string `json:"why,omitempty" jsonschema:"why the action is taken back, shown with the undo in the story"`
}

func (s *Server) addUndoTool() {
	addTool(s, &mcp.Tool{Name: "undo", Annotations: changes, Description: "Take back the action of entry n by performing the inverse recorded with it, as a new action linked to n (the story shows n undone by it): " +
		"a commit not pushed is reset to its parent (its changes staged again; refused while later commits follow it), a pushed one reverted by a new commit; " +
		"a push that created a branch deletes it; a pull request or issue is closed (a closed issue reopened); a comment deleted; a review request removed. " +
		"A merge, a push that moved a branch already there, and an undo cannot be undone: the error says why and nothing is recorded. " +
		"Guard rules are checked as for the action the undo performs. dry_run shows what would run."},
		func(ctx context.Context, in *undoArgs) (toolOut, error) {
			return s.undo(ctx, in.Voyage, in.N, actionArgs{DryRun: in.DryRun, Why: in.Why})
		}, minimum("n", 1))
}

// undo takes back the action of entry n of voyage arg, as the inverse
// recorded with it, past the guard.
func (s *Server) undo(ctx context.Context, arg string, n int, opts actionArgs) (toolOut, error) {
	v, err := s.activeVoyage(ctx, arg)
	if err != nil {
		return toolOut{}, err
	}
	inv, err := v.Undoable(ctx, n)
	if err != nil {
		return toolOut{}, err
	}
	r, err := s.ws.Runner(s.who.Identity, "")
	if err != nil {
		return toolOut{}, err
	}
	u, err := actions.FromInverse(ctx, r, inv)
	if err != nil {
		return toolOut{}, err
	}
	return s.performOn(ctx, v, u, opts, n)
}

// performOn shows act (dry_run) or performs it on v, past the guard and
// never confirmed, taking back entry undoes when that is not 0.
func (s *Server) performOn(ctx context.Context, v *helm.Voyage, act actions.Action, opts actionArgs, undoes int) (toolOut, error) {
	if opts.DryRun {
		d := view.DryRun{Voyage: v.ID(), Kind: act.Kind(), DryRun: act.DryRun(ctx)}
		return toolOut{text: fmt.Sprintf("Dry run for voyage %s: nothing is run or recorded. Would run:\n%s", view.Short(v.ID()), safetext.Block(strings.TrimRight(d.DryRun, "\n"), "")), data: d}, nil
	}
	e, err := v.Perform(ctx, act, s.who, &helm.PerformOptions{AllowSecret: opts.AllowSecret, Why: opts.Why, Undoes: undoes})
	if errors.Is(err, helm.ErrSecret) {
		return toolOut{}, &exit.Hinted{Err: err, Tool: "take the secret out, or give allow_secret true to perform it as it is (the log records it redacted)"}
	}
	if err != nil {
		return toolOut{}, err
	}
	return entryOut(fmt.Sprintf("Action %d performed for voyage %s: %s", e.N, view.Short(v.ID()), safetext.Line(logbook.DescribeAction(e.Action))), e)
}
