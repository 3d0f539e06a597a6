// Package view renders what helm shows of a voyage, for the command line
// and its MCP server alike: the story with its evidence, sightings read
// for people or copied as stored, the artifacts listed and counted, what
// a change says of itself (an observation, a dry run), and whether a
// voyage takes changes before anything is done for one (TakesChanges). It
// also reads back what it writes (an observation file) and the times
// transcripts take. Text for people passes what callers and the world
// wrote through safetext, so that it never drives a terminal.
package view

import (
	"fmt"
	"time"
)

// Short is the first 8 characters of an id: what people type and read.
func Short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// Stamp renders a time as the story does: RFC 3339 in UTC.
func Stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// Size renders a byte count for people: "812 B", "12.4 KiB", "3.0 MiB".
func Size(n int64) string {
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

// Plural renders "1 bearing", "2 bearings".
func Plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
