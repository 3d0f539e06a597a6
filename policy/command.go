package policy

import (
	"path"
	"slices"
	"strings"
)

// A command pattern (a rule's command field) is a command and flags,
// written as a person would type them: "rm -rf", "git push --force",
// "chmod -R". It matches an argv (one simple command, already split into
// words by a shell parser) when:
//
//   - the argv's command base name equals the pattern's (/bin/rm is rm);
//   - every flag of the pattern is present in the argv, in any order and
//     any spelling the command accepts: short flags combined or not (-rf,
//     -r -f, -fr), and the long synonyms of the flagTable (rm's -r is
//     -R and --recursive); --flag=value and --flag value alike;
//   - the pattern's other words appear among the argv's operands, in
//     order ("git push" matches git -C dir push origin main: git's global
//     options before its subcommand are skipped).
//
// After "--" every word is an operand: rm -- -rf removes a file named
// -rf, and is no rm -rf.
//
// An argv whose command name helm could not know ahead of running it
// ($X -rf /, a script that does not parse, a sourced file) is marked
// with UnknownCommand; a word whose value is a variable or a command's
// output (rm $F x) with UnknownWord. A rule that denies or asks treats
// them as anything (fail closed); a rule that allows, as nothing it
// names (see Rule.Command).

// unknownMark starts the words a shell parser could not know: no word of
// a real command line can hold a NUL byte.
const unknownMark = "\x00"

// UnknownCommand is the command name of an argv whose command helm cannot
// know before it runs, with why (shown to the agent as "helm cannot tell
// what this command runs: WHY").
func UnknownCommand(why string) string { return unknownMark + why }

// UnknownWord is an argument whose value is known only when it runs (a
// variable, a command's output), with its text as written ("$F").
func UnknownWord(text string) string { return unknownMark + text }

// Unknown reports whether word is an UnknownCommand or UnknownWord, and
// its why or text.
func Unknown(word string) (string, bool) { return strings.CutPrefix(word, unknownMark) }

// synonyms gives, for a command (or "git SUBCOMMAND"), the canonical name
// of each spelling of a flag: "-r", "-R" and "--recursive" are all rm's
// "recursive". A flag the table does not name is its own canonical name.
// values lists the flags that take a value (-n 5, --adjustment=5), so
// that the value is not read as an operand or as combined short flags.
type flagSpec struct {
	synonyms map[string]string
	values   []string
}

// flagTable covers the commands whose dangerous flags have several
// spellings. git's subcommands are keyed "git push", ...
var flagTable = map[string]flagSpec{
	"rm": {synonyms: map[string]string{"-r": "recursive", "-R": "recursive", "--recursive": "recursive",
		"-f": "force", "--force": "force", "-i": "interactive", "-I": "interactive", "-d": "dir", "--dir": "dir"}},
	"cp": {synonyms: map[string]string{"-r": "recursive", "-R": "recursive", "--recursive": "recursive",
		"-f": "force", "--force": "force", "-a": "archive", "--archive": "archive"},
		values: []string{"-t", "--target-directory", "-S", "--suffix"}},
	"mv": {synonyms: map[string]string{"-f": "force", "--force": "force"},
		values: []string{"-t", "--target-directory", "-S", "--suffix"}},
	"chmod": {synonyms: map[string]string{"-R": "recursive", "--recursive": "recursive"}},
	"chown": {synonyms: map[string]string{"-R": "recursive", "--recursive": "recursive"}},
	"chgrp": {synonyms: map[string]string{"-R": "recursive", "--recursive": "recursive"}},
	"shred": {synonyms: map[string]string{"-u": "remove", "--remove": "remove", "-f": "force", "--force": "force"},
		values: []string{"-n", "--iterations", "-s", "--size"}},
	"git push": {synonyms: map[string]string{"-f": "force", "--force": "force", "--force-with-lease": "force",
		"-d": "delete", "--delete": "delete", "--mirror": "force mirror"},
		values: []string{"-o", "--push-option", "--repo", "--receive-pack", "--exec"}},
	"git reset":    {values: []string{"--pathspec-from-file"}},
	"git clean":    {synonyms: map[string]string{"-f": "force", "--force": "force", "-d": "dirs", "-x": "ignored", "-X": "only-ignored"}, values: []string{"-e", "--exclude"}},
	"git checkout": {synonyms: map[string]string{"-f": "force", "--force": "force"}, values: []string{"-b", "-B", "--orphan"}},
	"git branch": {synonyms: map[string]string{"-D": "delete force", "-d": "delete", "--delete": "delete", "-f": "force", "--force": "force",
		"-M": "move force", "-m": "move", "--move": "move"}},
	"git commit": {synonyms: map[string]string{"-a": "all", "--all": "all", "--amend": "amend", "-n": "no-verify", "--no-verify": "no-verify"},
		values: []string{"-m", "--message", "-F", "--file", "-C", "-c", "--author", "--date", "--fixup", "--squash"}},
	"curl": {synonyms: map[string]string{"-k": "insecure", "--insecure": "insecure", "-X": "request", "--request": "request"},
		values: []string{"-X", "--request", "-o", "--output", "-d", "--data", "-H", "--header", "-u", "--user", "-A", "--user-agent", "-e", "--referer", "-F", "--form", "--url", "-T", "--upload-file", "-x", "--proxy", "-m", "--max-time"}},
	"wget":  {values: []string{"-O", "--output-document", "-P", "--directory-prefix", "-o", "--output-file", "-U", "--user-agent"}},
	"kill":  {synonyms: map[string]string{"-9": "KILL", "-KILL": "KILL", "-SIGKILL": "KILL"}},
	"dd":    {},
	"sed":   {synonyms: map[string]string{"-i": "in-place", "--in-place": "in-place"}, values: []string{"-e", "--expression", "-f", "--file"}},
	"grep":  {values: []string{"-e", "--regexp", "-f", "--file", "-m", "--max-count", "-A", "-B", "-C"}},
	"find":  {},
	"tar":   {values: []string{"-f", "--file", "-C", "--directory"}},
	"xargs": {},
}

// gitGlobalValues are git's options before its subcommand that take a
// value (git -C dir push, git -c k=v push).
var gitGlobalValues = []string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env", "--super-prefix"}

// commandLine is an argv (or a pattern) in matching form.
type commandLine struct {
	// name is the command's base name; for git, "git SUBCOMMAND" keys its
	// table but name stays "git".
	name string
	// flags are canonical flag names, with "=value" when one was given.
	flags []string
	// operands are the other words, in order (for git, the subcommand
	// first).
	operands []string
	// unknown are the words whose value is not known (UnknownWord); they
	// may be any flag or operand.
	unknown []string
}

// splitPattern splits a command pattern into words: by blanks, with
// "double" or 'single' quotes grouping a word.
func splitPattern(pattern string) []string {
	var (
		words []string
		cur   strings.Builder
		quote rune
		in    bool
	)
	for _, r := range pattern {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// parseCommandLine reads argv into matching form.
func parseCommandLine(argv []string) commandLine {
	if len(argv) == 0 {
		return commandLine{}
	}
	c := commandLine{name: path.Base(argv[0])}
	if _, ok := Unknown(argv[0]); ok {
		c.name = argv[0]
	}
	rest := argv[1:]
	key := c.name
	var configs []string // git -c key=value
	if c.name == "git" {
		// Global options, then the subcommand.
		i := 0
		for i < len(rest) {
			w := rest[i]
			if _, ok := Unknown(w); ok || !strings.HasPrefix(w, "-") {
				break
			}
			switch {
			case w == "-c" && i+1 < len(rest):
				configs = append(configs, rest[i+1])
			case strings.HasPrefix(w, "--config-env"):
				// A setting whose value is in the environment.
				c.unknown = append(c.unknown, UnknownWord(w))
			}
			if slices.Contains(gitGlobalValues, w) {
				i++
			}
			i++
		}
		if i < len(rest) {
			if _, ok := Unknown(rest[i]); ok {
				c.unknown = append(c.unknown, rest[i])
			} else {
				key = "git " + rest[i]
				c.operands = append(c.operands, rest[i])
			}
			i++
		}
		rest = rest[min(i, len(rest)):]
	}
	spec := flagTable[key]
	canon := func(flag string) string {
		if s, ok := spec.synonyms[flag]; ok {
			return s
		}
		return flag
	}
	if key == "git push" {
		for _, kv := range configs {
			if pushForcedBy(kv) {
				c.flags = append(c.flags, "force")
			}
		}
	}
	add := func(flag, value string, hasValue bool) {
		for _, f := range strings.Fields(canon(flag)) {
			if hasValue {
				f += "=" + value
			}
			c.flags = append(c.flags, f)
		}
	}
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		if _, ok := Unknown(w); ok {
			c.unknown = append(c.unknown, w)
			continue
		}
		switch {
		case w == "--":
			c.operands = append(c.operands, rest[i+1:]...)
			i = len(rest)
		case strings.HasPrefix(w, "--"):
			name, value, has := strings.Cut(w, "=")
			name = spec.longOption(name)
			if !has && slices.Contains(spec.values, name) && i+1 < len(rest) {
				i++
				value, has = rest[i], true
			}
			add(name, value, has)
		case len(w) > 1 && w[0] == '-' && (key == "kill" || key == "find"):
			// Words, not combined letters: kill -KILL, find -delete.
			add(w, "", false)
		case len(w) > 1 && w[0] == '-':
			// Combined short flags: -rf is -r -f; a flag that takes a
			// value ends the group (-n5, -o file).
			for j := 1; j < len(w); j++ {
				f := "-" + w[j:j+1]
				if slices.Contains(spec.values, f) {
					value := w[j+1:]
					if value == "" && i+1 < len(rest) {
						i++
						value = rest[i]
					}
					add(f, value, true)
					break
				}
				add(f, "", false)
			}
		case key == "git push" && strings.HasPrefix(w, "+"):
			add("--force", "", false)
			c.operands = append(c.operands, w)
		case key == "git push" && strings.HasPrefix(w, ":") && len(w) > 1:
			add("--delete", "", false)
			c.operands = append(c.operands, w)
		default:
			c.operands = append(c.operands, w)
		}
	}
	return c
}

// abbreviates reports whether g, a long option of an argv, may be an
// abbreviation of the pattern's long option f that the flag table does
// not know (--upl for --upload-file): a rule that denies reads it so.
func abbreviates(g, f string) bool {
	name, _, _ := strings.Cut(g, "=")
	return strings.HasPrefix(f, "--") && !strings.Contains(f, "=") && len(name) > 3 && strings.HasPrefix(name, "--") && strings.HasPrefix(f, name)
}

// longOption is the long option name abbreviates: GNU getopt_long and
// git take any prefix of a long option that names one option alone
// (rm --rec --for is rm --recursive --force). A prefix of several
// options of the table with the same meaning (git push --forc:
// --force, --force-with-lease) is that meaning; one the table does not
// know is itself.
func (spec flagSpec) longOption(name string) string {
	if _, ok := spec.synonyms[name]; ok || slices.Contains(spec.values, name) || len(name) < 3 {
		return name
	}
	found, meaning := "", ""
	for full, m := range spec.synonyms {
		if strings.HasPrefix(full, name) {
			if found != "" && m != meaning {
				return name // ambiguous: the program refuses it
			}
			found, meaning = full, m
		}
	}
	for _, full := range spec.values {
		if strings.HasPrefix(full, name) && strings.HasPrefix(full, "--") {
			if found != "" && found != full {
				return name
			}
			found = full
		}
	}
	if found == "" {
		return name
	}
	return found
}

// pushForcedBy reports whether a git -c setting makes a push force:
// remote.NAME.push with a +refspec, remote.NAME.mirror.
func pushForcedBy(setting string) bool {
	key, value, _ := strings.Cut(setting, "=")
	key = strings.ToLower(key)
	if !strings.HasPrefix(key, "remote.") {
		return false
	}
	switch {
	case strings.HasSuffix(key, ".push"):
		return strings.HasPrefix(value, "+")
	case strings.HasSuffix(key, ".mirror"):
		switch strings.ToLower(value) {
		case "", "true", "yes", "on", "1":
			return true
		}
	}
	return false
}

// matchCommand reports whether the pattern (parsed) matches the argv
// (parsed). open says an unknown name or word may stand for whatever the
// pattern needs (a rule that denies or asks); otherwise it stands for
// nothing.
func matchCommand(pat, argv commandLine, open bool) bool {
	if _, ok := Unknown(argv.name); ok {
		return open
	}
	if pat.name != argv.name {
		return false
	}
	wild := open && len(argv.unknown) > 0
	for _, f := range pat.flags {
		// A flag without a value matches it with any value
		// (--force-with-lease=main is --force-with-lease).
		has := slices.ContainsFunc(argv.flags, func(g string) bool {
			return g == f || !strings.Contains(f, "=") && strings.HasPrefix(g, f+"=") || open && abbreviates(g, f)
		})
		if !has && !wild {
			return false
		}
	}
	// Operands in order (a subsequence).
	j := 0
	for _, o := range pat.operands {
		for j < len(argv.operands) && argv.operands[j] != o {
			j++
		}
		if j == len(argv.operands) {
			return wild
		}
		j++
	}
	return true
}
