package main

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/cmd/helm/internal/view"
)

// TestObserveCommandLeavesHelmSecretsOut plants credentials in helm's
// environment and observes a program that prints its whole environment:
// the recorded sighting holds neither the names nor the values of the
// secret-looking variables, PATH and HOME are there, and the one name
// --pass-env gives reaches the program, its value hidden in the record by
// the redactor. Not parallel: it sets the process's environment, which
// the observed program inherits.
func TestObserveCommandLeavesHelmSecretsOut(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("needs /bin/sh")
	}
	planted := map[string]string{
		"GH_TOKEN":              "ghp_plantedGHtoken0123456789abcdefghijk",
		"GH_ENTERPRISE_TOKEN":   "planted-enterprise-token-value",
		"AWS_SECRET_ACCESS_KEY": "plantedAWSsecretAccessKey0123456789",
		"MY_API_KEY":            "planted-my-api-key-value",
	}
	for k, v := range planted {
		t.Setenv(k, v)
	}
	h := newHarness(t)
	h.start("observe a program's environment")

	var obs view.Observed
	require.NoError(t, json.Unmarshal([]byte(h.ok("observe", "command", "--json", "--pass-env", "MY_API_KEY", "--", "sh", "-c", "env")), &obs))
	stored := h.ok("sighting", "show", obs.Artifact, "--json")
	for k, v := range planted {
		assert.NotContains(t, stored, v, "the value of %s is in the record", k)
		if k == "MY_API_KEY" {
			assert.Contains(t, stored, "MY_API_KEY=[REDACTED:env:MY_API_KEY]", "passed through, hidden in the record")
			continue
		}
		assert.NotContains(t, stored, k, "the name of %s is in the record: the program got it", k)
	}
	assert.Contains(t, stored, "PATH=")
	assert.Contains(t, stored, "HOME=")

	r := h.fails(2, "observe", "command", "--pass-env", "A=B", "--", "true")
	assert.Contains(t, r.Stderr, `--pass-env "A=B" is not an environment variable's name`)
}
