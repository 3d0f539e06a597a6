package main

import (
	"encoding/json"
	"io"
	"strings"
	"time"

	"github.com/helmlog/helm/cmd/helm/internal/view"
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

// stamp, size and plural render times, sizes and counts as package view
// does for what the MCP server shares.
func stamp(t time.Time) string         { return view.Stamp(t) }
func size(n int64) string              { return view.Size(n) }
func plural(n int, word string) string { return view.Plural(n, word) }

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
