package helm_test

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/internal/apicheck"
)

var updateAPI = flag.Bool("update-api", false, "rewrite api/helm.txt from the code (removals must be announced in api/incompatible.txt)")

// TestAPI fails on a change of the module's exported API that the record
// in api/ does not show: a removal or change not announced, or an
// addition not recorded (CONTRIBUTING.md, "Compatibility").
func TestAPI(t *testing.T) {
	t.Parallel()
	err := apicheck.Check(t.Context(), ".", "api/helm.txt", "api/incompatible.txt", *updateAPI, "./...")
	require.NoError(t, err)
}

// TestOptionsArePointers holds the library to one options style, as
// bbolt and os do: every exported function or method that takes an
// options struct takes a nil-able *...Options, never a value the caller
// must spell out when it wants none (issue 30, "one API style").
func TestOptionsArePointers(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("api/helm.txt")
	require.NoError(t, err)
	byValue := regexp.MustCompile(`[(, ][A-Za-z_]\w* (\[\])?[\w./]*Options[,)]`)
	var found []string
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.Contains(line, ", func ") && !strings.Contains(line, ", method ") {
			continue
		}
		if byValue.MatchString(line) {
			found = append(found, line)
		}
	}
	assert.Empty(t, found, "options taken by value, not as a nil-able pointer")
}
