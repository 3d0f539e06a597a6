package mcpserver

import (
	"fmt"
	"slices"
	"strings"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/cmd/helm/internal/exit"
)

// Which tools a server lists (helm mcp --tools): every tool's schema is
// in the agent's context for the whole session, so the default set is
// the few a recording agent needs, the actions grouped in one tool
// (action); the rest are a name away.

// Tool sets, by name: what --tools takes besides tool names.
var toolSets = map[string][]string{
	// record: what an agent needs to record its voyage (the default).
	"record": {"voyage_start", "voyage_show", "observe", "bearing_take", "note", "action", "complete", "log", "sighting_show"},
	// read: reading voyages back, recording nothing.
	"read": {"voyage_list", "voyage_show", "log", "sighting_show", "artifact_list", "transcript", "report", "search", "stats", "follow", "export"},
}

// DefaultTools is the set a server lists when --tools is not given.
const DefaultTools = "record"

// fixedTools are the tools that are not an action kind's, in the order
// they are added.
var fixedTools = []string{
	"voyage_start", "voyage_list", "voyage_show", "voyage_resume", "complete",
	"observe", "slate_list", "slate_erase", "slate_clear",
	"bearing_take", "bearing_challenge", "note", "judge",
	"log", "sighting_show", "artifact_list", "transcript", "report", "search", "stats", "follow", "export", "jettison",
	"action", "undo",
}

// allTools are every tool a server with kinds can list.
func allTools(kinds []actions.Kind) []string {
	all := slices.Clone(fixedTools)
	for _, k := range kinds {
		all = append(all, ToolName(k.Name))
	}
	return all
}

// SelectTools resolves spec, as --tools gives it: a set's name (record,
// read, all) or a tool's, or several, comma-separated; "" is the
// default set. An unknown name is bad input, naming those there are.
func SelectTools(spec string, kinds []actions.Kind) (map[string]bool, error) {
	if strings.TrimSpace(spec) == "" {
		spec = DefaultTools
	}
	all := allTools(kinds)
	want := map[string]bool{}
	for _, name := range strings.Split(spec, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "all":
			for _, t := range all {
				want[t] = true
			}
		case toolSets[name] != nil:
			for _, t := range toolSets[name] {
				want[t] = true
			}
		case slices.Contains(all, name):
			want[name] = true
		default:
			valid := slices.Sorted(slices.Values(all))
			return nil, &exit.UsageError{
				Err:  fmt.Errorf("%w: --tools: %q is no tool set or tool; the sets are record (the default), read and all; the tools are %s", helm.ErrInvalid, name, strings.Join(valid, ", ")),
				Hint: "give --tools record, read, all, or a comma list of sets and tools: helm mcp --tools record,search",
				Tool: "a person starts helm mcp with --tools record, read, all, or a comma list of sets and tools",
			}
		}
	}
	return want, nil
}
