package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/markkind"
	"github.com/helmlog/helm/cmd/helm/internal/mcpserver"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/report"
	"github.com/helmlog/helm/runner"
)

// helm mcp: the verbs of the command line as Model Context Protocol tools,
// served on stdio to an agent's host (an IDE, a coding-agent CLI, an
// orchestrator). The server is package mcpserver's; this file resolves
// what it acts with as any command does (the home, who it acts as, the
// voyage it is pinned to), gives it the command line's workspace, serves
// it, and closes what it opened.

func newMCPCmd(a *app) *cobra.Command {
	return leafCmd(a, &cobra.Command{
		Use:   "mcp [--voyage ID] [--tools SET]",
		Short: "serve helm's verbs as Model Context Protocol tools on stdio, for agents",
		Long: `Serve the Model Context Protocol on standard input and output: an agent's
host (an IDE, a coding-agent CLI, an orchestrator) starts helm mcp, lists
its tools and calls them, so that the agent records its own voyage —
voyage_start, observe, bearing_take, note, the actions (action: commit,
push, create-pull-request, ...), complete — and reads it (log, voyage_show,
sighting_show). The person steering it sees the same voyage in helm log.
Resources give a voyage's story (helm://voyages/ID/story) and each
sighting by hash (helm://voyages/ID/sightings/HASH).

--tools chooses the tools listed, as each costs the agent's context its
schema: record (the default: voyage_start, voyage_show, observe,
bearing_take, note, action, complete, log, sighting_show), read
(voyage_list, log, search, stats, follow, export, ...), all (every tool,
with one per action kind), or a comma list of sets and tool names.
A voyage's story can be subscribed to: the host is told when it changes.

The identity, role and method are resolved once, as for any command
(--as, HELM_IDENTITY, then config.toml; with --voyage, the voyage's
identity), and every entry the server records is theirs: no tool takes
an identity. --voyage (or HELM_VOYAGE) pins the server to one voyage,
and voyage_start is refused. Without it, tools take the voyage's id (or
a prefix); once a session has called voyage_start, its tools act on that
voyage when they leave voyage out (a voyage named wins for that call). Actions pass the guard rules; a rule that asks for confirmation
refuses the action, as no person is at the keyboard to give it.

Standard output carries the protocol alone; what helm has to say goes to
standard error. The server ends when the host closes its standard input,
once it has answered the calls still running (unless the host went
altogether, closing standard output too: they are then cancelled).
Setting it up in Claude Code, Cursor and VS Code: docs/mcp.md.`,
		Example: `  helm mcp --as claude-1 --role coder --method claude-opus
  # in the host's configuration (mcpServers):
  #   "helm": {"command": "helm", "args": ["mcp"],
  #            "env": {"HELM_IDENTITY": "claude-1", "HELM_ROLE": "coder", "HELM_METHOD": "claude-opus"}}`,
	}, &mcpCommand{})
}

type mcpCommand struct{ tools string }

func (c *mcpCommand) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.tools, "tools", mcpserver.DefaultTools, "the tools to list: `SET` (record, read, all) or tool names, comma-separated")
}

func (c *mcpCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 0 {
		return usageErrorf(a.cmd, "mcp takes no arguments, got %q (pin a voyage with --voyage ID)", args)
	}
	if _, err := mcpserver.SelectTools(c.tools, a.main.kinds()); err != nil {
		return err // before the home is opened: bad usage
	}
	cfg, err := mcpConfig(ctx, a)
	if err != nil {
		return err
	}
	cfg.Tools = c.tools
	s, err := mcpserver.New(cfg)
	if err != nil {
		return err
	}
	serve := a.main.serveMCP
	if serve == nil {
		if isTerminal(a.stdin) {
			fmt.Fprintln(a.stderr, "helm mcp: serving the Model Context Protocol on standard input and output, for an agent's host to start (helm mcp --help says how); Ctrl-C ends it")
		}
		serve = func(ctx context.Context, _ *mcp.Server) error { return s.ServeStdio(ctx, a.stdin, a.stdout) }
	}
	err = serve(ctx, s.MCP())
	// The end of the session cancelled the calls still running: they
	// end, each leaving the voyage as a crash would (a change is
	// recorded whole or not at all), before the voyages are closed (by
	// app.close, which reports a torn write any of them cut).
	s.Stop()
	a.voyages = append(a.voyages, s.Voyages()...)
	switch {
	case err == nil, errors.Is(err, io.EOF), errors.Is(err, mcp.ErrConnectionClosed),
		// An answer written as the host went (a subscription's
		// subscriptions/listen, ended by the host's leaving, is answered
		// then) finds its pipe closed: the host went all the same.
		errors.Is(err, io.ErrClosedPipe), errors.Is(err, syscall.EPIPE):
		return nil // the host went: the session is over
	case ctx.Err() != nil:
		return err // interrupted: main says so
	}
	return &hinted{
		Err:  fmt.Errorf("mcp: the session with the host failed: %w", err),
		Hint: "helm mcp speaks JSON-RPC on standard input and output: start it from an MCP host (helm mcp --help)",
	}
}

// mcpConfig resolves what the server acts with, before it serves: the
// home, the voyage it is pinned to (--voyage, HELM_VOYAGE), and who it
// acts as. The identity, role and method must resolve: every entry the
// tools record names them.
func mcpConfig(ctx context.Context, a *app) (mcpserver.Config, error) {
	h, err := a.openHome()
	if err != nil {
		return mcpserver.Config{}, err
	}
	cfg := mcpserver.Config{Home: h, Kinds: a.main.kinds(), Version: versionString(), Workspace: mcpWorkspace{a}, Log: a.stderr}
	voyageIdentity := ""
	if id, _, err := a.namedVoyage(ctx, h); err != nil {
		return mcpserver.Config{}, err
	} else if id != "" {
		v, err := h.Voyage(ctx, id)
		if err != nil {
			return mcpserver.Config{}, err
		}
		a.voyages = append(a.voyages, v)
		cfg.Pinned, voyageIdentity = v, v.Info().CurrentIdentity
	}
	identity, err := a.resolveIdentity(voyageIdentity)
	if err != nil {
		return mcpserver.Config{}, err
	}
	role, method, err := a.resolveRoleMethod(true)
	if err != nil {
		return mcpserver.Config{}, err
	}
	cfg.Who = logbook.Who{Identity: identity, Role: role, Method: method}
	return cfg, nil
}

// mcpWorkspace is the command line's side of the MCP server's tools: its
// working directory, the identities' gh and git, and the clock, as its own
// commands resolve them.
type mcpWorkspace struct{ a *app }

func (w mcpWorkspace) Runner(identity, repo string) (*runner.Runner, error) {
	return w.a.runner(identity, repo)
}

func (w mcpWorkspace) StartOptions(ctx context.Context, parent string) (helm.StartOptions, error) {
	r, err := w.a.runner("", "")
	if err != nil {
		return helm.StartOptions{}, err
	}
	ws, wsErr := r.Workspace(ctx)
	return startIn(parent, ws, wsErr), nil
}

func (w mcpWorkspace) Mark(ctx context.Context, k *markkind.Kind, p *markkind.Params) (marks.Mark, error) {
	return w.a.anchoredMark(ctx, k, p)
}

func (w mcpWorkspace) Observe(ctx context.Context, v *helm.Voyage, who logbook.Who, m marks.Mark, repo string, o markkind.ObserveFlags) (helm.Observed, error) {
	return w.a.observe(ctx, v, who, m, repo, o, nil)
}

func (w mcpWorkspace) ReadFile(name string) ([]byte, error) { return w.a.readFile(name) }

func (w mcpWorkspace) Now() time.Time { return w.a.now() }

func (w mcpWorkspace) DiffStat(ctx context.Context, dir, base, head string) ([]report.FileChange, error) {
	return w.a.diffStat(ctx, dir, base, head)
}
