package mcpserver

import (
	"context"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/story"
)

// Export: a voyage's archive (jsonl, which helm voyage import and replay
// take) or its story as a document (md, html). The tool does not put the
// export in the agent's context: it gives the resource's URI, its format
// and its size; a host reads the resource, a page at a time, when it
// wants the bytes (an archive holds every sighting).

type exportArgs struct {
	voyageArg
	Format string `json:"format,omitempty" jsonschema:"jsonl (the archive helm voyage import and replay take), md or html"`
}

// exportFormats write a voyage's export, by format.
var exportFormats = map[string]struct {
	mime  string
	write func(context.Context, *helm.Home, io.Writer, *helm.Voyage) error
}{
	"jsonl": {"application/jsonl", func(ctx context.Context, h *helm.Home, w io.Writer, v *helm.Voyage) error {
		return h.Export(ctx, v.ID(), w)
	}},
	"md": {"text/markdown", func(ctx context.Context, _ *helm.Home, w io.Writer, v *helm.Voyage) error {
		return story.WriteMarkdown(ctx, w, v)
	}},
	"html": {"text/html", func(ctx context.Context, _ *helm.Home, w io.Writer, v *helm.Voyage) error {
		return story.WriteHTML(ctx, w, v)
	}},
}

func exportURI(id, format string) string { return "helm://voyages/" + id + "/export?format=" + format }

// countWriter counts the bytes written to it.
type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func (s *Server) addExportTool() {
	addTool(s, &mcp.Tool{Name: "export", Annotations: reads,
		Description: "Export a voyage: gives the URI of a resource holding the export, its format and size in bytes, not the bytes (read the resource, a page at a time, to have them). jsonl is the archive helm voyage import and replay take; md and html tell the story."},
		func(ctx context.Context, in *exportArgs) (toolOut, error) {
			v, err := s.voyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			f := exportFormats[in.Format] // the schema's enumeration lets no other through
			var n countWriter
			if err := f.write(ctx, s.home, &n, v); err != nil {
				return toolOut{}, err
			}
			head, noHead := headOf(ctx, v)
			return toolOut{data: struct {
				Voyage string `json:"voyage"`
				Format string `json:"format"`
				URI    string `json:"uri"`
				MIME   string `json:"mime_type"`
				Bytes  int64  `json:"bytes"`
				Head   string `json:"head,omitempty"`
				NoHead string `json:"no_head,omitempty"`
			}{v.ID(), in.Format, exportURI(v.ID(), in.Format), f.mime, n.n, head, noHead}}, nil
		}, enum("format", "jsonl", "md", "html"), byDefault("format", "jsonl"))
}
