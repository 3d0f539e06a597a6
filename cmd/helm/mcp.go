package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/runner"
)

// helm mcp: the verbs of the command line as Model Context Protocol tools,
// served on stdio to an agent's host (an IDE, a coding-agent CLI, an
// orchestrator), built on the official Go SDK. The tools are in
// mcp_tools.go, the resources in mcp_resources.go; this file holds the
// server: who it acts as, which voyages it has open, and how an error
// reaches the caller.

func newMCPCmd(a *app) *cobra.Command {
	return leafCmd(a, &cobra.Command{
		Use:   "mcp [--voyage ID]",
		Short: "serve helm's verbs as Model Context Protocol tools on stdio, for agents",
		Long: `Serve the Model Context Protocol on standard input and output: an agent's
host (an IDE, a coding-agent CLI, an orchestrator) starts helm mcp, lists
its tools and calls them, so that the agent records its own voyage —
voyage_start, observe, bearing_take, note, the actions (commit, push,
create_pull_request, ...), complete — and reads it (log, voyage_show,
sighting_show). The person steering it sees the same voyage in helm log.
Resources give a voyage's story (helm://voyages/ID/story) and each
sighting by hash (helm://voyages/ID/sightings/HASH).

The identity, role and method are resolved once, as for any command
(--as, HELM_IDENTITY, then config.toml; with --voyage, the voyage's
identity), and every entry the server records is theirs: no tool takes
an identity. --voyage (or HELM_VOYAGE) pins the server to one voyage;
without it, tools take the voyage's id (or a prefix), which voyage_start
returns. Actions pass the guard rules; a rule that asks for confirmation
refuses the action, as no person is at the keyboard to give it.

Standard output carries the protocol alone; what helm has to say goes to
standard error. The server ends when the host closes its standard input.`,
		Example: `  helm mcp --as claude-1 --role coder --method claude-opus
  # in the host's configuration (mcpServers):
  #   "helm": {"command": "helm", "args": ["mcp"],
  #            "env": {"HELM_IDENTITY": "claude-1", "HELM_ROLE": "coder", "HELM_METHOD": "claude-opus"}}`,
	}, &mcpCommand{})
}

type mcpCommand struct{}

func (*mcpCommand) Flags(*pflag.FlagSet) {}

func (*mcpCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 0 {
		return usageErrorf(a.cmd, "mcp takes no arguments, got %q (pin a voyage with --voyage ID)", args)
	}
	s, err := newMCPServer(ctx, a)
	if err != nil {
		return err
	}
	serve := a.main.serveMCP
	if serve == nil {
		if isTerminal(a.stdin) {
			fmt.Fprintln(a.stderr, "helm mcp: serving the Model Context Protocol on standard input and output, for an agent's host to start (helm mcp --help says how); Ctrl-C ends it")
		}
		serve = func(ctx context.Context, srv *mcp.Server) error {
			out := &lockedWriter{w: a.stdout}
			in := newJSONRPCLines(a.stdin, out, s.logf)
			// in bounds a message's length: the SDK's own bound ends the session.
			return srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}, MaxLineLength: -1})
		}
	}
	err = serve(ctx, s.server)
	// The end of the session cancelled the calls still running: they
	// end, each leaving the voyage as a crash would (a change is
	// recorded whole or not at all), before the voyages are closed.
	s.stop()
	switch {
	case err == nil, errors.Is(err, io.EOF), errors.Is(err, mcp.ErrConnectionClosed):
		return nil // the host went: the session is over
	case ctx.Err() != nil:
		return err // interrupted: main says so
	}
	return &hinted{
		Err:  fmt.Errorf("mcp: the session with the host failed: %w", err),
		Hint: "helm mcp speaks JSON-RPC on standard input and output: start it from an MCP host (helm mcp --help)",
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// mcpServer is one helm mcp process's server: its identity, fixed at
// start, and the voyages its tools have opened, kept open (and folded
// forward on each call) until it ends. It is safe for concurrent calls:
// the SDK runs each call on its own goroutine, and a helm.Voyage takes
// concurrent changes from goroutines and processes alike.
type mcpServer struct {
	a      *app
	home   *helm.Home
	who    helm.Who
	pinned string // the voyage every tool acts on, or ""
	server *mcp.Server

	mu       sync.Mutex
	open     map[string]*helm.Voyage
	calls    sync.WaitGroup
	stopping bool
	stderr   sync.Mutex // serialises what calls write to a.stderr
}

// newMCPServer resolves who the server acts as (and the voyage it is
// pinned to) and makes its tools and resources. The identity, role and
// method must resolve: every entry the tools record names them.
func newMCPServer(ctx context.Context, a *app) (*mcpServer, error) {
	h, err := a.openHome()
	if err != nil {
		return nil, err
	}
	s := &mcpServer{a: a, home: h, open: map[string]*helm.Voyage{}}
	voyageIdentity := ""
	if id, _, err := a.namedVoyage(ctx, h); err != nil {
		return nil, err
	} else if id != "" {
		v, err := s.openVoyage(ctx, id)
		if err != nil {
			return nil, err
		}
		s.pinned, voyageIdentity = id, v.Info().Identity
	}
	identity, err := a.resolveIdentity(voyageIdentity)
	if err != nil {
		return nil, err
	}
	role, method, err := a.resolveRoleMethod(true)
	if err != nil {
		return nil, err
	}
	s.who = helm.Who{Identity: identity, Role: role, Method: method}
	s.server = mcp.NewServer(&mcp.Implementation{Name: "helm", Title: "helm", Version: versionString()}, &mcp.ServerOptions{
		Instructions: s.instructions(),
		Capabilities: &mcp.ServerCapabilities{}, // tools and resources, inferred; no logging
	})
	s.server.AddReceivingMiddleware(s.shield)
	s.addTools()
	s.addResources()
	return s, nil
}

// shield is the server's outermost handling of every request: a tool
// call whose arguments are null is a call with none (the SDK, filling in
// the schema's defaults, would write into a nil map and panic), and a
// panic anywhere in handling a request is an error for that request,
// never the end of the server.
func (s *mcpServer) shield(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && (len(p.Arguments) == 0 || string(p.Arguments) == "null") {
			p.Arguments = json.RawMessage("{}")
		}
		defer func() {
			if p := recover(); p != nil {
				s.logf("helm: mcp: %s: panic: %v\n%s", method, p, debug.Stack())
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
			res = toolErrorResult(&usageError{
				Err:  fmt.Errorf("%w: %s: %s", helm.ErrInvalid, name, resultTextOf(r)),
				Tool: "give the arguments the inputSchema of " + name + " (tools/list) describes",
			})
		}
		return res, err
	}
}

// resultTextOf is the text of a tool's result.
func resultTextOf(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// instructions tell the agent what the server is for and how its tools
// fit together.
func (s *mcpServer) instructions() string {
	var b strings.Builder
	fmt.Fprintf(&b, `helm records your work as a voyage, which the person steering you reads with helm log.
You act as %s (role %s, method %s) on every entry you record.
`, s.who.Identity, s.who.Role, s.who.Method)
	if s.pinned != "" {
		fmt.Fprintf(&b, "This server acts on voyage %s; leave the voyage argument out.\n", s.pinned)
	} else {
		b.WriteString("Start with voyage_start (or voyage_list), and pass the id it returns as voyage to the other tools.\n")
	}
	b.WriteString(`Then: observe what you look at (files, a directory tree, a project, a command's output, a web page, a GitHub issue or pull request, or context a person gave you): each observation goes on the slate.
bearing_take records what the observations on the slate meant (a reading) and seals them; take one whenever you have understood something.
Perform actions (commit, push, create_pull_request, ...) through their tools, saying why; dry_run shows what would run.
note records a decision or where things stand. complete ends the voyage with an outcome and a summary.
log tells the story so far; sighting_show shows what an observation saw.
A result marked as an error says what failed and, after "Try:", what to do; exit status 3 means it was recorded but failed: look before retrying.`)
	return b.String()
}

// enter counts a call in; false when the server is stopping.
func (s *mcpServer) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return false
	}
	s.calls.Add(1)
	return true
}

// stop waits for the calls in flight; the voyages are closed with the
// command (app.close), which reports a torn write any of them cut.
func (s *mcpServer) stop() {
	s.mu.Lock()
	s.stopping = true
	s.mu.Unlock()
	s.calls.Wait()
}

// logf writes a line of helm's own on standard error: the host's log.
func (s *mcpServer) logf(format string, args ...any) {
	s.stderr.Lock()
	defer s.stderr.Unlock()
	fmt.Fprintf(s.a.stderr, format, args...)
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
func (s *mcpServer) guard(name string, f func() error) (err error) {
	if !s.enter() {
		return errors.New("helm mcp is ending: the call was not run")
	}
	defer s.calls.Done()
	defer func() {
		if p := recover(); p != nil {
			s.logf("helm: mcp: %s: panic: %v\n%s", name, p, debug.Stack())
			err = fmt.Errorf("%s: helm failed (a bug, reported on helm's standard error; what it recorded is consistent, as after a crash): %v", name, p)
		}
	}()
	return f()
}

// call runs one call of the tool name; its error is a tool error saying
// what failed and what to do.
func (s *mcpServer) call(ctx context.Context, name string, run func(context.Context) (toolOut, error)) (*mcp.CallToolResult, any, error) {
	var out toolOut
	err := s.guard(name, func() (err error) {
		out, err = run(ctx)
		return err
	})
	if err != nil {
		if s.pinned != "" && helm.HintOf(err).Kind == helm.HintStartVoyage {
			// voyage_start is refused on a pinned server.
			err = &hinted{Err: err, Tool: "this server is pinned to that voyage: a person starts another voyage (helm voyage new) and starts helm mcp on it, or without --voyage"}
		}
		return toolErrorResult(err), nil, nil
	}
	res := &mcp.CallToolResult{}
	if out.text != "" {
		res.Content = []mcp.Content{&mcp.TextContent{Text: out.text}}
	}
	return res, out.data, nil
}

// toolError is an error as a tool's result carries it: what failed and
// where (as the command line says it), what to do (in tools' words) and
// the exit status the command line would have given.
type toolError struct {
	Error      string `json:"error"`
	Try        string `json:"try,omitempty"`
	ExitStatus int    `json:"exit_status"`
}

// exitMeanings say what each exit status means to a tool's caller.
var exitMeanings = map[int]string{
	exitFailed:      "exit status 1: the operation failed",
	exitUsage:       "exit status 2: bad input; change the arguments",
	exitRecorded:    "exit status 3: recorded, but what was done reported a failure; look before retrying",
	exitRefused:     "exit status 4: refused by a guard rule; the refusal is recorded and nothing was done: retrying will not help",
	exitInterrupted: "exit status 130: interrupted",
}

func toolErrorResult(err error) *mcp.CallToolResult {
	// Escaped as the command line prints them: a host shows them in a
	// terminal.
	te := toolError{Error: block(message(err), ""), Try: printable(toolHint(err)), ExitStatus: ExitCode(err)}
	text := "helm: " + te.Error
	if te.Try != "" {
		text += "\nTry: " + te.Try
	}
	text += "\n(" + exitMeanings[te.ExitStatus] + ")"
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: te}
}

// confirmHint is what to do about an action a guard rule lets run only
// when a person confirms it: over MCP, nobody can.
const confirmHint = "a guard rule lets this run only when a person confirms it, and no person is at the keyboard of an MCP server: ask the person you work for to run it themselves with helm ... --yes, or to change the rule"

// toolHint is what to do about err, in the words of a tool's caller: the
// tool to call, the argument to give, or what a person must do.
func toolHint(err error) string {
	var ue *usageError
	if errors.As(err, &ue) && ue.Tool != "" {
		return ue.Tool
	}
	var h *hinted
	if errors.As(err, &h) && h.Tool != "" {
		return h.Tool
	}
	var nl *runner.NotLoggedInError
	if errors.As(err, &nl) {
		return "a person logs " + nl.Identity + " in to GitHub: helm auth login --as " + nl.Identity
	}
	var xe *runner.ExitError
	if errors.As(err, &xe) {
		return "" // the program's own message says what to do
	}
	lh := helm.HintOf(err)
	if w, ok := wordsFor(err, lh.Kind); ok {
		return w.tool
	}
	switch lh.Kind {
	case helm.HintVerify:
		if id := damagedVoyage(err); id != "" {
			return "a person checks the voyage: helm --voyage " + id + " voyage verify"
		}
		return "a person checks the voyage: helm voyage verify"
	case helm.HintConfirm:
		return confirmHint
	}
	return lh.Text
}

// voyageID resolves the voyage a call names (arg: an id or a prefix), or
// the one the server is pinned to.
func (s *mcpServer) voyageID(ctx context.Context, arg string) (string, error) {
	if arg == "" {
		if s.pinned != "" {
			return s.pinned, nil
		}
		return "", &usageError{
			Err:  fmt.Errorf("%w: voyage is missing, and this server acts on no one voyage (helm mcp --voyage ID would pin one)", helm.ErrInvalid),
			Tool: "give voyage: the id voyage_start returned, or one voyage_list lists",
		}
	}
	id, err := resolveVoyage(ctx, s.home, "voyage", arg)
	if err != nil {
		return "", err
	}
	if s.pinned != "" && id != s.pinned {
		return "", &usageError{
			Err:  fmt.Errorf("%w: voyage %s: this server acts on voyage %s alone (it was started with --voyage or HELM_VOYAGE)", helm.ErrInvalid, arg, short(s.pinned)),
			Tool: "leave voyage out; another voyage needs a server of its own",
		}
	}
	return id, nil
}

// voyage opens the voyage a call names, with what other processes
// recorded since it was last read folded in.
func (s *mcpServer) voyage(ctx context.Context, arg string) (*helm.Voyage, error) {
	id, err := s.voyageID(ctx, arg)
	if err != nil {
		return nil, err
	}
	return s.openVoyage(ctx, id)
}

// activeVoyage is voyage, for a change that needs the voyage active: so
// that nothing in the world is touched for a voyage that cannot record it.
func (s *mcpServer) activeVoyage(ctx context.Context, arg string) (*helm.Voyage, error) {
	v, err := s.voyage(ctx, arg)
	if err != nil {
		return nil, err
	}
	return v, takesChanges(v)
}

// openVoyage returns voyage id, opened once and kept open (closed with
// the command), refreshed on every later call.
func (s *mcpServer) openVoyage(ctx context.Context, id string) (*helm.Voyage, error) {
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
func (s *mcpServer) keep(v *helm.Voyage) *helm.Voyage {
	s.mu.Lock()
	if w, ok := s.open[v.ID()]; ok {
		s.mu.Unlock()
		v.Close()
		return w
	}
	s.open[v.ID()] = v
	s.a.voyages = append(s.a.voyages, v)
	s.mu.Unlock()
	s.addStory(v)
	return v
}

// pageSize is how much text a tool's result or a resource holds at most
// by default: large sightings and stories come in pages.
const pageSize = 64 << 10

// maxPage is the most a caller may ask for in one page.
const maxPage = 1 << 20

// page returns the part of text from byte offset on, at most limit bytes
// (pageSize when 0), cut where a character starts, and a note saying how
// to read on (next names the call that does, given the next offset), or
// "" when the page ends the text.
func page(text string, offset, limit int, next func(offset int) string) (string, string, error) {
	return pageOf(text, 0, true, len(text), offset, limit, next)
}

// pageOf is page for a window of a text: text holds its bytes from base
// on, up to its end when whole, else up to a little beyond the page (a
// pageWriter's). total is the text's length, -1 when it is not known.
func pageOf(text string, base int, whole bool, total, offset, limit int, next func(offset int) string) (string, string, error) {
	if offset < 0 || total >= 0 && offset > total {
		return "", "", &usageError{Err: fmt.Errorf("%w: offset %d is outside the text (%d bytes)", helm.ErrInvalid, offset, total), Tool: "give an offset a note gave, or 0"}
	}
	if limit <= 0 {
		limit = pageSize
	}
	limit = min(limit, maxPage)
	at := offset - base // offset in the window
	for at > 0 && at < len(text) && !utf8.RuneStart(text[at]) {
		at--
	}
	end := min(at+limit, len(text))
	for end < len(text) && end > at && !utf8.RuneStart(text[end]) {
		end--
	}
	if end == at && end < len(text) {
		// The limit is smaller than the character at offset: give that
		// character whole, so that the next page starts further on.
		_, n := utf8.DecodeRuneInString(text[at:])
		end = at + n
		for end < len(text) && !utf8.RuneStart(text[end]) {
			end++
		}
	}
	if whole && end == len(text) {
		return text[at:], "", nil
	}
	if total < 0 {
		return text[at:end], fmt.Sprintf("[helm: bytes %d to %d shown, more follow; %s for the rest]", base+at, base+end, next(base+end)), nil
	}
	return text[at:end], fmt.Sprintf("[helm: bytes %d to %d of %d shown; %s for the rest]", base+at, base+end, total, next(base+end)), nil
}

// errPageFull ends the writing of a text once a pageWriter holds its page.
var errPageFull = errors.New("the page is full")

// pageWriter keeps, of the text written to it, the bytes a page from
// offset of at most limit bytes needs (a few more either side, to cut
// where characters start), and counts the bytes after it up to
// countAhead, so that the note of a page can say how long a text of
// ordinary size is; then it refuses the rest with errPageFull: the writer
// of a text of gigabytes stops soon after the page, and the text is never
// held whole.
type pageWriter struct {
	lo, hi int // the window kept: the text's bytes [lo, hi)
	n      int // the bytes written
	buf    []byte
	full   bool
}

func newPageWriter(offset, limit int) *pageWriter {
	if limit <= 0 {
		limit = pageSize
	}
	limit = min(limit, maxPage)
	offset = max(offset, 0)
	return &pageWriter{lo: max(offset-utf8.UTFMax, 0), hi: offset + limit + 2*utf8.UTFMax}
}

func (p *pageWriter) Write(b []byte) (int, error) {
	if p.full {
		return 0, errPageFull
	}
	start := p.n
	p.n += len(b)
	if from, to := max(p.lo-start, 0), min(p.hi-start, len(b)); from < to {
		p.buf = append(p.buf, b[from:to]...)
	}
	if p.n > p.hi+countAhead {
		p.full = true
		return len(b), errPageFull
	}
	return len(b), nil
}

// countAhead is how far past its page a pageWriter counts a text's bytes.
const countAhead = 4 << 20

// page returns the page of what was written, as page does, given the
// error writing ended with: errPageFull is no error.
func (p *pageWriter) page(err error, offset, limit int, next func(offset int) string) (string, string, error) {
	if err != nil && !errors.Is(err, errPageFull) {
		return "", "", err
	}
	switch {
	case p.full:
		return pageOf(string(p.buf), p.lo, false, -1, offset, limit, next)
	case p.n < p.lo: // the text ends before the window
		return pageOf("", p.n, true, p.n, offset, limit, next)
	}
	// The whole text was written: kept up to the window's end, counted
	// after it.
	return pageOf(string(p.buf), p.lo, p.n <= p.hi, p.n, offset, limit, next)
}
