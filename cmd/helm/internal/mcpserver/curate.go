package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helmlog/helm/cmd/helm/internal/view"
)

// Curation: jettison an artifact (what the library allows, and to whom,
// is the library's and the guard's to say; a refusal is a tool error).

type jettisonArgs struct {
	voyageArg
	Artifact string `json:"artifact" jsonschema:"the artifact's hash, or a prefix (artifact_list lists them)"`
	Reason   string `json:"reason" jsonschema:"why it goes, recorded with who jettisoned it"`
}

func (s *Server) addCurateTools() {
	addTool(s, &mcp.Tool{Name: "jettison", Annotations: discards,
		Description: "Jettison an artifact: its bytes are let go (compaction reclaims them), the log keeps that it was seen and who jettisoned it, when and why. Guarded like an action."},
		func(ctx context.Context, in *jettisonArgs) (toolOut, error) {
			v, err := s.voyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			info, err := view.FindArtifactInfo(ctx, v, in.Artifact)
			if err != nil {
				return toolOut{}, err
			}
			if err := v.Jettison(ctx, info.Hash, in.Reason, s.who); err != nil {
				return toolOut{}, err
			}
			return toolOut{data: map[string]string{"voyage": v.ID(), "jettisoned": info.Hash, "reason": in.Reason}}, nil
		})
}
