package otlp

import (
	"flag"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Update rewrites the golden files in testdata/ (go test -update), for
// the package's tests inside and out.
var Update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Pdata decodes td's protobuf encoding with the OpenTelemetry
// Collector's pdata (the reference decoder), and checks that td's JSON
// encoding decodes to the same trace and is, byte for byte, what pdata
// writes for it. (pdata writes a message's protobuf fields last first,
// so the protobuf is compared decoded.) Every test reads the trace
// through it.
func Pdata(t *testing.T, td *Traces) ptrace.Traces {
	t.Helper()
	pb, err := Proto(td)
	require.NoError(t, err)
	fromProto, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(pb)
	require.NoError(t, err, "pdata decodes the protobuf")
	js, err := JSON(td)
	require.NoError(t, err)
	fromJSON, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(js)
	require.NoError(t, err, "pdata decodes the JSON")
	a, err := (&ptrace.JSONMarshaler{}).MarshalTraces(fromProto)
	require.NoError(t, err)
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(fromJSON)
	require.NoError(t, err)
	require.Equal(t, string(a), string(b), "the protobuf and the JSON hold the same trace")
	require.Equal(t, string(a), strings.TrimSuffix(string(js), "\n"), "the JSON is pdata's")
	return fromProto
}
