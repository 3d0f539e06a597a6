package mcpserver

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResourceNotFoundIsInvalidParams: a resource that is not there is
// the protocol's Invalid Params (SEP-2164), with the URI as data and, when
// helm knows more, why.
func TestResourceNotFoundIsInvalidParams(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, uri, msg, want string
	}{
		{"not helm's", "file:///etc/passwd", "", "Resource not found"},
		{"no such voyage", "helm://voyages/ffff/story", "voyage ffff: no voyage", "Resource not found: voyage ffff: no voyage"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var je *jsonrpc.Error
			require.True(t, errors.As(notFound(tt.uri, tt.msg), &je))
			assert.Equal(t, int64(jsonrpc.CodeInvalidParams), je.Code)
			assert.Equal(t, tt.want, je.Message)
			var data struct{ URI string }
			require.NoError(t, json.Unmarshal(je.Data, &data))
			assert.Equal(t, tt.uri, data.URI)
		})
	}
}
