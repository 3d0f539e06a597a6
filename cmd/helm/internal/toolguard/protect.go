package toolguard

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/helmlog/helm/agent"
	"github.com/helmlog/helm/policy"
)

// ProtectRule names the built-in rule that keeps the recorded agent away
// from its own record: decisions it makes name it as their rule.
const ProtectRule = "helm's own record (built in)"

// Protected is what a tool call of the recorded agent may never run or
// touch, whatever the policy says: the record of its session and the
// hooks that make it. The agent runs as the same user as helm, so only
// the guard stands between it and these.
type Protected struct {
	// Home is the helm home's directory: nothing in it is the agent's to
	// write (its voyages, its session index, its policy).
	Home string
	// Program is helm's own executable: run under any name, with hook,
	// it would record whatever payload the agent gives it.
	Program string
}

// hookHosts are the words after "hook" that make a helm hook command
// (the hosts, and the subcommands that edit their settings).
var hookHosts = []string{"claude-code", "gemini-cli", "install", "uninstall"}

// writeTools change the file they name.
var writeTools = []string{"Edit", "MultiEdit", "Write", "NotebookEdit", "write_file", "replace", "edit"}

// Protect decides a tool call (a PreTool or Permission event) by the
// built-in rule, before any rule of the policy, which cannot loosen it:
// a call is denied when
//
//   - a command it runs is helm's hook (helm hook HOST, install or
//     uninstall): helm by its name, by a path or link to its executable,
//     or by a name helm cannot know before it runs (`$(which helm) hook`),
//     with the word hook or a word helm cannot know; or any program with
//     the words hook and a host's name (a copy of helm);
//   - it writes (Edit, Write, ...) a path in the helm home or a hook
//     settings file;
//   - a shell command other than helm's own names a path in the helm
//     home, a hook settings file (.claude/settings*.json,
//     .gemini/settings*.json, in the project or the user's home) or a
//     .claude or .gemini directory.
//
// ok is false when the rule does not apply. An input Protect cannot read
// is left to Decide, which denies it.
func Protect(ev agent.Event, project string, prot Protected) (d agent.Decision, ok bool) {
	if ev.Tool == nil || ev.Kind != agent.PreTool && ev.Kind != agent.Permission {
		return agent.Decision{}, false
	}
	cwd := ev.Cwd
	if cwd == "" {
		cwd = project
	}
	calls, err := toolCalls(ev.Tool.Name, ev.Tool.Input, cwd)
	if err != nil {
		return agent.Decision{}, false
	}
	home := ""
	if prot.Home != "" {
		home = evalExisting(filepath.Clean(prot.Home))
	}
	deny := func(why string) (agent.Decision, bool) {
		return agent.Decision{Verdict: agent.Deny, Rule: ProtectRule, Reason: why + ": the record of this session is not the agent's to write; ask a person"}, true
	}
	write := slices.Contains(writeTools, ev.Tool.Name)
	for _, c := range calls {
		helm := false
		if c.argv != nil {
			switch runsHook(c.argv, cwd, prot.Program) {
			case hookYes:
				return deny("the command runs helm's hook (" + argvText(c.argv) + ")")
			case hookHelm:
				helm = true
			}
		}
		if c.argv == nil && !write {
			continue // a read (Read, Grep, Glob ...) of the home or the settings
		}
		if helm {
			continue // helm's own commands read and write the home
		}
		for _, p := range c.paths {
			if why := protectedPath(p, home); why != "" {
				return deny("the call touches " + why)
			}
		}
	}
	return agent.Decision{}, false
}

// hookRun says whether an argv runs helm's hook.
type hookRun int

const (
	hookNo   hookRun = iota
	hookHelm         // helm, not its hook
	hookYes
)

// runsHook judges argv: helm's hook, helm, or neither.
func runsHook(argv []string, cwd, program string) hookRun {
	words := argv[1:]
	for i, w := range words {
		if w == "hook" && i+1 < len(words) && slices.Contains(hookHosts, words[i+1]) {
			return hookYes // any program: a copy of helm under another name
		}
	}
	for _, w := range argv {
		// A script helm cannot read (sh -c "$(which helm) hook …") is
		// judged by its text.
		if text, ok := policy.Unknown(w); ok && hookText(text) {
			return hookYes
		}
	}
	_, unknownName := policy.Unknown(argv[0])
	if !unknownName && !isHelm(argv[0], cwd, program) {
		return hookNo
	}
	for i, w := range words {
		if w == "hook" && i+1 < len(words) && words[i+1] == "status" && !unknownName {
			continue // reads the settings only
		}
		if _, unknown := policy.Unknown(w); w == "hook" || unknown && !unknownName {
			return hookYes
		}
	}
	if unknownName {
		return hookNo // some program helm cannot name, not asked for a hook
	}
	return hookHelm
}

// isHelm says name runs helm: its base name is helm, or it is (a link to)
// helm's executable, by its path or found in PATH.
func isHelm(name, cwd, program string) bool {
	base := strings.TrimSuffix(path.Base(filepath.ToSlash(name)), ".exe")
	if base == "helm" {
		return true
	}
	if program == "" {
		return false
	}
	p := name
	switch {
	case strings.ContainsRune(name, '/'):
		if !filepath.IsAbs(p) {
			if cwd == "" {
				return false
			}
			p = filepath.Join(cwd, p)
		}
	default:
		lp, err := exec.LookPath(name)
		if err != nil {
			return false
		}
		p = lp
	}
	a, err := os.Stat(p)
	if err != nil {
		return false
	}
	b, err := os.Stat(program)
	return err == nil && os.SameFile(a, b) // a symlink or a hard link
}

// protectedPath says what p is when it is protected ("" when not): in
// the helm home, a hook settings file, or a .claude or .gemini
// directory. A path helm cannot know before the command runs is judged
// by its text.
func protectedPath(p, home string) string {
	if text, unknown := policy.Unknown(p); unknown {
		for _, w := range []string{".claude", ".gemini", "HELM_HOME", ".helm"} {
			if strings.Contains(text, w) {
				return "a path helm cannot know before it runs that names " + w + " (" + shown(text) + ")"
			}
		}
		if home != "" && strings.Contains(text, home) {
			return "a path in the helm home that helm cannot know before it runs (" + shown(text) + ")"
		}
		return ""
	}
	p = filepath.Clean(p)
	if home != "" && (p == home || strings.HasPrefix(p, home+string(filepath.Separator))) {
		return "the helm home (" + p + ")"
	}
	base, dir := filepath.Base(p), filepath.Base(filepath.Dir(p))
	switch {
	case base == ".claude" || base == ".gemini":
		return "a hook settings directory (" + p + ")"
	case (dir == ".claude" || dir == ".gemini") && strings.HasPrefix(base, "settings") && strings.HasSuffix(base, ".json"):
		return "a hook settings file (" + p + ")"
	}
	return ""
}

// argvText is argv as a message shows it.
func argvText(argv []string) string {
	words := make([]string, len(argv))
	for i, w := range argv {
		if t, ok := policy.Unknown(w); ok {
			w = "<" + t + ">"
		}
		words[i] = w
	}
	return strings.Join(words, " ")
}

// hookText says a text helm cannot parse names a hook command: the word
// hook and a host's name after it.
func hookText(text string) bool {
	_, after, ok := strings.Cut(text, "hook")
	if !ok {
		return false
	}
	for _, h := range hookHosts {
		if strings.Contains(after, h) {
			return true
		}
	}
	return false
}
