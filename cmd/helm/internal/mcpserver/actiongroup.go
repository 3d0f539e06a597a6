package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/cmd/helm/internal/exit"
	"github.com/helmlog/helm/runner"
)

// action: every action kind, and undo, in one tool, for the default tool
// list: kind names the action, params holds its parameters, checked
// here against the schema the kind's own tool has (actionSchema), then
// performed by the same code as that tool, past the same guard.

// actionGroupArgs are the action tool's arguments.
type actionGroupArgs struct {
	voyageArg
	Kind   string         `json:"kind" jsonschema:"the action"`
	Params map[string]any `json:"params,omitempty" jsonschema:"the kind's parameters, as the description lists them"`
	Repo   string         `json:"repo,omitempty" jsonschema:"GitHub kinds: OWNER/NAME (default: the origin remote's)"`
	actionArgs
}

// undoKind is the kind that takes back an action (the undo tool).
const undoKind = "undo"

// paramsLine is a kind's parameters as the action tool's description
// lists them: name* when needed, :int, :bool, :list, or a|b|c.
func paramsLine(params []actions.Param) string {
	var fields []string
	for _, p := range params {
		f := p.Name
		if p.Required {
			f += "*"
		}
		switch {
		case len(p.Enum) > 0:
			f += ":" + strings.Join(p.Enum, "|")
		case p.Type == actions.Int:
			f += ":int"
		case p.Type == actions.Bool:
			f += ":bool"
		case p.Type == actions.List:
			f += ":list"
		}
		fields = append(fields, f)
	}
	return strings.Join(fields, ", ")
}

// undoParams are undo's, as the action tool takes them.
var undoParams = []actions.Param{{Name: "n", Type: actions.Int, Required: true, Positive: true, Doc: "the entry whose action to take back"}}

// paramsSchema is the schema of the params of kind k (the properties its
// own tool takes that are its parameters), resolved to check them.
func paramsSchema(k actions.Kind) *jsonschema.Resolved {
	full := actionSchema(k)
	ps := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}, Required: full.Required}
	for _, p := range k.Params {
		ps.Properties[p.Name] = full.Properties[p.Name]
	}
	r, err := ps.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("action %s: %v", k.Name, err))
	}
	return r
}

func (s *Server) addActionGroup() {
	byName := map[string]actions.Kind{}
	checks := map[string]*jsonschema.Resolved{}
	var names []string
	var b strings.Builder
	b.WriteString("Perform an action through git or gh, or undo one, saying why: recorded before it runs, its outcome after (a failure as a failed action, exit status 3). " +
		"Guard rules are checked first; one asking a person to confirm refuses it here. dry_run shows what would run. params by kind (* needed):")
	for _, k := range s.kinds {
		byName[k.Name], checks[k.Name] = k, paramsSchema(k)
		names = append(names, k.Name)
		fmt.Fprintf(&b, "\n- %s: %s", k.Name, paramsLine(k.Params))
	}
	undo := actions.Kind{Name: undoKind, Params: undoParams}
	checks[undoKind] = paramsSchema(undo)
	names = append(names, undoKind)
	fmt.Fprintf(&b, "\n- undo: %s (takes back entry n's action by its recorded inverse)", paramsLine(undoParams))

	addTool(s, &mcp.Tool{Name: "action", Annotations: overwrites, Description: b.String()},
		func(ctx context.Context, in *actionGroupArgs) (toolOut, error) {
			params := in.Params
			if params == nil {
				params = map[string]any{}
			}
			k, ok := byName[in.Kind]
			kindParams := k.Params
			if in.Kind == undoKind {
				ok, kindParams = true, undoParams
			}
			if !ok { // the schema's enumeration lets none through
				return toolOut{}, &exit.UsageError{Err: fmt.Errorf("%w: action: kind %q is not one of %s", helm.ErrInvalid, in.Kind, strings.Join(names, ", "))}
			}
			if err := checks[in.Kind].Validate(params); err != nil {
				return toolOut{}, &exit.UsageError{
					Err:  fmt.Errorf("%w: action %s: params: %v", helm.ErrInvalid, in.Kind, err),
					Tool: "give params " + paramsLine(kindParams) + " (* needed)",
				}
			}
			if in.Repo != "" && !k.GitHub {
				return toolOut{}, &exit.UsageError{Err: fmt.Errorf("%w: action %s takes no repo: it acts in helm's working directory", helm.ErrInvalid, in.Kind), Tool: "leave repo out"}
			}
			if in.Kind == undoKind {
				if in.AllowSecret {
					return toolOut{}, &exit.UsageError{Err: fmt.Errorf("%w: action undo takes no allow_secret: it performs the inverse recorded", helm.ErrInvalid), Tool: "leave allow_secret out"}
				}
				n, _ := params["n"].(float64) // checked: an integer of at least 1
				return s.undo(ctx, in.Voyage, int(n), actionArgs{DryRun: in.DryRun, Why: in.Why})
			}
			// The kind's own tool's arguments: its parameters and the rest,
			// decoded by the same code.
			args := map[string]any{}
			for name, v := range params {
				args[name] = v
			}
			args["voyage"], args["repo"], args["dry_run"], args["why"], args["allow_secret"] = in.Voyage, in.Repo, in.DryRun, in.Why, in.AllowSecret
			data, err := json.Marshal(args)
			if err != nil {
				return toolOut{}, err
			}
			v, opts, err := actionValues(k, data)
			if err != nil {
				return toolOut{}, err
			}
			return s.perform(ctx, k, opts, func(r *runner.Runner) (actions.Action, error) { return k.Build(r, v) })
		}, enum("kind", names...))
}
