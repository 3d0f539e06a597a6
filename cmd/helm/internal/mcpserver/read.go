package mcpserver

import (
	"bytes"
	"cmp"
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/exit"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/report"
	"github.com/helmlog/helm/transcript"
)

// Reading: the log, sightings, artifacts, transcripts, reports.

type logArgs struct {
	voyageArg
	Format   string `json:"format,omitempty" jsonschema:"text (the story, as helm log prints it) or json (the voyage and its entries, with who recorded each)"`
	Who      string `json:"who,omitempty" jsonschema:"only the entries of this identity"`
	Evidence bool   `json:"evidence,omitempty" jsonschema:"text: print under each bearing the sightings it sealed"`
	pageArgs
}

type sightingArgs struct {
	voyageArg
	Sighting string `json:"sighting" jsonschema:"the observation's mark key (as slate_list and log give it) or its artifact's hash, or a prefix of either"`
	Format   string `json:"format,omitempty" jsonschema:"text (for reading: file contents as text, trees as trees, a command with its exit status and output) or json (the sighting's JSON)"`
	pageArgs
}

type artifactListArgs struct {
	voyageArg
	After string `json:"after,omitempty" jsonschema:"list the artifacts whose hash comes after this one (the next of a previous page)"`
	Limit int    `json:"limit,omitempty" jsonschema:"the most artifacts to list (default 100)"`
}

type transcriptArgs struct {
	Voyages []string `json:"voyages,omitempty" jsonschema:"the voyages (ids or prefixes), each with its sub-voyages (default: this server's voyage)"`
	All     bool     `json:"all,omitempty" jsonschema:"take every voyage of the home"`
	Since   string   `json:"since,omitempty" jsonschema:"keep the events from this time (2026-02-26T17:00:00Z) or from this long ago (30m, 2h)"`
	Who     string   `json:"who,omitempty" jsonschema:"keep the events of this identity"`
	Format  string   `json:"format,omitempty" jsonschema:"text (one line an event) or json (one exported event an element, with its voyage, seq and links)"`
	pageArgs
}

type reportArgs struct {
	voyageArg
	Format string `json:"format,omitempty" jsonschema:"md (markdown, for a pull request's description) or json"`
}

// crewIDs are the voyages transcript and stats take: those named (nil
// for all), or the server's voyage.
func (s *Server) crewIDs(ctx context.Context, ids []string, all bool) ([]string, error) {
	switch {
	case all && len(ids) > 0:
		return nil, &exit.UsageError{Err: fmt.Errorf("%w: voyages and all both given", helm.ErrInvalid), Tool: "give voyages, or all, not both"}
	case all:
		return nil, nil
	case len(ids) == 0:
		id, err := s.voyageID(ctx, "")
		if err != nil {
			return nil, &exit.UsageError{Err: err, Tool: "give voyages, or all"}
		}
		return []string{id}, nil
	}
	return ids, nil
}

// textPage gives back a page of text, with the note saying how to read
// on; tool names the call that reads on.
func textPage(text string, p pageArgs, tool string) (toolOut, error) {
	return pageOut(page(text, p.Offset, p.Limit, readOn(tool)))
}

// readOn says how to read on from next: call tool again.
func readOn(tool string) func(next int) string {
	return func(next int) string { return fmt.Sprintf("call %s again with offset %d", tool, next) }
}

// pageOut is a page's body with its note, as a tool gives it back.
func pageOut(body, note string, err error) (toolOut, error) {
	if err != nil {
		return toolOut{}, err
	}
	if note != "" {
		body += "\n" + note + "\n"
	}
	return toolOut{text: body}, nil
}

// writtenPage is textPage for a text written to pw, whose writing ended
// with err.
func writtenPage(pw *pageWriter, err error, p pageArgs, tool string) (toolOut, error) {
	return pageOut(pw.page(err, p.Offset, p.Limit, readOn(tool)))
}

func (s *Server) addReadTools() {
	formats := []schemaEdit{enum("format", "text", "json"), byDefault("format", "text")}
	addTool(s, &mcp.Tool{Name: "log", Annotations: reads,
		Description: "Tell the voyage's story, as the person steering you reads it with helm log: the voyage, then each numbered entry (bearings with their marks and readings, actions with their results, notes, challenges) with who recorded it. A long story comes in pages."},
		func(ctx context.Context, in *logArgs) (toolOut, error) {
			v, err := s.voyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			if in.Who != "" {
				if err := logbook.ValidateIdentity(in.Who); err != nil {
					return toolOut{}, &exit.UsageError{Err: fmt.Errorf("%w: who %q: %v", helm.ErrInvalid, in.Who, err)}
				}
			}
			if in.Format == "json" {
				l, err := view.LogOf(ctx, v, in.Who)
				if err != nil {
					return toolOut{}, err
				}
				return toolOut{data: l}, nil
			}
			pw := newPageWriter(in.Offset, in.Limit)
			return writtenPage(pw, view.WriteLog(ctx, pw, v, in.Evidence, in.Who), in.pageArgs, "log")
		}, append(formats, pageEdits...)...)

	addTool(s, &mcp.Tool{Name: "sighting_show", Annotations: reads,
		Description: "Show what an observation saw: its sighting, found by the mark's key or the artifact's hash (or a prefix), checked against its BLAKE3 address. A large sighting comes in pages; the resource helm://voyages/{voyage}/sightings/{hash} holds the same JSON."},
		func(ctx context.Context, in *sightingArgs) (toolOut, error) {
			v, err := s.voyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			info, err := view.FindSighting(ctx, v, in.Sighting)
			if err != nil {
				return toolOut{}, err
			}
			// Only the page is kept: the sighting is streamed into it,
			// and no further than its end.
			pw := newPageWriter(in.Offset, in.Limit)
			if in.Format == "json" && info.Status == logbook.ArtifactStowed {
				err = view.CopySighting(ctx, pw, v, info.Hash)
			} else {
				err = view.WriteSightingText(ctx, pw, v, info)
			}
			return writtenPage(pw, err, in.pageArgs, "sighting_show")
		}, append(formats, pageEdits...)...)

	addTool(s, &mcp.Tool{Name: "artifact_list", Annotations: reads,
		Description: "List the voyage's artifacts (each sighting, stored once under the BLAKE3 hash of its JSON) in hash order: kind, mark, sizes, where it is stored, and whether it is stowed, reduced to a summary or jettisoned. next, when set, is the after of the next page."},
		func(ctx context.Context, in *artifactListArgs) (toolOut, error) {
			v, err := s.voyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			limit := cmp.Or(in.Limit, 100)
			var infos []helm.ArtifactInfo
			for a, err := range v.Artifacts(ctx, &helm.ArtifactsOptions{After: in.After}) {
				if err != nil {
					return toolOut{}, err
				}
				if infos = append(infos, a); len(infos) == limit {
					break
				}
			}
			rows, err := view.ArtifactRows(ctx, v, infos)
			if err != nil {
				return toolOut{}, err
			}
			out := struct {
				Voyage    string             `json:"voyage"`
				Artifacts []view.ArtifactRow `json:"artifacts"`
				Next      string             `json:"next,omitempty"`
			}{Voyage: v.ID(), Artifacts: rows}
			if len(infos) == limit {
				out.Next = infos[len(infos)-1].Hash
			}
			return toolOut{data: out}, nil
		}, minimum("limit", 1))

	addTool(s, &mcp.Tool{Name: "transcript", Annotations: reads,
		Description: "Merge voyages with their sub-voyages (a crew's work) into one timeline, ordered by time: one line an event, with its voyage, who recorded it (in what role) and what happened, and the links between entries (an action names the bearing it followed)."},
		func(ctx context.Context, in *transcriptArgs) (toolOut, error) {
			opts := &transcript.Options{Who: in.Who, Descendants: true}
			if in.Since != "" {
				var err error
				if opts.Since, err = view.ParseSince(in.Since, s.ws.Now()); err != nil {
					return toolOut{}, &exit.UsageError{Err: fmt.Errorf("%w: since %q: %v", helm.ErrInvalid, in.Since, err)}
				}
			}
			if in.Who != "" {
				if err := logbook.ValidateIdentity(in.Who); err != nil {
					return toolOut{}, &exit.UsageError{Err: fmt.Errorf("%w: who %q: %v", helm.ErrInvalid, in.Who, err)}
				}
			}
			ids, err := s.crewIDs(ctx, in.Voyages, in.All)
			if err != nil {
				return toolOut{}, err
			}
			lines, err := transcript.Read(ctx, s.home, ids, opts)
			if err != nil {
				return toolOut{}, err
			}
			var b bytes.Buffer
			if in.Format == "json" {
				err = view.WriteJSONLines(&b, lines)
			} else if len(lines) == 0 {
				b.WriteString("No events.\n")
			} else {
				err = transcript.Write(&b, lines)
			}
			if err != nil {
				return toolOut{}, err
			}
			return textPage(b.String(), in.pageArgs, "transcript")
		}, append(formats, pageEdits...)...)

	addTool(s, &mcp.Tool{Name: "report", Annotations: reads,
		Description: "Summarise a voyage, for a pull request's description: its intent and status, who took part, its bearings and how often each was challenged, its actions and what they left (commits, branches, pull requests), failures and refusals, notes, judgements, sub-voyages, and the files changed since the commit it started from."},
		func(ctx context.Context, in *reportArgs) (toolOut, error) {
			v, err := s.voyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			r, err := report.Of(ctx, s.home, v.ID(), &report.Options{DiffStat: s.ws.DiffStat})
			if err != nil {
				return toolOut{}, err
			}
			if in.Format == "json" {
				return toolOut{data: r}, nil
			}
			var b bytes.Buffer
			if err := r.WriteMarkdown(&b); err != nil {
				return toolOut{}, err
			}
			return toolOut{text: b.String()}, nil
		}, enum("format", "md", "json"), byDefault("format", "md"))
}
