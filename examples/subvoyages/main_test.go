package main

import (
	"context"
	"strings"
	"testing"
)

// TestRun runs the crew twice: the sub-voyages interleave differently
// from run to run, and the checks in run hold for every interleaving.
// Under -race it also checks the library's concurrency.
func TestRun(t *testing.T) {
	for range 2 {
		var out strings.Builder
		if err := run(context.Background(), &out); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		for _, want := range []string{
			"# Transcript\n", "push denied by rule \"agents do not push to main\"",
			"# Figures\n", "# Report\n", "widget_test.go",
		} {
			if !strings.Contains(out.String(), want) {
				t.Fatalf("no %q in the output:\n%s", want, out.String())
			}
		}
	}
}
