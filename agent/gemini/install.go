package gemini

import (
	"fmt"

	"github.com/helmlog/helm/agent/internal/settings"
)

// HookTimeout is the timeout, in milliseconds as Gemini CLI counts
// them, helm's hooks are installed with: 30 seconds, well beyond what
// helm takes to answer.
const HookTimeout = 30000

// HookName is the name helm's hook handlers carry (Gemini CLI shows it
// in /hooks and fingerprints project hooks by name and command).
const HookName = "helm"

// Status is what a settings document holds of helm's hooks.
type Status = settings.Status

type handler struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

var host = func() settings.Host {
	h := settings.Host{Name: Agent, Handler: func(command string) any {
		return handler{Name: HookName, Type: "command", Command: command, Timeout: HookTimeout}
	}}
	for _, e := range events {
		h.Events = append(h.Events, settings.Event{Name: e.name, Matcher: e.matcher})
	}
	return h
}()

// Install returns the .gemini/settings.json document doc with helm's
// hook running hookCommand on every event helm reads (matcher "*" on the
// tool events, name HookName, timeout HookTimeout), and every other byte
// of doc as it was; helm's handlers already there are replaced. An
// empty doc is an absent file. A doc that is not a JSON object is a
// *settings.SyntaxError with its line and column.
func Install(doc []byte, hookCommand string) ([]byte, error) {
	if !settings.IsHelm(Agent, hookCommand) {
		return nil, fmt.Errorf("install Gemini CLI hooks: %q is not a helm hook command (<helm> hook %s ...)", hookCommand, Agent)
	}
	return host.Install(doc, hookCommand)
}

// Uninstall returns doc without helm's handlers, and without what held
// only them.
func Uninstall(doc []byte) ([]byte, error) { return host.Uninstall(doc) }

// Installed reads which events of doc have helm's handler.
func Installed(doc []byte) (Status, error) { return host.Installed(doc) }

// Command is the hook command line for argv, quoted for the shell.
func Command(argv []string) string { return settings.Quote(argv) }
