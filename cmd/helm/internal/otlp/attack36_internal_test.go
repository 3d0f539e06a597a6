package otlp

import (
	"encoding/json"
	"math"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestAttackARecordedTextNeitherForgesStructureNorSplitsTheEncodings: the
// recorded agent controls the texts an export carries (span names,
// attribute keys and values, event names, the status message). Whatever
// bytes they hold (controls, invalid UTF-8, separators, bytes that read
// as protobuf fields or JSON punctuation), the protobuf and the JSON
// decode, in pdata, to the same trace, with the same number of spans,
// events and attributes as were put, and each text as one value.
func TestAttackARecordedTextNeitherForgesStructureNorSplitsTheEncodings(t *testing.T) {
	t.Parallel()
	// A span's attribute as protobuf bytes (field 9, a KeyValue "k":"v"),
	// and a JSON object closing and opening.
	protoField := "\x4a\x0b\x0a\x01k\x12\x03\x0a\x01v"
	jsonBreak := `"}],"name":"forged","attributes":[{"key":"x","value":{"stringValue":"`
	tests := []struct {
		name string
		text string
	}{
		{name: "invalid UTF-8", text: "a\xffb\xc3(\xe2\x82\xf0\x9f\x98"},
		{name: "a lone surrogate as UTF-8", text: "\xed\xa0\x80x"},
		{name: "an overlong encoding", text: "\xc0\xaf\xe0\x80\xaf"},
		{name: "controls and separators", text: "\x00\x01\x1f\x7f\u2028\u2029\ufeff"},
		{name: "protobuf bytes", text: protoField},
		{name: "JSON punctuation", text: jsonBreak},
		{name: "all of it", text: protoField + "\xff" + jsonBreak + "\x00\u2028"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			td := &Traces{SchemaURL: SchemaURL, ScopeName: ScopeName}
			td.Resource.PutStr("service.name", tt.text)
			sp := &Span{TraceID: TraceID{1}, SpanID: SpanID{2}, Name: tt.text, Kind: SpanKindInternal, Start: 1, End: math.MaxUint64}
			sp.Attributes.PutStr(tt.text, tt.text)
			sp.Attributes.PutStrs("list", []string{tt.text, tt.text})
			sp.Attributes.PutInt("n", math.MinInt64)
			sp.Events = []*Event{{Name: tt.text, Time: 5}}
			sp.Status = Status{Code: StatusCodeError, Message: tt.text}
			td.Spans = []*Span{sp}

			// Pdata's check, but for the JSON's bytes: pdata writes U+FFFD
			// unescaped, helm as \ufffd.
			pb, err := Proto(td)
			require.NoError(t, err)
			got, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(pb)
			require.NoError(t, err, "pdata decodes the protobuf")
			js, err := JSON(td)
			require.NoError(t, err)
			require.True(t, json.Valid(js), "%s", js)
			fromJSON, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(js)
			require.NoError(t, err, "pdata decodes the JSON")
			a, err := (&ptrace.JSONMarshaler{}).MarshalTraces(got)
			require.NoError(t, err)
			b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(fromJSON)
			require.NoError(t, err)
			require.Equal(t, string(a), string(b), "the protobuf and the JSON hold the same trace")
			require.True(t, utf8.Valid(a), "the texts pdata passes on are UTF-8")
			require.Equal(t, 1, got.SpanCount())
			rs := got.ResourceSpans().At(0)
			assert.Equal(t, 1, rs.Resource().Attributes().Len())
			span := rs.ScopeSpans().At(0).Spans().At(0)
			assert.Equal(t, 3, span.Attributes().Len(), "the attributes put, no more")
			assert.Equal(t, 1, span.Events().Len())
			list, ok := span.Attributes().Get("list")
			require.True(t, ok)
			assert.Equal(t, 2, list.Slice().Len())
			n, ok := span.Attributes().Get("n")
			require.True(t, ok)
			assert.Equal(t, int64(math.MinInt64), n.Int())
			assert.Equal(t, span.Name(), span.Status().Message(), "one text, decoded the same wherever it is")
		})
	}
}
