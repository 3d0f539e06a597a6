package view

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/helmlog/helm/transcript"
)

// A transcript (of voyages merged into one timeline) as JSON lines, and
// the times it may start from.

// ParseSince reads a time (RFC 3339) or a duration back from now.
func ParseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("neither a time (2026-02-26T17:00:00Z) nor a duration (30m)")
	}
	return now.Add(-d), nil
}

// WriteJSONLines writes each line as one compact JSON object per line.
func WriteJSONLines(w io.Writer, lines []transcript.Line) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i := range lines {
		if err := enc.Encode(&lines[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}
