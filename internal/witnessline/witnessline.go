// Package witnessline finds the Helm-Voyage lines in a text: the one rule
// by which helm refuses text that holds one (a commit message, a pull
// request's body: the line is helm's to write), checks the commit it made,
// and reads a witness repository's commits (Home.Verify). The same rule
// on every side means helm never writes a text in which verify would read
// a line helm did not write.
package witnessline

import (
	"iter"
	"strings"

	"github.com/helmlog/helm/chain"
)

// Lines yields each Helm-Voyage line of text, trimmed, with its value
// (what follows the key's colon), in order: a line whose key, before its
// first colon, is chain.TrailerKey in any case, with any white space
// around it. Lines end at "\n" or "\r" (a lone CR ends a line where a
// reader may show one). What git's trailer parser would call a trailer
// does not matter: the repository's configuration (trailer.separators,
// key aliases) decides that, and the repository is the recorded party's
// to configure.
func Lines(text string) iter.Seq2[string, string] {
	return func(yield func(line, value string) bool) {
		for text != "" {
			line := text
			if i := strings.IndexAny(text, "\r\n"); i >= 0 {
				line, text = text[:i], text[i+1:]
			} else {
				text = ""
			}
			line = strings.TrimSpace(line)
			key, value, ok := strings.Cut(line, ":")
			if ok && strings.EqualFold(strings.TrimSpace(key), chain.TrailerKey) {
				if !yield(line, value) {
					return
				}
			}
		}
	}
}
