// Command helm records the work of people and coding agents as voyages:
// what was observed, what it meant, what was done. It is a thin layer over
// the helm library (github.com/helmlog/helm); see `helm help`.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
)

// version is set at link time (-ldflags "-X main.version=v1.2.3"); when
// empty, the module version from the build information is used.
var version = ""

// main runs one command. SIGINT and SIGTERM cancel its context: a mark
// being observed stops (a command's whole process group is killed), a
// change not yet recorded is not, and helm exits 130 with "helm:
// interrupted". A second signal stops helm at once, as signals do by
// default, for a command stuck where no context reaches (reading a FIFO
// given to --observation); the log is crash-safe, so that too leaves the
// voyage consistent.
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // the next signal gets the default action
	}()
	m := NewMain()
	err := m.Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	err = interrupted(ctx, err)
	stop()
	os.Exit(ReportError(os.Stderr, err))
}

// Main is the helm program. Its fields are the program's surroundings, so
// tests run commands in-process, in parallel, with their own environment.
type Main struct {
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// Dir is the working directory: relative paths given to marks, git,
	// --out and --observation resolve against it. Empty means the
	// process's working directory.
	Dir string
	// ExtraEnv holds KEY=VALUE entries added to the environment of the gh
	// and git programs helm runs (tests point gh at a stand-in with it).
	ExtraEnv []string
	// Options tune the helm home (tests inject a clock and id source);
	// nil means the production defaults.
	Options *helm.Options
}

// NewMain returns the Main of the real process.
func NewMain() *Main { return &Main{Getenv: os.Getenv} }

func (m *Main) getenv(key string) string {
	if m.Getenv == nil {
		return os.Getenv(key)
	}
	return m.Getenv(key)
}

// Run runs the command that args (without the program name) names. It
// returns an error for the caller to report with ReportError; output goes
// to stdout, progress and warnings to stderr.
func (m *Main) Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	a := &app{main: m, stdin: stdin, stdout: stdout, stderr: stderr}
	defer a.close()
	return a.dispatch(ctx, rootCommand(), args)
}

// leaf is a command that runs: it defines its flags, then runs with the
// positional arguments left after parsing.
type leaf interface {
	Flags(fs *pflag.FlagSet)
	Run(ctx context.Context, a *app, args []string) error
}

// command is one node of the command tree: a group of subcommands, or a
// leaf made fresh for each invocation by newLeaf.
type command struct {
	name    string
	summary string // one line, for the parent's listing
	usage   string // after "helm ", e.g. "voyage new [--kind KIND] INTENT"
	help    string // more about it, for --help
	example string
	newLeaf func() leaf
	subs    []*command
}

func (c *command) sub(name string) *command {
	for _, s := range c.subs {
		if s.name == name {
			return s
		}
	}
	return nil
}

func rootCommand() *command {
	return &command{
		name:  "helm",
		usage: "[GLOBAL FLAGS] COMMAND ...",
		help: `helm records collaborative software work as voyages: observe marks,
take bearings (what the observations meant), perform actions, complete the
voyage; "helm log" tells the story.`,
		example: `helm voyage new --as john-agent --kind resolve-issue "Resolve #42: fix widget crash"
  helm observe rust-project .
  helm bearing --reading "Widget module has a null check missing in init()."
  helm action commit --message "Fix null check in widget init"
  helm complete --summary "Fixed null check in widget init."
  helm log`,
		subs: []*command{
			voyageCommand(), observeCommand(), slateCommand(), bearingCommand(),
			actionCommand(), completeCommand(), logCommand(), helpCommand(),
		},
	}
}

// dispatch walks args down the command tree to a leaf, parses its flags
// (global flags are accepted anywhere, GNU style) and runs it.
func (a *app) dispatch(ctx context.Context, root *command, args []string) error {
	path := []*command{root}
	rest := args
	node := root
	for len(node.subs) > 0 {
		i := firstPositional(rest, unionFlags(node))
		var next *command
		if i >= 0 {
			next = node.sub(rest[i])
		}
		if next == nil {
			if node.newLeaf != nil {
				break // a command that runs itself and has subcommands too (bearing)
			}
			if i >= 0 {
				return usageErrorf(path, "unknown command %q for %s (one of: %s)", rest[i], pathName(path), subNames(node))
			}
			pre := parseLoose(rest)
			switch {
			case pre.version && len(path) == 1:
				_, err := fmt.Fprintf(a.stdout, "helm %s\n", versionString())
				return err
			case pre.help:
				return writeHelp(a.stdout, path)
			}
			return usageErrorf(path, "%s: missing command (one of: %s)", pathName(path), subNames(node))
		}
		path = append(path, next)
		rest = append(append([]string(nil), rest[:i]...), rest[i+1:]...)
		node = next
	}
	l := node.newLeaf()
	fs := newFlagSet(node.name)
	l.Flags(fs)
	a.g.define(fs)
	if err := fs.Parse(rest); err != nil {
		return usageErrorf(path, "%s: %v", pathName(path), err)
	}
	if a.g.help {
		return writeHelp(a.stdout, path)
	}
	a.path = path
	a.dash = fs.ArgsLenAtDash()
	return l.Run(ctx, a, fs.Args())
}

func newFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetInterspersed(true)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.SortFlags = false
	return fs
}

// unionFlags returns a flag set holding the global flags and every flag of
// every leaf below node. It is used only to tell, while looking for the
// next command word, which flags take a value.
func unionFlags(node *command) *pflag.FlagSet {
	fs := newFlagSet("scan")
	var g globals
	g.define(fs)
	fs.Bool("version", false, "")
	var walk func(c *command)
	walk = func(c *command) {
		if c.newLeaf != nil {
			one := newFlagSet(c.name)
			c.newLeaf().Flags(one)
			one.VisitAll(func(f *pflag.Flag) {
				if fs.Lookup(f.Name) == nil {
					fs.AddFlag(f)
				}
			})
		}
		for _, s := range c.subs {
			walk(s)
		}
	}
	walk(node)
	return fs
}

// firstPositional returns the index in args of the first argument that is
// neither a flag nor a flag's value, or -1.
func firstPositional(args []string, fs *pflag.FlagSet) int {
	for i := 0; i < len(args); i++ {
		s := args[i]
		switch {
		case s == "--":
			return -1
		case strings.HasPrefix(s, "--"):
			name := s[2:]
			if strings.Contains(name, "=") {
				continue
			}
			if f := fs.Lookup(name); f != nil && f.NoOptDefVal == "" {
				i++ // its value
			}
		case strings.HasPrefix(s, "-") && len(s) > 1:
			if len(s) == 2 {
				if f := fs.ShorthandLookup(s[1:]); f != nil && f.NoOptDefVal == "" {
					i++
				}
			}
		default:
			return i
		}
	}
	return -1
}

type looseFlags struct{ help, version bool }

// parseLoose reports whether --help or --version appear among args that
// name no command.
func parseLoose(args []string) looseFlags {
	var l looseFlags
	for _, s := range args {
		if s == "--" {
			break
		}
		switch s {
		case "-h", "--help":
			l.help = true
		case "--version":
			l.version = true
		}
	}
	return l
}

// commandWords returns the words after "helm" that name path, each followed
// by a space: "voyage new ".
func commandWords(path []*command) string {
	var b strings.Builder
	for _, c := range path[1:] {
		b.WriteString(c.name + " ")
	}
	return b.String()
}

func pathName(path []*command) string {
	names := make([]string, len(path))
	for i, c := range path {
		names[i] = c.name
	}
	return strings.Join(names, " ")
}

func subNames(c *command) string {
	names := make([]string, 0, len(c.subs))
	for _, s := range c.subs {
		names = append(names, s.name)
	}
	return strings.Join(names, ", ")
}

func versionString() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" && (v == "(devel)" || strings.Contains(v, "devel")) {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " " + rev + dirty
	}
	return v + " " + bi.GoVersion
}

// writeHelp prints the help of the last command of path.
func writeHelp(w io.Writer, path []*command) error {
	c := path[len(path)-1]
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: helm %s\n", c.usage)
	if c.help != "" {
		fmt.Fprintf(&b, "\n%s\n", strings.TrimSpace(c.help))
	}
	if len(c.subs) > 0 {
		b.WriteString("\nCommands:\n")
		width := 0
		for _, s := range c.subs {
			width = max(width, len(s.name))
		}
		for _, s := range c.subs {
			fmt.Fprintf(&b, "  %-*s  %s\n", width, s.name, s.summary)
		}
	}
	if c.newLeaf != nil {
		fs := newFlagSet(c.name)
		c.newLeaf().Flags(fs)
		if u := flagUsages(fs); u != "" {
			fmt.Fprintf(&b, "\nFlags:\n%s", u)
		}
	}
	gfs := newFlagSet("global")
	var g globals
	g.define(gfs)
	if len(path) == 1 {
		gfs.Bool("version", false, "print helm's version")
	}
	fmt.Fprintf(&b, "\nGlobal flags (before or after the command):\n%s", flagUsages(gfs))
	if c.example != "" {
		fmt.Fprintf(&b, "\nExample:\n  %s\n", c.example)
	}
	if len(c.subs) > 0 {
		fmt.Fprintf(&b, "\nRun 'helm %sCOMMAND --help' for a command's flags.\n", commandWords(path))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// flagUsages lists a flag set's flags, one a line, aligned: like pflag's
// FlagUsages without its "[=true|false]" after every boolean flag.
func flagUsages(fs *pflag.FlagSet) string {
	type row struct{ left, usage string }
	var rows []row
	width := 0
	fs.VisitAll(func(f *pflag.Flag) {
		left := "      --" + f.Name
		if f.Shorthand != "" {
			left = "  -" + f.Shorthand + ", --" + f.Name
		}
		name, usage := pflag.UnquoteUsage(f)
		if f.Value.Type() != "bool" && name != "" {
			left += " " + name
		}
		switch f.Value.Type() {
		case "bool", "stringArray", "stringSlice":
		case "string":
			if f.DefValue != "" {
				usage += fmt.Sprintf(" (default %q)", f.DefValue)
			}
		default:
			if f.DefValue != "0" && f.DefValue != "-1" && f.DefValue != "" {
				usage += " (default " + f.DefValue + ")"
			}
		}
		rows = append(rows, row{left, usage})
		width = max(width, len(left))
	})
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%-*s   %s\n", width, r.left, r.usage)
	}
	return b.String()
}

func helpCommand() *command {
	return &command{
		name:    "help",
		summary: "show help for a command",
		usage:   "help [COMMAND...]",
		example: "helm help observe github-pr",
		newLeaf: func() leaf { return &helpLeaf{} },
	}
}

type helpLeaf struct{}

func (*helpLeaf) Flags(*pflag.FlagSet) {}

func (*helpLeaf) Run(_ context.Context, a *app, args []string) error {
	path := []*command{rootCommand()}
	for _, name := range args {
		next := path[len(path)-1].sub(name)
		if next == nil {
			return usageErrorf(path, "help: unknown command %q for %s (one of: %s)", name, pathName(path), subNames(path[len(path)-1]))
		}
		path = append(path, next)
	}
	return writeHelp(a.stdout, path)
}
