package natsstore_test

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/apicheck"
)

var updateAPI = flag.Bool("update-api", false, "rewrite api/natsstore.txt from the code (removals must be announced in api/incompatible.txt)")

// TestAPI fails on a change of the module's exported API that the record
// in api/ does not show: a removal or change not announced, or an
// addition not recorded (CONTRIBUTING.md, "Compatibility").
func TestAPI(t *testing.T) {
	t.Parallel()
	err := apicheck.Check(t.Context(), ".", "api/natsstore.txt", "api/incompatible.txt", *updateAPI, "./...")
	require.NoError(t, err)
}
