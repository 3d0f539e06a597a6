package sighting_test

import (
	"fmt"

	"github.com/helmlog/helm/sighting"
)

// Failures says what a sighting records as failed, whatever its kind.
func ExampleFailures() {
	for _, s := range []sighting.Sighting{
		&sighting.Files{Contents: []sighting.FileContents{
			{Path: "README.md", Content: sighting.TextContent("# hi\n")},
			{Path: "src/x.rs", Content: sighting.ErrorContent("no such file or directory")},
		}},
		&sighting.Command{TimedOut: true, TimeoutMS: 120000},
		&sighting.Web{URL: "https://example.com/gone", Status: 404},
		&sighting.Context{Description: "nothing can fail here"},
	} {
		for _, f := range sighting.Failures(s) {
			fmt.Printf("%s: %s\n", f.Kind, f)
		}
	}
	// Output:
	// missing: src/x.rs could not be read: no such file or directory
	// timeout: the command was killed after the 2m0s timeout
	// http-status: GET https://example.com/gone answered 404 Not Found
}
