package otlp

import "flag"

// Update rewrites the golden files in testdata/ (go test -update), for
// the package's tests inside and out.
var Update = flag.Bool("update", false, "rewrite the golden files in testdata/")
