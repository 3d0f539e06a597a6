package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/agent"
	"github.com/helmlog/helm/agent/claudecode"
	"github.com/helmlog/helm/agent/codex"
	"github.com/helmlog/helm/logbook"
)

// importHost is an agent host whose session logs voyage import --from
// reads.
type importHost struct {
	name   string // claude-code
	where  string // where the host keeps its session logs, for hints
	read   func(r io.Reader, path, subagents string) ([]agent.Event, error)
	stepOf func(agent.Event) logbook.Step
}

var importHosts = []importHost{
	{claudecode.Agent, "~/.claude/projects/<project>/<session id>.jsonl (a hook's transcript_path)",
		func(r io.Reader, path, subagents string) ([]agent.Event, error) {
			var subs claudecode.Subagents
			switch {
			case subagents != "":
				subs = claudecode.SubagentDir(subagents)
			case path != "":
				subs = claudecode.SubagentsOf(path)
			}
			return claudecode.ReadTranscript(r, subs)
		}, claudecode.StepOf},
	{codex.Agent, "~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl",
		func(r io.Reader, _, _ string) ([]agent.Event, error) { return codex.ReadTranscript(r) }, codex.StepOf},
}

func importHostNames() []string {
	var names []string
	for _, h := range importHosts {
		names = append(names, h.name)
	}
	return names
}

// importSession makes a voyage of an agent host's session log (voyage
// import --from HOST FILE): the whole file is read first, so that a bad
// one records nothing.
func (c *voyageImportCommand) importSession(ctx context.Context, a *app, file string) error {
	var host *importHost
	for i := range importHosts {
		if importHosts[i].name == c.from {
			host = &importHosts[i]
		}
	}
	if host == nil {
		return usageErrorf(a.cmd, "voyage import: --from %q is not one of %s", c.from, strings.Join(importHostNames(), ", "))
	}
	if c.subagents != "" && host.name != claudecode.Agent {
		return usageErrorf(a.cmd, "voyage import: --subagents is for --from claude-code, whose subagents have transcripts of their own")
	}
	if len(c.witnesses) > 0 {
		return usageErrorf(a.cmd, "voyage import: --witness is for an exported voyage, not for --from %s", host.name)
	}
	method := strings.TrimSpace(a.g.method)
	if method == "" {
		method = a.getenv("HELM_METHOD")
	}
	if method == "" {
		method = host.name
	}
	if strings.EqualFold(method, "human") {
		return usageErrorf(a.cmd, "voyage import: --method human: an agent's session is never a person's work; name the agent (the default is %s)", host.name)
	}
	h, err := a.openHome()
	if err != nil {
		return err
	}
	identity, err := a.resolveIdentity("")
	if err != nil {
		return err
	}
	role, _, err := a.resolveRoleMethod(false)
	if err != nil {
		return err
	}
	if role == "" {
		role = "coder"
	}
	who := logbook.Who{Identity: identity, Role: role, Method: method}

	name, path := "standard input", ""
	var r io.Reader = a.stdin
	if file != "-" {
		name, path = printable(file), a.abs(file)
		f, err := os.Open(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
				return &usageError{Err: fmt.Errorf("voyage import --from %s: %w", host.name, err), Hint: "give the session's log: " + host.where}
			}
			return err
		}
		defer f.Close()
		if info, err := f.Stat(); err == nil && !info.Mode().IsRegular() {
			return &usageError{Err: fmt.Errorf("voyage import --from %s: %s is not a regular file", host.name, name), Hint: "give the session's log: " + host.where}
		}
		r = f
	}
	if c.subagents != "" {
		c.subagents = a.abs(c.subagents)
	}
	events, err := host.read(r, path, c.subagents)
	if err != nil {
		return &usageError{Err: fmt.Errorf("voyage import --from %s: %s: %w", host.name, name, err), Hint: "give the session's log: " + host.where + "; nothing was recorded"}
	}
	session, intent := "", ""
	for _, ev := range events {
		if session == "" {
			session = ev.Session
		}
		if intent == "" && ev.Kind == agent.Prompt && ev.Subagent == "" {
			intent = firstLineOf(ev.Text, 200)
		}
	}
	if session == "" {
		return &usageError{Err: fmt.Errorf("voyage import --from %s: %s holds no step of a session", host.name, name), Hint: "give the session's log: " + host.where}
	}
	if intent == "" {
		intent = host.name + " session " + session
	}
	key := host.name + ":" + session
	if !c.again {
		held, err := h.List(ctx, &helm.ListOptions{Status: helm.ListAll})
		if err != nil {
			return err
		}
		for _, v := range held {
			if v.Session == key {
				return &usageError{
					Err:  fmt.Errorf("voyage import --from %s: %w: voyage %s (%s) holds session %s already", host.name, helm.ErrInvalid, short(v.ID), printable(v.Intent), session),
					Hint: fmt.Sprintf("helm log --voyage %s reads it; helm voyage import --from %s --again %s makes another voyage of it", short(v.ID), host.name, file),
				}
			}
		}
	}
	rec := &sessionImport{a: a, h: h, host: host, who: who, key: key, summary: "imported from " + name}
	return rec.run(ctx, intent, events)
}

// sessionImport records a session's events: the session's voyage, one
// sub-voyage per subagent (nested as the subagents were).
type sessionImport struct {
	a       *app
	h       *helm.Home
	host    *importHost
	who     logbook.Who
	key     string
	summary string
	stack   []*helm.Voyage // the session's voyage, then the open subagents'
	// agentCalls are the descriptions of the Agent calls seen, the
	// intent of the subagent each starts.
	agentCalls []string
}

func (s *sessionImport) run(ctx context.Context, intent string, events []agent.Event) error {
	main, err := s.h.Start(ctx, intent, helm.OpenWaters, s.who, &helm.StartOptions{Session: s.key})
	if err != nil {
		return err
	}
	s.a.voyages = append(s.a.voyages, main)
	s.stack = []*helm.Voyage{main}
	steps := 0
	for _, ev := range events {
		if err := s.record(ctx, ev); err != nil {
			return fmt.Errorf("voyage %s: %w", short(s.top().ID()), err)
		}
		steps++
	}
	// Subagents the log left open end with the session.
	for len(s.stack) > 1 {
		if err := s.top().Complete(ctx, logbook.OutcomePartial, s.summary, s.who); err != nil {
			return err
		}
		s.stack = s.stack[:len(s.stack)-1]
	}
	if err := main.Complete(ctx, logbook.OutcomePartial, s.summary, s.who); err != nil {
		return err
	}
	if s.a.g.json {
		return writeJSON(s.a.stdout, main.Info())
	}
	_, err = fmt.Fprintln(s.a.stdout, main.ID())
	return err
}

func (s *sessionImport) top() *helm.Voyage { return s.stack[len(s.stack)-1] }

// record records one event as a step, as helm's hook records it: a
// subagent's start opens its sub-voyage (and its stop completes it), a
// call denied before it ran carries the deny decision with the reason the
// agent was shown.
func (s *sessionImport) record(ctx context.Context, ev agent.Event) error {
	step := s.host.stepOf(ev)
	switch ev.Kind {
	case agent.PreTool:
		if tc := ev.Tool; tc != nil {
			if tc.Failed {
				step.Decision = &logbook.StepDecision{Verdict: agent.Deny, Reason: tc.Error}
			}
			if tc.Name == "Agent" || tc.Name == "Task" {
				s.agentCalls = append(s.agentCalls, step.Text)
			}
		}
	case agent.SubagentStart:
		intent := "subagent " + ev.Subagent + " of " + s.key
		if n := len(s.agentCalls); n > 0 {
			intent, s.agentCalls = firstLineOf(s.agentCalls[n-1], 200), s.agentCalls[:n-1]
		}
		sub, err := s.h.Start(ctx, intent, helm.OpenWaters, s.who, &helm.StartOptions{Parent: s.top().ID(), Session: s.key + "/" + ev.Subagent})
		if err != nil {
			return err
		}
		s.a.voyages = append(s.a.voyages, sub)
		step.ID, step.Voyage = ev.Subagent, sub.ID()
		if _, err := s.top().Step(ctx, step, s.who); err != nil {
			return err
		}
		s.stack = append(s.stack, sub)
		return nil
	case agent.SubagentStop:
		if len(s.stack) < 2 {
			return nil // a stop without its start: nothing to close
		}
		sub := s.top()
		if err := sub.Complete(ctx, logbook.OutcomePartial, s.summary, s.who); err != nil {
			return err
		}
		s.stack = s.stack[:len(s.stack)-1]
		step.ID, step.Voyage = ev.Subagent, sub.ID()
		step.Result = &logbook.StepResult{Output: ev.Text}
	}
	_, err := s.top().Step(ctx, step, s.who)
	return err
}

// firstLineOf is s's first non-blank line, cut to n bytes at a rune.
func firstLineOf(s string, n int) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			if len(line) > n {
				cut := n
				for cut > 0 && !utf8RuneStart(line[cut]) {
					cut--
				}
				line = line[:cut] + "…"
			}
			return line
		}
	}
	return ""
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
