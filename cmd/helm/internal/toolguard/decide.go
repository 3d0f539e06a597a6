package toolguard

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/helmlog/helm/agent"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/policy"
)

// ErrInput is wrapped by Decide's error when a tool call's input cannot
// be read: the call is denied.
var ErrInput = errors.New("tool input cannot be read")

// NoDecision is the decision when no rule matched: the host's own
// permission flow holds (Verdict "").
var NoDecision = agent.Decision{}

// Unreadable is the decision when the policy cannot be read or parsed:
// deny, with why. A guard never fails open.
func Unreadable(err error) agent.Decision {
	return agent.Decision{Verdict: agent.Deny, Reason: "helm cannot read its guard rules, so it denies every tool call until they are fixed: " + err.Error()}
}

// Decide answers a tool call about to run (a PreTool or Permission
// event): it builds the requests the call makes (Requests) and checks
// them all against p, the strictest verdict winning (policy.CheckAll:
// a rule allows the call only when rules allowed every command, path and
// host of it). The decision names the rule that decided and where it is
// written ("no rm -rf" (policy.toml:3)) and a reason the agent is shown.
// When no rule matched it is NoDecision: the host's own permission flow
// holds. An input that cannot be decoded is denied, with an error
// wrapping ErrInput saying why. project is the project's top directory
// ("" for the event's, else its working directory).
func Decide(p *policy.Policy, ev agent.Event, who logbook.Who, project string) (agent.Decision, error) {
	reqs, err := Requests(ev, who, project)
	if err != nil {
		return agent.Decision{Verdict: agent.Deny, Reason: "helm denies a tool call it cannot read: " + err.Error()}, err
	}
	return decide(p, reqs), nil
}

// decide checks reqs against p.
func decide(p *policy.Policy, reqs []policy.Request) agent.Decision {
	v := p.CheckAll(reqs)
	if v.Rule == nil {
		return NoDecision
	}
	// The request that decided: one the rule matches for sure, if any,
	// else one it matches because something is unknown.
	unsure := ""
	for _, r := range reqs {
		if c := p.Check(r); c.Decision != v.Decision || c.Rule != v.Rule {
			continue
		}
		if surely(*v.Rule, r) {
			unsure = ""
			break
		}
		if unsure == "" {
			unsure = unknownIn(r)
		}
	}
	d := agent.Decision{Rule: v.RuleName(), Reason: v.Rule.Reason}
	switch v.Decision {
	case policy.Allow:
		d.Verdict = agent.Allow
		return d
	case policy.Ask:
		d.Verdict = agent.Ask
	default:
		d.Verdict = agent.Deny
	}
	if d.Reason == "" {
		d.Reason = v.String() + " of helm's guard rules"
	}
	if unsure != "" {
		d.Reason = "helm cannot tell what this command runs: " + unsure + "; " + d.Reason
	}
	return d
}

// surely reports whether rule matches r without reading anything
// unknown as what it needs: as a rule that allows would.
func surely(rule policy.Rule, r policy.Request) bool {
	rule.Decision = policy.Allow
	return (&policy.Policy{Rules: []policy.Rule{rule}}).Check(r).Rule != nil
}

// unknownIn says what a request holds that is known only when it runs.
func unknownIn(r policy.Request) string {
	var whys []string
	for _, argv := range r.Commands {
		for i, w := range argv {
			if why, ok := policy.Unknown(w); ok {
				if i > 0 {
					why = "an argument is " + why
				}
				whys = append(whys, why)
			}
		}
	}
	for _, w := range append(append([]string{}, r.Paths...), r.Hosts...) {
		if why, ok := policy.Unknown(w); ok {
			whys = append(whys, why)
		}
	}
	return strings.Join(dedupe(whys), "; ")
}

// Requests returns the requests a tool call makes, for policy.CheckAll:
// one for each command a shell call runs (with its Commands), and one
// for each path and host each touches (with its command); one for each
// path and host of another tool; one naming the tool alone when it
// touches none. Every request carries the event, the tool, who acts and
// the project.
func Requests(ev agent.Event, who logbook.Who, project string) ([]policy.Request, error) {
	if ev.Tool == nil {
		return nil, fmt.Errorf("%w: the %s event names no tool call", ErrInput, ev.Kind)
	}
	event := policy.EventTool
	switch ev.Kind {
	case agent.PreTool:
	case agent.Permission:
		event = policy.EventPermission
	default:
		return nil, fmt.Errorf("%w: a %s event is not a tool call about to run", ErrInput, ev.Kind)
	}
	if project == "" {
		project = ev.Project
	}
	if project == "" {
		project = ev.Cwd
	}
	if project != "" {
		project = evalExisting(filepath.Clean(project))
	}
	cwd := ev.Cwd
	if cwd == "" {
		cwd = project
	}
	base := policy.Request{Event: event, Tool: ev.Tool.Name, Identity: who.Identity, Role: who.Role, Method: who.Method, Project: project}
	calls, err := toolCalls(ev.Tool.Name, ev.Tool.Input, cwd)
	if err != nil {
		return nil, err
	}
	var out []policy.Request
	for _, c := range calls {
		r := base
		if c.argv != nil {
			r.Commands = [][]string{c.argv}
			out = append(out, r)
		}
		for _, p := range dedupe(c.paths) {
			rp := r
			rp.Paths = []string{p}
			out = append(out, rp)
		}
		for _, h := range dedupe(c.hosts) {
			rh := r
			rh.Hosts = []string{h}
			out = append(out, rh)
		}
	}
	if len(out) == 0 {
		out = append(out, base)
	}
	return out, nil
}

// urlPattern finds the URLs in a prompt (Gemini CLI's web_fetch takes
// them in its prompt). It is compiled on first use: every start of helm
// runs this package's initialisation.
var urlPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`) })

// toolCalls reads what a tool call runs and touches from its input, by
// the tool's name (Claude Code's and Gemini CLI's).
func toolCalls(tool string, input json.RawMessage, cwd string) ([]call, error) {
	var in map[string]any
	if len(input) > 0 {
		if err := json.Unmarshal(input, &in); err != nil {
			return nil, fmt.Errorf("%w: %s's input is not a JSON object: %v", ErrInput, tool, err)
		}
	}
	str := func(keys ...string) (string, bool, error) {
		for _, k := range keys {
			v, ok := in[k]
			if !ok || v == nil {
				continue
			}
			s, ok := v.(string)
			if !ok {
				return "", false, fmt.Errorf("%w: %s's %s is not a string", ErrInput, tool, k)
			}
			if strings.IndexByte(s, 0) >= 0 {
				// No path, command or URL holds a NUL; helm marks
				// what it cannot know with one.
				return "", false, fmt.Errorf("%w: %s's %s holds a NUL byte", ErrInput, tool, k)
			}
			return s, true, nil
		}
		return "", false, nil
	}
	home, _ := os.UserHomeDir()
	res := newResolver()
	pathCall := func(keys ...string) ([]call, error) {
		p, ok, err := str(keys...)
		if err != nil {
			return nil, err
		}
		if !ok {
			if cwd == "" {
				return nil, nil
			}
			p = cwd
		}
		return []call{{paths: res.paths(p, cwd, home)}}, nil
	}
	switch tool {
	case "Bash", "run_shell_command":
		cmd, ok, err := str("command")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%w: %s has no command", ErrInput, tool)
		}
		dir := cwd
		if d, ok, err := str("directory", "dir_path"); err != nil {
			return nil, err
		} else if ok {
			dir = resolvePath(d, cwd, home)
		}
		calls, _ := commands(cmd, dir) // a script that does not parse is an unknown command
		return calls, nil
	case "Read", "Edit", "MultiEdit", "Write", "read_file", "write_file", "replace", "edit":
		if _, ok, err := str("file_path", "absolute_path", "path"); err != nil || !ok {
			if err == nil {
				err = fmt.Errorf("%w: %s names no file_path", ErrInput, tool)
			}
			return nil, err
		}
		return pathCall("file_path", "absolute_path", "path")
	case "NotebookEdit", "NotebookRead":
		return pathCall("notebook_path")
	case "LS", "list_directory", "Grep", "search_file_content", "grep":
		return pathCall("path", "dir_path")
	case "Glob", "glob":
		calls, err := pathCall("path", "dir_path")
		if err != nil {
			return nil, err
		}
		if pat, ok, err := str("pattern"); err != nil {
			return nil, err
		} else if ok && pat != "" {
			dir := cwd
			if len(calls) > 0 {
				dir = calls[0].paths[0]
			}
			// The pattern's fixed part says where it reads: /etc/** or
			// ../../x* (not cleaned: link/../* is above link's
			// target); a ".." after a wildcard (*/../..) climbs from
			// wherever the wildcard matched.
			fixed := pat
			if i := strings.IndexAny(fixed, "*?[{"); i >= 0 {
				fixed = fixed[:strings.LastIndexAny(fixed[:i], "/"+string(filepath.Separator))+1]
				if slices.Contains(strings.Split(filepath.ToSlash(pat[i:]), "/"), "..") {
					calls = append(calls, call{paths: []string{policy.UnknownWord("the pattern " + quote(pat) + " climbs with .. from what it matches")}})
				}
			}
			if fixed == "" {
				fixed = "."
			}
			calls = append(calls, call{paths: res.paths(fixed, dir, home)})
		}
		return calls, nil
	case "read_many_files":
		var c call
		if ps, ok := in["paths"].([]any); ok {
			for _, p := range ps {
				s, ok := p.(string)
				if !ok {
					return nil, fmt.Errorf("%w: %s's paths are not strings", ErrInput, tool)
				}
				if strings.IndexByte(s, 0) >= 0 {
					return nil, fmt.Errorf("%w: %s's paths hold a NUL byte", ErrInput, tool)
				}
				c.paths = append(c.paths, res.paths(s, cwd, home)...)
			}
		}
		return []call{c}, nil
	case "WebFetch", "web_fetch":
		u, ok, err := str("url")
		if err != nil {
			return nil, err
		}
		var urls []string
		if ok {
			urls = []string{u}
		} else {
			prompt, _, err := str("prompt")
			if err != nil {
				return nil, err
			}
			urls = urlPattern().FindAllString(prompt, -1)
		}
		var c call
		for _, u := range urls {
			h := urlHost(u)
			if h == "" && !strings.Contains(u, "://") {
				h = urlHost("https://" + u)
			}
			if h == "" {
				return nil, fmt.Errorf("%w: %s's url %q names no host", ErrInput, tool, u)
			}
			c.hosts = append(c.hosts, h)
		}
		return []call{c}, nil
	case "WebSearch":
		var c call
		if ds, ok := in["allowed_domains"].([]any); ok {
			for _, d := range ds {
				if s, ok := d.(string); ok {
					c.hosts = append(c.hosts, strings.ToLower(s))
				}
			}
		}
		return []call{c}, nil
	}
	// Another tool (mcp__*, Task, ...): matched by its name, and by the
	// paths and URLs its input names.
	c := inputCall{res: res, cwd: cwd, home: home}
	c.value("", in, 0)
	if c.err != nil {
		return nil, fmt.Errorf("%w: %s's input %v", ErrInput, tool, c.err)
	}
	if len(c.paths)+len(c.hosts) == 0 {
		return nil, nil
	}
	return []call{c.call}, nil
}

// pathKeys end the names of the keys of a tool's input that hold paths
// (path, file_path, filePath, paths, directory, cwd, ...), compared in
// lower case without _ and -.
var pathKeys = []string{"path", "paths", "file", "files", "filename", "filenames", "dir", "dirs", "directory",
	"directories", "folder", "folders", "root", "cwd", "source", "destination", "src", "dst", "dest"}

// urlKeys hold a URL, with or without its scheme.
var urlKeys = []string{"url", "urls", "uri", "uris", "endpoint", "href", "link"}

// inputCall collects the paths and URLs of another tool's input: the
// strings under keys that name paths, URLs (file:// ones are paths),
// at most MaxWords strings.
type inputCall struct {
	call
	res       *resolver
	cwd, home string
	n         int
	err       error
}

func (c *inputCall) value(key string, v any, depth int) {
	if c.err != nil {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		// In order: the decision names the same request every time.
		for _, k := range slices.Sorted(maps.Keys(v)) {
			c.value(strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(k)), v[k], depth+1)
		}
	case []any:
		for _, e := range v {
			c.value(key, e, depth+1)
		}
	case string:
		if c.n++; c.n > MaxWords {
			c.err = fmt.Errorf("has more than %d strings", MaxWords)
			return
		}
		if strings.IndexByte(v, 0) >= 0 {
			c.err = errors.New("holds a NUL byte")
			return
		}
		switch {
		case strings.HasPrefix(strings.ToLower(v), "file://"):
			if u, err := url.Parse(v); err == nil && u.Path != "" {
				c.paths = append(c.paths, c.res.paths(u.Path, c.cwd, c.home)...)
			} else {
				c.paths = append(c.paths, policy.UnknownWord(quote(v)))
			}
		case urlHost(v) != "":
			c.hosts = append(c.hosts, urlHost(v))
		case slices.ContainsFunc(urlKeys, func(k string) bool { return strings.HasSuffix(key, k) }) && v != "":
			h := urlHost("https://" + v)
			if h == "" {
				h = policy.UnknownWord("a URL helm cannot read: " + quote(v))
			}
			c.hosts = append(c.hosts, h)
		case slices.ContainsFunc(pathKeys, func(k string) bool { return strings.HasSuffix(key, k) }) && v != "":
			c.paths = append(c.paths, c.res.paths(v, c.cwd, c.home)...)
		}
	}
}
