// Package markkind holds the mark kinds as helm's callers spell them:
// each kind's parameters, how the command line gives them (arguments and
// flags) and how they build the mark. `helm observe KIND`, `helm slate
// erase KIND` and the MCP server's observe and slate_erase tools all build
// marks from these, so that the same words name the same slate entry.
package markkind

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/helmlog/helm/marks"
)

// Kind is how helm's callers spell one mark kind: its parameters, and
// how the command line gives them (arguments and flags). `helm observe
// KIND`, `helm slate erase KIND` and the MCP server's observe and
// slate_erase tools all build marks from it, so that the same words name
// the same slate entry.
type Kind struct {
	Name    string
	Summary string
	Args    string   // the usage after the kind
	Example string   // after "helm observe "
	Focus   []string // what --focus takes, for completion
	// Arg is the parameter (Params' JSON name) the positional
	// arguments of the command line give, and that the mark needs; ArgName
	// names it in usage (ROOT). Empty: the kind takes no arguments.
	Arg, ArgName string
	// Options are the other parameters the kind takes, by JSON name.
	Options []string
	// Flags defines the flags that set the kind's parameters in p.
	Flags func(fs *pflag.FlagSet, p *Params)
	// Build builds the mark p describes; repo resolves the repository a
	// GitHub mark names (the one given, else the origin remote's).
	Build func(ctx context.Context, p *Params, repo Repo) (marks.Mark, error)
	// ObserveArgs and ObserveFlags are the usage and flags only observing
	// takes: how to look, which is no part of the mark (slate erase
	// names the mark without them). A kind without them looks as every
	// mark does.
	ObserveArgs  string
	ObserveFlags func(fs *pflag.FlagSet, o *ObserveFlags)
}

// Repo resolves the GitHub repository of a mark: given, when it is not
// empty, else the one the origin remote of helm's working directory
// names.
type Repo func(ctx context.Context, given string) (string, error)

// Params are the parameters of a mark of any kind, however they were
// given: the command line's arguments and flags, or the JSON arguments of
// an MCP tool (its schema is derived from this struct, its descriptions
// from the jsonschema tags). A kind reads its own (Kind.Arg and
// Options); the others stay unset.
type Params struct {
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

// Given returns the JSON names of the parameters p sets, in p's order.
func (p *Params) Given() []string {
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

// ObserveFlags holds the flags of observing that are no part of a mark.
type ObserveFlags struct {
	Timeout time.Duration
	Yes     bool
	PassEnv []string // variables the program sees although they look secret
}

// Takes reports whether the kind takes the parameter called name.
func (k *Kind) Takes(name string) bool {
	return name == k.Arg || slices.Contains(k.Options, name)
}

// Parameters lists the parameters k takes, for a message: "root
// (needed), skip, max_depth".
func (k *Kind) Parameters() string {
	var names []string
	if k.Arg != "" {
		names = append(names, k.Arg+" (needed)")
	}
	names = append(names, k.Options...)
	if len(names) == 0 {
		return "no parameters"
	}
	return strings.Join(names, ", ")
}

// Named returns the kind called name, or nil.
func Named(name string) *Kind {
	for _, k := range Kinds {
		if k.Name == name {
			return k
		}
	}
	return nil
}

// Names returns the kinds' names, in Kinds' order.
func Names() []string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = k.Name
	}
	return names
}

// Kinds are the mark kinds, in the order helm lists them.
var Kinds = []*Kind{
	{
		Name: "file-contents", Summary: "read specific files",
		Args: "--read FILE...", Example: "file-contents --read src/widget.rs --read Cargo.toml",
		Arg: "paths", ArgName: "FILE",
		Flags: func(fs *pflag.FlagSet, p *Params) {
			fs.StringArrayVar(&p.Paths, "read", nil, "`FILE` to read (repeatable; further files may follow as arguments)")
		},
		Build: func(_ context.Context, p *Params, _ Repo) (marks.Mark, error) {
			return marks.NewFileContents(p.Paths...)
		},
	},
	{
		Name: "directory-tree", Summary: "list a directory tree (honours .gitignore)",
		Args: "ROOT [--skip NAME]... [--max-depth N]", Example: "directory-tree src --skip target --max-depth 2",
		Arg: "root", ArgName: "ROOT", Options: []string{"skip", "max_depth"},
		Flags: func(fs *pflag.FlagSet, p *Params) {
			fs.StringArrayVar(&p.Skip, "skip", nil, "skip entries called `NAME` at any depth (repeatable)")
			fs.Var(&optionalInt{p: &p.MaxDepth}, "max-depth", "list directories at most `N` levels below ROOT (default unlimited)")
		},
		Build: func(_ context.Context, p *Params, _ Repo) (marks.Mark, error) {
			// A negative depth is refused there: exit 2.
			return marks.NewDirectoryTree(p.Root, &marks.DirectoryTreeOptions{Skip: p.Skip, MaxDepth: p.MaxDepth})
		},
	},
	{
		Name: "rust-project", Summary: "orient in a Rust project: its tree and documentation",
		Args: "PATH", Example: "rust-project .",
		Arg: "path", ArgName: "PATH",
		Build: oneParamMark(marks.NewRustProject, func(p *Params) string { return p.Path }),
	},
	{
		Name: "go-project", Summary: "orient in a Go project: tree, documentation, modules, packages",
		Args: "PATH [--include-vendor]", Example: "go-project .",
		Arg: "path", ArgName: "PATH", Options: []string{"include_vendor"},
		Flags: func(fs *pflag.FlagSet, p *Params) {
			fs.BoolVar(&p.IncludeVendor, "include-vendor", false, "walk vendor/ directories too")
		},
		Build: func(_ context.Context, p *Params, _ Repo) (marks.Mark, error) {
			m, err := marks.NewGoProject(p.Path)
			if err != nil {
				return nil, err
			}
			m.IncludeVendor = p.IncludeVendor
			return m, nil
		},
	},
	{
		Name: "github-pr", Summary: "a GitHub pull request",
		Args: "NUMBER [--focus summary|files|checks|diff|comments|reviews]... [--repo OWNER/NAME]", Example: "github-pr 45 --focus diff --focus comments",
		Arg: "number", ArgName: "NUMBER", Options: []string{"focus", "repo"},
		Flags: githubFlags("summary, files, checks, diff, comments or reviews (repeatable; default summary)"),
		Focus: []string{"summary", "files", "checks", "diff", "comments", "reviews"},
		Build: githubNumberMark(marks.NewGitHubPR),
	},
	{
		Name: "github-issue", Summary: "a GitHub issue",
		Args: "NUMBER [--focus summary|comments]... [--repo OWNER/NAME]", Example: "github-issue 42 --focus summary --focus comments",
		Arg: "number", ArgName: "NUMBER", Options: []string{"focus", "repo"},
		Flags: githubFlags("summary or comments (repeatable; default summary)"),
		Focus: []string{"summary", "comments"},
		Build: githubNumberMark(marks.NewGitHubIssue),
	},
	{
		Name: "github-repo", Summary: "a GitHub repository's open issues and pull requests",
		Args: "[--focus issues|pull-requests]... [--repo OWNER/NAME]", Example: "github-repo --focus issues",
		Options: []string{"focus", "repo"},
		Flags:   githubFlags("issues or pull-requests (repeatable; default both)"),
		Focus:   []string{"issues", "pull-requests"},
		Build: func(ctx context.Context, p *Params, repo Repo) (marks.Mark, error) {
			name, err := repo(ctx, p.Repo)
			if err != nil {
				return nil, err
			}
			return marks.NewGitHubRepo(name, p.Focus...)
		},
	},
	{
		Name: "context", Summary: "context a person provides, with nothing helm can look at",
		Args: "DESCRIPTION", Example: `context "Agreed with the maintainer on a call: no API change"`,
		Arg: "description", ArgName: "DESCRIPTION",
		Build: oneParamMark(marks.NewContext, func(p *Params) string { return p.Description }),
	},
	{
		Name: "command", Summary: "run a program and record its exit code and output",
		Args: "[--dir DIR] -- PROGRAM [ARG...]", Example: "command --dir . -- go test ./...",
		Arg: "command", ArgName: "PROGRAM", Options: []string{"dir"},
		Flags: func(fs *pflag.FlagSet, p *Params) {
			fs.StringVar(&p.Dir, "dir", "", "run the program in `DIR` (default the working directory)")
		},
		ObserveArgs: "[--timeout DURATION] [--pass-env NAME]...",
		ObserveFlags: func(fs *pflag.FlagSet, o *ObserveFlags) {
			fs.DurationVar(&o.Timeout, "timeout", marks.DefaultCommandTimeout, "kill the program (and its children) after `DURATION`, such as 30s or 10m")
			fs.StringArrayVar(&o.PassEnv, "pass-env", nil, "let the program see helm's environment variable `NAME` although its name looks secret (repeatable; by default GH_TOKEN, AWS_SECRET_ACCESS_KEY, MY_API_KEY and every name with TOKEN, SECRET, PASSWORD, API_KEY, ... are left out)")
			fs.BoolVar(&o.Yes, "yes", false, "confirm a command that a guard rule lets run only when a person agrees")
		},
		Build: func(_ context.Context, p *Params, _ Repo) (marks.Mark, error) {
			return marks.NewCommand(p.Dir, p.Command...)
		},
	},
	{
		Name: "web", Summary: "fetch a URL and record the response",
		Args: "URL", Example: "web https://example.com/status",
		Arg: "url", ArgName: "URL",
		Build: oneParamMark(marks.NewWeb, func(p *Params) string { return p.URL }),
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

func githubFlags(focusHelp string) func(fs *pflag.FlagSet, p *Params) {
	return func(fs *pflag.FlagSet, p *Params) {
		fs.StringArrayVar(&p.Focus, "focus", nil, "`FOCUS` to fetch: "+focusHelp)
		fs.StringVar(&p.Repo, "repo", "", "the repository, as `OWNER/NAME` (default: the one the origin remote names)")
	}
}

// oneParamMark builds a mark from its one parameter, which param reads.
func oneParamMark[M marks.Mark](newMark func(string) (M, error), param func(*Params) string) func(context.Context, *Params, Repo) (marks.Mark, error) {
	return func(_ context.Context, p *Params, _ Repo) (marks.Mark, error) {
		return newMark(param(p))
	}
}

// githubNumberMark builds an issue or pull request mark from its number,
// repository and focus.
func githubNumberMark[M marks.Mark](newMark func(repo string, number int, focus ...string) (M, error)) func(context.Context, *Params, Repo) (marks.Mark, error) {
	return func(ctx context.Context, p *Params, repo Repo) (marks.Mark, error) {
		name, err := repo(ctx, p.Repo)
		if err != nil {
			return nil, err
		}
		return newMark(name, p.Number, p.Focus...)
	}
}
