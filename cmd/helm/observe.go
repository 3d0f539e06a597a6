package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/internal/safetext"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/sighting"
)

// markKind is how the CLI spells one mark kind: its arguments and flags,
// shared by `helm observe KIND` and `helm slate erase KIND`, so that the
// same words name the same slate entry.
type markKind struct {
	name    string
	summary string
	args    string   // the usage after the kind
	example string   // after "helm observe "
	focus   []string // what --focus takes, for completion
	flags   func(fs *pflag.FlagSet, f *markFlags)
	build   markBuilder
	// observeArgs and observeFlags are the usage and flags only observing
	// takes: how to look, which is no part of the mark (slate erase
	// names the mark without them).
	observeArgs  string
	observeFlags func(fs *pflag.FlagSet, o *observeFlags)
}

// observeFlags holds the flags of observing that are no part of a mark.
type observeFlags struct {
	timeout time.Duration
	yes     bool
}

// buildMark builds the mark a command line names, its relative paths
// anchored at the working directory: "a.go" typed in two worktrees names
// two files, and the slate keys them apart.
func (a *app) buildMark(ctx context.Context, k *markKind, f *markFlags, args []string) (marks.Mark, error) {
	m, err := k.build(ctx, a, f, args)
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

// markBuilder builds a mark from the command line's arguments and flags.
type markBuilder func(ctx context.Context, a *app, f *markFlags, args []string) (marks.Mark, error)

// markFlags holds the flags of every mark kind.
type markFlags struct {
	read          []string
	skip          []string
	maxDepth      optionalInt
	includeVendor bool
	focus         []string
	repo          string
	dir           string
}

var markKinds = []*markKind{
	{
		name: "file-contents", summary: "read specific files",
		args: "--read FILE...", example: "file-contents --read src/widget.rs --read Cargo.toml",
		flags: func(fs *pflag.FlagSet, f *markFlags) {
			fs.StringArrayVar(&f.read, "read", nil, "`FILE` to read (repeatable; further files may follow as arguments)")
		},
		build: func(_ context.Context, a *app, f *markFlags, args []string) (marks.Mark, error) {
			paths := append(append([]string(nil), f.read...), args...)
			if len(paths) == 0 {
				return nil, usageErrorf(a.cmd, "file-contents needs at least one --read FILE")
			}
			return marks.NewFileContents(paths...)
		},
	},
	{
		name: "directory-tree", summary: "list a directory tree (honours .gitignore)",
		args: "ROOT [--skip NAME]... [--max-depth N]", example: "directory-tree src --skip target --max-depth 2",
		flags: func(fs *pflag.FlagSet, f *markFlags) {
			fs.StringArrayVar(&f.skip, "skip", nil, "skip entries called `NAME` at any depth (repeatable)")
			fs.Var(&f.maxDepth, "max-depth", "list directories at most `N` levels below ROOT (default unlimited)")
		},
		build: func(_ context.Context, a *app, f *markFlags, args []string) (marks.Mark, error) {
			root, err := oneArg(a, args, "ROOT")
			if err != nil {
				return nil, err
			}
			opt := marks.DirectoryTreeOptions{Skip: f.skip}
			if f.maxDepth.set {
				d := f.maxDepth.n
				opt.MaxDepth = &d // a negative one is refused there: exit 2
			}
			return marks.NewDirectoryTree(root, opt)
		},
	},
	{
		name: "rust-project", summary: "orient in a Rust project: its tree and documentation",
		args: "PATH", example: "rust-project .",
		build: oneArgMark("PATH", marks.NewRustProject),
	},
	{
		name: "go-project", summary: "orient in a Go project: tree, documentation, modules, packages",
		args: "PATH [--include-vendor]", example: "go-project .",
		flags: func(fs *pflag.FlagSet, f *markFlags) {
			fs.BoolVar(&f.includeVendor, "include-vendor", false, "walk vendor/ directories too")
		},
		build: func(_ context.Context, a *app, f *markFlags, args []string) (marks.Mark, error) {
			root, err := oneArg(a, args, "PATH")
			if err != nil {
				return nil, err
			}
			m, err := marks.NewGoProject(root)
			if err != nil {
				return nil, err
			}
			m.IncludeVendor = f.includeVendor
			return m, nil
		},
	},
	{
		name: "github-pr", summary: "a GitHub pull request",
		args: "NUMBER [--focus summary|files|checks|diff|comments|reviews]... [--repo OWNER/NAME]", example: "github-pr 45 --focus diff --focus comments",
		flags: githubFlags("summary, files, checks, diff, comments or reviews (repeatable; default summary)"),
		focus: []string{"summary", "files", "checks", "diff", "comments", "reviews"},
		build: githubNumberMark(marks.NewGitHubPR),
	},
	{
		name: "github-issue", summary: "a GitHub issue",
		args: "NUMBER [--focus summary|comments]... [--repo OWNER/NAME]", example: "github-issue 42 --focus summary --focus comments",
		flags: githubFlags("summary or comments (repeatable; default summary)"),
		focus: []string{"summary", "comments"},
		build: githubNumberMark(marks.NewGitHubIssue),
	},
	{
		name: "github-repo", summary: "a GitHub repository's open issues and pull requests",
		args: "[--focus issues|pull-requests]... [--repo OWNER/NAME]", example: "github-repo --focus issues",
		flags: githubFlags("issues or pull-requests (repeatable; default both)"),
		focus: []string{"issues", "pull-requests"},
		build: func(ctx context.Context, a *app, f *markFlags, args []string) (marks.Mark, error) {
			if len(args) > 0 {
				return nil, usageErrorf(a.cmd, "github-repo takes no arguments, got %q (name the repository with --repo OWNER/NAME)", args)
			}
			repo, err := a.repo(ctx, f.repo)
			if err != nil {
				return nil, err
			}
			return marks.NewGitHubRepo(repo, f.focus...)
		},
	},
	{
		name: "context", summary: "context a person provides, with nothing helm can look at",
		args: "DESCRIPTION", example: `context "Agreed with the maintainer on a call: no API change"`,
		build: oneArgMark("DESCRIPTION", marks.NewContext),
	},
	{
		name: "command", summary: "run a program and record its exit code and output",
		args: "[--dir DIR] -- PROGRAM [ARG...]", example: "command --dir . -- go test ./...",
		flags: func(fs *pflag.FlagSet, f *markFlags) {
			fs.StringVar(&f.dir, "dir", "", "run the program in `DIR` (default the working directory)")
		},
		observeArgs: "[--timeout DURATION]",
		observeFlags: func(fs *pflag.FlagSet, o *observeFlags) {
			fs.DurationVar(&o.timeout, "timeout", marks.DefaultCommandTimeout, "kill the program (and its children) after `DURATION`, such as 30s or 10m")
			fs.BoolVar(&o.yes, "yes", false, "confirm a command that a guard rule lets run only when a person agrees")
		},
		build: func(_ context.Context, a *app, f *markFlags, args []string) (marks.Mark, error) {
			if len(args) == 0 {
				return nil, usageErrorf(a.cmd, "command needs a PROGRAM after --")
			}
			return marks.NewCommand(f.dir, args...)
		},
	},
	{
		name: "web", summary: "fetch a URL and record the response",
		args: "URL", example: "web https://example.com/status",
		build: oneArgMark("URL", marks.NewWeb),
	},
}

// optionalInt is an integer flag that knows whether it was given, so that
// no value of it stands for "not given": --max-depth -1 is refused, not
// taken as unlimited.
type optionalInt struct {
	n   int
	set bool
}

func (o *optionalInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("not a whole number")
	}
	o.n, o.set = n, true
	return nil
}

func (o *optionalInt) String() string {
	if !o.set {
		return ""
	}
	return strconv.Itoa(o.n)
}

func (*optionalInt) Type() string { return "int" }

func githubFlags(focusHelp string) func(fs *pflag.FlagSet, f *markFlags) {
	return func(fs *pflag.FlagSet, f *markFlags) {
		fs.StringArrayVar(&f.focus, "focus", nil, "`FOCUS` to fetch: "+focusHelp)
		fs.StringVar(&f.repo, "repo", "", "the repository, as `OWNER/NAME` (default: the one the origin remote names)")
	}
}

// oneArgMark builds a mark from its one argument, called name in usage.
func oneArgMark[M marks.Mark](name string, newMark func(string) (M, error)) markBuilder {
	return func(_ context.Context, a *app, _ *markFlags, args []string) (marks.Mark, error) {
		s, err := oneArg(a, args, name)
		if err != nil {
			return nil, err
		}
		return newMark(s)
	}
}

// githubNumberMark builds an issue or pull request mark from its NUMBER,
// --repo and --focus.
func githubNumberMark[M marks.Mark](newMark func(repo string, number int, focus ...string) (M, error)) markBuilder {
	return func(ctx context.Context, a *app, f *markFlags, args []string) (marks.Mark, error) {
		n, err := numberArg(a, args, "NUMBER")
		if err != nil {
			return nil, err
		}
		repo, err := a.repo(ctx, f.repo)
		if err != nil {
			return nil, err
		}
		return newMark(repo, n, f.focus...)
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

// repo is the GitHub repository: --repo, else the one the origin remote of
// the working directory names.
func (a *app) repo(ctx context.Context, flag string) (string, error) {
	r, err := a.runner("", flag)
	if err != nil {
		return "", err
	}
	repo, err := r.Repo(ctx)
	if err != nil {
		return "", &hinted{Err: err, Hint: "helm " + commandLine(a.args) + " --repo OWNER/NAME"}
	}
	return repo, nil
}

func newObserveCmd(a *app) *cobra.Command {
	c := group(a, &cobra.Command{
		Use:   "observe KIND ARGS... [--out FILE|-]",
		Short: "look at a mark and put the observation on the slate",
		Long: `Look at a mark and put the observation (mark, sighting, time) on the
voyage's slate, replacing an earlier observation of the same mark. Prints
one line; --out also writes the observation as JSON, for bearing
--observation or another tool.

A look that failed is recorded all the same: a file that is not there, a
program that exits non-zero or is killed at its timeout, an HTTP error
status, a URL that cannot be fetched. helm then says what failed, one
"helm: observed, but ..." line on stderr for each, and exits 3.`,
		Example: "  helm observe rust-project . --out obs.json",
	})
	for _, k := range markKinds {
		args := k.args
		if k.observeArgs != "" {
			args = withFlag(args, k.observeArgs)
		}
		c.AddCommand(k.completions(leafCmd(a, &cobra.Command{
			Use:     k.name + " " + withFlag(args, "[--out FILE|-]"),
			Short:   k.summary,
			Example: "  helm observe " + k.example,
		}, &observeCommandLeaf{kind: k})))
	}
	return c
}

// withFlag adds a flag's usage to the usage of a kind's arguments: at the
// end, or before "--" where the arguments after it are a program's, for
// a flag there would be the program's argument.
func withFlag(args, flag string) string {
	if before, after, ok := strings.Cut(args, " -- "); ok {
		return before + " " + flag + " -- " + after
	}
	if strings.HasPrefix(args, "-- ") {
		return flag + " " + args
	}
	return strings.TrimSpace(args + " " + flag)
}

// completions registers the values the kind's flags complete to on c.
func (k *markKind) completions(c *cobra.Command) *cobra.Command {
	if len(k.focus) > 0 {
		fixedValues(c, "focus", k.focus...)
	}
	if k.name == "command" {
		// After --, complete the program and its files as the shell would.
		c.ValidArgsFunction = func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveDefault
		}
	}
	return c
}

// observeCommandLeaf observes one mark kind.
type observeCommandLeaf struct {
	kind *markKind
	f    markFlags
	o    observeFlags
	out  string
}

func (c *observeCommandLeaf) Flags(fs *pflag.FlagSet) {
	if c.kind.flags != nil {
		c.kind.flags(fs, &c.f)
	}
	if c.kind.observeFlags != nil {
		c.kind.observeFlags(fs, &c.o)
	}
	fs.StringVar(&c.out, "out", "", "also write the observation as JSON to `FILE` (- for stdout)")
}

// observed is the --json output of observe.
type observed struct {
	Voyage     string `json:"voyage"`
	Key        string `json:"key"`
	Label      string `json:"label"`
	Artifact   string `json:"artifact"`
	Size       int64  `json:"size"`
	StoredSize int64  `json:"stored_size"`
	ObservedAt string `json:"observed_at"`
	Out        string `json:"out,omitempty"`
	// Failures are what the sighting records as failed; [] when nothing
	// did.
	Failures []helm.Failure `json:"failures"`
}

func (c *observeCommandLeaf) Run(ctx context.Context, a *app, args []string) error {
	// The arguments first: a usage error says so before anything is opened.
	m, err := a.buildMark(ctx, c.kind, &c.f, args)
	if err != nil {
		return err
	}
	if c.kind.observeFlags != nil && c.o.timeout <= 0 {
		return usageErrorf(a.cmd, "%s: --timeout must be positive, got %s", commandName(a.cmd), c.o.timeout)
	}
	v, who, err := a.activeVoyage(ctx, false)
	if err != nil {
		return err
	}
	r, err := a.runner(who.Identity, c.f.repo)
	if err != nil {
		return err
	}
	env := &marks.Env{Dir: a.main.Dir, GitHub: r, CommandTimeout: c.o.timeout}
	// On a terminal, a program's output shows as it runs (escaped, as
	// every output to a terminal is); a pipe gets the observation alone.
	var progress *safetext.Writer
	if isTerminalWriter(a.stderr) {
		progress = safetext.NewWriter(a.stderr)
		env.Progress = progress
	}
	o, err := v.Observe(ctx, m, who, &helm.ObserveOptions{Env: env, Confirmed: c.o.yes})
	if progress != nil {
		_ = progress.Flush() // a terminal gone is no reason to fail the observation
	}
	if err != nil {
		return err
	}
	lo, obs := o.Record, o.Observation
	res := observed{Voyage: v.ID(), Key: lo.Key, Label: lo.Label, Artifact: lo.Artifact, ObservedAt: stamp(lo.ObservedAt),
		Size: o.Artifact.Size, StoredSize: o.Artifact.StoredSize, Failures: o.Failures()}
	if res.Failures == nil {
		res.Failures = []helm.Failure{}
	}
	// Recorded, but what was looked at failed: each failure is said on
	// stderr once the observation is reported, and helm exits 3.
	var failed error
	if len(res.Failures) > 0 {
		failed = &observedFailures{Failures: res.Failures}
	}
	// With --out -, stdout carries the observation; the line goes to stderr.
	line := a.stdout
	if c.out == "-" {
		line = a.stderr
		if err := writeObservation(a.stdout, obs); err != nil {
			return fmt.Errorf("write observation of %s: %w (it is on the slate all the same)", m, err)
		}
	} else if c.out != "" {
		// Only its owner reads it, as only its owner reads the helm home:
		// a sighting may hold what the files read held. A file that is
		// there already keeps its mode.
		if err := writeObservationFile(a.abs(c.out), obs); err != nil {
			return fmt.Errorf("write observation: %w (it is on the slate all the same)", err)
		}
		res.Out = c.out
	}
	if a.g.json && c.out != "-" {
		if err := writeJSON(a.stdout, res); err != nil {
			return err
		}
		return failed
	}
	fmt.Fprintf(line, "Observed %s (artifact %s, %s)\n", printable(lo.Label), short(lo.Artifact), size(res.Size))
	if res.Out != "" {
		fmt.Fprintf(line, "Observation written to %s\n", printable(res.Out))
	}
	return failed
}

// isTerminalWriter reports whether w is a terminal (a person watching).
func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// writeObservation writes an observation file's JSON to w: indented, or,
// for a sighting of large files (whose texts are streamed from the store,
// never held whole), on one line.
func writeObservation(w io.Writer, obs helm.Observation) error {
	if sighting.HasSources(obs.Sighting) {
		if err := obs.WriteJSON(w); err != nil {
			return err
		}
		_, err := io.WriteString(w, "\n")
		return err
	}
	data, err := json.MarshalIndent(obs, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// writeObservationFile writes an observation file at path (mode 0600 when
// it is new; a file there already keeps its mode). It is written beside
// path and renamed over it, so that a write that fails part way (a full
// disk, a large sighting's damaged store) leaves no half file behind.
func writeObservationFile(path string, obs helm.Observation) error {
	mode := os.FileMode(0o600)
	if info, err := os.Stat(path); err == nil {
		mode = info.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	err = f.Chmod(mode)
	if err == nil {
		err = writeObservation(f, obs)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
