package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tools' input schemas: derived from each tool's Go arguments (the
// descriptions from their jsonschema tags), adjusted where Go types
// cannot say it (an enumeration, a minimum, a default); the SDK checks
// every call against them, so that an unknown argument, a missing one or
// one of the wrong type is a tool error before the tool runs. The action
// tools' schemas are made from their kinds' parameters instead
// (actionSchema).

// voyageArg is the voyage a tool acts on.
type voyageArg struct {
	Voyage string `json:"voyage,omitempty" jsonschema:"the voyage's id or a prefix (voyage_start gives it); leave out for the voyage this session started (voyage_start), or on a server pinned with --voyage"`
}

// pageArgs page a long text.
type pageArgs struct {
	Offset int `json:"offset,omitempty" jsonschema:"the byte offset to start from, as a note at the end of a page gives it (default 0)"`
	Limit  int `json:"limit,omitempty" jsonschema:"the most bytes to return (default 65536, at most 1048576)"`
}

// schemaEdit adjusts a schema derived from a tool's arguments: what Go
// types cannot say (an enumeration, a minimum, a default).
type schemaEdit func(*jsonschema.Schema)

func enum(prop string, values ...string) schemaEdit {
	return func(s *jsonschema.Schema) {
		for _, v := range values {
			s.Properties[prop].Enum = append(s.Properties[prop].Enum, v)
		}
	}
}

func minimum(prop string, n float64) schemaEdit {
	return func(s *jsonschema.Schema) { s.Properties[prop].Minimum = &n }
}

func byDefault(prop string, v any) schemaEdit {
	return func(s *jsonschema.Schema) {
		data, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		s.Properties[prop].Default = data
	}
}

// pageEdits bound pageArgs.
var pageEdits = []schemaEdit{minimum("offset", 0), minimum("limit", 1), func(s *jsonschema.Schema) { s.Properties["limit"].Maximum = new(float64(maxPage)) }}

// addTool adds tool t, its arguments In (the schema derived from In, as
// edits adjust it), run by run.
func addTool[In any](s *Server, t *mcp.Tool, run func(ctx context.Context, in *In) (toolOut, error), edits ...schemaEdit) {
	if !s.want[t.Name] {
		return // not selected (--tools)
	}
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", t.Name, err))
	}
	for _, p := range schema.Properties {
		// A slice or a pointer may be null to Go; no caller needs to say
		// null for "not given", and one type is what every host reads.
		if len(p.Types) == 2 && slices.Contains(p.Types, "null") {
			p.Type, p.Types = slices.DeleteFunc(p.Types, func(t string) bool { return t == "null" })[0], nil
		}
	}
	for _, e := range edits {
		e(schema)
	}
	t.InputSchema = schema
	mcp.AddTool(s.server, t, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		ctx = context.WithValue(ctx, sessionKey{}, req.Session)
		return s.call(ctx, t.Name, func(ctx context.Context) (toolOut, error) { return run(ctx, &in) })
	})
}

// Tool annotations: what a host may tell its user about a tool.
var (
	reads      = &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}
	records    = &mcp.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(false)}
	discards   = &mcp.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: new(false)}
	looks      = &mcp.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(true)}
	changes    = &mcp.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(true)}
	overwrites = &mcp.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: new(true)}
)
