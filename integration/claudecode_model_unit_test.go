package integration

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// post sends a Messages request to the stand-in and returns the answer's
// status and body.
func post(t *testing.T, m *modelServer, path string, body map[string]any) (int, string) {
	t.Helper()
	data, err := json.Marshal(body)
	require.NoError(t, err)
	resp, err := http.Post(m.URL()+path, "application/json", strings.NewReader(string(data)))
	require.NoError(t, err)
	defer resp.Body.Close()
	var sb strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		sb.WriteString(sc.Text() + "\n")
	}
	require.NoError(t, sc.Err())
	return resp.StatusCode, sb.String()
}

func request(system string, stream bool, tools ...string) map[string]any {
	var ts []any
	for _, name := range tools {
		ts = append(ts, map[string]any{"name": name})
	}
	return map[string]any{
		"model":    "claude-test",
		"stream":   stream,
		"system":   []any{map[string]any{"type": "text", "text": system}},
		"tools":    ts,
		"messages": []any{map[string]any{"role": "user", "content": "hi"}},
	}
}

// sseEvents returns the event names of a server-sent event stream, and
// each event's data decoded.
func sseEvents(t *testing.T, body string) ([]string, []map[string]any) {
	t.Helper()
	var names []string
	var data []map[string]any
	for _, line := range strings.Split(body, "\n") {
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			names = append(names, name)
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			var v map[string]any
			require.NoError(t, json.Unmarshal([]byte(d), &v), d)
			data = append(data, v)
		}
	}
	require.Len(t, data, len(names), "one data line per event")
	return names, data
}

// TestModelStandInServesEachRoleItsTurns: the stand-in serves the
// subagent's turns to requests marked cc_is_subagent=true and the
// parent's to the others, whatever the order they come in; side requests
// (no tools) get text and no turn; a request no turn is left for is a
// problem the session's checks report.
func TestModelStandInServesEachRoleItsTurns(t *testing.T) {
	m := newModelServer(t, []modelTurn{
		{Role: roleMain, Tools: []toolUse{{ID: "toolu_a", Name: "Agent", Input: map[string]any{"prompt": "p"}}}},
		{Role: roleSubagent, Text: "sub done"},
		{Role: roleMain, Text: "main done"},
	})
	const mainSystem = "x-anthropic-billing-header: cc_version=2.1.332; cc_entrypoint=sdk-cli;"
	const subSystem = "x-anthropic-billing-header: cc_version=2.1.332; cc_entrypoint=sdk-cli; cc_is_subagent=true;"

	code, body := post(t, m, "/v1/messages", request(mainSystem, false, "Agent", "Bash"))
	require.Equal(t, http.StatusOK, code)
	var msg struct {
		Content    []apiBlock     `json:"content"`
		StopReason string         `json:"stop_reason"`
		Usage      map[string]any `json:"usage"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &msg))
	require.Len(t, msg.Content, 1)
	assert.Equal(t, "tool_use", msg.Content[0].Type)
	assert.Equal(t, "toolu_a", msg.Content[0].ID)
	assert.Equal(t, "tool_use", msg.StopReason)
	assert.EqualValues(t, usageOutput, msg.Usage["output_tokens"])

	// A side request between: answered, no turn used.
	code, _ = post(t, m, "/v1/messages", request(mainSystem, false))
	require.Equal(t, http.StatusOK, code)

	// The subagent's turn goes to the subagent's request, streamed.
	code, body = post(t, m, "/v1/messages", request(subSystem+"\nYou are an agent", true, "Bash", "Read"))
	require.Equal(t, http.StatusOK, code)
	names, data := sseEvents(t, body)
	assert.Equal(t, []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}, names)
	assert.Equal(t, "sub done", data[2]["delta"].(map[string]any)["text"])
	assert.Equal(t, "end_turn", data[4]["delta"].(map[string]any)["stop_reason"])
	assert.EqualValues(t, usageInput, data[0]["message"].(map[string]any)["usage"].(map[string]any)["input_tokens"])
	assert.EqualValues(t, usageOutput, data[4]["usage"].(map[string]any)["output_tokens"])

	code, body = post(t, m, "/v1/messages/count_tokens", request(mainSystem, false))
	require.Equal(t, http.StatusOK, code)
	assert.JSONEq(t, `{"input_tokens": 1200}`, body)

	left, problems := m.Unserved()
	assert.Equal(t, []string{"turn 2 (main)"}, left)
	assert.Empty(t, problems)

	// The parent's last turn, then one request too many.
	_, body = post(t, m, "/v1/messages", request(mainSystem, true, "Agent"))
	names, data = sseEvents(t, body)
	assert.Equal(t, "main done", data[2]["delta"].(map[string]any)["text"], "events %v", names)
	post(t, m, "/v1/messages", request(subSystem, true, "Bash"))
	left, problems = m.Unserved()
	assert.Empty(t, left)
	assert.Equal(t, []string{"request 5 (subagent): no scripted turn left"}, problems)

	var roles []string
	for _, r := range m.Requests() {
		roles = append(roles, r.Role)
	}
	assert.Equal(t, []string{roleMain, roleUtility, roleSubagent, "", roleMain, roleSubagent}, roles,
		"every request is recorded with whose it was (count_tokens is no one's)")
}
