package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/helmlog/helm/marks"
)

// markKind is how helm's callers spell one mark kind: its parameters, and
// how the command line gives them (arguments and flags). `helm observe
// KIND`, `helm slate erase KIND` and the MCP server's observe and
// slate_erase tools all build marks from it, so that the same words name
// the same slate entry.
type markKind struct {
	name    string
	summary string
	args    string   // the usage after the kind
	example string   // after "helm observe "
	focus   []string // what --focus takes, for completion
	// arg is the parameter (markParams' JSON name) the positional
	// arguments of the command line give, and that the mark needs; argName
	// names it in usage (ROOT). Empty: the kind takes no arguments.
	arg, argName string
	// options are the other parameters the kind takes, by JSON name.
	options []string
	flags   func(fs *pflag.FlagSet, p *markParams)
	build   func(ctx context.Context, a *app, p *markParams) (marks.Mark, error)
	// observeArgs and observeFlags are the usage and flags only observing
	// takes: how to look, which is no part of the mark (slate erase
	// names the mark without them).
	observeArgs  string
	observeFlags func(fs *pflag.FlagSet, o *observeFlags)
}

// markParams are the parameters of a mark of any kind, however they were
// given: the command line's arguments and flags, or the JSON arguments of
// an MCP tool (its schema is derived from this struct, its descriptions
// from the jsonschema tags). A kind reads its own (markKind.arg and
// options); the others stay unset.
type markParams struct {
	Paths         []string `json:"paths,omitempty" jsonschema:"file-contents: the files to read (at least one)"`
	Root          string   `json:"root,omitempty" jsonschema:"directory-tree: the directory to list (honours .gitignore)"`
	Skip          []string `json:"skip,omitempty" jsonschema:"directory-tree: skip entries with these names at any depth"`
	MaxDepth      *int     `json:"max_depth,omitempty" jsonschema:"directory-tree: list directories at most this many levels below root (0 lists root alone; default unlimited)"`
	Path          string   `json:"path,omitempty" jsonschema:"rust-project, go-project: the project's directory"`
	IncludeVendor bool     `json:"include_vendor,omitempty" jsonschema:"go-project: walk vendor/ directories too"`
	Number        int      `json:"number,omitempty" jsonschema:"github-pr, github-issue: the pull request's or issue's number"`
	Focus         []string `json:"focus,omitempty" jsonschema:"github-pr: summary, files, checks, diff, comments or reviews (default summary); github-issue: summary or comments (default summary); github-repo: issues or pull-requests (default both)"`
	Repo          string   `json:"repo,omitempty" jsonschema:"github-pr, github-issue, github-repo: the repository as OWNER/NAME (default: the one the origin remote of helm's working directory names)"`
	Description   string   `json:"description,omitempty" jsonschema:"context: what a person provided, that helm cannot look at itself"`
	Dir           string   `json:"dir,omitempty" jsonschema:"command: the directory to run the program in (default helm's working directory)"`
	Command       []string `json:"command,omitempty" jsonschema:"command: the program and its arguments, such as [\"go\", \"test\", \"./...\"]"`
	URL           string   `json:"url,omitempty" jsonschema:"web: the URL to fetch"`
}

// given returns the JSON names of the parameters p sets, in p's order.
func (p *markParams) given() []string {
	var names []string
	v := reflect.ValueOf(p).Elem()
	for i := range v.NumField() {
		if !v.Field(i).IsZero() {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			names = append(names, name)
		}
	}
	return names
}

// observeFlags holds the flags of observing that are no part of a mark.
type observeFlags struct {
	timeout time.Duration
	yes     bool
	passEnv []string // variables the program sees although they look secret
}

// buildMark builds the mark a command line names, its relative paths
// anchored at the working directory: "a.go" typed in two worktrees names
// two files, and the slate keys them apart.
func (a *app) buildMark(ctx context.Context, k *markKind, p *markParams, args []string) (marks.Mark, error) {
	if err := k.fromArgs(a, p, args); err != nil {
		return nil, err
	}
	return a.anchoredMark(ctx, k, p)
}

// anchoredMark builds k's mark from p, its relative paths anchored at the
// working directory.
func (a *app) anchoredMark(ctx context.Context, k *markKind, p *markParams) (marks.Mark, error) {
	m, err := k.build(ctx, a, p)
	if err != nil {
		return nil, err
	}
	dir := a.main.Dir
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("find the working directory to anchor %s: %w", m, err)
		}
	}
	marks.SetBase(m, dir)
	return m, nil
}

// fromArgs sets the parameter the command line's positional arguments give.
func (k *markKind) fromArgs(a *app, p *markParams, args []string) error {
	var err error
	switch k.arg {
	case "":
		if len(args) > 0 {
			return usageErrorf(a.cmd, "%s takes no arguments, got %q (name the repository with --repo OWNER/NAME)", k.name, args)
		}
	case "paths":
		p.Paths = append(p.Paths, args...)
		if len(p.Paths) == 0 {
			return usageErrorf(a.cmd, "%s needs at least one --read FILE", k.name)
		}
	case "command":
		if len(args) == 0 {
			return usageErrorf(a.cmd, "%s needs a PROGRAM after --", k.name)
		}
		p.Command = args
	case "number":
		p.Number, err = numberArg(a, args, k.argName)
	case "root":
		p.Root, err = oneArg(a, args, k.argName)
	case "path":
		p.Path, err = oneArg(a, args, k.argName)
	case "description":
		p.Description, err = oneArg(a, args, k.argName)
	case "url":
		p.URL, err = oneArg(a, args, k.argName)
	default:
		panic("mark kind " + k.name + ": no argument " + k.arg)
	}
	return err
}

// takes reports whether the kind takes the parameter called name.
func (k *markKind) takes(name string) bool {
	return name == k.arg || slices.Contains(k.options, name)
}

// markKindNamed returns the kind called name, or nil.
func markKindNamed(name string) *markKind {
	for _, k := range markKinds {
		if k.name == name {
			return k
		}
	}
	return nil
}

func markKindNames() []string {
	names := make([]string, len(markKinds))
	for i, k := range markKinds {
		names[i] = k.name
	}
	return names
}

var markKinds = []*markKind{
	{
		name: "file-contents", summary: "read specific files",
		args: "--read FILE...", example: "file-contents --read src/widget.rs --read Cargo.toml",
		arg: "paths", argName: "FILE",
		flags: func(fs *pflag.FlagSet, p *markParams) {
			fs.StringArrayVar(&p.Paths, "read", nil, "`FILE` to read (repeatable; further files may follow as arguments)")
		},
		build: func(_ context.Context, _ *app, p *markParams) (marks.Mark, error) {
			return marks.NewFileContents(p.Paths...)
		},
	},
	{
		name: "directory-tree", summary: "list a directory tree (honours .gitignore)",
		args: "ROOT [--skip NAME]... [--max-depth N]", example: "directory-tree src --skip target --max-depth 2",
		arg: "root", argName: "ROOT", options: []string{"skip", "max_depth"},
		flags: func(fs *pflag.FlagSet, p *markParams) {
			fs.StringArrayVar(&p.Skip, "skip", nil, "skip entries called `NAME` at any depth (repeatable)")
			fs.Var(&optionalInt{p: &p.MaxDepth}, "max-depth", "list directories at most `N` levels below ROOT (default unlimited)")
		},
		build: func(_ context.Context, _ *app, p *markParams) (marks.Mark, error) {
			// A negative depth is refused there: exit 2.
			return marks.NewDirectoryTree(p.Root, marks.DirectoryTreeOptions{Skip: p.Skip, MaxDepth: p.MaxDepth})
		},
	},
	{
		name: "rust-project", summary: "orient in a Rust project: its tree and documentation",
		args: "PATH", example: "rust-project .",
		arg: "path", argName: "PATH",
		build: oneParamMark(marks.NewRustProject, func(p *markParams) string { return p.Path }),
	},
	{
		name: "go-project", summary: "orient in a Go project: tree, documentation, modules, packages",
		args: "PATH [--include-vendor]", example: "go-project .",
		arg: "path", argName: "PATH", options: []string{"include_vendor"},
		flags: func(fs *pflag.FlagSet, p *markParams) {
			fs.BoolVar(&p.IncludeVendor, "include-vendor", false, "walk vendor/ directories too")
		},
		build: func(_ context.Context, _ *app, p *markParams) (marks.Mark, error) {
			m, err := marks.NewGoProject(p.Path)
			if err != nil {
				return nil, err
			}
			m.IncludeVendor = p.IncludeVendor
			return m, nil
		},
	},
	{
		name: "github-pr", summary: "a GitHub pull request",
		args: "NUMBER [--focus summary|files|checks|diff|comments|reviews]... [--repo OWNER/NAME]", example: "github-pr 45 --focus diff --focus comments",
		arg: "number", argName: "NUMBER", options: []string{"focus", "repo"},
		flags: githubFlags("summary, files, checks, diff, comments or reviews (repeatable; default summary)"),
		focus: []string{"summary", "files", "checks", "diff", "comments", "reviews"},
		build: githubNumberMark(marks.NewGitHubPR),
	},
	{
		name: "github-issue", summary: "a GitHub issue",
		args: "NUMBER [--focus summary|comments]... [--repo OWNER/NAME]", example: "github-issue 42 --focus summary --focus comments",
		arg: "number", argName: "NUMBER", options: []string{"focus", "repo"},
		flags: githubFlags("summary or comments (repeatable; default summary)"),
		focus: []string{"summary", "comments"},
		build: githubNumberMark(marks.NewGitHubIssue),
	},
	{
		name: "github-repo", summary: "a GitHub repository's open issues and pull requests",
		args: "[--focus issues|pull-requests]... [--repo OWNER/NAME]", example: "github-repo --focus issues",
		options: []string{"focus", "repo"},
		flags:   githubFlags("issues or pull-requests (repeatable; default both)"),
		focus:   []string{"issues", "pull-requests"},
		build: func(ctx context.Context, a *app, p *markParams) (marks.Mark, error) {
			repo, err := a.repo(ctx, p.Repo)
			if err != nil {
				return nil, err
			}
			return marks.NewGitHubRepo(repo, p.Focus...)
		},
	},
	{
		name: "context", summary: "context a person provides, with nothing helm can look at",
		args: "DESCRIPTION", example: `context "Agreed with the maintainer on a call: no API change"`,
		arg: "description", argName: "DESCRIPTION",
		build: oneParamMark(marks.NewContext, func(p *markParams) string { return p.Description }),
	},
	{
		name: "command", summary: "run a program and record its exit code and output",
		args: "[--dir DIR] -- PROGRAM [ARG...]", example: "command --dir . -- go test ./...",
		arg: "command", argName: "PROGRAM", options: []string{"dir"},
		flags: func(fs *pflag.FlagSet, p *markParams) {
			fs.StringVar(&p.Dir, "dir", "", "run the program in `DIR` (default the working directory)")
		},
		observeArgs: "[--timeout DURATION] [--pass-env NAME]...",
		observeFlags: func(fs *pflag.FlagSet, o *observeFlags) {
			fs.DurationVar(&o.timeout, "timeout", marks.DefaultCommandTimeout, "kill the program (and its children) after `DURATION`, such as 30s or 10m")
			fs.StringArrayVar(&o.passEnv, "pass-env", nil, "let the program see helm's environment variable `NAME` although its name looks secret (repeatable; by default GH_TOKEN, AWS_SECRET_ACCESS_KEY, MY_API_KEY and every name with TOKEN, SECRET, PASSWORD, API_KEY, ... are left out)")
			fs.BoolVar(&o.yes, "yes", false, "confirm a command that a guard rule lets run only when a person agrees")
		},
		build: func(_ context.Context, _ *app, p *markParams) (marks.Mark, error) {
			return marks.NewCommand(p.Dir, p.Command...)
		},
	},
	{
		name: "web", summary: "fetch a URL and record the response",
		args: "URL", example: "web https://example.com/status",
		arg: "url", argName: "URL",
		build: oneParamMark(marks.NewWeb, func(p *markParams) string { return p.URL }),
	},
}

// optionalInt is an integer flag that knows whether it was given, so that
// no value of it stands for "not given": --max-depth -1 is refused, not
// taken as unlimited. It sets *p to the number given.
type optionalInt struct {
	p **int
}

func (o *optionalInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("not a whole number")
	}
	*o.p = &n
	return nil
}

func (o *optionalInt) String() string {
	if o.p == nil || *o.p == nil {
		return ""
	}
	return strconv.Itoa(**o.p)
}

func (*optionalInt) Type() string { return "int" }

func githubFlags(focusHelp string) func(fs *pflag.FlagSet, p *markParams) {
	return func(fs *pflag.FlagSet, p *markParams) {
		fs.StringArrayVar(&p.Focus, "focus", nil, "`FOCUS` to fetch: "+focusHelp)
		fs.StringVar(&p.Repo, "repo", "", "the repository, as `OWNER/NAME` (default: the one the origin remote names)")
	}
}

// oneParamMark builds a mark from its one parameter, which param reads.
func oneParamMark[M marks.Mark](newMark func(string) (M, error), param func(*markParams) string) func(context.Context, *app, *markParams) (marks.Mark, error) {
	return func(_ context.Context, _ *app, p *markParams) (marks.Mark, error) {
		return newMark(param(p))
	}
}

// githubNumberMark builds an issue or pull request mark from its number,
// repository and focus.
func githubNumberMark[M marks.Mark](newMark func(repo string, number int, focus ...string) (M, error)) func(context.Context, *app, *markParams) (marks.Mark, error) {
	return func(ctx context.Context, a *app, p *markParams) (marks.Mark, error) {
		repo, err := a.repo(ctx, p.Repo)
		if err != nil {
			return nil, err
		}
		return newMark(repo, p.Number, p.Focus...)
	}
}

func oneArg(a *app, args []string, name string) (string, error) {
	switch len(args) {
	case 1:
		return args[0], nil
	case 0:
		return "", usageErrorf(a.cmd, "%s: missing %s", commandName(a.cmd), name)
	}
	return "", usageErrorf(a.cmd, "%s: one %s expected, got %d arguments: %q", commandName(a.cmd), name, len(args), args)
}

func numberArg(a *app, args []string, name string) (int, error) {
	s, err := oneArg(a, args, name)
	if err != nil {
		return 0, err
	}
	return parseNumber(a, s, name)
}

func parseNumber(a *app, s, name string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(s, "#"))
	if err != nil || n <= 0 {
		return 0, usageErrorf(a.cmd, "%s: %s must be a positive number, got %q", commandName(a.cmd), name, s)
	}
	return n, nil
}

// repo is the GitHub repository: flag (--repo, or a tool's repo), else the
// one the origin remote of the working directory names.
func (a *app) repo(ctx context.Context, flag string) (string, error) {
	r, err := a.runner("", flag)
	if err != nil {
		return "", err
	}
	repo, err := r.Repo(ctx)
	if err != nil {
		return "", &hinted{Err: err, Hint: "helm " + commandLine(a.args) + " --repo OWNER/NAME", Tool: "give repo as OWNER/NAME"}
	}
	return repo, nil
}
