package witnessline_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/helmlog/helm/internal/witnessline"
)

func TestLinesFindsEveryHelmVoyageLineWhateverItsCaseOrIndent(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"none", "Fix\n\nSigned-off-by: a <a@example.com>", nil},
		{"trailer", "Fix\n\nHelm-Voyage: v 1:aa", []string{"Helm-Voyage: v 1:aa"}},
		{"subject", "Helm-Voyage: v 1:aa", []string{"Helm-Voyage: v 1:aa"}},
		{"lower case, indented", "Fix\n\n   helm-voyage: v 1:aa\n\nMore", []string{"helm-voyage: v 1:aa"}},
		{"space before the colon", "Fix\n\nHELM-VOYAGE\t : v", []string{"HELM-VOYAGE\t : v"}},
		{"CRLF", "Fix\r\n\r\nHelm-Voyage: v 1:aa\r\n", []string{"Helm-Voyage: v 1:aa"}},
		{"lone CR", "Fix\rHelm-Voyage: v 1:aa", []string{"Helm-Voyage: v 1:aa"}},
		{"two", "Helm-Voyage: a\nHelm-Voyage: b", []string{"Helm-Voyage: a", "Helm-Voyage: b"}},
		{"quoted is not one", "> Helm-Voyage: v 1:aa\nX-Helm-Voyage: v", nil},
		{"no colon", "Helm-Voyage v 1:aa", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for line, value := range witnessline.Lines(tc.text) {
				got = append(got, line)
				_, after, _ := strings.Cut(line, ":")
				assert.Equal(t, after, value)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
