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
	const reach = 128 << 10
	r, err := redact.New(redact.Options{Patterns: []redact.Pattern{{Name: "ticket", Regexp: `TICKET-(\d{6,})`}}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ secret, leak string }{
		{"DB_PASSWORD=correct-horse-battery", "correct-horse-battery"},
		{"https://alice:pa55w0rdpa55w0rd@example.com", "pa55w0rdpa55w0rd"},
		{"TICKET-12345678901", "12345678901"},
	}
	for _, c := range cases {
		for k := 1; k < len(c.secret); k++ {
			// total length L >= 1 MiB + reach; cut = L - reach; the
			// secret starts at cut-k.
			L := 1<<20 + reach + 4096
			cut := L - reach
			pre := strings.Repeat("a", cut-k-1) + " "
			text := pre + c.secret + " " + strings.Repeat("b", L-len(pre)-len(c.secret)-1)
			if s, _ := r.String(text); strings.Contains(s, c.leak) {
				t.Fatalf("String leaks too?")
			}
			got, _ := oneWrite(t, r, text)
			if strings.Contains(got, c.leak) {
				t.Errorf("%q: cut %d bytes into the secret: the stream holds %q in clear", c.secret, k, c.leak)
			}
		}
	}
}
