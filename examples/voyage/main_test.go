package main

import (
	"context"
	"io"
	"strings"
	"testing"
)

// TestRun runs the example as `go run ./examples/voyage` would, so CI
// notices when the library moves under it.
func TestRun(t *testing.T) {
	var story strings.Builder
	if err := run(context.Background(), t.TempDir(), &story, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Status: completed",
		"  Mark: FileContents: widget.go\n  Mark: GoProject @ .\n",
		"  committed (",
		"  pushed to fix-widget (",
	} {
		if !strings.Contains(story.String(), want) {
			t.Errorf("the story lacks %q:\n%s", want, story.String())
		}
	}
}
