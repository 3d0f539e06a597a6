package redact_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/redact"
)

// streamed writes text through a redacting Writer in pieces of random
// sizes and returns what came out and the count.
func streamed(t *testing.T, r *redact.Redactor, text string, seed uint64) (string, int) {
	t.Helper()
	var out bytes.Buffer
	w := r.Writer(&out)
	rnd := rand.New(rand.NewPCG(seed, 2))
	for rest := text; len(rest) > 0; {
		n := min(len(rest), 1+rnd.IntN(300<<10))
		_, err := w.Write([]byte(rest[:n]))
		require.NoError(t, err)
		rest = rest[n:]
	}
	require.NoError(t, w.Close())
	return out.String(), w.Count()
}

func TestWriterHidesWhatStringHidesWhereverTheChunksFall(t *testing.T) {
	t.Parallel()
	r := newRedactor(t, &redact.Options{
		Environ:  []string{"GH_TOKEN=s3cr3t-env-value"},
		Patterns: []redact.Pattern{{Name: "ticket", Regexp: `TICKET-(\d{6,})`}},
	})
	secrets := []string{ghToken, awsKey, jwt, pemBlock, "s3cr3t-env-value", "https://alice:pa55w0rd@example.com", "DB_PASSWORD=correct-horse-battery", "TICKET-1234567",
		"Authorization: Bearer " + bearer, "Set-Cookie: sid=" + cookieValue + "; Path=/", anthropicKey, npmToken, "psql --password=hunter2 -U app", "GET /cb?code=4/0AX4XfWh5q&state=x", `TWITTER_SECRET: "` + strings.Repeat("aB3dE", 10) + `"`}
	leaks := []string{ghToken, awsKey, jwt, "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo", "s3cr3t-env-value", "pa55w0rd", "correct-horse-battery", "1234567",
		bearer, cookieValue, anthropicKey, npmToken, "hunter2", "4/0AX4XfWh5q", strings.Repeat("aB3dE", 10)}
	line := "ordinary source text, a line of it; nothing to hide here at all.\n"
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			t.Parallel()
			rnd := rand.New(rand.NewPCG(seed, 3))
			var b strings.Builder
			placed := 0
			for b.Len() < 5<<20 {
				if rnd.IntN(400) == 0 {
					b.WriteString(secrets[rnd.IntN(len(secrets))])
					b.WriteByte('\n')
					placed++
					continue
				}
				b.WriteString(line)
			}
			text := b.String()
			want, wantN := r.String(text)
			got, n := streamed(t, r, text, seed)
			for _, leak := range leaks {
				assert.NotContains(t, got, leak, "seed %d", seed)
			}
			assert.Equal(t, wantN, n, "seed %d", seed)
			assert.Equal(t, placed, n, "seed %d", seed)
			assert.True(t, want == got, "seed %d: the stream differs from String", seed)
		})
	}
}

func TestWriterFindsASecretAcrossTheChunkBorder(t *testing.T) {
	t.Parallel()
	r := newRedactor(t, nil)
	// Put a token across every position near the first chunk's end.
	for _, at := range []int{1<<20 - 20, 1<<20 - 1, 1 << 20, 1<<20 + 5} {
		text := strings.Repeat("x ", at/2) + strings.Repeat(" ", at%2) + ghToken + strings.Repeat(" y", 100<<10)
		got, n := streamed(t, r, text, uint64(at))
		assert.NotContains(t, got, ghToken)
		assert.Equal(t, 1, n)
		assert.Len(t, got, len(text)-len(ghToken)+len("[REDACTED:github-token]"))
	}
}

func TestWriterWithNothingToHideCopies(t *testing.T) {
	t.Parallel()
	var nilRedactor *redact.Redactor
	text := strings.Repeat("plain ", 500<<10)
	got, n := streamed(t, nilRedactor, text, 9)
	assert.Equal(t, text, got)
	assert.Zero(t, n)
}
