// Package markdown renders stored text (an intent, a reading, a file
// name, an error: anything a voyage recorded) into GitHub-flavoured
// markdown so that it reads as written and cannot change the document's
// structure: markdown's punctuation is backslash-escaped, so a pipe
// cannot end a table cell, a leading # cannot make a heading nor < an
// HTML tag; line breaks in a one-line field become spaces, and control
// characters visible escapes. Only links to http(s) addresses are made.
// The report and the story (packages report and story) write with it.
package markdown

import (
	"net/url"
	"strings"

	"github.com/helmlog/helm/internal/safetext"
)

// special are the characters markdown (GitHub's) may read as structure
// anywhere in a line: emphasis, code, links, HTML and entities, tables,
// strikethrough and math. Escaped with a backslash, each is itself.
const special = "\\`*_[]<>|~&$"

// Inline renders stored text as one line of markdown that shows the text
// as it is: line breaks become spaces, control characters visible
// escapes, and markdown's punctuation (special, and what starts a block
// at the start of a line: #, >, -, +, =, "1." and "1)") is
// backslash-escaped. The result is safe in a table cell, a list item, a
// heading or a quote.
func Inline(s string) string {
	s = strings.TrimSpace(strings.Join(strings.Fields(strings.ReplaceAll(normalNewlines(s), "\n", " ")), " "))
	s = safetext.Line(s)
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if strings.IndexByte(special, c) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	out := b.String()
	// What would start a block at the start of a line.
	if out != "" && strings.IndexByte("#>-+=", out[0]) >= 0 {
		out = "\\" + out
	}
	if i := strings.IndexFunc(out, func(r rune) bool { return r < '0' || r > '9' }); i > 0 && (out[i] == '.' || out[i] == ')') {
		out = out[:i] + "\\" + out[i:]
	}
	return out
}

// Heading is Inline for the text of an ATX heading, where a run of # at
// the end would be read as the heading's closing sequence and dropped.
func Heading(s string) string {
	out := Inline(s)
	body, ok := strings.CutSuffix(out, "#")
	if !ok {
		return out
	}
	escaped := len(body) - len(strings.TrimRight(body, `\`)) // an odd count escapes the #
	if escaped%2 == 1 {
		return out
	}
	return body + `\#`
}

// Join renders words with Inline, separated by commas.
func Join(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = Inline(w)
	}
	return strings.Join(out, ", ")
}

// Quote writes text as a block quote to b, one quoted line per line of
// it, each escaped as Inline escapes a line.
func Quote(b *strings.Builder, text string) {
	for _, line := range strings.Split(normalNewlines(text), "\n") {
		if line = Inline(line); line == "" {
			b.WriteString(">\n")
		} else {
			b.WriteString("> " + line + "\n")
		}
	}
}

func normalNewlines(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// Code renders an id or a commit for a code span: only what a code span
// can hold as it is (hexadecimal digits and dashes, as helm's ids and
// git's commits are); anything else is dropped.
func Code(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F' || r == '-' {
			return r
		}
		return -1
	}, s)
}

// Link renders an http(s) address recorded by an action as an autolink,
// or "" when it is not one that can be linked as it is.
func Link(raw string) string {
	if link := WebLink(raw); link != "" {
		return "<" + link + ">"
	}
	return ""
}

// WebLink returns raw when it is an http(s) address that can be linked as
// it is (in markdown's autolink, in an HTML attribute), else "".
func WebLink(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return ""
	}
	for _, r := range raw {
		if r <= ' ' || r == 0x7f || r >= 0x80 || strings.ContainsRune("<>\"'`\\", r) {
			return ""
		}
	}
	return raw
}

// Repository renders where a voyage started: its repository, branch and
// base commit (its first 7 digits), those it recorded ("" for none).
func Repository(repo, branch, base string) string {
	var parts []string
	if repo != "" {
		parts = append(parts, Inline(repo))
	}
	if branch != "" {
		parts = append(parts, "branch "+Inline(branch))
	}
	if base != "" {
		parts = append(parts, "base `"+Code(ShortSHA(base))+"`")
	}
	return strings.Join(parts, ", ")
}

// ShortSHA is a commit's first 7 digits, as git abbreviates it.
func ShortSHA(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
