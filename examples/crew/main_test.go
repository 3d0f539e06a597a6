package main

import (
	"context"
	"strings"
	"testing"
)

// TestRun runs the crew a few times: the interleaving differs from run to
// run, and the check in run must hold for every one of them. Under -race
// it also checks the library's concurrency.
func TestRun(t *testing.T) {
	for range 3 {
		var out strings.Builder
		if err := run(context.Background(), &out); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		if !strings.Contains(out.String(), "ok: all 13 observations") {
			t.Fatalf("unexpected output:\n%s", out.String())
		}
	}
}
