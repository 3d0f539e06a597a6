package toolguard

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/helmlog/helm/policy"
)

// Code that runs without being a command of the script: the values of
// the variables bash, git and others run, traps, aliases, git's
// configuration, the remote command of ssh, the command line of
// flock -c or script -c, the string env -S splits.

// codeVariables hold a command line that bash or a program runs: a
// prompt bash expands (PS4 with set -x, PS1 and PROMPT_COMMAND in an
// interactive shell), a pager, an editor, an ssh command. Their value
// is read as a script.
var codeVariables = []string{"PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND",
	"GIT_SSH_COMMAND", "GIT_SSH", "GIT_PAGER", "PAGER", "MANPAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
	"EDITOR", "VISUAL", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "LESSOPEN", "LESSCLOSE", "BROWSER"}

// fileVariables name a file whose code runs, or settings that do: bash
// sources BASH_ENV (sh, ENV), the loader loads LD_PRELOAD, git reads
// its configuration (and the commands in it) from GIT_CONFIG_*.
var fileVariables = []string{"BASH_ENV", "ENV", "LD_PRELOAD", "LD_AUDIT", "GIT_CONFIG", "GIT_CONFIG_GLOBAL",
	"GIT_CONFIG_SYSTEM", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR"}

// assignNode reads an assignment of the script.
func (s *scan) assignNode(a *syntax.Assign, depth int) {
	var name string
	switch {
	case a.Name != nil:
		name = a.Name.Value
	case a.Naked && a.Value != nil:
		// export "PS4=…": the word is the assignment.
		v, ok := s.word(a.Value)
		if !ok {
			return // a name from a variable: its value is walked
		}
		n, val, has := strings.Cut(v, "=")
		if has {
			s.assign(n, val, true, depth)
		}
		return
	default:
		return
	}
	if a.Array != nil {
		for _, e := range a.Array.Elems {
			if e.Value != nil {
				v, ok := s.word(e.Value)
				s.assign(name, v, ok, depth)
			}
		}
		return
	}
	if a.Value == nil {
		return
	}
	v, ok := s.word(a.Value)
	s.assign(name, v, ok, depth)
}

// assign reads NAME=value (known false: a value known only when it
// runs): the value of a code variable is a script, a file variable's
// is code helm does not read, an exported function's body is walked.
func (s *scan) assign(name, value string, known bool, depth int) {
	switch {
	case slices.Contains(codeVariables, name):
		if !known {
			s.unknown(name + " holds a command known only when it runs")
			return
		}
		_ = s.script(value, depth+1)
	case slices.Contains(fileVariables, name) || strings.HasPrefix(name, "GIT_CONFIG_"):
		if known && value == "" {
			return
		}
		s.unknown(name + " makes the commands run code helm does not read (" + quote(value) + ")")
	case strings.HasPrefix(name, "BASH_FUNC_"):
		// A function bash imports: BASH_FUNC_ls%%=() { …; }.
		if !known {
			s.unknown(name + " holds a function known only when it runs")
			return
		}
		_ = s.script("f"+value, depth+1)
	}
}

// declare -n ref=PS4 makes ref a name of PS4: what is assigned to ref
// later is a command helm does not follow.
func (s *scan) declare(d *syntax.DeclClause) {
	nameref := false
	for _, a := range d.Args {
		if a.Naked && a.Value != nil {
			if v, ok := s.word(a.Value); ok && strings.HasPrefix(v, "-") && strings.Contains(v, "n") {
				nameref = true
			}
			continue
		}
		if nameref && a.Value != nil {
			if v, ok := s.word(a.Value); !ok || slices.Contains(codeVariables, v) {
				s.unknown(d.Variant.Value + " -n makes a name for " + quote(v) + ", whose value bash may run")
			}
		}
	}
}

// setsVariable: read, mapfile, printf -v and declare set a variable from
// what they read; one that bash runs is then unknown.
func (s *scan) setsVariable(name string, args []string) {
	for i, a := range args {
		n := a
		if name == "printf" {
			if a != "-v" || i+1 >= len(args) {
				continue
			}
			n = args[i+1]
		}
		n, _, _ = strings.Cut(n, "=")
		if slices.Contains(codeVariables, n) && (name == "printf" || name == "read" || name == "mapfile" || name == "readarray" || i > 0 && args[i-1] == "-n") {
			s.unknown(name + " sets " + n + " to what it reads, a command known only when it runs")
			return
		}
		if name == "declare" || name == "typeset" || name == "local" || name == "export" || name == "readonly" {
			// declare -n ref=PS4 makes ref another name of PS4.
			if _, v, ok := strings.Cut(a, "="); ok && slices.Contains(codeVariables, v) && slices.Contains(args[:i], "-n") {
				s.unknown(name + " -n makes a name for " + v + ", a command known only when it runs")
				return
			}
		}
	}
}

// trap ACTION SIGNAL...: the action runs on the signal (EXIT: when the
// script ends).
func (s *scan) trap(args []string, depth int) {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "-" {
		if args[i] == "--" {
			i++
			break
		}
		if strings.ContainsAny(args[i], "lp") {
			return // trap -l, trap -p: list
		}
		i++
	}
	if len(args)-i < 2 {
		return // trap SIGNAL: resets it
	}
	action := args[i]
	if isUnknown(action) {
		s.unknown("trap runs " + shown(action))
		return
	}
	if action != "-" {
		_ = s.script(action, depth+1)
	}
}

// alias NAME=VALUE: the value runs where NAME is a command's name; it is
// read now as a script too (it may be used where helm does not follow).
func (s *scan) alias(args []string, depth int) {
	for _, a := range args {
		if isUnknown(a) {
			s.unknown("alias defines " + shown(a))
			continue
		}
		n, v, ok := strings.Cut(a, "=")
		if !ok || strings.HasPrefix(a, "-") {
			continue
		}
		s.aliases[n] = v
		s.expanding[n] = true
		_ = s.script(v, depth+1)
		delete(s.expanding, n)
	}
}

// dashC follows the command line that flock -c, script -c, su -c and
// runuser -c run with a shell, wherever it stands among their
// arguments (getopt permutes them), and reports whether there was one.
func (s *scan) dashC(name string, args []string, depth int) (found bool) {
	values := map[string][]string{
		"flock":   {"-w", "--timeout", "-E", "--conflict-exit-code"},
		"script":  {"-E", "--echo", "-I", "--log-in", "-O", "--log-out", "-B", "--log-io", "-T", "--log-timing", "-m", "--logging-format", "-o", "--output-limit"},
		"su":      {"-g", "--group", "-G", "--supp-group", "-s", "--shell", "-w", "--whitelist-environment"},
		"runuser": {"-g", "--group", "-G", "--supp-group", "-s", "--shell", "-u", "--user", "-w", "--whitelist-environment"},
	}[name]
	cmds := []string{"-c", "--command", "--session-command"}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if isUnknown(a) {
			s.unknown(name + " takes " + shown(a))
			return true
		}
		if a == "--" {
			if name == "runuser" && i+1 < len(args) {
				s.inner(name, slices.Clone(args[i+1:]), depth)
				return true
			}
			return found
		}
		flag, value, has := strings.Cut(a, "=")
		var script string
		switch {
		case strings.HasPrefix(flag, "--"):
			flag = longOption(flag, values, cmds)
			if !slices.Contains(cmds, flag) {
				if slices.Contains(values, flag) && !has {
					i++
				}
				continue
			}
			if !has {
				if i+1 >= len(args) {
					return true
				}
				i++
				value = args[i]
			}
			script = value
		case strings.HasPrefix(a, "-") && len(a) > 1:
			j := strings.IndexFunc(a[1:], func(r rune) bool { return r == 'c' || slices.Contains(values, "-"+string(r)) })
			if j < 0 {
				continue
			}
			if a[j+1] != 'c' {
				if j+2 == len(a) {
					i++ // the value is the next word
				}
				continue
			}
			script = a[j+2:]
			if script == "" {
				if i+1 >= len(args) {
					return true
				}
				i++
				script = args[i]
			}
		default:
			continue
		}
		found = true
		if isUnknown(script) {
			s.unknown(name + " -c runs " + shown(script))
			continue
		}
		_ = s.script(script, depth+1)
	}
	return found
}

// ssh's options that take a value.
var sshValues = []string{"-B", "-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p", "-Q", "-R", "-S", "-W", "-w"}

// ssh follows the command ssh runs on the remote host (joined by spaces,
// as ssh sends it to the remote shell: the host may be this machine),
// the commands of -o ProxyCommand= and LocalCommand=; a config file from
// -F is read by ssh, not by helm.
func (s *scan) ssh(args []string, depth int) {
	i := 0
	for i < len(args) {
		a := args[i]
		if isUnknown(a) {
			s.unknown("ssh takes " + shown(a))
			return
		}
		if a == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		for j := 1; j < len(a); j++ {
			f := "-" + a[j:j+1]
			if !slices.Contains(sshValues, f) {
				continue
			}
			v := a[j+1:]
			if v == "" && i+1 < len(args) {
				i++
				v = args[i]
			}
			switch f {
			case "-o":
				k, val, _ := strings.Cut(strings.Replace(v, " ", "=", 1), "=")
				switch strings.ToLower(k) {
				case "proxycommand", "localcommand", "knownhostscommand", "remotecommand":
					if isUnknown(v) {
						s.unknown("ssh -o runs " + shown(v))
						return
					}
					_ = s.script(val, depth+1)
				}
			case "-F":
				s.unknown("ssh reads its configuration (and the commands in it) from " + shown(v))
			}
			break
		}
		i++
	}
	if i+1 >= len(args) {
		return // no host, or no command
	}
	rest := args[i+1:]
	if j := slices.IndexFunc(rest, isUnknown); j >= 0 {
		s.unknown("ssh runs " + shown(rest[j]) + " on the remote host")
		return
	}
	_ = s.script(strings.Join(rest, " "), depth+1)
}

// git follows the code git runs from its options and configuration: an
// alias given with -c (git -c alias.x='!cmd' x, git -c alias.p=push p),
// the commands of settings given with -c or written with git config
// (core.pager, core.sshCommand, ...), an ext:: remote's command, the
// programs of --upload-pack, --receive-pack and --exec. Settings from
// a file (core.hooksPath, include.path, --exec-path, --template) run
// code helm does not read.
func (s *scan) git(args []string, depth int) {
	var globals []string
	aliases := map[string]string{}
	i := 0
	for i < len(args) {
		a := args[i]
		if isUnknown(a) || !strings.HasPrefix(a, "-") {
			break
		}
		switch {
		case a == "-c" && i+1 < len(args):
			kv := args[i+1]
			if isUnknown(kv) {
				s.unknown("git -c sets " + shown(kv))
				return
			}
			k, v, _ := strings.Cut(kv, "=")
			if strings.HasPrefix(strings.ToLower(k), "alias.") {
				aliases[strings.ToLower(k[len("alias."):])] = v
			} else {
				s.gitSetting(k, v, depth)
			}
		case strings.HasPrefix(a, "--exec-path="):
			s.unknown("git runs its commands from " + shown(a[len("--exec-path="):]))
		case strings.HasPrefix(a, "--config-env"):
			s.unknown("git takes a setting from the environment: " + shown(a))
		}
		if slices.Contains([]string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"}, a) {
			globals = append(globals, a)
			i++
			if i < len(args) {
				globals = append(globals, args[i])
			}
		} else {
			globals = append(globals, a)
		}
		i++
	}
	if i >= len(args) || isUnknown(args[i]) {
		return
	}
	sub, rest := args[i], args[i+1:]
	if v, ok := aliases[strings.ToLower(sub)]; ok {
		if cmd, ok := strings.CutPrefix(v, "!"); ok {
			_ = s.script(cmd+" "+strings.Join(quoteAll(rest), " "), depth+1)
			return
		}
		// The alias's words replace the subcommand: read them as a
		// shell would split them.
		_ = s.script("git "+strings.Join(quoteAll(globals), " ")+" "+v+" "+strings.Join(quoteAll(rest), " "), depth+1)
		return
	}
	switch sub {
	case "config":
		s.gitConfig(rest, depth)
	case "clone", "fetch", "pull", "ls-remote", "push", "archive", "remote", "submodule":
		for j := 0; j < len(rest); j++ {
			a := rest[j]
			flag, v, has := strings.Cut(a, "=")
			switch {
			case strings.HasPrefix(a, "ext::"):
				argv, ok := extSplit(a[len("ext::"):])
				if !ok {
					s.unknown("git runs the ext:: remote " + quote(a))
					continue
				}
				s.inner("git", argv, depth)
			case flag == "--upload-pack" || flag == "--receive-pack" || flag == "--exec" || (sub == "clone" || sub == "ls-remote") && flag == "-u":
				if !has && j+1 < len(rest) {
					j++
					v = rest[j]
				}
				if isUnknown(v) {
					s.unknown("git runs " + shown(v))
					continue
				}
				_ = s.script(v, depth+1)
			case flag == "--template":
				s.unknown("git copies hooks from the template " + quote(v))
			case (flag == "-c" || flag == "--config") && sub == "clone":
				if !has && j+1 < len(rest) {
					j++
					v = rest[j]
				}
				k, val, _ := strings.Cut(v, "=")
				s.gitSetting(k, val, depth)
			}
		}
	}
}

// gitConfig reads a setting git config writes: git config [options]
// [set] KEY VALUE.
func (s *scan) gitConfig(args []string, depth int) {
	var operands []string
	for j := 0; j < len(args); j++ {
		a := args[j]
		switch {
		case isUnknown(a):
			operands = append(operands, a)
		case a == "-f" || a == "--file" || a == "--blob" || a == "--type" || a == "--default" || a == "--comment" || a == "--value":
			j++
		case strings.HasPrefix(a, "-"):
		default:
			operands = append(operands, a)
		}
	}
	if len(operands) > 0 && (operands[0] == "set" || operands[0] == "add") {
		operands = operands[1:]
	}
	if len(operands) < 2 {
		return
	}
	if isUnknown(operands[0]) {
		s.unknown("git config sets " + shown(operands[0]))
		return
	}
	key := strings.ToLower(operands[0])
	if name, ok := strings.CutPrefix(key, "alias."); ok {
		_ = name
		if isUnknown(operands[1]) {
			s.unknown("git config sets an alias to " + shown(operands[1]))
			return
		}
		if cmd, ok := strings.CutPrefix(operands[1], "!"); ok {
			_ = s.script(cmd, depth+1)
		} else {
			_ = s.script("git "+operands[1], depth+1)
		}
		return
	}
	if isUnknown(operands[1]) {
		if gitCodeKey(key) {
			s.unknown("git config sets " + key + " to " + shown(operands[1]))
		}
		return
	}
	s.gitSetting(operands[0], operands[1], depth)
}

// gitSetting reads a git setting: the command of one that holds a
// command is a script; one that makes git read code from files is
// unknown.
func (s *scan) gitSetting(key, value string, depth int) {
	k := strings.ToLower(key)
	switch {
	case k == "core.hookspath" || k == "include.path" || strings.HasPrefix(k, "includeif.") && strings.HasSuffix(k, ".path"):
		s.unknown("git runs code from " + quote(value) + " (" + key + ")")
	case gitCodeKey(k):
		switch strings.ToLower(value) {
		case "", "true", "false", "yes", "no", "on", "off", "0", "1":
			return // pager.log=false, core.fsmonitor=true: no command
		}
		if strings.HasPrefix(k, "credential.") && !strings.HasPrefix(value, "!") && !strings.Contains(value, "/") {
			value = "git-credential-" + value // credential.helper=store
		}
		_ = s.script(strings.TrimPrefix(value, "!"), depth+1)
	}
}

// gitCodeKey reports whether a git setting (lower case) holds a command
// git runs.
func gitCodeKey(k string) bool {
	switch k {
	case "core.pager", "core.editor", "sequence.editor", "core.sshcommand", "core.askpass", "core.fsmonitor",
		"core.gitproxy", "diff.external", "gpg.program", "uploadpack.packobjectshook", "web.browser", "credential.helper":
		return true
	}
	parts := strings.Split(k, ".")
	first, last := parts[0], parts[len(parts)-1]
	switch {
	case first == "pager" && len(parts) == 2:
		return true
	case len(parts) < 3:
		return false
	case first == "diff" && (last == "command" || last == "textconv"),
		first == "difftool" || first == "mergetool" || first == "browser" || first == "man" && last == "cmd",
		first == "merge" && last == "driver",
		first == "filter" && (last == "clean" || last == "smudge" || last == "process"),
		first == "gpg" && last == "program",
		first == "remote" && (last == "uploadpack" || last == "receivepack"),
		first == "credential" && last == "helper":
		return true
	}
	return false
}

// extSplit splits the command of an ext:: remote: words separated by
// spaces, "% " a space inside a word, "%%" a percent sign; %s, %S, %G
// and %V are what git fills in (unknown).
func extSplit(cmd string) ([]string, bool) {
	var (
		out []string
		cur strings.Builder
		in  bool
	)
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case c == '%' && i+1 < len(cmd):
			i++
			switch cmd[i] {
			case ' ', '%':
				cur.WriteByte(cmd[i])
			case 's', 'S', 'G', 'V':
				cur.WriteString(policy.UnknownWord("%" + cmd[i:i+1]))
			default:
				return nil, false
			}
			in = true
		case c == ' ':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return unknownWhole(out), len(out) > 0
}

// unknownWhole makes a word that holds an unknown part unknown as a
// whole (rm${X} is no rm).
func unknownWhole(words []string) []string {
	for i, w := range words {
		if j := strings.IndexByte(w, 0); j > 0 {
			words[i] = policy.UnknownWord(w[:j] + w[j+1:])
		}
	}
	return words
}

// envSplit splits env -S's string as GNU env does: blanks separate
// words; '…' quotes all but \\ and \'; "…" and bare words take the
// escapes \" \' \\ \# \$ \f \n \r \t \v, and \_ (a blank inside "…", a
// separator outside); \c ends the string; # at a word's start begins a
// comment; ${NAME} is a variable (an unknown word).
func envSplit(str string) ([]string, error) {
	var (
		out   []string
		cur   strings.Builder
		in    bool
		quote byte
	)
	flush := func() {
		if in {
			out = append(out, cur.String())
			cur.Reset()
			in = false
		}
	}
	for i := 0; i < len(str); i++ {
		c := str[i]
		switch {
		case quote == '\'' && c == '\'', quote == '"' && c == '"':
			quote = 0
		case quote == 0 && (c == '\'' || c == '"'):
			quote, in = c, true
		case quote == 0 && (c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'):
			flush()
		case quote == 0 && c == '#' && !in:
			return out, nil
		case c == '\\':
			if i+1 >= len(str) {
				return nil, errors.New("a backslash ends it")
			}
			i++
			e := str[i]
			if quote == '\'' && e != '\\' && e != '\'' {
				cur.WriteByte('\\')
				cur.WriteByte(e)
				in = true
				continue
			}
			switch e {
			case '"', '\'', '\\', '#', '$':
				cur.WriteByte(e)
			case 'f':
				cur.WriteByte('\f')
			case 'n':
				cur.WriteByte('\n')
			case 'r':
				cur.WriteByte('\r')
			case 't':
				cur.WriteByte('\t')
			case 'v':
				cur.WriteByte('\v')
			case '_':
				if quote == 0 {
					flush()
					continue
				}
				cur.WriteByte(' ')
			case 'c':
				if quote != 0 {
					return nil, errors.New(`\c inside quotes`)
				}
				flush()
				return out, nil
			default:
				return nil, errors.New("an unknown escape \\" + string(e))
			}
			in = true
		case c == '$' && quote != '\'':
			end := strings.IndexByte(str[i:], '}')
			if !strings.HasPrefix(str[i:], "${") || end < 0 {
				return nil, errors.New("a $ that is not ${NAME}")
			}
			cur.WriteString(policy.UnknownWord(str[i : i+end+1]))
			in = true
			i += end
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, errors.New("an unclosed quote")
	}
	flush()
	return unknownWhole(out), nil
}

// linkTarget is the program a command named by a path runs when that
// path is a symlink to a program of another name (./del -> /bin/rm), or
// "". A multi-call program (busybox) is known by the name it is run
// as, so a link to it is not followed.
func (s *scan) linkTarget(name string) string {
	if isUnknown(name) || !strings.Contains(name, "/") {
		return ""
	}
	ps := s.resolve(name)
	t := ps[len(ps)-1]
	if isUnknown(t) || path.Base(filepath.ToSlash(t)) == path.Base(name) {
		return ""
	}
	switch path.Base(filepath.ToSlash(t)) {
	case "busybox", "toybox", "coreutils":
		return ""
	}
	if fi, err := os.Stat(t); err != nil || fi.IsDir() {
		return ""
	}
	return t
}
