package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// helm writes its man pages itself, in roff with the man macros, from the
// command tree: what cobra/doc did through a Markdown renderer
// (go-md2man, blackfriday), whose package initialisation ran on every
// start of helm for a command that runs when helm is installed.
//
// A page has NAME, SYNOPSIS, DESCRIPTION, OPTIONS, OPTIONS INHERITED FROM
// PARENT COMMANDS, EXIT STATUS (a paragraph of the help that starts with
// "Exit status:"), EXAMPLE and SEE ALSO. Every text is escaped: a help
// text may hold a backslash, a leading "." or "'" (roff requests), quotes
// and hyphens, and each prints as written (manEscape).

// manHeader is what every page's .TH line says.
type manHeader struct {
	Title, Section, Source, Manual string
}

// newManHeader is the header of this helm's pages.
func newManHeader() manHeader {
	return manHeader{Title: "HELM", Section: "1", Source: "helm " + readVersion().Version, Manual: "helm manual"}
}

// manPages returns the commands that get a page: c and every available
// command under it (hidden, deprecated and help commands have none), in
// tree order.
func manPages(c *cobra.Command) []*cobra.Command {
	pages := []*cobra.Command{c}
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() && !s.IsAdditionalHelpTopicCommand() {
			pages = append(pages, manPages(s)...)
		}
	}
	return pages
}

// manFileName is the file c's page is written to: helm-observe-command.1.
func manFileName(c *cobra.Command, h manHeader) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "-") + "." + h.Section
}

// writeManTree writes the page of root and of every command under it
// into dir, and returns how many it wrote. Each page is written to a new
// file renamed over the old one, so that a link planted under a page's
// name is replaced, not followed.
func writeManTree(root *cobra.Command, h manHeader, dir string) (int, error) {
	pages := manPages(root)
	for _, c := range pages {
		var b strings.Builder
		writeManPage(&b, c, h)
		if err := replaceFile(filepath.Join(dir, manFileName(c, h)), []byte(b.String()), 0o644); err != nil {
			return 0, err
		}
	}
	return len(pages), nil
}

// replaceFile writes data to a new file in path's directory and renames
// it over path.
func replaceFile(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".helm-*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	err = errors.Join(err, f.Chmod(perm), f.Close())
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name()) // the error says what failed
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeManPage renders c's page.
func writeManPage(w *strings.Builder, c *cobra.Command, h manHeader) {
	name := strings.ReplaceAll(c.CommandPath(), " ", "-")
	fmt.Fprintf(w, ".TH %s %s \"\" %s %s\n", manArg(h.Title), manArg(h.Section), manArg(h.Source), manArg(h.Manual))
	w.WriteString(".nh\n.ad l\n") // no hyphenation, ragged right: flags stay whole

	w.WriteString(".SH NAME\n")
	fmt.Fprintf(w, "%s \\- %s\n", manEscape(name), manEscape(c.Short))

	w.WriteString(".SH SYNOPSIS\n")
	// A long list of choices may break after a bar (\: is a break point).
	fmt.Fprintf(w, "\\fB%s\\fR\n", strings.ReplaceAll(manEscape(c.UseLine()), "|", `|\:`))

	description := strings.TrimSpace(c.Long)
	if description == "" {
		description = upperFirst(c.Short) + "."
	}
	var exit []string
	var paragraphs []string
	for _, p := range strings.Split(description, "\n\n") {
		if rest, ok := strings.CutPrefix(p, "Exit status:"); ok {
			exit = append(exit, strings.TrimSpace(rest))
			continue
		}
		paragraphs = append(paragraphs, p)
	}
	w.WriteString(".SH DESCRIPTION\n")
	writeManParagraphs(w, paragraphs)

	if fs := c.NonInheritedFlags(); fs.HasAvailableFlags() {
		w.WriteString(".SH OPTIONS\n")
		writeManFlags(w, fs)
	}
	if fs := c.InheritedFlags(); fs.HasAvailableFlags() {
		w.WriteString(".SH OPTIONS INHERITED FROM PARENT COMMANDS\n")
		writeManFlags(w, fs)
	}
	if len(exit) > 0 {
		w.WriteString(".SH EXIT STATUS\n")
		writeManParagraphs(w, exit)
	}
	if example := strings.TrimRight(c.Example, "\n"); strings.TrimSpace(example) != "" {
		w.WriteString(".SH EXAMPLE\n")
		writeManVerbatim(w, strings.Split(example, "\n"))
	}

	var see []string
	if c.HasParent() {
		see = append(see, manRef(c.Parent(), h))
	}
	subs := slices.Clone(c.Commands())
	slices.SortFunc(subs, func(a, b *cobra.Command) int { return strings.Compare(a.Name(), b.Name()) })
	for _, s := range subs {
		if s.IsAvailableCommand() && !s.IsAdditionalHelpTopicCommand() {
			see = append(see, manRef(s, h))
		}
	}
	if len(see) > 0 {
		w.WriteString(".SH SEE ALSO\n")
		w.WriteString(strings.Join(see, ",\n") + "\n")
	}
}

// manRef names c's page as a cross-reference: \fBhelm\-log\fR(1).
func manRef(c *cobra.Command, h manHeader) string {
	return fmt.Sprintf("\\fB%s\\fR(%s)", manEscape(strings.ReplaceAll(c.CommandPath(), " ", "-")), manEscape(h.Section))
}

// writeManParagraphs writes paragraphs of help text: lines of one are
// filled together, and a paragraph with an indented line (a list, a
// command) is kept as written.
func writeManParagraphs(w *strings.Builder, paragraphs []string) {
	for i, p := range paragraphs {
		lines := strings.Split(strings.Trim(p, "\n"), "\n")
		indented := slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") })
		if i > 0 {
			w.WriteString(".PP\n")
		}
		if indented {
			writeManVerbatim(w, lines)
			continue
		}
		for _, l := range lines {
			if l = strings.TrimSpace(l); l != "" {
				w.WriteString(manLine(manEscape(l)))
			}
		}
	}
}

// writeManVerbatim writes lines without filling them, indented.
func writeManVerbatim(w *strings.Builder, lines []string) {
	w.WriteString(".RS 4\n.nf\n")
	for _, l := range lines {
		w.WriteString(manLine(manEscape(strings.TrimRight(l, " \t"))))
	}
	w.WriteString(".fi\n.RE\n")
}

// writeManFlags lists a flag set's visible flags, one tagged paragraph
// each: the flag and its value's name, then its usage and default, as
// the help prints them (flagUsages).
func writeManFlags(w *strings.Builder, fs *pflag.FlagSet) {
	fs.SortFlags = false
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" {
			return
		}
		tag := "\\fB\\-\\-" + manEscape(f.Name) + "\\fR"
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			tag = "\\fB\\-" + manEscape(f.Shorthand) + "\\fR, " + tag
		}
		name, _ := pflag.UnquoteUsage(f)
		switch {
		case f.Value.Type() == "bool" || name == "":
		case f.NoOptDefVal != "":
			tag += "[=\\fI" + manEscape(name) + "\\fR]"
		default:
			tag += " \\fI" + manEscape(name) + "\\fR"
		}
		w.WriteString(".TP\n")
		w.WriteString(manLine(tag))
		w.WriteString(manLine(manUsage(f.Usage) + manEscape(flagDefault(f))))
	})
}

// manUsage escapes a flag's usage, its `NAME` in italics.
func manUsage(usage string) string {
	var b strings.Builder
	parts := strings.Split(usage, "`")
	for i, p := range parts {
		if i%2 == 1 && i < len(parts)-1 {
			b.WriteString("\\fI" + manEscape(p) + "\\fR")
			continue
		}
		if i%2 == 1 {
			b.WriteString(manEscape("`"))
		}
		b.WriteString(manEscape(p))
	}
	return b.String()
}

// manEscape makes s print as written in roff text: a backslash, a hyphen
// (else a typographic hyphen, which a shell does not take for a flag's
// dash), quotes and accents get their escapes, a character beyond ASCII
// is named by its code point (\[u2014]), and control characters (roff's
// own, and the terminal's) are dropped.
func manEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\e`)
		case r == '-':
			b.WriteString(`\-`)
		case r == '\'':
			b.WriteString(`\(aq`)
		case r == '`':
			b.WriteString(`\(ga`)
		case r == '"':
			b.WriteString(`\(dq`)
		case r == '^':
			b.WriteString(`\(ha`)
		case r == '~':
			b.WriteString(`\(ti`)
		case r == '\t':
			b.WriteString("    ")
		case r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError:
		case r >= 0x80:
			fmt.Fprintf(&b, `\[u%04X]`, r) // the page stays ASCII
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// manLine ends an escaped text line, guarding its start: a line that
// starts with "." or "'" would be a request, so \& (nothing) goes first.
func manLine(s string) string {
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s + "\n"
}

// manArg quotes s as one argument of a macro.
func manArg(s string) string {
	return `"` + manEscape(s) + `"`
}
