package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/report"
	"github.com/helmlog/helm/runner"
	"github.com/helmlog/helm/transcript"
)

// The MCP server's tools. Each takes its arguments as a Go struct, whose
// JSON schema the SDK derives (descriptions from the jsonschema tags) and
// checks every call against: an unknown argument, a missing one or one of
// the wrong type is a tool error before the tool runs. The tools reuse
// the command line's pieces (markParams for marks, the --json forms for
// results, the library's verbs for everything recorded), so a voyage
// recorded through MCP is the one helm log shows.

// voyageArg is the voyage a tool acts on.
type voyageArg struct {
	Voyage string `json:"voyage,omitempty" jsonschema:"the voyage: its id, or an unambiguous prefix of it, as voyage_start and voyage_list give it; leave it out when this server acts on one voyage (started with --voyage)"`
}

func (v voyageArg) voyageName() string { return v.Voyage }

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
func addTool[In any](s *mcpServer, t *mcp.Tool, run func(ctx context.Context, in *In) (toolOut, error), edits ...schemaEdit) {
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
	mcp.AddTool(s.server, t, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
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

func (s *mcpServer) addTools() {
	s.addVoyageTools()
	s.addSlateTools()
	s.addEntryTools()
	s.addReadTools()
	s.addActionTools()
	s.addUndoTool()
}

// The voyage: start, list, show, resume, complete.

type voyageStartArgs struct {
	Intent string `json:"intent" jsonschema:"what the voyage is for, such as: Resolve #42: fix the widget crash"`
	Kind   string `json:"kind,omitempty" jsonschema:"open-waters (exploring) or resolve-issue (resolving an issue)"`
	Parent string `json:"parent,omitempty" jsonschema:"make it a sub-voyage of this voyage (its id or a prefix): your part of a larger voyage a lead started"`
}

type voyageListArgs struct {
	Status string `json:"status,omitempty" jsonschema:"the voyages to list: active, blocked, partial, completed, failed, cancelled, open (active, blocked or partial), closed or all"`
	Stale  string `json:"stale,omitempty" jsonschema:"list the active voyages with no event for this long, such as 30m or 2h"`
}

type voyageResumeArgs struct {
	voyageArg
	Reason string `json:"reason,omitempty" jsonschema:"why the voyage goes on"`
}

type completeArgs struct {
	voyageArg
	Summary string `json:"summary" jsonschema:"what came of the voyage"`
	Outcome string `json:"outcome,omitempty" jsonschema:"how it ended: completed, blocked or partial (both resumable), failed or cancelled"`
}

func (s *mcpServer) addVoyageTools() {
	addTool(s, &mcp.Tool{Name: "voyage_start", Annotations: records,
		Description: "Start a voyage: a unit of work you record as you go. Returns the voyage, whose id the other tools take as voyage. It records you as its identity, and the git repository helm runs in (its origin, commit and branch: what report diffs against)."},
		func(ctx context.Context, in *voyageStartArgs) (toolOut, error) {
			if s.pinned != "" {
				return toolOut{}, &usageError{
					Err:  fmt.Errorf("%w: this server acts on voyage %s alone (it was started with --voyage or HELM_VOYAGE)", helm.ErrInvalid, short(s.pinned)),
					Tool: "record on that voyage, leaving voyage out; a new voyage needs a server started without --voyage",
				}
			}
			r, err := s.a.runner("", "")
			if err != nil {
				return toolOut{}, err
			}
			ws, wsErr := r.Workspace(ctx)
			v, err := s.home.StartWith(ctx, in.Intent, helm.Kind(in.Kind), s.who, startIn(in.Parent, ws, wsErr))
			if err != nil {
				return toolOut{}, err
			}
			return toolOut{data: s.keep(v).Info()}, nil
		}, enum("kind", string(helm.OpenWaters), string(helm.ResolveIssue)), byDefault("kind", string(helm.OpenWaters)))

	var filters []string
	for _, f := range helm.StatusFilters() {
		filters = append(filters, string(f))
	}
	addTool(s, &mcp.Tool{Name: "voyage_list", Annotations: reads,
		Description: "List the voyages of the helm home, oldest first: each one's id, intent, kind, status, identity, times and crew. Voyages that cannot be read are listed by id under damaged."},
		func(ctx context.Context, in *voyageListArgs) (toolOut, error) {
			var stale time.Duration
			if in.Stale != "" {
				var err error
				if stale, err = time.ParseDuration(in.Stale); err != nil || stale <= 0 {
					return toolOut{}, &usageError{Err: fmt.Errorf("%w: stale %q is not a positive duration", helm.ErrInvalid, in.Stale), Tool: "give stale as a duration, such as 30m or 2h"}
				}
				if in.Status != string(helm.ListActive) {
					return toolOut{}, &usageError{Err: fmt.Errorf("%w: stale lists active voyages; status %s selects none of them", helm.ErrInvalid, in.Status), Tool: "leave status out with stale"}
				}
			}
			list, err := s.home.ListWith(ctx, helm.ListOptions{Status: helm.StatusFilter(in.Status), IdleFor: stale})
			var unreadable *helm.ListError
			if err != nil && !errors.As(err, &unreadable) {
				return toolOut{}, err
			}
			out := struct {
				Voyages []helm.VoyageInfo `json:"voyages"`
				Damaged []string          `json:"damaged,omitempty"`
			}{Voyages: list}
			if out.Voyages == nil {
				out.Voyages = []helm.VoyageInfo{}
			}
			if unreadable != nil {
				out.Damaged = unreadable.Voyages
			}
			return toolOut{data: out}, nil
		}, enum("status", filters...), byDefault("status", string(helm.ListActive)))

	addTool(s, &mcp.Tool{Name: "voyage_show", Annotations: reads,
		Description: "Show a voyage: what it is for, who started it and where, its status, how many bearings, actions, notes and judgements its logbook holds, the observations on its slate, and what its artifacts (the stored sightings) add up to (artifact_list lists them)."},
		func(ctx context.Context, in *voyageArg) (toolOut, error) {
			v, err := s.voyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			out := struct {
				Voyage        helm.VoyageInfo          `json:"voyage"`
				Logbook       logbookCounts            `json:"logbook"`
				Slate         []helm.ObservationRecord `json:"slate"`
				Artifacts     artifactTotals           `json:"artifacts"`
				FailedActions []helm.Entry             `json:"failed_actions,omitempty"`
			}{Voyage: v.Info(), Logbook: v.LogbookCounts(), Slate: v.Slate(), Artifacts: artifactTotalsOf(v), FailedActions: v.FailedActions()}
			if out.Slate == nil {
				out.Slate = []helm.ObservationRecord{}
			}
			return toolOut{data: out}, nil
		})

	addTool(s, &mcp.Tool{Name: "voyage_resume", Annotations: records,
		Description: "Make a blocked or partial voyage active again, saying why; the resumption is recorded. Completed, failed and cancelled voyages are final."},
		func(ctx context.Context, in *voyageResumeArgs) (toolOut, error) {
			v, err := s.voyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			if err := v.Resume(ctx, in.Reason, s.who); err != nil {
				return toolOut{}, err
			}
			return toolOut{data: v.Info()}, nil
		})

	addTool(s, &mcp.Tool{Name: "complete", Annotations: discards,
		Description: "Complete the voyage with an outcome and a summary of what came of it. Nothing more is recorded on it afterwards, unless it is blocked or partial and resumed (voyage_resume)."},
		func(ctx context.Context, in *completeArgs) (toolOut, error) {
			v, err := s.voyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			if err := v.CheckActive(); err != nil && !errors.Is(err, helm.ErrVoyagePaused) {
				return toolOut{}, err
			}
			if err := v.Complete(ctx, helm.Outcome(in.Outcome), in.Summary, s.who); err != nil {
				return toolOut{}, err
			}
			return toolOut{data: v.Info()}, nil
		}, enum("outcome", outcomeNames()...), byDefault("outcome", string(helm.OutcomeCompleted)))
}

// The slate: observe, list, erase, clear.

// observeArgs are observe's arguments: the mark (its kind and that kind's
// parameters) and how to look.
type observeArgs struct {
	voyageArg
	Kind string `json:"kind" jsonschema:"the kind of mark to look at; each takes the parameters named after it in their descriptions"`
	markParams
	Timeout string `json:"timeout,omitempty" jsonschema:"command: kill the program (and its children) after this long, such as 30s or 10m (default 2m)"`
}

// eraseArgs name a mark on the slate, as observe named it.
type eraseArgs struct {
	voyageArg
	Kind string `json:"kind" jsonschema:"the kind of the mark to take off the slate; the mark is named with the parameters that observed it"`
	markParams
}

// markOf builds the mark kind and p name, anchored at helm's working
// directory: a parameter the kind does not take is bad input, not ignored.
func (s *mcpServer) markOf(kind string, p *markParams) (*markKind, error) {
	k := markKindNamed(kind)
	if k == nil { // the schema's enumeration lets none through
		return nil, &usageError{Err: fmt.Errorf("%w: kind %q is not one of %s", helm.ErrInvalid, kind, strings.Join(markKindNames(), ", "))}
	}
	for _, name := range p.given() {
		if !k.takes(name) {
			return nil, &usageError{
				Err:  fmt.Errorf("%w: %s takes no %s", helm.ErrInvalid, k.name, name),
				Tool: k.name + " takes " + k.parameters(),
			}
		}
	}
	if k.arg != "" && !slices.Contains(p.given(), k.arg) {
		return nil, &usageError{Err: fmt.Errorf("%w: %s needs %s", helm.ErrInvalid, k.name, k.arg), Tool: k.name + " takes " + k.parameters()}
	}
	return k, nil
}

// parameters lists the parameters k takes, for a message: "root (needed),
// skip, max_depth".
func (k *markKind) parameters() string {
	var names []string
	if k.arg != "" {
		names = append(names, k.arg+" (needed)")
	}
	names = append(names, k.options...)
	if len(names) == 0 {
		return "no parameters"
	}
	return strings.Join(names, ", ")
}

// markKindsDescription lists the mark kinds with their parameters, for
// the descriptions of observe and slate_erase.
func markKindsDescription() string {
	var b strings.Builder
	for _, k := range markKinds {
		fmt.Fprintf(&b, "\n- %s: %s; takes %s", k.name, k.summary, k.parameters())
	}
	return b.String()
}

func (s *mcpServer) addSlateTools() {
	kinds := markKindNames()
	markEdits := []schemaEdit{enum("kind", kinds...), minimum("number", 1)}
	addTool(s, &mcp.Tool{Name: "observe", Annotations: looks,
		Description: "Look at a mark and put the observation (mark, sighting, time) on the voyage's slate, replacing an earlier observation of the same mark; bearing_take seals the slate. Returns the observation's key and artifact (sighting_show shows what was seen). A look that failed (a file not there, a program's non-zero exit or timeout, an HTTP error) is recorded all the same and listed under failures. Relative paths are taken from helm's working directory. The kinds:" + markKindsDescription()},
		func(ctx context.Context, in *observeArgs) (toolOut, error) {
			k, err := s.markOf(in.Kind, &in.markParams)
			if err != nil {
				return toolOut{}, err
			}
			var o observeFlags // no timeout: the mark's default
			if in.Timeout != "" {
				if k.observeFlags == nil {
					return toolOut{}, &usageError{Err: fmt.Errorf("%w: %s takes no timeout", helm.ErrInvalid, k.name), Tool: k.name + " takes " + k.parameters()}
				}
				if o.timeout, err = time.ParseDuration(in.Timeout); err != nil || o.timeout <= 0 {
					return toolOut{}, &usageError{Err: fmt.Errorf("%w: timeout %q is not a positive duration", helm.ErrInvalid, in.Timeout), Tool: "give timeout as a duration, such as 30s or 10m"}
				}
			}
			m, err := s.a.anchoredMark(ctx, k, &in.markParams)
			if err != nil {
				return toolOut{}, err
			}
			v, err := s.activeVoyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			obs, err := s.a.observe(ctx, v, s.who, m, in.Repo, o, nil)
			if err != nil {
				return toolOut{}, err
			}
			res := observedOf(v, obs)
			text := res.line()
			if len(res.Failures) > 0 {
				msgs := make([]string, len(res.Failures))
				for i, f := range res.Failures {
					msgs[i] = printable(f.Message)
				}
				text += "\nObserved, but " + strings.Join(msgs, "; ") + ". The observation is recorded all the same (" + exitMeanings[exitRecorded] + ")."
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
				slate = []helm.ObservationRecord{}
			}
			return toolOut{data: map[string]any{"voyage": v.ID(), "slate": slate}}, nil
		})

	addTool(s, &mcp.Tool{Name: "slate_erase", Annotations: discards,
		Description: "Take one mark's observation off the slate, without taking a bearing. Name the mark with the kind and parameters that observed it."},
		func(ctx context.Context, in *eraseArgs) (toolOut, error) {
			k, err := s.markOf(in.Kind, &in.markParams)
			if err != nil {
				return toolOut{}, err
			}
			v, err := s.activeVoyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			m, err := s.a.anchoredMark(ctx, k, &in.markParams)
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

func (s *mcpServer) addEntryTools() {
	addTool(s, &mcp.Tool{Name: "bearing_take", Annotations: records,
		Description: "Take a bearing: record what the observations on the slate meant, as a reading. The bearing seals the slate's observations (and any observation files) into a numbered logbook entry and empties the slate, in one atomic change. Needs at least one observation."},
		func(ctx context.Context, in *bearingArgs) (toolOut, error) {
			var extra []helm.Observation
			for _, name := range in.ObservationFiles {
				if name == "-" {
					return toolOut{}, &usageError{Err: fmt.Errorf("%w: observation file -: standard input carries the protocol", helm.ErrInvalid), Tool: "name a file"}
				}
				data, err := s.a.readFile(name)
				if err != nil {
					return toolOut{}, err
				}
				o, err := parseObservation(data, "observation file "+name)
				if err != nil {
					return toolOut{}, err
				}
				extra = append(extra, o)
			}
			v, err := s.activeVoyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			source, err := sourceOf(s.a, in.Source, s.who)
			if err != nil {
				return toolOut{}, err
			}
			e, err := v.TakeBearing(ctx, in.Reading, s.who, &helm.BearingOptions{Observations: extra, Source: source})
			if err != nil {
				return toolOut{}, err
			}
			return entryOut(fmt.Sprintf("Bearing %d taken for voyage %s", e.N, short(v.ID())), e)
		}, enum("source", string(helm.SourceAgent), string(helm.SourceUser)))

	addTool(s, &mcp.Tool{Name: "bearing_challenge", Annotations: records,
		Description: "Challenge the reading of bearing n: replace it with a new reading, keeping the challenged text and the feedback in the bearing's history."},
		func(ctx context.Context, in *challengeArgs) (toolOut, error) {
			v, err := s.activeVoyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			source, err := sourceOf(s.a, in.Source, s.who)
			if err != nil {
				return toolOut{}, err
			}
			e, err := v.Challenge(ctx, in.N, helm.Challenge{Feedback: in.Feedback, Reading: in.Reading, Source: source}, s.who)
			if err != nil {
				return toolOut{}, err
			}
			return entryOut(fmt.Sprintf("Bearing %d challenged on voyage %s", e.N, short(v.ID())), e)
		}, minimum("n", 1), enum("source", string(helm.SourceAgent), string(helm.SourceUser)))

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
			return entryOut(fmt.Sprintf("Note %d recorded for voyage %s", e.N, short(v.ID())), e)
		})
}

// entryOut gives back a logbook entry: a line saying what was recorded,
// and the entry.
func entryOut(line string, e helm.Entry) (toolOut, error) {
	data, err := json.Marshal(e)
	if err != nil {
		return toolOut{}, err
	}
	return toolOut{text: line + "\n" + string(data), data: e}, nil
}

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

func (s *mcpServer) addReadTools() {
	formats := []schemaEdit{enum("format", "text", "json"), byDefault("format", "text")}
	addTool(s, &mcp.Tool{Name: "log", Annotations: reads,
		Description: "Tell the voyage's story, as the person steering you reads it with helm log: the voyage, then each numbered entry (bearings with their marks and readings, actions with their results, notes, challenges) with who recorded it. A long story comes in pages."},
		func(ctx context.Context, in *logArgs) (toolOut, error) {
			v, err := s.voyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			if in.Who != "" {
				if err := helm.ValidateIdentity(in.Who); err != nil {
					return toolOut{}, &usageError{Err: fmt.Errorf("%w: who %q: %v", helm.ErrInvalid, in.Who, err)}
				}
			}
			if in.Format == "json" {
				return toolOut{data: logOf(v, in.Who)}, nil
			}
			pw := newPageWriter(in.Offset, in.Limit)
			return writtenPage(pw, writeLog(ctx, pw, v, in.Evidence, in.Who), in.pageArgs, "log")
		}, append(formats, pageEdits...)...)

	addTool(s, &mcp.Tool{Name: "sighting_show", Annotations: reads,
		Description: "Show what an observation saw: its sighting, found by the mark's key or the artifact's hash (or a prefix), checked against its BLAKE3 address. A large sighting comes in pages; the resource helm://voyages/{voyage}/sightings/{hash} holds the same JSON."},
		func(ctx context.Context, in *sightingArgs) (toolOut, error) {
			v, err := s.voyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			info, err := findSighting(v, in.Sighting)
			if err != nil {
				return toolOut{}, err
			}
			// Only the page is kept: the sighting is streamed into it,
			// and no further than its end.
			pw := newPageWriter(in.Offset, in.Limit)
			if in.Format == "json" && info.Status == helm.ArtifactStowed {
				err = copySighting(ctx, pw, v, info.Hash)
			} else {
				err = writeSightingText(ctx, pw, v, info)
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
			infos := v.ArtifactsAfter(in.After, limit)
			out := struct {
				Voyage    string        `json:"voyage"`
				Artifacts []artifactRow `json:"artifacts"`
				Next      string        `json:"next,omitempty"`
			}{Voyage: v.ID(), Artifacts: artifactRows(v, infos)}
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
				if opts.Since, err = parseSince(in.Since, s.a.now()); err != nil {
					return toolOut{}, &usageError{Err: fmt.Errorf("%w: since %q: %v", helm.ErrInvalid, in.Since, err)}
				}
			}
			if in.Who != "" {
				if err := helm.ValidateIdentity(in.Who); err != nil {
					return toolOut{}, &usageError{Err: fmt.Errorf("%w: who %q: %v", helm.ErrInvalid, in.Who, err)}
				}
			}
			ids := in.Voyages
			switch {
			case in.All && len(ids) > 0:
				return toolOut{}, &usageError{Err: fmt.Errorf("%w: voyages and all both given", helm.ErrInvalid), Tool: "give voyages, or all, not both"}
			case in.All:
			case len(ids) == 0:
				id, err := s.voyageID("")
				if err != nil {
					return toolOut{}, &usageError{Err: err, Tool: "give voyages, or all"}
				}
				ids = []string{id}
			}
			lines, err := transcript.Read(ctx, s.home, ids, opts)
			if err != nil {
				return toolOut{}, err
			}
			var b bytes.Buffer
			if in.Format == "json" {
				err = writeJSONLines(&b, lines)
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
			r, err := report.Of(ctx, s.home, v.ID(), &report.Options{DiffStat: s.a.diffStat})
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

// Actions: one tool per action kind of the command line.

// actionArgs are what every action tool takes besides the action's own
// parameters.
type actionArgs struct {
	DryRun      bool   `json:"dry_run,omitempty" jsonschema:"give back exactly what would run (the git or gh commands); run and record nothing"`
	Why         string `json:"why,omitempty" jsonschema:"the rationale for the action, shown with it in the story"`
	AllowSecret bool   `json:"allow_secret,omitempty" jsonschema:"perform it although its parameters hold what looks like a secret (a token in a message or a body); the log records them redacted. Without it such an action is refused"`
}

func (a actionArgs) options() actionArgs { return a }

// gitHubAction is what a GitHub action's tool takes besides its own
// parameters: its repository, and the rest.
type gitHubAction struct {
	Repo string `json:"repo,omitempty" jsonschema:"the repository as OWNER/NAME (default: the one the origin remote of helm's working directory names)"`
	actionArgs
}

func (a gitHubAction) repoName() string { return a.Repo }

// gitAction is what a git action's tool takes besides its own
// parameters: its repository is helm's working directory.
type gitAction struct{ actionArgs }

func (gitAction) repoName() string { return "" }

// actionInput is the arguments of an action tool.
type actionInput interface {
	voyageName() string
	repoName() string
	options() actionArgs
}

type commitArgs struct {
	voyageArg
	Message string `json:"message" jsonschema:"the commit message"`
	gitAction
}

type pushArgs struct {
	voyageArg
	Branch string `json:"branch,omitempty" jsonschema:"the branch to push, or a refspec git takes (default: the branch checked out in helm's working directory); guard rules see every ref git resolves it to"`
	Remote string `json:"remote,omitempty" jsonschema:"the remote to push to (default origin)"`
	Force  bool   `json:"force,omitempty" jsonschema:"push even where it is not a fast-forward (guard rules see a forced update)"`
	gitAction
}

type createPullRequestArgs struct {
	voyageArg
	Title     string   `json:"title" jsonschema:"the pull request's title"`
	Branch    string   `json:"branch,omitempty" jsonschema:"the head branch, pushed already (default: the branch checked out)"`
	Body      string   `json:"body,omitempty" jsonschema:"the pull request's description"`
	Base      string   `json:"base,omitempty" jsonschema:"the branch to merge into (default: the repository's default branch)"`
	Reviewers []string `json:"reviewers,omitempty" jsonschema:"logins to request reviews from"`
	gitHubAction
}

type mergePullRequestArgs struct {
	voyageArg
	Number      int    `json:"number" jsonschema:"the pull request's number"`
	MergeMethod string `json:"merge_method,omitempty" jsonschema:"merge, squash or rebase (default merge)"`
	gitHubAction
}

type commentArgs struct {
	voyageArg
	Number int    `json:"number" jsonschema:"the pull request's or issue's number"`
	Body   string `json:"body" jsonschema:"the comment"`
	gitHubAction
}

type replyPullRequestArgs struct {
	voyageArg
	Number    int    `json:"number" jsonschema:"the pull request's number"`
	CommentID int64  `json:"comment_id" jsonschema:"the id of the inline review comment to reply to (observe github-pr with focus comments lists them)"`
	Body      string `json:"body" jsonschema:"the reply"`
	gitHubAction
}

type requestReviewArgs struct {
	voyageArg
	Number    int      `json:"number" jsonschema:"the pull request's number"`
	Reviewers []string `json:"reviewers" jsonschema:"logins or ORG/TEAM names to request reviews from"`
	gitHubAction
}

type createIssueArgs struct {
	voyageArg
	Title string `json:"title" jsonschema:"the issue's title"`
	Body  string `json:"body,omitempty" jsonschema:"the issue's description"`
	gitHubAction
}

type issueArgs struct {
	voyageArg
	Number int `json:"number" jsonschema:"the issue's number"`
	gitHubAction
}

// destructiveActions are the actions a host should warn of: they cannot
// be taken back by another action (undo has none for them).
var destructiveActions = []string{"merge-pull-request"}

// addAction adds the tool of action kind (as actionKinds spells it):
// build makes the action from the tool's arguments.
func addAction[In actionInput](s *mcpServer, kind string, build func(r *runner.Runner, in In) (performer, error), edits ...schemaEdit) {
	k := actionKindNamed(kind)
	ann := changes
	if slices.Contains(destructiveActions, kind) {
		ann = overwrites
	}
	desc := upperFirst(k.summary) + ". The intent is recorded before git or gh runs, the outcome after (a failure too, as a failed action: exit status 3); guard rules are checked first, and one that asks a person to confirm refuses it here. dry_run shows what would run."
	addTool(s, &mcp.Tool{Name: toolName(kind), Annotations: ann, Description: desc},
		func(ctx context.Context, in *In) (toolOut, error) {
			return s.perform(ctx, *in, func(r *runner.Runner) (performer, error) { return build(r, *in) })
		}, edits...)
}

// toolName is the tool of a kind: create-pull-request is create_pull_request.
func toolName(kind string) string { return strings.ReplaceAll(kind, "-", "_") }

func actionKindNamed(name string) *actionKind {
	for _, k := range actionKinds {
		if k.name == name {
			return k
		}
	}
	panic("no action kind " + name)
}

func (s *mcpServer) addActionTools() {
	number := minimum("number", 1)
	addAction(s, "commit", func(r *runner.Runner, in commitArgs) (performer, error) {
		return actions.NewCommit(r, actions.Commit{Message: in.Message})
	})
	addAction(s, "push", func(r *runner.Runner, in pushArgs) (performer, error) {
		return actions.NewPush(r, actions.Push{Branch: in.Branch, Remote: in.Remote, Force: in.Force})
	})
	addAction(s, "create-pull-request", func(r *runner.Runner, in createPullRequestArgs) (performer, error) {
		return actions.NewCreatePullRequest(r, actions.CreatePullRequest{Branch: in.Branch, Title: in.Title, Body: in.Body, Base: in.Base, Reviewers: splitList(in.Reviewers)})
	})
	addAction(s, "merge-pull-request", func(r *runner.Runner, in mergePullRequestArgs) (performer, error) {
		return actions.NewMergePullRequest(r, actions.MergePullRequest{Number: in.Number, Method: in.MergeMethod})
	}, number, enum("merge_method", "merge", "squash", "rebase"))
	addAction(s, "comment-pull-request", func(r *runner.Runner, in commentArgs) (performer, error) {
		return actions.NewCommentPullRequest(r, actions.CommentPullRequest{Number: in.Number, Body: in.Body})
	}, number)
	addAction(s, "reply-pull-request", func(r *runner.Runner, in replyPullRequestArgs) (performer, error) {
		return actions.NewReplyPullRequest(r, actions.ReplyPullRequest{Number: in.Number, CommentID: in.CommentID, Body: in.Body})
	}, number, minimum("comment_id", 1))
	addAction(s, "request-review", func(r *runner.Runner, in requestReviewArgs) (performer, error) {
		return actions.NewRequestReview(r, actions.RequestReview{Number: in.Number, Reviewers: splitList(in.Reviewers)})
	}, number)
	addAction(s, "create-issue", func(r *runner.Runner, in createIssueArgs) (performer, error) {
		return actions.NewCreateIssue(r, actions.CreateIssue{Title: in.Title, Body: in.Body})
	})
	addAction(s, "close-issue", func(r *runner.Runner, in issueArgs) (performer, error) {
		return actions.NewCloseIssue(r, actions.CloseIssue{Number: in.Number})
	}, number)
	addAction(s, "comment-issue", func(r *runner.Runner, in commentArgs) (performer, error) {
		return actions.NewCommentIssue(r, actions.CommentIssue{Number: in.Number, Body: in.Body})
	}, number)
}

// perform performs the action build makes from in's arguments, as helm
// action does: built first (bad parameters are bad input), on an active
// voyage, its defaults resolved from the world, then shown (dry_run) or
// performed past the guard, never confirmed.
func (s *mcpServer) perform(ctx context.Context, in actionInput, build func(r *runner.Runner) (performer, error)) (toolOut, error) {
	r := &runner.Runner{} // filled in below: the action holds it
	act, err := build(r)
	if err != nil {
		return toolOut{}, err
	}
	v, err := s.activeVoyage(ctx, in.voyageName())
	if err != nil {
		return toolOut{}, err
	}
	rr, err := s.a.runner(s.who.Identity, in.repoName())
	if err != nil {
		return toolOut{}, err
	}
	*r = *rr
	if res, ok := act.(resolver); ok {
		if err := res.Resolve(ctx); err != nil {
			if errors.Is(err, actions.ErrDetachedHead) {
				return toolOut{}, &hinted{Err: err, Tool: "give branch, or check a branch out in helm's working directory first"}
			}
			return toolOut{}, err
		}
	}
	return s.performOn(ctx, v, act, in.options(), 0)
}

// undoArgs are the undo tool's arguments.
type undoArgs struct {
	voyageArg
	N      int    `json:"n" jsonschema:"the number of the entry whose action to take back (log shows the entries; an entry undone shows undone by M)"`
	DryRun bool   `json:"dry_run,omitempty" jsonschema:"give back exactly what would run (the git or gh commands); run and record nothing"`
	Why    string `json:"why,omitempty" jsonschema:"why the action is taken back, shown with the undo in the story"`
}

func (s *mcpServer) addUndoTool() {
	addTool(s, &mcp.Tool{Name: "undo", Annotations: changes, Description: "Take back the action of entry n by performing the inverse recorded with it, as a new action linked to n (the story shows n undone by it): " +
		"a commit not pushed is reset to its parent (its changes staged again; refused while later commits follow it), a pushed one reverted by a new commit; " +
		"a push that created a branch deletes it; a pull request or issue is closed (a closed issue reopened); a comment deleted; a review request removed. " +
		"A merge, a push that moved a branch already there, and an undo cannot be undone: the error says why and nothing is recorded. " +
		"Guard rules are checked as for the action the undo performs. dry_run shows what would run."},
		func(ctx context.Context, in *undoArgs) (toolOut, error) {
			v, err := s.activeVoyage(ctx, in.Voyage)
			if err != nil {
				return toolOut{}, err
			}
			inv, err := v.Undoable(in.N)
			if err != nil {
				return toolOut{}, err
			}
			r, err := s.a.runner(s.who.Identity, "")
			if err != nil {
				return toolOut{}, err
			}
			u, err := actions.FromInverse(ctx, r, inv)
			if err != nil {
				return toolOut{}, err
			}
			return s.performOn(ctx, v, u, actionArgs{DryRun: in.DryRun, Why: in.Why}, in.N)
		}, minimum("n", 1))
}

// performOn shows act (dry_run) or performs it on v, past the guard and
// never confirmed, taking back entry undoes when that is not 0.
func (s *mcpServer) performOn(ctx context.Context, v *helm.Voyage, act performer, opts actionArgs, undoes int) (toolOut, error) {
	if opts.DryRun {
		d := actionDryRun{Voyage: v.ID(), Kind: act.Kind(), DryRun: act.DryRun()}
		return toolOut{text: fmt.Sprintf("Dry run for voyage %s: nothing is run or recorded. Would run:\n%s", short(v.ID()), block(strings.TrimRight(d.DryRun, "\n"), "")), data: d}, nil
	}
	e, err := v.PerformWith(ctx, act, s.who, helm.PerformOptions{AllowSecret: opts.AllowSecret, Why: opts.Why, Undoes: undoes})
	if errors.Is(err, helm.ErrSecret) {
		return toolOut{}, &hinted{Err: err, Tool: "take the secret out, or give allow_secret true to perform it as it is (the log records it redacted)"}
	}
	if err != nil {
		return toolOut{}, err
	}
	return entryOut(fmt.Sprintf("Action %d performed for voyage %s: %s", e.N, short(v.ID()), printable(helm.DescribeAction(e.Action))), e)
}
