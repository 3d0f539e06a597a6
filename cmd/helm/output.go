package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/helmlog/helm/internal/safetext"
)

// writeJSON writes v as indented JSON followed by a newline: the --json
// output of every command. Field names are the library's snake_case tags.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// printable renders stored text for a terminal on one line: control
// characters, escape sequences and bidirectional overrides become visible
// escapes (`\x1b[2K\r`), other text is unchanged. Every human output
// passes what a caller or the world wrote through it (or through block);
// --json needs neither, encoding/json escapes by itself.
func printable(s string) string { return safetext.Line(s) }

// block is printable for text that may span lines (a reading, a summary):
// its further lines are printed after indent, under the first.
func block(s, indent string) string { return safetext.Block(s, indent) }

// stamp renders a time as the story does: RFC 3339 in UTC.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// size renders a byte count for people: "812 B", "12.4 KiB", "3.0 MiB".
func size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// plural renders "1 bearing", "2 bearings".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// commandLine renders args as a shell would need them typed, for a
// "Try: helm ..." line built from what the user ran: each word that holds
// a character the shell reads is single-quoted. (ReportError escapes the
// hint for the terminal.)
func commandLine(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n\"'`#$&*()|;<>?[]{}!~\\") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}
