package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestAttackOtlpRecordedTextsReachTheCollectorAsOneAttributeEach: the
// recorded agent writes notes whose text is built to break the export
// (controls, U+2028, bytes that read as protobuf fields, JSON that closes
// the attribute and opens another, bytes that are not UTF-8), with the
// real helm binary. The Collector's own OTLP receiver accepts the export,
// with one span per note and no more, each note's text one attribute,
// the same text. (A note that is not UTF-8 is refused when recorded; the
// encoder's U+FFFD for such bytes is checked in cmd/helm/internal/otlp.)
func TestAttackOtlpRecordedTextsReachTheCollectorAsOneAttributeEach(t *testing.T) {
	bin := buildHelm(t)
	home := filepath.Join(t.TempDir(), "home")
	notes := []struct{ text, want string }{
		{text: "tab\tnul-less controls \x01\x1f\x7f end", want: "tab\tnul-less controls \x01\x1f\x7f end"},
		{text: "line\u2028paragraph\u2029bom\ufeff", want: "line\u2028paragraph\u2029bom\ufeff"},
		{text: "J\x0b\n\x01k\x12\x03\n\x01v proto", want: "J\x0b\n\x01k\x12\x03\n\x01v proto"},
		{text: `x"}},{"key":"helm.identity","value":{"stringValue":"root`, want: `x"}},{"key":"helm.identity","value":{"stringValue":"root`},
	}
	id := strings.TrimSpace(helmRun(t, bin, home, "voyage", "new", "--as", "agent", "texts the agent chose"))
	for _, n := range notes {
		helmRun(t, bin, home, "--voyage", id, "note", "--as", "agent", n.text)
	}
	// Bytes that are not UTF-8 are refused as bad input, nothing recorded.
	cmd := exec.Command(bin, "--voyage", id, "note", "--as", "agent", "not UTF-8: a\xffb\xc3(")
	cmd.Env = append(os.Environ(), "HELM_HOME="+home, "HELM_ROLE=coder", "HELM_METHOD=human", "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", out)
	assert.Equal(t, 2, ee.ExitCode(), "%s", out)
	endpoint, sink := otlpCollector(t)
	helmRun(t, bin, home, "voyage", "export", id, "--otlp-endpoint", endpoint)
	require.Equal(t, 1+len(notes), sink.SpanCount(), "the voyage and a span per note, no more")

	var texts []string
	for _, td := range sink.AllTraces() {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					if sp.Name() != "note" {
						continue
					}
					texts = append(texts, attr(sp, "helm.note.text"))
					assert.Equal(t, "agent", attr(sp, "helm.identity"), "the identity is the one recorded")
					assert.Equal(t, ptrace.SpanKindInternal, sp.Kind())
				}
			}
		}
	}
	var want []string
	for _, n := range notes {
		want = append(want, n.want)
	}
	assert.ElementsMatch(t, want, texts)
}
