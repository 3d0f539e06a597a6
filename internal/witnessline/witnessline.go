// Package witnessline finds the Helm-Voyage lines in a text: the one rule
// by which helm refuses text that holds one (a commit message, a pull
// request's body: the line is helm's to write), checks the commit it made,
// and reads a witness repository's commits (Home.Verify). The same rule
// on every side means helm never writes a text in which verify would read
// a line helm did not write.
package witnessline

import (
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"slices"
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

// Refusal says why an action's parameters (params, as JSON) may not be
// recorded on voyage id: a text in them holds a Helm-Voyage line (Lines)
// that names voyage id, or that does not parse; "" when none does. It is
// the one check of the library's Perform (which refuses with it, nothing
// recorded or run) and of the CLI's dry run (which refuses the same).
func Refusal(params []byte, id string) (string, error) {
	var v any
	if err := json.Unmarshal(params, &v); err != nil {
		return "", err
	}
	var found string
	var walk func(name string, v any)
	walk = func(name string, v any) {
		switch v := v.(type) {
		case string:
			for line, value := range Lines(v) {
				voyage, _, err := chain.ParseTrailerValue(value)
				switch {
				case found != "":
				case err != nil:
					found = fmt.Sprintf("%s holds the line %q, which verify would read as a %s line it cannot parse: a %s line is helm's to write; nothing was recorded or run", name, line, chain.TrailerKey, chain.TrailerKey)
				case voyage == id:
					found = fmt.Sprintf("%s holds the line %q, naming this voyage: a %s line is helm's to write (it adds the one naming the voyage at its head); nothing was recorded or run", name, line, chain.TrailerKey)
				}
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(k, v[k])
			}
		case []any:
			for i, e := range v {
				walk(fmt.Sprintf("%s[%d]", name, i), e)
			}
		}
	}
	walk("a parameter", v)
	return found, nil
}
