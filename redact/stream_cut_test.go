package redact_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/helmlog/helm/redact"
)

// oneWrite streams text through a Writer in a single Write (cut then
// falls exactly at len(text)-128KiB) and returns the output.
func oneWrite(t *testing.T, r *redact.Redactor, text string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	w := r.Writer(&out)
	if _, err := w.Write([]byte(text)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String(), w.Count()
}

// A secret whose context (the NAME= of an assignment, the scheme://user:
// of a URL, the rest of a pattern's match) lies before the Writer's cut
// and whose hidden group runs across or follows it is hidden, wherever
// the cut falls: no chunk ends inside a match.
func TestWriterHidesAGroupWhateverTheCut(t *testing.T) {
	t.Parallel()
	const reach = 128 << 10
	r, err := redact.New(&redact.Options{Patterns: []redact.Pattern{{Name: "ticket", Regexp: `TICKET-(\d{6,})`}}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ secret, leak string }{
		{"DB_PASSWORD=correct-horse-battery", "correct-horse-battery"},
		{"https://alice:pa55w0rdpa55w0rd@example.com", "pa55w0rdpa55w0rd"},
		{"TICKET-12345678901", "12345678901"},
		// The rules whose context (a header's name, a flag, a keyword, a
		// command, a kind: Secret) stands before the secret.
		{"Authorization: Bearer 8f14e45fceea167a5a36", "8f14e45fceea167a5a36"},
		{"Cookie: session=s%3Aj9Rk2LmQ7vXz", "s%3Aj9Rk2LmQ7vXz"},
		{"mysql --password hunter2pass", "hunter2pass"},
		{"https://x/cb?code=4/0AX4XfWh5qabc", "4/0AX4XfWh5qabc"},
		{"twitter_key = Ab3dEf6hIj9kLm2nOp5qRs8tU", "Ab3dEf6hIj9kLm2nOp5qRs8tU"},
		{"stripeClientKey: Zx81kQ0pLm3vB7nR2tY9", "Zx81kQ0pLm3vB7nR2tY9"},
		{"curl -u admin:Pa55w0rd1", "admin:Pa55w0rd1"},
		{"kind: Secret\ndata:\n  pw: cGFzc3dvcmQxMjM0", "cGFzc3dvcmQxMjM0"},
		{"xoxb-123456789012-1234567890123-AbCdEfGh", "1234567890123-AbCdEfGh"},
	}
	for _, c := range cases {
		t.Run(c.secret, func(t *testing.T) {
			t.Parallel()
			for k := 1; k < len(c.secret); k++ {
				// The cut at each border between a word and what is not (a
				// name and its operator, an operator and the value...), in
				// the middle and next to the ends: 1 MiB of text a cut takes
				// the race detector's while.
				if k > 1 && k < len(c.secret)-1 && k != len(c.secret)/2 && isWordByte(c.secret[k-1]) == isWordByte(c.secret[k]) {
					continue
				}
				// total length L >= 1 MiB + reach; cut = L - reach; the
				// secret starts at cut-k.
				L := 1<<20 + reach + 4096
				cut := L - reach
				pre := strings.Repeat("a", cut-k-1) + " "
				text := pre + c.secret + " " + strings.Repeat("b", L-len(pre)-len(c.secret)-1)
				if k == 1 { // String sees no cut: once is enough
					if s, _ := r.String(text); strings.Contains(s, c.leak) {
						t.Fatalf("String leaks too?")
					}
				}
				got, _ := oneWrite(t, r, text)
				if strings.Contains(got, c.leak) {
					t.Errorf("%q: cut %d bytes into the secret: the stream holds %q in clear", c.secret, k, c.leak)
				}
			}
		})
	}
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// A token found only once its neighbour is hidden (an sk- key glued to a
// slack token) is found by the Writer as by String, wherever the cut
// falls: the two findings' matches are one for the cut.
func TestWriterFindsWhatAMarkersBoundaryRevealsWhateverTheCut(t *testing.T) {
	t.Parallel()
	const reach = 128 << 10
	r, err := redact.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	secret := "AKIAIOSFODNN7EXAMPLEsk-" + strings.Repeat("0123456789abcdef", 2) + "xoxb-1234567890-abcdefghij"
	for _, k := range []int{1, 10, 20, 21, 23, 40, 55, 56, 57, 60, len(secret) - 1} {
		L := 1<<20 + reach + 4096
		cut := L - reach
		pre := strings.Repeat("a", cut-k-1) + " "
		text := pre + secret + " " + strings.Repeat("b", L-len(pre)-len(secret)-1)
		want, wantN := r.String(text)
		if !strings.Contains(want, "[REDACTED:aws-access-key-id][REDACTED:openai-api-key][REDACTED:slack-token]") {
			t.Fatalf("String finds less than the three: %q", want[cut-k-5:cut-k+120])
		}
		got, n := oneWrite(t, r, text)
		if got != want || n != wantN {
			t.Errorf("cut %d bytes into %q: the stream differs from String (%d vs %d secrets)", k, secret, n, wantN)
		}
	}
}

// FuzzWriter checks that the Writer hides what String hides, under the
// same markers, with the chunk's cut falling at any byte of the input.
func FuzzWriter(f *testing.F) {
	f.Add("AKIAIOSFODNN7EXAMPLEsk-0123456789abcdef0123456789abcdefxoxb-1234567890-abcdefghij", uint16(21))
	f.Add("DB_PASSWORD=correct-horse-battery", uint16(12))
	f.Add("kind: Secret\ndata:\n  pw: cGFzc3dvcmQxMjM0", uint16(20))
	f.Add("Authorization: Bearer 8f14e45fceea167a5a36 https://alice:pa55w0rd@example.com", uint16(30))
	r, err := redact.New(nil)
	if err != nil {
		f.Fatal(err)
	}
	const reach = 128 << 10
	f.Fuzz(func(t *testing.T, s string, at uint16) {
		if s == "" || len(s) > 4096 {
			return
		}
		k := int(at) % len(s)
		L := 1<<20 + reach + 8192
		cut := L - reach
		pre := strings.Repeat("a", cut-k-1) + " "
		text := pre + s + " " + strings.Repeat("b", L-len(pre)-len(s)-1)
		want, wantN := r.String(text)
		got, n := oneWrite(t, r, text)
		if got != want || n != wantN {
			t.Fatalf("%q cut %d bytes in: the stream differs from String (%d vs %d secrets)", s, k, n, wantN)
		}
	})
}
