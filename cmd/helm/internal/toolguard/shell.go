// Package toolguard is the guard at a coding agent's tool boundary: it
// reads a tool call as the host reports it (agent.Event), finds what the
// call would run and touch — every command of a shell script, parsed
// with a real shell parser, never matched as text; every path; every
// host — and asks the home's policy (package policy's tool-call rules)
// whether it may run. Gate holds an agent that wants to stop until the
// policy's stop conditions hold.
//
// A decision never fails open: a policy that cannot be read, an input
// that cannot be decoded, a command whose name helm cannot know before
// it runs are denied (or asked) with the reason, never let through.
package toolguard

import (
	"fmt"
	"net/url"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/helmlog/helm/policy"
)

// maxDepth bounds the scripts inside scripts (sh -c "sh -c '…'"): deeper
// ones are unknown commands.
const maxDepth = 8

// maxBraceWords bounds one word's brace expansion ({a,b}{c,d} ...): a
// word that expands to more is an unknown word.
const maxBraceWords = 64

// The bounds of what the guard reads of one tool call. The host lets a
// call go ahead when its hook does not answer in time, so a guard that
// works for seconds on a large input fails open: past a bound it stops
// reading, and what it did not read is an unknown command (denied by any
// rule that denies). The work is linear in what it reads, so the bounds
// bound the time: about 30 ms for each on a slow machine.
const (
	// MaxScriptBytes bounds the bytes of shell script parsed for one
	// call, the scripts it runs (sh -c, eval, here-documents) included.
	// (A model writes a command of a few kilobytes; its output is
	// bounded well below this.)
	MaxScriptBytes = 256 << 10
	// MaxNesting bounds how deep brackets nest in a script, counted
	// before it is parsed (the parser and the walk recurse on them).
	MaxNesting = 500
	// MaxCommands bounds the simple commands read.
	MaxCommands = 2000
	// MaxWords bounds the words of those commands (after brace
	// expansion) and of their redirections.
	MaxWords = 20000
)

// maxQuote bounds the text of a word quoted in a reason.
const maxQuote = 80

// call is one simple command a script runs, with the paths and hosts it
// touches.
type call struct {
	argv         []string
	paths, hosts []string
}

// scan collects the calls of a script.
type scan struct {
	cwd   string // "" once a cd helm cannot follow has run
	home  string
	calls []call
	// piped are the statements whose input is a pipe.
	piped map[*syntax.Stmt]bool
	// src is the script being walked (its words are quoted from it).
	src string
	// bytes, cmds and nwords count what was read, against the bounds;
	// stopped is set when one was passed: nothing more is read.
	bytes, cmds, nwords int
	stopped             bool
	res                 *resolver
	// aliases defined so far; expanding, those being expanded (bash
	// does not expand an alias inside itself).
	aliases   map[string]string
	expanding map[string]bool
}

// Commands returns every simple command the shell script src runs, as
// argvs, with the paths they touch (operands and redirection targets,
// absolute and cleaned, resolved against cwd and through the symlinks of
// their existing parents) and the hosts they fetch from (URLs among
// their operands). It follows what a shell runs: pipelines, lists,
// subshells, blocks, command and process substitutions, function bodies,
// if/while/for/case bodies, and the scripts and commands other commands
// run — sh -c, bash -c, eval, here-documents fed to a shell, xargs,
// find -exec and -delete, and wrappers (env, sudo, timeout, nice, ...) —
// and the code that runs without being a command of the script: traps,
// aliases, variables bash or a program runs (PS4, PAGER, ...), git's
// aliases and settings that hold commands (see runs.go). It reads at
// most MaxScriptBytes, MaxNesting, MaxCommands and MaxWords.
//
// What it cannot know ahead of running is marked, never dropped: a
// command name that comes from a variable or a command's output, a
// sourced file, a script a shell reads from a pipe or a file, or a
// script that does not parse, is an argv whose name is a
// policy.UnknownCommand saying why; a word whose value is known only
// when it runs is a policy.UnknownWord. err says why src did not parse;
// the argvs then hold an unknown command all the same.
func Commands(src, cwd string) (argvs [][]string, paths, hosts []string, err error) {
	calls, err := commands(src, cwd)
	for _, c := range calls {
		argvs = append(argvs, c.argv)
		paths = append(paths, c.paths...)
		hosts = append(hosts, c.hosts...)
	}
	return argvs, dedupe(paths), dedupe(hosts), err
}

// dedupe drops the repeats of xs, keeping the first of each.
func dedupe(xs []string) []string {
	var out []string
	seen := make(map[string]bool, len(xs))
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// commands is Commands, one call per command.
func commands(src, cwd string) ([]call, error) {
	home, _ := os.UserHomeDir()
	s := &scan{cwd: filepath.Clean(cwd), home: home, piped: map[*syntax.Stmt]bool{}, res: newResolver(),
		aliases: map[string]string{}, expanding: map[string]bool{}}
	if cwd == "" {
		s.cwd = ""
	}
	err := s.script(src, 0)
	return s.calls, err
}

// unknown records a command helm cannot know, with why.
func (s *scan) unknown(why string, rest ...string) {
	s.calls = append(s.calls, call{argv: append([]string{policy.UnknownCommand(why)}, rest...)})
}

// nesting is how deep the brackets of src nest, quotes not minded (a
// bound, not a parse: a closing bracket before its opening one counts
// for nothing).
func nesting(src string) int {
	depth, most := 0, 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '(', '{', '[':
			if depth++; depth > most {
				most = depth
			}
		case ')', '}', ']':
			depth = max(depth-1, 0)
		}
	}
	return most
}

// stop records that a bound was passed, with why, and stops reading.
func (s *scan) stop(why string) {
	if !s.stopped {
		s.stopped = true
		s.unknown(why + ", more than helm reads")
	}
}

// script parses src and walks it.
func (s *scan) script(src string, depth int) error {
	if s.stopped {
		return nil
	}
	if depth > maxDepth {
		s.unknown(fmt.Sprintf("scripts nested more than %d deep", maxDepth))
		return nil
	}
	if s.bytes += len(src); s.bytes > MaxScriptBytes {
		s.stop(fmt.Sprintf("the script (with the scripts it runs) is longer than %d bytes", MaxScriptBytes))
		return nil
	}
	if nesting(src) > MaxNesting {
		s.stop(fmt.Sprintf("the script's brackets nest more than %d deep", MaxNesting))
		return nil
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		s.unknown("the script does not parse: " + quote(err.Error()))
		return fmt.Errorf("parse shell script: %w", err)
	}
	outer := s.src
	s.src = src
	defer func() { s.src = outer }()
	var visit func(n syntax.Node) bool
	visit = func(n syntax.Node) bool {
		if s.stopped {
			return false
		}
		switch n := n.(type) {
		case *syntax.Stmt:
			s.stmt(n, depth)
			if b, ok := n.Cmd.(*syntax.BinaryCmd); ok {
				s.chain(b, depth, visit)
				return false
			}
		case *syntax.DeclClause:
			s.declare(n)
		case *syntax.Assign:
			// NAME=value, alone, before a command or after export,
			// declare, local: bash runs the value of some names.
			s.assignNode(n, depth)
		}
		return true
	}
	syntax.Walk(f, visit)
	return nil
}

// chain walks a list or pipeline (a && b || c | d), in order, without
// recursing on its length: a chain of 30,000 commands is a tree 30,000
// deep.
func (s *scan) chain(b *syntax.BinaryCmd, depth int, visit func(syntax.Node) bool) {
	var stack []*syntax.Stmt
	push := func(b *syntax.BinaryCmd) {
		if b.Op == syntax.Pipe || b.Op == syntax.PipeAll {
			s.piped[b.Y] = true
		}
		stack = append(stack, b.Y, b.X)
	}
	push(b)
	for len(stack) > 0 && !s.stopped {
		st := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if inner, ok := st.Cmd.(*syntax.BinaryCmd); ok {
			s.stmt(st, depth)
			push(inner)
			continue
		}
		syntax.Walk(st, visit)
	}
}

// stmt handles one statement: its command when it is a simple one, and
// its redirections.
func (s *scan) stmt(st *syntax.Stmt, depth int) {
	var redirPaths []string
	var stdin *syntax.Redirect
	for _, r := range st.Redirs {
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			stdin = r
			continue
		case syntax.DplIn, syntax.DplOut:
			continue // >&2, <&3: a file descriptor
		case syntax.RdrIn:
			stdin = r
		}
		if r.Word == nil {
			continue
		}
		if !s.count(1) {
			return
		}
		v, ok := s.word(r.Word)
		if !ok {
			redirPaths = append(redirPaths, policy.UnknownWord(s.printWord(r.Word)))
			continue
		}
		redirPaths = append(redirPaths, s.resolve(v)...)
	}
	c, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 {
		if len(redirPaths) > 0 {
			s.calls = append(s.calls, call{argv: []string{":"}, paths: redirPaths})
		}
		return
	}
	var argv []string
	for i, w := range c.Args {
		words, ok := s.words(w)
		if !s.count(len(words)) {
			return
		}
		if !ok {
			text := s.printWord(w)
			if i == 0 {
				argv = append(argv, policy.UnknownCommand("the command's name comes from "+text))
			} else {
				argv = append(argv, policy.UnknownWord(text))
			}
			continue
		}
		if i == 0 && len(words) == 1 && hasGlob(w) {
			argv = append(argv, policy.UnknownCommand("the command's name is a pattern: "+s.printWord(w)))
			continue
		}
		argv = append(argv, words...)
	}
	if len(argv) == 0 {
		return
	}
	in := input{piped: s.piped[st]}
	if stdin != nil {
		in.redir = stdin
	}
	s.run(argv, in, redirPaths, depth)
}

// count counts n words read, and reports whether the bound holds (else
// reading stops).
func (s *scan) count(n int) bool {
	if s.nwords += n; s.nwords > MaxWords {
		s.stop(fmt.Sprintf("the script has more than %d words", MaxWords))
	}
	return !s.stopped
}

// input is where a command's standard input comes from, for a shell
// that reads its script there.
type input struct {
	piped bool
	redir *syntax.Redirect
}

// run records argv (and the paths of its redirections) and follows the
// commands it runs in turn.
func (s *scan) run(argv []string, in input, extra []string, depth int) {
	if s.stopped {
		return
	}
	if s.cmds++; s.cmds > MaxCommands {
		s.stop(fmt.Sprintf("the script runs more than %d commands", MaxCommands))
		return
	}
	if v, ok := s.aliases[argv[0]]; ok && !s.expanding[argv[0]] {
		// An alias is expanded where it is the command's name (bash
		// does so with expand_aliases, which a script may set).
		s.expanding[argv[0]] = true
		_ = s.script(v+" "+strings.Join(quoteAll(argv[1:]), " "), depth+1)
		delete(s.expanding, argv[0])
	}
	if t := s.linkTarget(argv[0]); t != "" {
		// A link to a program is that program (./del -> /bin/rm).
		defer s.run(append([]string{t}, argv[1:]...), in, nil, depth+1)
	}
	c := call{argv: argv, paths: extra}
	c.paths = append(c.paths, s.operandPaths(argv)...)
	c.hosts = hostsOf(argv)
	s.calls = append(s.calls, c)
	if _, ok := policy.Unknown(argv[0]); ok {
		return
	}
	name := path.Base(argv[0])
	args := argv[1:]
	if depth > maxDepth {
		s.unknown(fmt.Sprintf("commands nested more than %d deep", maxDepth))
		return
	}
	switch name {
	case "cd", "pushd":
		s.cd(args)
	case "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh":
		s.shell(name, args, in, depth)
	case "eval":
		if i := slices.IndexFunc(args, isUnknown); i >= 0 {
			s.unknown("eval runs " + shown(args[i]))
			return
		}
		_ = s.script(strings.Join(args, " "), depth+1)
	case "source", ".":
		what := "a file"
		if len(args) > 0 {
			what = shown(args[0])
		}
		s.unknown(name + " runs the commands of " + what + ", which helm does not read")
	case "xargs":
		s.inner(name, xargsCommand(args), depth)
	case "find":
		s.find(args, depth)
	case "watch":
		s.watch(args, depth)
	case "busybox", "toybox":
		if len(args) > 0 {
			s.inner(name, args, depth)
		}
	case "coreutils":
		// coreutils --coreutils-prog=rm -rf x
		if len(args) > 0 && strings.HasPrefix(args[0], "--coreutils-prog=") {
			s.inner(name, append([]string{strings.TrimPrefix(args[0], "--coreutils-prog=")}, args[1:]...), depth)
		} else if len(args) > 0 {
			s.unknown("coreutils runs " + shown(args[0]))
		}
	case "flock", "script", "su", "runuser":
		if !s.dashC(name, args, depth) && name == "flock" {
			s.wrapper(name, wrappers[name], args, depth) // flock FILE COMMAND...
		}
	case "ssh":
		s.ssh(args, depth)
	case "trap":
		s.trap(args, depth)
	case "alias":
		s.alias(args, depth)
	case "read", "mapfile", "readarray", "printf", "declare", "typeset", "local", "export", "readonly":
		s.setsVariable(name, args)
	case "git":
		s.git(args, depth)
	default:
		if opts, ok := wrappers[name]; ok {
			s.wrapper(name, opts, args, depth)
		}
	}
}

// inner follows a command another runs.
func (s *scan) inner(by string, argv []string, depth int) {
	if len(argv) == 0 {
		return
	}
	if why, ok := policy.Unknown(argv[0]); ok {
		argv = slices.Clone(argv)
		argv[0] = policy.UnknownCommand(by + " runs " + why)
	}
	s.run(argv, input{}, nil, depth+1)
}

// shell follows a shell's script: -c's, a here-document's or
// here-string's, or an unknown one (a file, a pipe, a terminal).
func (s *scan) shell(name string, args []string, in input, depth int) {
	script, i := -1, 0
	cmd := false
	for i < len(args) {
		a := args[i]
		if isUnknown(a) {
			s.unknown(name + " takes options from " + shown(a))
			return
		}
		if a == "--" {
			i++
			break
		}
		if a == "-o" || a == "+o" || a == "-O" || a == "+O" || a == "--rcfile" || a == "--init-file" {
			i += 2
			continue
		}
		if len(a) > 1 && (a[0] == '-' || a[0] == '+') {
			if a[0] == '-' && a[1] != '-' && strings.ContainsRune(a[1:], 'c') {
				cmd = true
			}
			i++
			continue
		}
		break
	}
	if cmd {
		script = i
		if script >= len(args) {
			return // sh -c with no script: an error
		}
		if isUnknown(args[script]) {
			s.unknown(name + " -c runs " + shown(args[script]))
			return
		}
		_ = s.script(args[script], depth+1)
		return
	}
	if i < len(args) {
		s.unknown(name + " runs the script " + shown(args[i]) + ", which helm does not read")
		return
	}
	switch {
	case in.redir != nil && in.redir.Op != syntax.RdrIn:
		body := in.redir.Hdoc
		if in.redir.Op == syntax.WordHdoc {
			body = in.redir.Word
		}
		if body == nil {
			return
		}
		v, ok := s.word(body)
		if !ok {
			s.unknown(name + " runs a here-document whose text is known only when it runs")
			return
		}
		_ = s.script(v, depth+1)
	case in.redir != nil:
		s.unknown(name + " runs the script it reads from " + s.printWord(in.redir.Word) + ", which helm does not read")
	case in.piped:
		s.unknown(name + " runs the script piped into it")
	default:
		s.unknown(name + " reads its script from its input")
	}
}

// cd follows a change of directory for the relative paths after it; one
// helm cannot follow makes them unknown. cd reads ".." as a reader
// cleaning the path does, cd -P as the kernel does.
func (s *scan) cd(args []string) {
	var dirs []string
	physical := false
	for _, a := range args {
		switch {
		case a == "--":
		case len(a) > 1 && a[0] == '-' && strings.Trim(a[1:], "LPe@") == "":
			physical = strings.LastIndexAny(a, "LP") >= 0 && a[strings.LastIndexAny(a, "LP")] == 'P'
		default:
			dirs = append(dirs, a)
		}
	}
	switch {
	case len(dirs) == 0:
		s.cwd = s.home
	case len(dirs) > 1 || dirs[0] == "-" || isUnknown(dirs[0]) || s.cwd == "" && !filepath.IsAbs(dirs[0]):
		s.cwd = ""
	default:
		ps := s.resolve(dirs[0])
		s.cwd = ps[0]
		if physical {
			s.cwd = ps[len(ps)-1]
		}
	}
}

// xargsCommand returns the command xargs runs with its input appended
// (an unknown word: the input may hold anything, flags included).
func xargsCommand(args []string) []string {
	values := []string{"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"}
	i := skipOptions(args, values)
	if i >= len(args) {
		return []string{"echo", policy.UnknownWord("the input of xargs")}
	}
	return append(slices.Clone(args[i:]), policy.UnknownWord("the input of xargs"))
}

// find follows -exec, -execdir, -ok and -okdir, and reads -delete as
// rm -r -f of its starting points: it removes whatever its expression
// matches below them, depth first, without asking.
func (s *scan) find(args []string, depth int) {
	var starts []string
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "-H" || a == "-L" || a == "-P" || strings.HasPrefix(a, "-O") || strings.HasPrefix(a, "-D") && len(a) > 2 {
			continue
		}
		if a == "-D" {
			i++
			continue
		}
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" || a == "," {
			break
		}
		starts = append(starts, a)
	}
	if len(starts) == 0 {
		starts = []string{"."}
	}
	for ; i < len(args); i++ {
		switch args[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j] != ";" && args[j] != "+" {
				j++
			}
			s.inner("find", slices.Clone(args[i+1:j]), depth)
			i = j
		case "-delete":
			s.run(append([]string{"rm", "-r", "-f", "--"}, starts...), input{}, nil, depth+1)
		}
	}
}

// watch runs its arguments as a shell command (joined by spaces), or as
// an argv with -x.
func (s *scan) watch(args []string, depth int) {
	exec := false
	i := 0
	for i < len(args) {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") || isUnknown(a) {
			break
		}
		if a == "-x" || a == "--exec" {
			exec = true
		}
		if slices.Contains([]string{"-n", "--interval", "-d", "-q"}, a) && !strings.Contains(a, "=") {
			i++
		}
		i++
	}
	rest := args[min(i, len(args)):]
	if len(rest) == 0 {
		return
	}
	if exec {
		s.inner("watch", rest, depth)
		return
	}
	if j := slices.IndexFunc(rest, isUnknown); j >= 0 {
		s.unknown("watch runs " + shown(rest[j]))
		return
	}
	_ = s.script(strings.Join(rest, " "), depth+1)
}

// wrapperOptions describes a command that runs its arguments as a
// command: its options that take a value, and how many words after the
// options come before the command (timeout's duration).
type wrapperOptions struct {
	values []string
	skip   int
	// noRun are options with which it runs nothing (command -v).
	noRun []string
	// assigns: VAR=value words before the command (env).
	assigns bool
}

var wrappers = map[string]wrapperOptions{
	"command":  {noRun: []string{"-v", "-V"}},
	"builtin":  {},
	"exec":     {values: []string{"-a"}},
	"env":      {values: []string{"-u", "--unset", "-C", "--chdir", "-S", "--split-string", "-a", "--argv0"}, assigns: true},
	"sudo":     {values: []string{"-u", "--user", "-g", "--group", "-h", "--host", "-C", "--close-from", "-D", "--chdir", "-p", "--prompt", "-r", "--role", "-t", "--type", "-T", "--command-timeout", "-U", "--other-user", "-R", "--chroot"}, noRun: []string{"-l", "--list", "-v", "--validate", "-k", "-K", "-e", "--edit", "-V", "--version"}, assigns: true},
	"doas":     {values: []string{"-u", "-C"}},
	"nice":     {values: []string{"-n", "--adjustment"}},
	"nohup":    {},
	"time":     {values: []string{"-f", "--format", "-o", "--output"}},
	"timeout":  {values: []string{"-s", "--signal", "-k", "--kill-after"}, skip: 1},
	"stdbuf":   {values: []string{"-i", "--input", "-o", "--output", "-e", "--error"}},
	"ionice":   {values: []string{"-c", "--class", "-n", "--classdata"}, noRun: []string{"-p", "--pid", "-P", "--pgid", "-u", "--uid"}},
	"setsid":   {},
	"unbuffer": {},
	"chrt":     {skip: 1},
	"taskset":  {skip: 1},
	"flock":    {values: []string{"-w", "--timeout", "-E", "--conflict-exit-code"}, skip: 1},
}

// wrapper follows the command a wrapper runs.
func (s *scan) wrapper(name string, o wrapperOptions, args []string, depth int) {
	i := 0
	for i < len(args) {
		a := args[i]
		if isUnknown(a) {
			s.unknown(name+" takes "+shown(a)+": helm cannot tell where the command it runs starts", args[i+1:]...)
			return
		}
		if a == "--" {
			i++
			break
		}
		if o.assigns && !strings.HasPrefix(a, "-") && strings.Contains(a, "=") {
			// env and sudo take every NAME=value before the command,
			// whatever the name (BASH_FUNC_ls%%=… included).
			n, v, _ := strings.Cut(a, "=")
			s.assign(n, v, true, depth)
			i++
			continue
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		if name == "nice" && len(a) > 1 && isDigits(strings.TrimPrefix(a[1:], "-")) {
			i++ // nice -5, nice --10
			continue
		}
		flag, value, hasValue := strings.Cut(a, "=")
		if strings.HasPrefix(flag, "--") {
			flag = longOption(flag, o.values, o.noRun)
		} else {
			// Short flags, combined or not: a flag that takes a value
			// takes the rest of the word, or the next word (-n5, -vS'…').
			flag, value, hasValue = "", "", false
			for j := 1; j < len(a); j++ {
				f := "-" + a[j:j+1]
				if slices.Contains(o.noRun, f) {
					return
				}
				if slices.Contains(o.values, f) {
					flag = f
					if value, hasValue = a[j+1:], j+1 < len(a); !hasValue && i+1 < len(args) {
						i++
						value, hasValue = args[i], true
					}
					break
				}
			}
			if flag == "" {
				i++
				continue
			}
		}
		if slices.Contains(o.noRun, flag) {
			return
		}
		if slices.Contains(o.values, flag) && !hasValue && strings.HasPrefix(a, "--") && i+1 < len(args) {
			i++
			value, hasValue = args[i], true
		}
		if name == "env" && (flag == "-S" || flag == "--split-string") {
			// env -S 'rm -rf x' splits its string into the command.
			if isUnknown(value) {
				s.unknown("env -S runs " + shown(value))
				return
			}
			argv, err := envSplit(value)
			if err != nil {
				s.unknown("env -S runs " + quote(strconv.Quote(value)) + ", which helm cannot split: " + err.Error())
				return
			}
			s.wrapper(name, o, append(argv, args[i+1:]...), depth)
			return
		}
		i++
	}
	i += o.skip
	if i < len(args) {
		s.inner(name, slices.Clone(args[i:]), depth)
	}
}

// longOption is the long option flag abbreviates among known's (GNU
// getopt_long takes any prefix that names one option alone: timeout
// --sig is --signal); flag itself when it names none or several.
func longOption(flag string, known ...[]string) string {
	if len(flag) < 3 {
		return flag
	}
	found := ""
	for _, k := range known {
		for _, full := range k {
			if full == flag {
				return flag
			}
			if strings.HasPrefix(full, "--") && strings.HasPrefix(full, flag) {
				if found != "" && found != full {
					return flag
				}
				found = full
			}
		}
	}
	if found == "" {
		return flag
	}
	return found
}

// quoteAll quotes words for a shell, so that joining them keeps them.
func quoteAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		q, err := syntax.Quote(w, syntax.LangBash)
		if err != nil {
			q = strconv.Quote(w)
		}
		out[i] = q
	}
	return out
}

// skipOptions returns the index of the first word of args that is not an
// option (values: the options that take the next word), after "--".
func skipOptions(args, values []string) int {
	i := 0
	for i < len(args) {
		a := args[i]
		if a == "--" {
			return i + 1
		}
		if !strings.HasPrefix(a, "-") || a == "-" || isUnknown(a) {
			return i
		}
		if !strings.Contains(a, "=") && slices.Contains(values, longOption(a, values)) {
			i++
		}
		i++
	}
	return i
}

func isUnknown(w string) bool { _, ok := policy.Unknown(w); return ok }

// shown is a word as a message shows it.
func shown(w string) string {
	if t, ok := policy.Unknown(w); ok {
		return t
	}
	return strconv.Quote(w)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// operandPaths are the paths among an argv's words: every word but the
// command's name that is not a flag, and the values of --flag=VALUE
// that look like paths, resolved. URLs are hosts, not paths. A word
// known only when it runs may be any path.
func (s *scan) operandPaths(argv []string) []string {
	var out []string
	dashdash := false
	for _, w := range argv[1:] {
		if isUnknown(w) {
			out = append(out, w)
			continue
		}
		if !dashdash && w == "--" {
			dashdash = true
			continue
		}
		if !dashdash && strings.HasPrefix(w, "-") && len(w) > 1 {
			_, v, ok := strings.Cut(w, "=")
			if ok && (strings.HasPrefix(v, "/") || strings.HasPrefix(v, ".") || strings.HasPrefix(v, "~")) {
				out = append(out, s.resolve(v)...)
			}
			continue
		}
		if w == "" || isURL(w) {
			continue
		}
		out = append(out, s.resolve(w)...)
	}
	return out
}

// resolve makes p absolute (against the working directory, ~ expanded)
// and resolves its symlinks: see resolver.paths. A relative path after a
// cd helm could not follow is unknown.
func (s *scan) resolve(p string) []string {
	return s.res.paths(p, s.cwd, s.home)
}

// resolver resolves the symlinks of paths, remembering each resolved
// directory entry so that a call naming many paths costs one lstat per
// new entry.
type resolver struct {
	known map[string]string // a resolved directory joined with a name → where it leads
}

func newResolver() *resolver { return &resolver{known: map[string]string{}} }

// maxLinks is how many symlinks one path may go through (Linux's
// ELOOP bound); past it the path is left as it is.
const maxLinks = 40

// paths makes p absolute (against cwd, ~ expanded) and returns where it
// leads: its symlinks resolved, ".." taken both as a reader cleaning the
// path does (link/.. is the directory holding link) and as the kernel
// does (the directory above link's target). A link in the project that
// points out of it, or a ".." after one, is outside the project. The
// part of a path that does not exist is kept as written, cleaned.
func (r *resolver) paths(p, cwd, home string) []string {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		p = home + p[1:]
	case strings.HasPrefix(p, "~"):
		name, rest, _ := strings.Cut(p[1:], "/")
		if u, err := user.Lookup(name); err == nil {
			p = filepath.Join(u.HomeDir, rest)
		}
	}
	if !filepath.IsAbs(p) {
		if cwd == "" {
			return []string{policy.UnknownWord(p + " (relative to a directory helm cannot tell)")}
		}
		p = cwd + string(filepath.Separator) + p
	}
	lexical := r.physical(filepath.Clean(p), new(int))
	if !slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "..") {
		return []string{lexical}
	}
	if kernel := r.physical(p, new(int)); kernel != lexical {
		return []string{lexical, kernel}
	}
	return []string{lexical}
}

// resolvePath is the first of resolver.paths, with a resolver of its own.
func resolvePath(p, cwd, home string) string { return newResolver().paths(p, cwd, home)[0] }

// evalExisting resolves the symlinks of the clean, absolute p.
func evalExisting(p string) string { return newResolver().physical(p, new(int)) }

// physical resolves the absolute path p entry by entry as the kernel
// does: a symlink is replaced by its target before what follows it
// (".." included) is read. From the first entry that does not exist,
// the rest is joined as written. links counts the symlinks followed.
func (r *resolver) physical(p string, links *int) string {
	vol := filepath.VolumeName(p)
	sep := string(filepath.Separator)
	cur := vol + sep
	parts := strings.Split(p[len(vol):], sep)
	for i, name := range parts {
		switch name {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		if to, ok := r.known[next]; ok {
			cur = to
			continue
		}
		rest := func() string { return filepath.Join(append([]string{next}, parts[i+1:]...)...) }
		fi, err := os.Lstat(next)
		if err != nil {
			return rest()
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			r.known[next] = next
			cur = next
			continue
		}
		*links++
		target, err := os.Readlink(next)
		if err != nil || *links > maxLinks {
			return rest()
		}
		if !filepath.IsAbs(target) {
			target = cur + sep + target
		}
		to := r.physical(target, links)
		r.known[next] = to
		cur = to
	}
	return cur
}

// webCommands take a URL without its scheme (curl example.com).
var webCommands = []string{"curl", "wget", "http", "https", "xh", "xhs", "curlie", "httpie", "aria2c", "lynx", "w3m"}

// remoteCommands name a host as [user@]host:path or ssh's [user@]host.
var remoteCommands = []string{"git", "scp", "sftp", "rsync", "ssh"}

// hostsOf returns the hosts argv fetches from: the hosts of its URLs,
// the scheme-less ones of web clients, the user@host:path of git, scp
// and rsync, ssh's host. A word known only when it runs may name any
// host, for a command that fetches.
func hostsOf(argv []string) []string {
	if isUnknown(argv[0]) {
		return nil
	}
	name := path.Base(argv[0])
	web, remote := slices.Contains(webCommands, name), slices.Contains(remoteCommands, name)
	values := hostValues[name]
	// Every operand of curl and wget is a URL: curl 2130706433 and
	// curl intranet fetch from hosts too.
	allURLs := name == "curl" || name == "wget"
	var out []string
	operand := 0
	for i := 1; i < len(argv); i++ {
		w := argv[i]
		if isUnknown(w) {
			if web || remote {
				out = append(out, w)
			}
			continue
		}
		flag := strings.HasPrefix(w, "-") && w != "-"
		if flag {
			f, v, ok := strings.Cut(w, "=")
			if !ok && strings.HasPrefix(f, "--") {
				f = longOption(f, values)
			} else if !ok && len(f) > 2 && slices.Contains(values, f[:2]) {
				f, v, ok = f[:2], f[2:], true // -ofile, -Kfile
			}
			if !ok && slices.Contains(values, f) && i+1 < len(argv) {
				i++
				v, ok = argv[i], true
			}
			if ok && slices.Contains(urlFiles[name], f) {
				out = append(out, policy.UnknownWord(name+" reads the URLs to fetch from "+quote(v)))
				continue
			}
			if !ok {
				continue
			}
			w = v
		} else {
			operand++
		}
		if h := urlHost(w); h != "" {
			out = append(out, h)
			continue
		}
		if flag || w == "-" {
			continue
		}
		switch {
		case allURLs || web && looksLikeHost(w):
			if h := urlHost("http://" + w); h != "" {
				out = append(out, h)
			}
		case remote && name == "ssh" && operand == 1:
			out = append(out, stripUser(w))
		case remote && name != "ssh":
			if h, _, ok := strings.Cut(w, ":"); ok && !strings.Contains(h, "/") && h != "" {
				out = append(out, stripUser(h))
			}
		}
	}
	return out
}

// hostValues are the options that take a value of the commands that
// fetch (their value is no host: curl -o out.html).
var hostValues = map[string][]string{
	"curl": {"-o", "--output", "-d", "--data", "--data-raw", "--data-binary", "--data-urlencode", "-H", "--header", "-u", "--user",
		"-A", "--user-agent", "-e", "--referer", "-F", "--form", "-T", "--upload-file", "-x", "--proxy", "-m", "--max-time",
		"-X", "--request", "-w", "--write-out", "-b", "--cookie", "-c", "--cookie-jar", "-K", "--config", "-r", "--range",
		"-E", "--cert", "--key", "--cacert", "--connect-timeout", "--retry", "--retry-delay", "--retry-max-time", "--resolve",
		"--connect-to", "--limit-rate", "--interface", "--dns-servers", "-C", "--continue-at", "-z", "--time-cond",
		"--max-filesize", "--output-dir", "-D", "--dump-header", "--trace", "--trace-ascii", "--stderr", "-Y", "--speed-limit",
		"-y", "--speed-time", "--url", "-U", "--proxy-user", "--json", "--variable", "--expand-url"},
	"wget": {"-O", "--output-document", "-P", "--directory-prefix", "-o", "--output-file", "-a", "--append-output",
		"-U", "--user-agent", "-i", "--input-file", "-t", "--tries", "-T", "--timeout", "-w", "--wait", "-l", "--level",
		"--header", "--user", "--password", "--post-data", "--post-file", "-e", "--execute", "-B", "--base", "--referer",
		"--load-cookies", "--save-cookies", "-A", "--accept", "-R", "--reject", "-D", "--domains", "-Q", "--quota"},
	"ssh": sshValues,
}

// urlFiles are the options with which a command reads the URLs it
// fetches from a file: the hosts are unknown.
var urlFiles = map[string][]string{
	"curl": {"-K", "--config"},
	"wget": {"-i", "--input-file", "-e", "--execute"},
}

func stripUser(h string) string {
	if _, after, ok := strings.Cut(h, "@"); ok {
		h = after
	}
	return strings.ToLower(h)
}

// isURL reports whether w is a URL with a scheme and a host.
func isURL(w string) bool { return urlHost(w) != "" }

// urlHost returns the host of a URL with a scheme, lowercased, without
// its port; "" when w is not one.
func urlHost(w string) string {
	i := strings.Index(w, "://")
	if i <= 0 {
		return ""
	}
	u, err := url.Parse(w)
	if err != nil || u.Hostname() == "" {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

// looksLikeHost: a scheme-less web address, example.com/x or
// localhost:8080.
func looksLikeHost(w string) bool {
	h, _, _ := strings.Cut(w, "/")
	h, _, _ = strings.Cut(h, ":")
	return h == "localhost" || strings.Contains(h, ".") && !strings.HasPrefix(w, ".") && !strings.HasPrefix(w, "/")
}

// words returns a word's values after brace expansion (-{r,f} is -r -f),
// ok false when a value is known only when it runs.
func (s *scan) words(w *syntax.Word) ([]string, bool) {
	if !hasBraces(w) {
		v, ok := s.word(w)
		return []string{v}, ok
	}
	c := &syntax.Word{Parts: slices.Clone(w.Parts)}
	if !syntax.SplitBraces(c) {
		v, ok := s.word(w)
		return []string{v}, ok
	}
	expanded, ok := expandBraces(c.Parts)
	if !ok {
		return nil, false
	}
	var out []string
	for _, parts := range expanded {
		v, ok := s.word(&syntax.Word{Parts: parts})
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

func hasBraces(w *syntax.Word) bool {
	return slices.ContainsFunc(w.Parts, func(p syntax.WordPart) bool {
		l, ok := p.(*syntax.Lit)
		return ok && strings.Contains(l.Value, "{")
	})
}

// expandBraces expands the brace expansions of parts; a sequence
// ({1..9}) or more than maxBraceWords words is not expanded (ok false).
func expandBraces(parts []syntax.WordPart) ([][]syntax.WordPart, bool) {
	out := [][]syntax.WordPart{nil}
	for _, p := range parts {
		b, ok := p.(*syntax.BraceExp)
		if !ok {
			for i := range out {
				out[i] = append(slices.Clone(out[i]), p)
			}
			continue
		}
		if b.Sequence {
			return nil, false
		}
		var next [][]syntax.WordPart
		for _, e := range b.Elems {
			alts, ok := expandBraces(e.Parts)
			if !ok {
				return nil, false
			}
			for _, prefix := range out {
				for _, a := range alts {
					next = append(next, append(slices.Clone(prefix), a...))
				}
			}
			if len(next) > maxBraceWords {
				return nil, false
			}
		}
		out = next
	}
	return out, true
}

// word returns a word's value as the shell would pass it (quotes
// removed, escapes applied, a leading ~ expanded), ok false when part of
// it is known only when it runs (a variable, a command's output,
// arithmetic).
func (s *scan) word(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := unescape(p.Value)
			if i == 0 && (v == "~" || strings.HasPrefix(v, "~/")) && s.home != "" {
				v = s.home + v[1:]
			}
			b.WriteString(v)
		case *syntax.SglQuoted:
			if p.Dollar {
				v, ok := ansiC(p.Value)
				if !ok {
					return "", false
				}
				b.WriteString(v)
				continue
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescapeDouble(l.Value))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// hasGlob reports whether a word has an unquoted glob character: its
// value is known only when the shell matches it against files.
func hasGlob(w *syntax.Word) bool {
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(strings.ReplaceAll(p.Value, `\\`, ""), "*?[") && !escapedOnly(p.Value) {
				return true
			}
		case *syntax.ExtGlob:
			return true
		}
	}
	return false
}

// escapedOnly reports whether every glob character of an unquoted
// literal is escaped.
func escapedOnly(v string) bool {
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case '*', '?', '[':
			return false
		}
	}
	return true
}

// printWord is a word as written, cut to maxQuote bytes: a reason
// quotes a bounded part of a command (quoting each nested word whole
// would be quadratic in its nesting).
func (s *scan) printWord(w *syntax.Word) string {
	a, b := int(w.Pos().Offset()), int(w.End().Offset())
	if a < 0 || a > b || b > len(s.src) {
		return "a word"
	}
	return quote(s.src[a:b])
}

// quote cuts t to maxQuote bytes, at a character's start.
func quote(t string) string {
	if len(t) <= maxQuote {
		return t
	}
	i := maxQuote
	for i > 0 && !utf8.RuneStart(t[i]) {
		i--
	}
	return t[:i] + "…"
}

// unescape applies an unquoted literal's backslashes: \c is c, and a
// backslash before a newline joins the lines.
func unescape(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
			if v[i] == '\n' {
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// unescapeDouble applies a double-quoted literal's backslashes: only
// before $ ` " \ and a newline.
func unescapeDouble(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) && strings.IndexByte("$`\"\\\n", v[i+1]) >= 0 {
			i++
			if v[i] == '\n' {
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// ansiC decodes a $'...' string's escapes; ok false for one it does not
// know (the value is then unknown rather than guessed).
func ansiC(v string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(v) {
			return "", false
		}
		switch e := v[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'x', 'u', 'U', '0', '1', '2', '3', '4', '5', '6', '7':
			base, digits, most := 16, "0123456789abcdefABCDEF", map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			start := i + 1
			if e >= '0' && e <= '7' {
				base, digits, most, start = 8, "01234567", 3, i
			}
			j := start
			for j < len(v) && j-start < most && strings.IndexByte(digits, v[j]) >= 0 {
				j++
			}
			if j == start {
				return "", false
			}
			n, err := strconv.ParseUint(v[start:j], base, 32)
			if err != nil {
				return "", false
			}
			if n == 0 {
				return b.String(), true // bash ends the string at a NUL
			}
			if e == 'u' || e == 'U' {
				if !utf8.ValidRune(rune(n)) {
					return "", false
				}
				b.WriteRune(rune(n))
			} else {
				b.WriteByte(byte(n))
			}
			i = j - 1
		default:
			return "", false
		}
	}
	return b.String(), true
}
