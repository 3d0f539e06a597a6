package otlp

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEncodingsAreWhatPdataReadsAndWrites builds traces by hand with
// what an encoder gets wrong (escapes, empty values, large and negative
// numbers, a key put twice) and checks each through Pdata: pdata decodes
// the protobuf and the JSON to the same trace, and writes the JSON as
// helm does.
func TestEncodingsAreWhatPdataReadsAndWrites(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		attrs func(at *Attributes)
	}{
		{name: "strings JSON escapes", attrs: func(at *Attributes) {
			at.PutStr("html", `<a href="x">&amp;</a>`)
			at.PutStr("controls", "tab\tnewline\nnul\x00bell\x07back\bfeed\fcr\rdel\x7f")
			at.PutStr("separators", "line\u2028paragraph\u2029")
			at.PutStr("beyond ASCII", "café — 🚢")
			at.PutStr("backslash", `C:\path\"quoted"`)
		}},
		{name: "empty values", attrs: func(at *Attributes) {
			at.PutStr("empty", "")
			at.PutInt("zero", 0)
			at.PutDouble("zero double", 0)
			at.PutStrs("no strings", nil)
			at.PutStrs("an empty string", []string{""})
		}},
		{name: "numbers", attrs: func(at *Attributes) {
			at.PutInt("max", math.MaxInt64)
			at.PutInt("min", math.MinInt64)
			at.PutInt("negative", -1)
			at.PutDouble("small", 1e-9)
			at.PutDouble("large", 1.5e300)
			at.PutDouble("negative double", -0.25)
		}},
		{name: "a key put twice keeps its place", attrs: func(at *Attributes) {
			at.PutStr("a", "first")
			at.PutStr("b", "b")
			at.PutInt("a", 2)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			td := &Traces{SchemaURL: SchemaURL, ScopeName: ScopeName}
			td.Resource.PutStr("service.name", "helm")
			sp := &Span{TraceID: TraceID{1}, SpanID: SpanID{2}, ParentSpanID: SpanID{3}, Name: "span", Kind: SpanKindInternal, Start: 1, End: math.MaxUint64}
			tt.attrs(&sp.Attributes)
			sp.Events = []*Event{{Name: "event", Time: 5, Attributes: sp.Attributes}, {}}
			sp.Links = []*Link{{TraceID: TraceID{1}, SpanID: SpanID{9}, Attributes: sp.Attributes}, {}}
			sp.Status = Status{Code: StatusCodeError, Message: "failed <here>"}
			td.Spans = []*Span{sp, {Name: "empty"}}
			got := Pdata(t, td)
			assert.Equal(t, 2, got.SpanCount())
		})
	}
}

func TestAPutKeyIsReplacedWhereItIs(t *testing.T) {
	t.Parallel()
	var at Attributes
	at.PutStr("a", "1")
	at.PutStr("b", "2")
	at.PutInt("a", 3)
	assert.Equal(t, Attributes{{"a", Value{kind: 'i', int: 3}}, {"b", Value{kind: 's', str: "2"}}}, at)
}

// TestInvalidUTF8IsWrittenAsTheReplacementCharacter: pdata wrote the
// bytes as they were, which is not JSON; helm's texts are UTF-8, but
// the JSON stays valid if one is not.
func TestInvalidUTF8IsWrittenAsTheReplacementCharacter(t *testing.T) {
	t.Parallel()
	td := &Traces{Spans: []*Span{{Name: "a\xffb\xc3"}}}
	js, err := JSON(td)
	require.NoError(t, err)
	assert.True(t, json.Valid(js), "%s", js)
	assert.Contains(t, string(js), `"name":"a\ufffdb\ufffd"`)
}
