// Package mcpserver serves helm's verbs as Model Context Protocol tools,
// for an agent's host (an IDE, a coding-agent CLI, an orchestrator) that
// starts helm mcp, built on the official Go SDK. Its tools record on the
// voyages of one helm home as one identity, and read them back; its
// resources give a voyage's story and its sightings.
//
// The command (cmd/helm's mcp.go) opens the home, resolves who the
// server acts as and the voyage it may be pinned to, as for any command,
// and gives them to New, with its Workspace: what the tools need of the
// command line (its working directory, the identity's gh and git, the
// clock). The tools are grouped by file: voyage.go (start, list, show,
// resume, complete), slate.go (observe and the slate), entries.go
// (bearings, challenges, notes), read.go (the log, sightings, artifacts,
// transcripts, reports), actions.go (one tool per action kind, and undo);
// resources.go holds the resources, stdio.go the transport on standard
// input and output. What a tool shows is package view's, as the command
// line shows it; its errors are package exit's, with hints in tools'
// words.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/cmd/helm/internal/exit"
	"github.com/helmlog/helm/cmd/helm/internal/markkind"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/report"
	"github.com/helmlog/helm/runner"
)

// Config is what a server acts with, resolved by the command that starts
// it.
type Config struct {
	// Home is the helm home the tools act in.
	Home *helm.Home
	// Who is who every entry the tools record names: no tool takes an
	// identity.
	Who logbook.Who
	// Pinned, when set, is the one voyage every tool acts on (helm mcp
	// --voyage); the command opened it and closes it.
	Pinned *helm.Voyage
	// Kinds are the action kinds, one tool each.
	Kinds []actions.Kind
	// Tools selects the tools listed, as helm mcp --tools gives it
	// (SelectTools): "" is the default set, record.
	Tools string
	// Version is helm's, as the server tells hosts.
	Version string
	// Workspace is what the tools need of the command line.
	Workspace Workspace
	// Log is where the server says what it has to say, for the host's
	// log: the command's standard error.
	Log io.Writer
}

// Workspace is what the tools need of the command line that serves them,
// resolved as for its own commands: helm's working directory, the
// identities' gh and git, the clock.
type Workspace interface {
	// Runner is the gh and git runner of identity ("": none) in helm's
	// working directory, on repository repo ("": the origin remote's).
	Runner(identity, repo string) (*runner.Runner, error)
	// StartOptions are those of a voyage started in helm's working
	// directory (its repository, commit and branch), a sub-voyage of
	// parent when it is set.
	StartOptions(ctx context.Context, parent string) (helm.StartOptions, error)
	// Mark builds the mark of kind k that p describes, its relative paths
	// anchored at helm's working directory.
	Mark(ctx context.Context, k *markkind.Kind, p *markkind.Params) (marks.Mark, error)
	// Observe looks at m for v, as who, and records the observation: a
	// GitHub mark on repo ("": the origin remote's), looking as o says.
	Observe(ctx context.Context, v *helm.Voyage, who logbook.Who, m marks.Mark, repo string, o markkind.ObserveFlags) (helm.Observed, error)
	// ReadFile reads a file a tool names, relative to helm's working
	// directory.
	ReadFile(name string) ([]byte, error)
	// Now is the time by the home's clock.
	Now() time.Time
	// DiffStat lists the files changed between commits base and head in
	// dir, for a report.
	DiffStat(ctx context.Context, dir, base, head string) ([]report.FileChange, error)
}

// Server is one helm mcp process's server: its identity, fixed at
// start, and the voyages its tools have opened, kept open (and folded
// forward on each call) until it ends. It is safe for concurrent calls:
// the SDK runs each call on its own goroutine, and a helm.Voyage takes
// concurrent changes from goroutines and processes alike.
type Server struct {
	home   *helm.Home
	who    logbook.Who
	pinned string // the voyage every tool acts on, or ""
	kinds  []actions.Kind
	want   map[string]bool // the tools listed (Config.Tools)
	ws     Workspace
	log    io.Writer
	server *mcp.Server

	mu       sync.Mutex
	open     map[string]*helm.Voyage       // by id, the pinned one too
	started  map[*mcp.ServerSession]string // the voyage each session started last (voyage_start)
	opened   []*helm.Voyage                // those the server opened
	subs     watches                       // the stories subscribed to (subscribe.go)
	calls    sync.WaitGroup
	stopping bool
	logMu    sync.Mutex // serialises what calls write to log
}

// New makes the server of cfg, with its tools and resources; a tool
// selection naming no tool or set is bad input.
func New(cfg Config) (*Server, error) {
	want, err := SelectTools(cfg.Tools, cfg.Kinds)
	if err != nil {
		return nil, err
	}
	s := &Server{home: cfg.Home, who: cfg.Who, kinds: cfg.Kinds, want: want, ws: cfg.Workspace, log: cfg.Log, open: map[string]*helm.Voyage{}, started: map[*mcp.ServerSession]string{}}
	s.subs.byURI, s.subs.sessions = map[string]*watch{}, map[*mcp.ServerSession]bool{}
	if v := cfg.Pinned; v != nil {
		s.pinned, s.open[v.ID()] = v.ID(), v
	}
	s.server = mcp.NewServer(&mcp.Implementation{Name: "helm", Title: "helm", Version: cfg.Version}, &mcp.ServerOptions{
		Instructions: s.instructions(),
		Capabilities: &mcp.ServerCapabilities{}, // tools and resources, inferred; no logging
		// A voyage's story can be subscribed to (subscribe.go).
		SubscribeHandler:   s.subscribe,
		UnsubscribeHandler: s.unsubscribe,
	})
	s.server.AddReceivingMiddleware(s.shield)
	s.addVoyageTools()
	s.addSlateTools()
	s.addEntryTools()
	s.addReadTools()
	s.addFindTools()
	s.addJudgeTool()
	s.addCurateTools()
	s.addExportTool()
	s.addFollowTool()
	s.addActionTools()
	s.addUndoTool()
	s.addResources()
	return s, nil
}

// MCP is the SDK's server, to run on a transport (ServeStdio runs it on
// standard input and output).
func (s *Server) MCP() *mcp.Server { return s.server }

// Voyages are the voyages the server opened (the pinned one aside), for
// the command to close once the server has stopped.
func (s *Server) Voyages() []*helm.Voyage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.opened)
}

// shield is the server's outermost handling of every request: a tool
// call whose arguments are null is a call with none (the SDK, filling in
// the schema's defaults, would write into a nil map and panic), and a
// panic anywhere in handling a request is an error for that request,
// never the end of the server.
func (s *Server) shield(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && (len(p.Arguments) == 0 || string(p.Arguments) == "null") {
			p.Arguments = json.RawMessage("{}")
		}
		defer func() {
			if p := recover(); p != nil {
				s.Logf("helm: mcp: %s: panic: %v\n%s", method, p, debug.Stack())
				err = fmt.Errorf("helm mcp: %s failed (a bug, reported on helm's standard error): %v", method, p)
				if method == "tools/call" {
					res, err = toolErrorResult(err), nil
				}
			}
		}()
		res, err = next(ctx, method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && r.IsError && r.StructuredContent == nil {
			// The SDK refused the arguments against the tool's schema
			// before helm saw them: say so as helm says the rest.
			name := req.GetParams().(*mcp.CallToolParamsRaw).Name
			res = toolErrorResult(&exit.UsageError{
				Err:  fmt.Errorf("%w: %s: %s", helm.ErrInvalid, name, resultTextOf(r)),
				Tool: "give the arguments the inputSchema of " + name + " (tools/list) describes",
			})
		}
		return res, err
	}
}

// instructions tell the agent what the server is for and how its tools
// fit together.
func (s *Server) instructions() string {
	var b strings.Builder
	fmt.Fprintf(&b, `helm records your work as a voyage, which the person steering you reads with helm log.
You act as %s (role %s, method %s) on every entry you record.
`, s.who.Identity, s.who.Role, s.who.Method)
	if s.pinned != "" {
		fmt.Fprintf(&b, "This server acts on voyage %s; leave the voyage argument out.\n", s.pinned)
	} else {
		b.WriteString("Start with voyage_start: the other tools then act on that voyage when you leave voyage out (give voyage to act on another).\n")
	}
	b.WriteString(`Then: observe what you look at (files, a directory tree, a project, a command's output, a web page, a GitHub issue or pull request, or context a person gave you): each observation goes on the slate.
bearing_take records what the observations on the slate meant (a reading) and seals them; take one whenever you have understood something.
Perform actions (commit, push, create-pull-request, ...) with the action tool (or, with --tools all, their own tools), saying why; dry_run shows what would run.
note records a decision or where things stand. complete ends the voyage with an outcome and a summary.
log tells the story so far; sighting_show shows what an observation saw.
A result marked as an error says what failed and, after "Try:", what to do; exit status 3 means it was recorded but failed: look before retrying.
The tools listed are those helm mcp was started with (--tools: record, read, all, or names); a person changes them.`)
	return b.String()
}

// enter counts a call in; false when the server is stopping.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return false
	}
	s.calls.Add(1)
	return true
}

// Stop waits for the calls in flight, once the session has ended (which
// cancelled them); no call runs after it. The voyages stay open: the
// command closes them (Voyages), reporting a torn write any of them cut.
func (s *Server) Stop() {
	s.mu.Lock()
	s.stopping = true
	s.mu.Unlock()
	s.calls.Wait()
	s.stopWatches()
}

// Logf writes a line of helm's own on the server's log (standard error:
// the host's log).
func (s *Server) Logf(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.log, format, args...)
}

// toolOut is what a call gives back: text for the model (empty: data's
// JSON) and data, a JSON object, as the result's structured content.
type toolOut struct {
	text string
	data any
}

// guard runs f as one call of the server, name: counted, so that the
// server ends after it, and a panic in it an error (and a stack on
// standard error), never the end of the server.
func (s *Server) guard(name string, f func() error) (err error) {
	if !s.enter() {
		return errors.New("helm mcp is ending: the call was not run")
	}
	defer s.calls.Done()
	defer func() {
		if p := recover(); p != nil {
			s.Logf("helm: mcp: %s: panic: %v\n%s", name, p, debug.Stack())
			err = fmt.Errorf("%s: helm failed (a bug, reported on helm's standard error; what it recorded is consistent, as after a crash): %v", name, p)
		}
	}()
	return f()
}

// call runs one call of the tool name; its error is a tool error saying
// what failed and what to do.
func (s *Server) call(ctx context.Context, name string, run func(context.Context) (toolOut, error)) (*mcp.CallToolResult, any, error) {
	var out toolOut
	err := s.guard(name, func() (err error) {
		out, err = run(ctx)
		return err
	})
	if err != nil {
		if s.pinned != "" && helm.HintOf(err).Kind == hint.StartVoyage {
			// voyage_start is refused on a pinned server.
			err = &exit.Hinted{Err: err, Tool: "this server is pinned to that voyage: a person starts another voyage (helm voyage new) and starts helm mcp on it, or without --voyage"}
		}
		return toolErrorResult(err), nil, nil
	}
	res := &mcp.CallToolResult{}
	if out.text != "" {
		res.Content = []mcp.Content{&mcp.TextContent{Text: out.text}}
	}
	return res, out.data, nil
}

// sessionKey is the context key of the session a call came in.
type sessionKey struct{}

// startedBy remembers that the session of ctx started voyage id: the
// voyage its later calls act on when they name none.
func (s *Server) startedBy(ctx context.Context, id string) {
	ss, _ := ctx.Value(sessionKey{}).(*mcp.ServerSession)
	if ss == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started[ss] = id
}

// sessionVoyage is the voyage the session of ctx started last, or "".
func (s *Server) sessionVoyage(ctx context.Context) string {
	ss, _ := ctx.Value(sessionKey{}).(*mcp.ServerSession)
	if ss == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started[ss]
}

// voyageID resolves the voyage a call names (arg: an id or a prefix).
// Without one: the voyage the server is pinned to; else the one this
// session started last with voyage_start (a pinned server starts none, so
// the pinned voyage always wins); a voyage named wins over both, for
// that call alone.
func (s *Server) voyageID(ctx context.Context, arg string) (string, error) {
	if arg == "" {
		if s.pinned != "" {
			return s.pinned, nil
		}
		if id := s.sessionVoyage(ctx); id != "" {
			return id, nil
		}
		return "", &exit.UsageError{
			Err:  fmt.Errorf("%w: voyage is missing: this session started no voyage, and this server acts on no one voyage (helm mcp --voyage ID would pin one)", helm.ErrInvalid),
			Tool: "call voyage_start first, or give voyage: an id voyage_list lists",
		}
	}
	id, err := s.home.Resolve(ctx, arg)
	if err != nil {
		return "", fmt.Errorf("voyage %s: %w", arg, err)
	}
	if s.pinned != "" && id != s.pinned {
		return "", &exit.UsageError{
			Err:  fmt.Errorf("%w: voyage %s: this server acts on voyage %s alone (it was started with --voyage or HELM_VOYAGE)", helm.ErrInvalid, arg, view.Short(s.pinned)),
			Tool: "leave voyage out; another voyage needs a server of its own",
		}
	}
	return id, nil
}

// voyage opens the voyage a call names, with what other processes
// recorded since it was last read folded in.
func (s *Server) voyage(ctx context.Context, arg string) (*helm.Voyage, error) {
	id, err := s.voyageID(ctx, arg)
	if err != nil {
		return nil, err
	}
	return s.openVoyage(ctx, id)
}

// activeVoyage is voyage, for a change that needs the voyage active: so
// that nothing in the world is touched for a voyage that cannot record it.
func (s *Server) activeVoyage(ctx context.Context, arg string) (*helm.Voyage, error) {
	v, err := s.voyage(ctx, arg)
	if err != nil {
		return nil, err
	}
	return v, view.TakesChanges(v)
}

// openVoyage returns voyage id, opened once and kept open (the command
// closes it), refreshed on every later call.
func (s *Server) openVoyage(ctx context.Context, id string) (*helm.Voyage, error) {
	s.mu.Lock()
	v, ok := s.open[id]
	s.mu.Unlock()
	if ok {
		return v, v.Refresh(ctx)
	}
	v, err := s.home.Voyage(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.keep(v), nil
}

// keep keeps v open, and makes its story a resource; another call may
// have opened the same voyage meanwhile: then that one is kept, and
// returned.
func (s *Server) keep(v *helm.Voyage) *helm.Voyage {
	s.mu.Lock()
	if w, ok := s.open[v.ID()]; ok {
		s.mu.Unlock()
		v.Close()
		return w
	}
	s.open[v.ID()] = v
	s.opened = append(s.opened, v)
	s.mu.Unlock()
	s.addStory(v)
	return v
}
