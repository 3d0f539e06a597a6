package redact_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/redact"
)

// TestAttackConcurrentFirstUseOfTheLazyRules: the rules' expressions are
// compiled on first use; goroutines that all use them first at once (an
// MCP server's first calls, run alone: go test -race -run Attack) must
// race on nothing and hide every secret, each the same way.
func TestAttackConcurrentFirstUseOfTheLazyRules(t *testing.T) {
	secrets := []string{anthropicKey, openaiKey, npmToken, gitlabToken, gcpKey, slackToken, "ghp_" + strings.Repeat("a1B2", 9)}
	text := "ANTHROPIC=" + anthropicKey + "\nkey " + openaiKey + " end\n//registry.npmjs.org/:_authToken=" + npmToken +
		"\nPAT " + gitlabToken + "\nuse " + gcpKey + "\n" + slackToken + "\ngh ghp_" + strings.Repeat("a1B2", 9) +
		"\nAuthorization: Bearer " + bearer + "\nmysql --password hunter2\n" + `fooToken := "s3cr3tvalue"`
	const n = 8
	outs := make([]string, n)
	counts := make([]int, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			r, err := redact.New(nil)
			if err != nil {
				errs[i] = err
				return
			}
			outs[i], counts[i] = r.String(text)
			_, _ = r.JSON([]byte(`{"k":"` + gitlabToken + `"}`))
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		assert.Equal(t, outs[0], outs[i], "goroutine %d redacts as the first", i)
		assert.Equal(t, counts[0], counts[i])
		for _, s := range secrets {
			assert.NotContains(t, outs[i], s)
		}
	}
	assert.GreaterOrEqual(t, counts[0], len(secrets))
}
