package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/exit"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/logbook"
)

// The logbook's entries: bearings, challenges, notes.

type bearingArgs struct {
	voyageArg
	Reading          string   `json:"reading" jsonschema:"what the observations on the slate mean: what you understood from them"`
	Source           string   `json:"source,omitempty" jsonschema:"who wrote the reading: agent, or user when it is a person's words (default: user when this server's method is human, else agent)"`
	ObservationFiles []string `json:"observation_files,omitempty" jsonschema:"observations written earlier to files (helm observe KIND ... --out FILE), sealed with the slate's"`
}

type challengeArgs struct {
	voyageArg
	N        int    `json:"n" jsonschema:"the number of the bearing whose reading is challenged, as log shows it"`
	Feedback string `json:"feedback" jsonschema:"what is wrong with the reading"`
	Reading  string `json:"reading" jsonschema:"the new reading"`
	Source   string `json:"source,omitempty" jsonschema:"who wrote the new reading: agent or user (default as for bearing_take)"`
}

type noteArgs struct {
	voyageArg
	Text string `json:"text" jsonschema:"the note: where things stand, what was decided, what is being waited for"`
}

func (s *Server) addEntryTools() {
	addTool(s, &mcp.Tool{Name: "bearing_take", Annotations: records,
		Description: "Take a bearing: record what the observations on the slate meant, as a reading. The bearing seals the slate's observations (and any observation files) into a numbered logbook entry and empties the slate, in one atomic change. Needs at least one observation."},
		func(ctx context.Context, in *bearingArgs) (toolOut, error) {
			var extra []helm.Observation
			for _, name := range in.ObservationFiles {
				if name == "-" {
					return toolOut{}, &exit.UsageError{Err: fmt.Errorf("%w: observation file -: standard input carries the protocol", helm.ErrInvalid), Tool: "name a file"}
				}
				data, err := s.ws.ReadFile(name)
				if err != nil {
					return toolOut{}, err
				}
				o, err := view.ParseObservation(data, "observation file "+name)
				if err != nil {
					return toolOut{}, err
				}
				extra = append(extra, o)
			}
			v, err := s.activeVoyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			source, ok := view.SourceOf(in.Source, s.who)
			if !ok { // the schema's enumeration lets none through
				return toolOut{}, &exit.UsageError{Err: fmt.Errorf("%w: source %q is not agent or user", helm.ErrInvalid, in.Source)}
			}
			e, err := v.TakeBearing(ctx, in.Reading, s.who, &helm.BearingOptions{Observations: extra, Source: source})
			if err != nil {
				return toolOut{}, err
			}
			return entryOut(fmt.Sprintf("Bearing %d taken for voyage %s", e.N, view.Short(v.ID())), e)
		}, enum("source", string(logbook.SourceAgent), string(logbook.SourceUser)))

	addTool(s, &mcp.Tool{Name: "bearing_challenge", Annotations: records,
		Description: "Challenge the reading of bearing n: replace it with a new reading, keeping the challenged text and the feedback in the bearing's history."},
		func(ctx context.Context, in *challengeArgs) (toolOut, error) {
			v, err := s.activeVoyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			source, ok := view.SourceOf(in.Source, s.who)
			if !ok { // the schema's enumeration lets none through
				return toolOut{}, &exit.UsageError{Err: fmt.Errorf("%w: source %q is not agent or user", helm.ErrInvalid, in.Source)}
			}
			e, err := v.Challenge(ctx, in.N, helm.Challenge{Feedback: in.Feedback, Reading: in.Reading, Source: source}, s.who)
			if err != nil {
				return toolOut{}, err
			}
			return entryOut(fmt.Sprintf("Bearing %d challenged on voyage %s", e.N, view.Short(v.ID())), e)
		}, minimum("n", 1), enum("source", string(logbook.SourceAgent), string(logbook.SourceUser)))

	addTool(s, &mcp.Tool{Name: "note", Annotations: records,
		Description: "Record a note: a numbered logbook entry of text alone (a status, a decision, what is being waited for), with no observation."},
		func(ctx context.Context, in *noteArgs) (toolOut, error) {
			v, err := s.activeVoyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			e, err := v.Note(ctx, in.Text, s.who)
			if err != nil {
				return toolOut{}, err
			}
			return entryOut(fmt.Sprintf("Note %d recorded for voyage %s", e.N, view.Short(v.ID())), e)
		})
}

// entryOut gives back a logbook entry: a line saying what was recorded,
// and the entry.
func entryOut(line string, e logbook.Entry) (toolOut, error) {
	data, err := json.Marshal(e)
	if err != nil {
		return toolOut{}, err
	}
	return toolOut{text: line + "\n" + string(data), data: e}, nil
}
