package claudecode

import (
	"fmt"

	"github.com/helmlog/helm/agent/internal/settings"
)

// HookTimeout is the timeout, in seconds, helm's hooks are installed
// with. Claude Code lets a call go on when a hook times out, so it is
// generous (Claude Code's own default is 60): helm answers well within
// it, and says so in its benchmark.
const HookTimeout = 30

// Status is what a settings document holds of helm's hooks.
type Status = settings.Status

// SyntaxError is a settings document that is not a JSON object, with
// where (line and column).
type SyntaxError = settings.SyntaxError

type handler struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

var host = func() settings.Host {
	h := settings.Host{Name: Agent, Handler: func(command string) any {
		return handler{Type: "command", Command: command, Timeout: HookTimeout}
	}}
	for _, e := range events {
		h.Events = append(h.Events, settings.Event{Name: e.name, Matcher: e.matcher})
	}
	return h
}()

// Install returns the settings.json document doc with helm's hook
// running hookCommand on every event helm reads (matcher "*" where the
// event has matchers, type "command", timeout HookTimeout), and every
// other byte of doc as it was. helm's handlers already there (a command
// "<helm> hook claude-code ...") are replaced, so installing twice gives
// the same bytes. An empty doc is an absent file. A doc that is not a
// JSON object (a comment, a syntax error) is a *SyntaxError with its
// line and column.
func Install(doc []byte, hookCommand string) ([]byte, error) {
	if !settings.IsHelm(Agent, hookCommand) {
		return nil, fmt.Errorf("install Claude Code hooks: %q is not a helm hook command (<helm> hook %s ...)", hookCommand, Agent)
	}
	return host.Install(doc, hookCommand)
}

// Uninstall returns doc without helm's handlers, and without the
// matcher groups, event lists and hooks object that held only them.
func Uninstall(doc []byte) ([]byte, error) { return host.Uninstall(doc) }

// Installed reads which events of doc have helm's handler, and with
// which commands.
func Installed(doc []byte) (Status, error) { return host.Installed(doc) }

// Command is the hook command line for argv (helm's path, "hook",
// "claude-code", its flags), quoted for the shell Claude Code runs it
// with.
func Command(argv []string) string { return settings.Quote(argv) }
