package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestLogToAPipeIsPlainWhateverTheEnvironment: a pipe gets the story as
// the goldens hold it, absolute times in UTC and no escape sequence, even
// with a pager named and colours not refused.
func TestLogToAPipeIsPlainWhateverTheEnvironment(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("piped")
	h.at(1)
	h.ok("observe", "context", "the user says it crashes")
	h.ok("bearing", "--reading", "Plain.")
	h.at(30)
	h.Env["HELM_PAGER"] = "sed 's/^/paged: /'"
	h.Env["PAGER"] = "sed 's/^/paged: /'"
	out := h.ok("log")
	assert.Contains(t, out, "── Bearing 1 ── 2026-02-26T17:01:00Z\n")
	assert.NotContains(t, out, "paged:")
	assert.NotContains(t, out, "\x1b")
	assert.NotContains(t, out, "ago")
}

func TestRelativeTimeReadsAsGhDoes(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		ago  time.Duration
		want string
	}{
		{name: "seconds", ago: 20 * time.Second, want: "less than a minute ago"},
		{name: "one minute", ago: 90 * time.Second, want: "1 minute ago"},
		{name: "minutes", ago: 2 * time.Minute, want: "2 minutes ago"},
		{name: "one hour", ago: 70 * time.Minute, want: "about 1 hour ago"},
		{name: "hours", ago: 5 * time.Hour, want: "5 hours ago"},
		{name: "days", ago: 3 * 24 * time.Hour, want: "3 days ago"},
		{name: "months", ago: 65 * 24 * time.Hour, want: "2 months ago"},
		{name: "years", ago: 800 * 24 * time.Hour, want: "2 years ago"},
		{name: "the future is absolute", ago: -time.Hour, want: "2026-02-26T18:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, relativeTime(now.Add(-tt.ago), now))
		})
	}
}

// TestLogStyleNeverTouchesRecordedText: a reading that looks like a
// heading or holds a time is indented by the story and left as it is.
func TestLogStyleNeverTouchesRecordedText(t *testing.T) {
	t.Parallel()
	style := logStyle(true, true, time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC))
	for _, line := range []string{
		"  Reading: ── Bearing 9 ── 2026-02-26T16:00:00Z",
		"           Created: 2026-02-26T16:00:00Z",
		"  Mark: context:Status: failed",
	} {
		assert.Equal(t, line, style(line))
	}
}
