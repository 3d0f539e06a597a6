package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/agent"
	"github.com/helmlog/helm/agent/claudecode"
	"github.com/helmlog/helm/agent/gemini"
	"github.com/helmlog/helm/cmd/helm/internal/toolguard"
	"github.com/helmlog/helm/internal/regular"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/policy"
)

// helm hook claude-code and helm hook gemini-cli: the command an agent
// host runs at each hook event. One implementation for every host,
// through the agent model (package agent); the host's adapter reads the
// payload and writes the answer.

// hookAdapter is an agent host's side of helm hook HOST.
type hookAdapter struct {
	host  string // claude-code
	label string // Claude Code
	parse func(io.Reader) (agent.Event, error)
	// unknown is the adapter's error for an event it does not know.
	unknown error
	answer  func(agent.Event, agent.Decision, string) ([]byte, int)
	stepOf  func(agent.Event) logbook.Step
	// projectEnv names the variable the host sets in a hook's
	// environment to the project's directory.
	projectEnv string
	// promptEvent is the host's name of the event of a person's
	// prompt (the help's example).
	promptEvent string
	// usage: the host's transcript says each message's tokens
	// (claudecode.UsageSince).
	usage bool
}

var hookAdapters = []hookAdapter{
	{host: claudecode.Agent, label: "Claude Code", parse: claudecode.Parse, unknown: claudecode.ErrUnknownEvent,
		answer: claudecode.AnswerWithMessage, stepOf: claudecode.StepOf, projectEnv: "CLAUDE_PROJECT_DIR", promptEvent: "UserPromptSubmit", usage: true},
	{host: gemini.Agent, label: "Gemini CLI", parse: gemini.Parse, unknown: gemini.ErrUnknownEvent,
		answer: gemini.AnswerWithMessage, stepOf: gemini.StepOf, projectEnv: "GEMINI_PROJECT_DIR", promptEvent: "BeforeAgent"},
}

// newHookRunCmds are helm hook claude-code and helm hook gemini-cli.
func newHookRunCmds(a *app) []*cobra.Command {
	var out []*cobra.Command
	for _, ad := range hookAdapters {
		out = append(out, leafCmd(a, &cobra.Command{
			Use:   ad.host + " [--as ID --role R --method M] [--home DIR]",
			Short: "record one " + ad.label + " hook event (the host runs it)",
			Long: ad.label + ` runs this at each hook event, with the event's JSON on standard
input ("helm hook install ` + ad.host + `" writes the command into its settings).
helm records the event as a step of the session's voyage (a new session
starts one; a subagent gets a sub-voyage), decides tool calls and
permission requests by the guard rules of policy.toml, and holds a stop
by its gates; standard output is the host's answer and nothing else,
messages go to standard error.

The identity, role and method come from the command line (--as, --role,
--method), then HELM_IDENTITY, HELM_ROLE, HELM_METHOD and config.toml;
role defaults to coder and method to ` + ad.host + `. Nothing in the payload
sets them, and --method human is refused: the agent is never human.

A guard decision never fails open: when the rules cannot be read, the
home cannot be opened, or anything else fails before a decision, a tool
call is denied with the reason. A stop whose gates cannot be evaluated is
let go, so that a broken gate cannot hold the agent for ever. Recording
fails open: a step that cannot be recorded is said on standard error and
the call goes as decided, unless policy.toml says
[hooks] recording = "fail-closed", which denies it.`,
			Example: `  helm hook ` + ad.host + ` --as claude-1 < event.json
  echo '{"session_id":"s1","hook_event_name":"` + ad.promptEvent + `","prompt":"hi","cwd":"."}' | helm hook ` + ad.host + ` --as claude-1`,
		}, &hookRunCmd{ad: ad}))
	}
	return out
}

type hookRunCmd struct{ ad hookAdapter }

func (*hookRunCmd) Flags(*pflag.FlagSet) {}

func (l *hookRunCmd) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 0 {
		return usageErrorf(a.cmd, "hook %s: no arguments expected (the event comes on standard input), got %q", l.ad.host, args)
	}
	if a.stdin == nil {
		a.stdin = strings.NewReader("")
	}
	ev, err := l.ad.parse(a.stdin)
	if errors.Is(err, l.ad.unknown) {
		// An event helm does not read (Claude Code's PostToolBatch,
		// MessageDisplay): nothing to record or answer.
		fmt.Fprintf(a.stderr, "helm: hook %s: %v: not recorded\n", l.ad.host, err)
		return nil
	}
	if err != nil {
		// Exit 2: the hosts block a tool call whose hook exits 2.
		return &usageError{Err: fmt.Errorf("hook %s: %w", l.ad.host, err), Hint: "helm hook " + l.ad.host + " reads one hook event's JSON on standard input, as " + l.ad.label + " sends it"}
	}
	r := &hookRun{a: a, ad: l.ad, ev: ev}
	return r.bounded(ctx)
}

// isStop says ev is an agent wanting to stop, which a gate may hold.
func isStop(ev agent.Event) bool { return ev.Kind == agent.Stop || ev.Kind == agent.SubagentStop }

// hookWho is who a hooked session is recorded as: identity (--as,
// HELM_IDENTITY, config.toml), role (--role, HELM_ROLE, config.toml,
// else coder), method (--method, HELM_METHOD, config.toml, else the
// host's name). Never the voyage's identity, never the payload; a human
// method is refused.
func (a *app) hookWho(host string) (logbook.Who, error) {
	cfg, err := a.config()
	if err != nil {
		// The home is judged next (a call denied, a result not
		// recorded): the command line may name all three.
		cfg = &config{}
	}
	pick := func(flag, env, conf, def string) string {
		for _, v := range []string{strings.TrimSpace(flag), a.getenv(env), strings.TrimSpace(conf), def} {
			if v != "" {
				return v
			}
		}
		return ""
	}
	who := logbook.Who{
		Identity: pick(a.g.as, "HELM_IDENTITY", cfg.Identity, ""),
		Role:     pick(a.g.role, "HELM_ROLE", cfg.Role, "coder"),
		Method:   pick(a.g.method, "HELM_METHOD", cfg.Method, host),
	}
	if who.Identity == "" {
		return logbook.Who{}, &usageError{Err: fmt.Errorf("hook %s: %w: no identity to record the session under: none of --as, HELM_IDENTITY or identity in %s is set", host, helm.ErrMissingWho, a.configPath()),
			Hint: "helm hook install " + host + " --as NAME, which writes the hook command with it"}
	}
	if err := logbook.ValidateIdentity(who.Identity); err != nil {
		return logbook.Who{}, &usageError{Err: fmt.Errorf("hook %s: identity %q: %v", host, who.Identity, err), Hint: "helm hook install " + host + " --as NAME"}
	}
	if strings.EqualFold(who.Method, "human") {
		return logbook.Who{}, &usageError{Err: fmt.Errorf("hook %s: method human refused: a hooked agent is never human", host),
			Hint: "helm hook install " + host + " (the method defaults to " + host + "), which rewrites the hook command"}
	}
	return who, nil
}

// hookRun is one hook event being decided, recorded and answered.
type hookRun struct {
	a   *app
	ad  hookAdapter
	ev  agent.Event
	who logbook.Who
	// pol is the guard rules (nil: none), once read.
	pol *policy.Policy
	// voyage names the voyage the event went to, for messages.
	voyage string

	// mu guards what the worker tells bounded before it is done: the
	// decision (decided), and whether the rules say recording fails
	// closed.
	mu          sync.Mutex
	decided     *agent.Decision
	failsClosed bool
}

// hookDeadline bounds a hook: whatever holds it (a lock of the home that
// another process holds, a file that does not answer, a slow disk), it
// answers within this time, as it decided (a tool call it had no time to
// decide is denied). The hosts let a call go when a hook times out
// (Claude Code's is installed at claudecode.HookTimeout, 30 s): a hook
// that waited longer would let a denied call run. It covers the session
// lock's wait (hookLockWait) and recording.
const hookDeadline = 10 * time.Second

// hookResult is what the worker of a hook answers.
type hookResult struct {
	out []byte
	err error
}

// bounded runs the hook's work (work) in a goroutine and answers within
// the deadline (Main.hookDeadline in tests, else hookDeadline): when the
// work is not done by then, the answer is the decision the work
// published (publish), or a denial of a tool call it did not decide, and
// the work is left behind (the process exits; nothing of the app is
// touched again: app.abandoned). The work writes its messages to a
// buffer of its own, copied to standard error when it is done in time.
func (r *hookRun) bounded(ctx context.Context) error {
	a := r.a
	stdout, stderr := a.stdout, a.stderr
	var msgs bytes.Buffer
	a.stderr = &msgs
	done := make(chan hookResult, 1)
	if wg := a.main.hookWorkers; wg != nil {
		wg.Add(1)
	}
	go func() {
		if wg := a.main.hookWorkers; wg != nil {
			defer wg.Done()
		}
		out, err := r.work(ctx)
		done <- hookResult{out, err}
	}()
	deadline := hookDeadline
	if a.main.hookDeadline > 0 {
		deadline = a.main.hookDeadline
	}
	timer := time.NewTimer(deadline)
	defer timer.Stop()
	select {
	case res := <-done:
		a.stderr = stderr
		_, _ = stderr.Write(msgs.Bytes())
		if res.err != nil {
			return res.err
		}
		_, err := stdout.Write(res.out)
		return err
	case <-timer.C:
	}
	a.abandoned = true // the work goes on with the app: leave it alone
	r.mu.Lock()
	d, known, closed := agent.Decision{}, r.decided != nil, r.failsClosed
	if known {
		d = *r.decided
	}
	r.mu.Unlock()
	why := fmt.Sprintf("helm did not finish this %s event within %s (a lock of the home held, or a file it reads not answering)", r.ev.Kind, deadline)
	fmt.Fprintf(stderr, "helm: hook %s: %s: not recorded\n", r.ad.host, why)
	switch {
	case r.decidesCall() && !known:
		d = agent.Decision{Verdict: agent.Deny, Reason: why + ", so it denies this call it could not decide"}
	case r.decidesCall() && d.Verdict != agent.Deny && closed:
		d = agent.Decision{Verdict: agent.Deny, Reason: why + ", and its rules say [hooks] recording = \"fail-closed\""}
	case isStop(r.ev) && !known:
		fmt.Fprintf(stderr, "helm: hook %s: the stop's gates could not be evaluated; it is let go\n", r.ad.host)
	}
	out, _ := r.ad.answer(r.ev, d, why+": not recorded")
	_, err := stdout.Write(out)
	return err
}

// publish tells bounded the decision made, before it is recorded.
func (r *hookRun) publish(d agent.Decision) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.decided = &d
	r.failsClosed = r.pol.RecordingFailsClosed()
}

// work decides, records and answers the event: its answer, or an error
// to exit with.
func (r *hookRun) work(ctx context.Context) ([]byte, error) {
	a, ev := r.a, r.ev
	who, err := a.hookWho(r.ad.host)
	if err != nil {
		if isStop(ev) {
			// Exit 2 would hold the agent: a stop is let go.
			fmt.Fprintf(a.stderr, "helm: hook %s: %v; the %s is let go, not recorded\n", r.ad.host, err, ev.Kind)
			return nil, nil
		}
		return nil, err
	}
	r.who = who
	err = r.rules()
	var d agent.Decision
	if r.decidesCall() {
		switch {
		case err != nil:
			d = agent.Decision{Verdict: agent.Deny, Reason: "helm cannot decide this call, so it denies it: " + oneLine(err)}
			if errors.As(err, new(*policy.Error)) {
				d = toolguard.Unreadable(errors.New(oneLine(err)))
			}
		default:
			var ok bool
			if d, ok = toolguard.Protect(ev, r.project(), r.protected()); !ok {
				d, _ = toolguard.Decide(r.pol, ev, r.who, r.project()) // an input it cannot read is denied, with why
			}
		}
		r.publish(d)
	}
	var home *helm.Home
	if err == nil {
		home, err = a.openHome()
	}
	message := ""
	if err == nil {
		err = r.record(ctx, home, &d)
	}
	if err != nil {
		where := "home " + r.homeName()
		if r.voyage != "" {
			where = "voyage " + r.voyage + " of " + where
		}
		fmt.Fprintf(a.stderr, "helm: hook %s: the %s event was not recorded in %s: %s\n", r.ad.host, ev.Kind, where, oneLine(err))
		message = "helm could not record this " + string(ev.Kind) + " event: " + oneLine(err)
		switch {
		case r.decidesCall() && d.Verdict != agent.Deny && r.pol.RecordingFailsClosed():
			d = agent.Decision{Verdict: agent.Deny, Reason: "helm could not record this call, and its rules say [hooks] recording = \"fail-closed\": " + oneLine(err)}
		case isStop(ev) && d.Verdict == "":
			fmt.Fprintf(a.stderr, "helm: hook %s: the stop's gates could not be evaluated; it is let go\n", r.ad.host)
		}
	}
	out, _ := r.ad.answer(ev, d, message)
	return out, nil
}

// protected is what the built-in rule keeps the agent from: the home and
// helm's own executable.
func (r *hookRun) protected() toolguard.Protected {
	p := toolguard.Protected{Home: r.a.homeDirPath}
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			p.Program = exe
		}
	}
	return p
}

// decidesCall says the event asks the guard about a tool call: a call
// about to run, or a permission request (not one the host denied
// itself).
func (r *hookRun) decidesCall() bool {
	ev := r.ev
	return ev.Tool != nil && (ev.Kind == agent.PreTool || ev.Kind == agent.Permission && !ev.Tool.Failed)
}

// rules reads the guard rules, from the home (judged first): none of it
// takes a lock, so a tool call is decided even when the home's locks are
// held.
func (r *hookRun) rules() error {
	dir, err := r.a.homeDir()
	if err != nil {
		return err
	}
	cfg, err := r.a.config()
	if err != nil {
		return err
	}
	if r.pol, err = r.a.policy(dir, cfg); err != nil {
		var pe *policy.Error
		if !errors.As(err, &pe) {
			return err
		}
		return pe
	}
	return nil
}

// homeName is the home for messages.
func (r *hookRun) homeName() string {
	if r.a.home != nil {
		return homeName(r.a.home)
	}
	if dir, err := r.a.homePath(); err == nil {
		return dir
	}
	return "(none)"
}

// project is the project's directory: the host's variable in the hook's
// environment (the agent does not set it), else the directory the host
// ran the hook in. Never the event's cwd, which follows the agent's cd:
// an agent that went to / would have every path in its project.
func (r *hookRun) project() string {
	if p := r.a.getenv(r.ad.projectEnv); p != "" {
		return p
	}
	if r.a.main.Dir != "" {
		return r.a.main.Dir
	}
	if wd, err := os.Getwd(); err == nil {
		return wd
	}
	return r.ev.Cwd
}

// sessionKey is the voyage's Session: host:session, and /agent for a
// subagent's.
func (r *hookRun) sessionKey(subagent string) string {
	k := r.ad.host + ":" + r.ev.Session
	if subagent != "" {
		k += "/" + subagent
	}
	return k
}

// record records the event's steps in the session's voyage (and the
// subagent's), under the session index's lock; for a stop, d is the
// gates' decision over the voyage's entries, made before its step is
// recorded.
func (r *hookRun) record(ctx context.Context, home *helm.Home, d *agent.Decision) error {
	ev := r.ev
	ix, err := openIndex(ctx, home.Dir(), r.ad.host, ev.Session)
	if err != nil {
		return err
	}
	defer ix.close()
	main, err := r.sessionVoyage(ctx, home, ix)
	if err != nil {
		return err
	}
	r.voyage = main.ID()
	v, tr := main, &ix.Main
	transcript := ev.Transcript
	if ev.Subagent != "" {
		if v, tr, err = r.subVoyage(ctx, home, ix, main); err != nil {
			return err
		}
		r.voyage = v.ID()
		transcript = subagentTranscript(ev)
	}
	step := r.ad.stepOf(ev)
	switch ev.Kind {
	case agent.PreTool:
		if step.ID == "" && d.Verdict != agent.Deny {
			step.ID = tr.openCall(step.Tool) // its result comes without one
		}
		if step.Tool == "Agent" || step.Tool == "Task" {
			ix.setAgentCall(step.Text)
		}
	case agent.PostTool:
		if step.ID == "" {
			step.ID = tr.closeCall(step.Tool)
		}
		r.readUsage(tr, transcript, ev.Subagent != "")
		step.Usage = tr.takeCall(step.ID)
	case agent.Stop, agent.SubagentStop:
		if err := r.gate(ctx, v, d); err != nil {
			return err
		}
		r.readUsage(tr, transcript, ev.Subagent != "")
		step = logbook.Step{Kind: logbook.StepMessage, Agent: step.Agent, Session: step.Session, Text: ev.Text, Usage: tr.takeAll()}
	case agent.SessionEnd:
		r.readUsage(tr, transcript, ev.Subagent != "")
		step.Usage = tr.takeAll()
	}
	if r.decidesCall() || isStop(ev) {
		if d.Verdict != "" {
			dd := *d
			step.Decision = &dd
		}
	}
	switch ev.Kind {
	case agent.SubagentStart:
		step.Voyage = v.ID()
		if _, err := main.Step(ctx, step, r.who); err != nil {
			return err
		}
	case agent.SubagentStop:
		if _, err := v.Step(ctx, step, r.who); err != nil {
			return err
		}
		if d.Verdict == agent.Block {
			break // the subagent goes on
		}
		end := r.ad.stepOf(ev) // with its Result: the subagent's end
		end.Voyage = v.ID()
		if _, err := main.Step(ctx, end, r.who); err != nil {
			return err
		}
		summary := clip(ev.Text, 500)
		if summary == "" {
			summary = "the subagent stopped"
		}
		if err := v.Complete(ctx, logbook.OutcomeCompleted, summary, r.who); err != nil {
			return err
		}
		tr.Done = true
		ix.endSub(ev.Subagent)
	case agent.SessionEnd:
		if _, err := v.Step(ctx, step, r.who); err != nil {
			return err
		}
		reason := ev.Text
		if reason == "" {
			reason = "no reason given"
		}
		if err := v.Complete(ctx, logbook.OutcomePartial, "session ended: "+reason, r.who); err != nil {
			return err
		}
	default:
		if _, err := v.Step(ctx, step, r.who); err != nil {
			return err
		}
	}
	return ix.save()
}

// gate decides a stop by the gates over the voyage's entries.
func (r *hookRun) gate(ctx context.Context, v *helm.Voyage, d *agent.Decision) error {
	var entries []logbook.Entry
	for e, err := range v.Entries(ctx, nil) {
		if err != nil {
			return fmt.Errorf("read the entries the stop's gates look at: %w", err)
		}
		entries = append(entries, e)
	}
	*d = toolguard.Gate(r.pol, r.ev, r.who, entries)
	r.publish(*d)
	return nil
}

// sessionVoyage returns the session's voyage: the one the index names
// when it is the session's (resumed when it was left partial), else a
// new one.
func (r *hookRun) sessionVoyage(ctx context.Context, home *helm.Home, ix *lockedIndex) (*helm.Voyage, error) {
	key := r.sessionKey("")
	if ix.Main.Voyage != "" {
		v, ok, err := r.findVoyage(ctx, home, ix.Main.Voyage, key)
		if err != nil || ok {
			return v, err
		}
	}
	intent := fmt.Sprintf("%s session %s in %s", r.ad.label, r.ev.Session, r.ev.Cwd)
	if st := r.ad.stepOf(r.ev); st.Kind == logbook.StepPrompt && strings.TrimSpace(st.Text) != "" {
		intent = clip(st.Text, 200)
	}
	v, err := r.start(ctx, home, intent, key, "")
	if err != nil {
		return nil, err
	}
	ix.Main = track{Voyage: v.ID()}
	ix.Subagents = nil
	return v, nil
}

// subVoyage returns the sub-voyage of the event's subagent, started when
// new (at SubagentStart, or its first event) as a sub-voyage of main.
func (r *hookRun) subVoyage(ctx context.Context, home *helm.Home, ix *lockedIndex, main *helm.Voyage) (*helm.Voyage, *track, error) {
	ev := r.ev
	tr := ix.sub(ev.Subagent)
	key := r.sessionKey(ev.Subagent)
	if tr.Voyage != "" && !tr.Done {
		v, ok, err := r.findVoyage(ctx, home, tr.Voyage, key)
		if err != nil || ok {
			return v, tr, err
		}
	}
	kind := ev.SubagentType
	if kind == "" {
		kind = "subagent"
	}
	intent := fmt.Sprintf("%s %s of %s session %s", kind, ev.Subagent, r.ad.label, ev.Session)
	if ix.AgentCall != "" {
		intent = clip(ix.AgentCall, 200)
		ix.AgentCall = ""
	}
	v, err := r.start(ctx, home, intent, key, main.ID())
	if err != nil {
		return nil, nil, err
	}
	*tr = track{Voyage: v.ID()}
	return v, tr, nil
}

// findVoyage opens the voyage id when it records the session key and
// takes steps (a partial one is resumed); ok false when a new one must
// start instead, which is said.
func (r *hookRun) findVoyage(ctx context.Context, home *helm.Home, id, key string) (*helm.Voyage, bool, error) {
	v, err := home.Voyage(ctx, id)
	if errors.Is(err, helm.ErrNoVoyage) {
		fmt.Fprintf(r.a.stderr, "helm: hook %s: voyage %s, which the session index names, is not in %s: a new voyage starts\n", r.ad.host, id, homeName(home))
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	r.a.voyages = append(r.a.voyages, v)
	info := v.Info()
	switch {
	case info.Session != key:
		fmt.Fprintf(r.a.stderr, "helm: hook %s: voyage %s, which the session index names, records %q, not %q: a new voyage starts\n", r.ad.host, id, info.Session, key)
		return nil, false, nil
	case info.Status == logbook.StatusPartial:
		if err := v.Resume(ctx, r.ad.label+" session "+r.ev.Session+" goes on", r.who); err != nil {
			return nil, false, err
		}
	case info.Status.Final():
		fmt.Fprintf(r.a.stderr, "helm: hook %s: voyage %s of the session is %s: a new voyage starts\n", r.ad.host, id, info.Status)
		return nil, false, nil
	}
	return v, true, nil
}

// start starts a voyage for the session key in the event's git
// workspace, as voyage new does.
func (r *hookRun) start(ctx context.Context, home *helm.Home, intent, key, parent string) (*helm.Voyage, error) {
	rn, err := r.a.runner("", "")
	if err != nil {
		return nil, err
	}
	if r.ev.Cwd != "" {
		rn.Dir = r.ev.Cwd
	}
	ws, wsErr := rn.Workspace(ctx)
	opts := startIn(parent, ws, wsErr)
	opts.Session = key
	v, err := home.Start(ctx, intent, helm.OpenWaters, r.who, &opts)
	if err != nil {
		return nil, err
	}
	r.a.voyages = append(r.a.voyages, v)
	return v, nil
}

// readUsage reads the usage of the messages written to the transcript
// since the last hook: a message's usage goes to the call it made (by
// tool_use id), else to the turn.
func (r *hookRun) readUsage(tr *track, path string, sidechain bool) {
	if !r.ad.usage || path == "" {
		return
	}
	f, err := regular.Open(path) // a FIFO there would hold the hook
	if err != nil {
		return // no transcript (yet), or no file: no usage
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return
	} else if tr.Offset < 0 || fi.Size() < tr.Offset {
		tr.Offset = 0 // a new file, or an offset the index's editor made up
	}
	msgs, next, err := claudecode.UsageSince(f, tr.Offset, sidechain)
	if err != nil {
		fmt.Fprintf(r.a.stderr, "helm: hook %s: read the usage in %s: %v\n", r.ad.host, path, err)
	}
	tr.Offset = next
	for _, m := range msgs {
		if tr.seen(m.ID) {
			continue
		}
		if len(m.Tools) > 0 {
			tr.addPending(m.Tools[0], m.Usage)
		} else {
			tr.addTurn(m.Usage)
		}
	}
}

// subagentTranscript is where Claude Code writes a subagent's own
// transcript: beside the session's, <session>/subagents/agent-<id>.jsonl.
func subagentTranscript(ev agent.Event) string {
	if ev.Transcript == "" || !safeName().MatchString(ev.Subagent) {
		return ""
	}
	return filepath.Join(strings.TrimSuffix(ev.Transcript, ".jsonl"), "subagents", "agent-"+ev.Subagent+".jsonl")
}

// clip is s's first non-empty line, cut to n bytes.
func clip(s string, n int) string {
	for line := range strings.Lines(s) {
		if line = strings.TrimSpace(line); line != "" {
			return head(line, n)
		}
	}
	return ""
}

// head is the first n bytes of s at most, cut at a rune's start.
func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// oneLine is err's message on one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
