// Command helm records the work of people and coding agents as voyages:
// what was observed, what it meant, what was done. It is a thin layer over
// the helm library (github.com/helmlog/helm); see `helm help`.
//
// The command tree is spf13/cobra's (on pflag), as in gh and kubectl: one
// file per command builds its *cobra.Command, and this file wires them
// under the root with the global flags, the help, "did you mean" and the
// error handling that maps every failure to an exit status (errors.go).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/actions"
)

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

func init() {
	// Commands are listed in the order they are added: the order of a
	// voyage (start, observe, take a bearing, act, complete, read).
	cobra.EnableCommandSorting = false
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
	// serveMCP serves helm mcp's server; nil means on standard input and
	// output. Tests connect clients to it in memory.
	serveMCP func(ctx context.Context, s *mcp.Server) error
	// systemPolicy, when set, is the system policy's path in place of
	// systemPolicyPath ("" for none). Tests set it.
	systemPolicy *string
	// actionKinds, when set, are the action kinds in place of
	// actions.Kinds(). Tests add one.
	actionKinds []actions.Kind
	// hookDeadline, when set, is helm hook's deadline in place of
	// hookDeadline; hookWorkers, when set, counts the hooks' work, which
	// may outlive the command (tests wait for it). Tests set them.
	hookDeadline time.Duration
	hookWorkers  *sync.WaitGroup
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
	a := &app{main: m, args: args, stdin: stdin, stdout: stdout, stderr: stderr}
	defer a.close()
	root := newRootCmd(a, args)
	if args == nil {
		args = []string{} // cobra reads os.Args when given nil
	}
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	_, err := root.ExecuteContextC(ctx)
	err = withGlobals(err, root)
	if err != nil && (a.g.json || jsonAsked(args)) {
		err = &jsonError{Err: err}
	}
	return err
}

// jsonAsked reports whether args, up to "--", ask for --json: an error
// found before the flags were parsed (an unknown flag) is still given
// as JSON.
func jsonAsked(args []string) bool {
	for _, s := range args {
		if s == "--" {
			return false
		}
		if s == "--json" || strings.HasPrefix(s, "--json=") || s == "--jq" || strings.HasPrefix(s, "--jq=") {
			return true
		}
	}
	return false
}

// newRootCmd builds the command tree for one invocation: its flags are
// bound to a, so that concurrent runs (tests) share nothing.
//
// Only the invoked command's subtree is built when args name one (most
// of the cost of starting helm is building the tree: every command's
// flags and help): cobra finds the same command in it, with the same
// flags, as in the whole tree. The whole tree is built for what lists
// or walks it (bare helm, help, completion, the man pages) and for
// anything unsure (a flag helm's root does not know before the command
// word, a word that names no command: "did you mean" needs them all).
func newRootCmd(a *app, args []string) *cobra.Command {
	root := &cobra.Command{
		Use:   "helm [GLOBAL FLAGS] COMMAND ...",
		Short: "record collaborative software work as voyages",
		Long: `helm records collaborative software work as voyages: observe marks,
take bearings (what the observations meant), perform actions, complete the
voyage; "helm log" tells the story.

Exit status: 0 done; 1 failed, nothing recorded; 2 bad usage or input;
3 recorded, but what was observed or done reported a failure (a missing
file, an HTTP error, a command's non-zero exit or timeout, an action git
or gh refused): look before retrying; 4 refused by a guard rule (the
refusal is recorded, nothing was done: retrying will not help); 130
interrupted.

A home that another user owns or that its group or others can write (its
directory, config.toml, the guard rules' file, gh-config/ and the
identities' directories in it) is refused, exit 2, before anything in it
is read: whoever can change it could send the voyages elsewhere or change
the rules. HELM_SAFE_HOMES (homes separated as in PATH, or * for all)
trusts a home shared on purpose, as git's safe.directory does. Windows
has no such check.`,
		Example: `  helm voyage new --as john-agent --kind resolve-issue "Resolve #42: fix widget crash"
  helm observe rust-project .
  helm bearing --reading "Widget module has a null check missing in init()."
  helm action commit --message "Fix null check in widget init"
  helm complete --summary "Fixed null check in widget init."
  helm log`,
		Version:       versionString(),
		SilenceErrors: true, // ReportError prints them, once
		SilenceUsage:  true,
		// Completion scripts come from `helm completion SHELL` (completion.go).
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	root.PersistentFlags().SortFlags = false
	a.g.define(root.PersistentFlags())
	root.Flags().Bool("version", false, "print helm's version")
	root.SetVersionTemplate("helm {{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if e := unknownFlagSuggestion(a, c, err); e != nil {
			return e
		}
		return usageErrorf(c, "%s: %v", commandName(c), err)
	})
	root.SetHelpFunc(func(c *cobra.Command, _ []string) {
		// A help that cannot be written (a closed pipe) has no one to tell.
		_ = writeHelp(c.OutOrStdout(), c)
	})
	root.SetUsageFunc(func(c *cobra.Command) error { return writeHelp(c.OutOrStderr(), c) })
	root.SetHelpCommand(newHelpCmd())
	a.completeFlags(root)
	group(a, root)
	word := invokedCommand(root, args)
	for _, tc := range topCommands {
		if word == "" || tc.name == word {
			root.AddCommand(tc.build(a))
		}
	}
	walk(root, func(c *cobra.Command) {
		// Use lines say where the flags go themselves.
		c.DisableFlagsInUseLine = true
		c.SuggestionsMinimumDistance = 2
		c.Flags().SortFlags = false // in the order defined: the important first
		if c.Long == "" && c.Short != "" {
			c.Long = upperFirst(c.Short) + "." // for help and the man page
		}
	})
	hintValueless(root)
	return root
}

// topCommands are helm's commands, in the order help lists them: the
// order of a voyage (start, observe, take a bearing, act, complete,
// read). name is the command's word; whole marks the commands that list
// or walk the whole tree, which newRootCmd builds whole for them.
var topCommands = []struct {
	name  string
	whole bool
	build func(*app) *cobra.Command
}{
	{name: "voyage", build: newVoyageCmd},
	{name: "observe", build: newObserveCmd},
	{name: "slate", build: newSlateCmd},
	{name: "bearing", build: newBearingCmd},
	{name: "action", build: newActionCmd},
	{name: "undo", build: newUndoCmd},
	{name: "complete", build: newCompleteCmd},
	{name: "log", build: newLogCmd},
	{name: "sighting", build: newSightingCmd},
	{name: "artifact", build: newArtifactCmd},
	{name: "note", build: newNoteCmd},
	{name: "judge", build: newJudgeCmd},
	{name: "transcript", build: newTranscriptCmd},
	{name: "stats", build: newStatsCmd},
	{name: "report", build: newReportCmd},
	{name: "search", build: newSearchCmd},
	{name: "policy", build: newPolicyCmd},
	{name: "serve", build: newServeCmd},
	{name: "mcp", build: newMCPCmd},
	{name: "hook", build: newHookCmd},
	{name: "auth", build: newAuthCmd},
	{name: "config", build: newConfigCmd},
	{name: "doctor", build: newDoctorCmd},
	{name: "version", build: newVersionCmd},
	{name: "completion", whole: true, build: func(*app) *cobra.Command { return newCompletionCmd() }},
	{name: "man", whole: true, build: newManCmd},
	{name: "__gen-man", whole: true, build: func(*app) *cobra.Command { return newGenManCmd() }},
}

// invokedCommand returns the top-level command that args name, when only
// its subtree need be built: the first word that is not a flag, as
// cobra finds it, every flag before it being one of root's (its value,
// when it takes one, is the next word unless given with =). It returns
// "" when the whole tree is needed.
func invokedCommand(root *cobra.Command, args []string) string {
	lookup := func(name string) *pflag.Flag {
		if f := root.PersistentFlags().Lookup(name); f != nil {
			return f
		}
		return root.Flags().Lookup(name)
	}
	shorthand := func(c string) *pflag.Flag {
		if f := root.PersistentFlags().ShorthandLookup(c); f != nil {
			return f
		}
		return root.Flags().ShorthandLookup(c)
	}
	for i := 0; i < len(args); i++ {
		s := args[i]
		switch {
		case s == "--" || s == "-":
			return ""
		case strings.HasPrefix(s, "--"):
			name, _, hasValue := strings.Cut(s[2:], "=")
			f := lookup(name)
			if f == nil {
				return ""
			}
			if !hasValue && f.NoOptDefVal == "" {
				i++ // its value
			}
		case strings.HasPrefix(s, "-"):
			// A shorthand, alone (-C DIR) or with its value (-CDIR);
			// several together (-vq) are left to the whole tree.
			f := shorthand(s[1:2])
			if f == nil || (len(s) > 2 && f.NoOptDefVal != "") {
				return ""
			}
			if len(s) == 2 && f.NoOptDefVal == "" {
				i++
			}
		default:
			for _, tc := range topCommands {
				if tc.name == s && !tc.whole {
					return s
				}
			}
			return ""
		}
	}
	return ""
}

// leaf is a command that runs: it defines its flags, then runs with the
// positional arguments left after parsing. Each command file holds its
// leaves as small types; leafCmd makes one a cobra command.
type leaf interface {
	Flags(fs *pflag.FlagSet)
	Run(ctx context.Context, a *app, args []string) error
}

// leafCmd completes c (its Use, Short, Long and Example set) with l's
// flags and run function. Positional arguments are l's to check: it says
// what is wrong with them in helm's words.
func leafCmd(a *app, c *cobra.Command, l leaf) *cobra.Command {
	l.Flags(c.Flags())
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(c *cobra.Command, args []string) error {
		a.cmd = c
		return a.shapedJSON(func() error { return l.Run(c.Context(), a, args) })
	}
	return c
}

// group makes c a command that only holds others: without one it is a
// usage error (bare helm prints the help), and a word that names none is
// an unknown command, with the nearest names as suggestions.
//
// A group lets flags it does not know pass: they are its commands' flags,
// and what matters is the command word (`helm voyage lst --status all`
// is a typo of list, not an unknown --status).
func group(a *app, c *cobra.Command) *cobra.Command {
	c.Args = cobra.ArbitraryArgs
	c.FParseErrWhitelist.UnknownFlags = true
	c.RunE = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return unknownCommand(a, c, args[0])
		}
		if c.HasParent() {
			return usageErrorf(c, "%s: missing command (one of: %s)", commandName(c), subNames(c))
		}
		if f := unknownFlag(c, a.args); f != "" {
			return usageErrorf(c, "unknown flag: %s", f)
		}
		return writeHelp(c.OutOrStdout(), c)
	}
	return c
}

// unknownFlag returns the first word of args, up to "--", that names no
// flag of c, or "".
func unknownFlag(c *cobra.Command, args []string) string {
	for _, s := range args {
		if s == "--" {
			break
		}
		if len(s) < 2 || s[0] != '-' {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(s, "-"), "=")
		known := c.Flags().Lookup(name) != nil
		if !strings.HasPrefix(s, "--") {
			known = c.Flags().ShorthandLookup(name[:1]) != nil
		}
		if !known {
			return s
		}
	}
	return ""
}

// unknownCommand is the error for a word that names no subcommand of c.
// With a near name, it says "did you mean" and its Try: line is the
// user's command line with the word corrected.
func unknownCommand(a *app, c *cobra.Command, word string) error {
	suggestions := c.SuggestionsFor(word)
	if len(suggestions) == 0 {
		return usageErrorf(c, "unknown command %q for %s (one of: %s)", word, c.CommandPath(), subNames(c))
	}
	fixed := append([]string(nil), a.args...)
	if i := slices.Index(fixed, word); i >= 0 {
		fixed[i] = suggestions[0]
	}
	return &usageError{
		Err:  &unknownCommandError{Word: word, Parent: c.CommandPath(), Suggestions: suggestions},
		Hint: "helm " + commandLine(fixed),
	}
}

// unknownFlagSuggestion is the error for a mistyped long flag that is
// near one of c's flags (cobra suggests commands, not flags): it says
// "did you mean" and its Try: line is the command line with the flag
// corrected. It is nil when the error is not an unknown flag, or no flag
// is near.
func unknownFlagSuggestion(a *app, c *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok || name == "" {
		return nil
	}
	var near []string
	best := 3 // at most 2 edits, as for commands (SuggestionsMinimumDistance)
	visit := func(f *pflag.Flag) {
		if f.Hidden || slices.Contains(near, f.Name) {
			return
		}
		d := editDistance(strings.ToLower(name), f.Name)
		if strings.HasPrefix(f.Name, name) && len(name) >= 3 {
			d = min(d, 1)
		}
		switch {
		case d < best:
			best, near = d, []string{f.Name}
		case d == best:
			near = append(near, f.Name)
		}
	}
	c.Flags().VisitAll(visit)
	c.InheritedFlags().VisitAll(visit)
	if len(near) == 0 {
		return nil
	}
	fixed := append([]string(nil), a.args...)
	for i, s := range fixed {
		if s == "--" {
			break
		}
		if s == "--"+name || strings.HasPrefix(s, "--"+name+"=") {
			fixed[i] = "--" + near[0] + strings.TrimPrefix(s, "--"+name)
			break
		}
	}
	flags := make([]string, len(near))
	for i, n := range near {
		flags[i] = "--" + n
	}
	return &usageError{
		Err:  fmt.Errorf("%s: unknown flag: --%s; did you mean %s?", commandName(c), name, orList(flags)),
		Hint: "helm " + commandLine(fixed),
	}
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// unknownCommandError is a command word that names no command.
type unknownCommandError struct {
	Word, Parent string
	Suggestions  []string
}

func (e *unknownCommandError) Error() string {
	return "unknown command " + quote(e.Word) + " for " + e.Parent + "; did you mean " + orList(e.Suggestions) + "?"
}

func quote(s string) string { return `"` + s + `"` }

// orList renders ["a", "b", "c"] as `"a", "b" or "c"`.
func orList(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = quote(w)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// walk calls f on c and every command below it.
func walk(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, s := range c.Commands() {
		walk(s, f)
	}
}

// hintValueless teaches each group which flags of its leaves take no
// value. Cobra finds the command words by skipping flags, and takes an
// unknown flag to be followed by its value: `helm action --dry-run push`
// would lose "push" to --dry-run. A hidden flag of the same name on each
// group tells it otherwise; the leaf parses its own flag as ever.
func hintValueless(root *cobra.Command) {
	var visit func(c *cobra.Command) []*pflag.Flag
	visit = func(c *cobra.Command) []*pflag.Flag {
		var below []*pflag.Flag
		for _, s := range c.Commands() {
			below = append(below, visit(s)...)
		}
		if c.HasSubCommands() {
			inherited := c.InheritedFlags() // built anew at each call
			for _, f := range below {
				if c.Flags().Lookup(f.Name) == nil && inherited.Lookup(f.Name) == nil {
					c.Flags().Bool(f.Name, false, "")
					_ = c.Flags().MarkHidden(f.Name)
				}
			}
		}
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if f.NoOptDefVal != "" && !f.Hidden {
				below = append(below, f)
			}
		})
		return below
	}
	visit(root)
}

// commandWords returns the words after "helm" that name c, each followed
// by a space: "voyage new ".
func commandWords(c *cobra.Command) string {
	if c == nil || !c.HasParent() {
		return ""
	}
	return strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ") + " "
}

// commandName names c in messages: "voyage new", or "helm" for the root.
func commandName(c *cobra.Command) string {
	if w := strings.TrimSpace(commandWords(c)); w != "" {
		return w
	}
	return "helm"
}

func subNames(c *cobra.Command) string {
	var names []string
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() {
			names = append(names, s.Name())
		}
	}
	return strings.Join(names, ", ")
}

// lazyRegexp compiles expr on first use, not when helm starts: a
// package-level regexp.MustCompile costs every command, and bounded
// repetitions ({0,127}) compile to large programs.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
