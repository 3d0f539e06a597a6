package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

// otlpCollector starts the OpenTelemetry Collector's own OTLP receiver
// (the component a collector binary runs, built from the collector's
// module) on a loopback port, HTTP only, feeding a sink that keeps every
// trace it accepts; and returns the receiver's base URL and the sink.
// What helm sends is decoded by the real receiver, as Jaeger's, Tempo's or
// any collector's front door would decode it.
func otlpCollector(t *testing.T) (string, *consumertest.TracesSink) {
	t.Helper()
	ctx := context.Background()
	// A free loopback port: the receiver takes an address, not a
	// listener.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())

	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	cfg.Protocols.GRPC = configoptional.None[configgrpc.ServerConfig]()
	cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = addr
	sink := new(consumertest.TracesSink)
	r, err := f.CreateTraces(ctx, receivertest.NewNopSettings(f.Type()), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, r.Start(ctx, componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
	return "http://" + addr, sink
}

// helmRun runs the helm binary in home and returns its standard output.
func helmRun(t *testing.T, bin, home string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HELM_HOME="+home, "HELM_ROLE=coder", "HELM_METHOD=human", "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "helm %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), stdout.String(), stderr.String())
	return stdout.String()
}

// spanIndex is the spans of traces by name; a second span of a name is
// "NAME 2", in the order received.
func spanIndex(traces []ptrace.Traces) map[string]ptrace.Span {
	out := map[string]ptrace.Span{}
	for _, td := range traces {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					name := sp.Name()
					for n := 2; ; n++ {
						if _, ok := out[name]; !ok {
							break
						}
						name = sp.Name() + " " + string(rune('0'+n))
					}
					out[name] = sp
				}
			}
		}
	}
	return out
}

func attr(sp ptrace.Span, k string) string {
	if v, ok := sp.Attributes().Get(k); ok {
		return v.AsString()
	}
	return ""
}

// crewVoyage records, with the real helm binary, a voyage with a
// bearing, a note and a sub-voyage with a note of its own, both
// completed; and returns the voyage's id.
func crewVoyage(t *testing.T, bin, home string) (id, sub string) {
	t.Helper()
	id = strings.TrimSpace(helmRun(t, bin, home, "voyage", "new", "--as", "john-agent", "Resolve #42: fix widget crash"))
	helmRun(t, bin, home, "--voyage", id, "observe", "context", "--as", "john-agent", "init() dereferences a nil config")
	helmRun(t, bin, home, "--voyage", id, "bearing", "--as", "john-agent", "--reading", "Widget module has a null check missing in init().")
	helmRun(t, bin, home, "--voyage", id, "note", "--as", "john-agent", "Asking for a review.")
	sub = strings.TrimSpace(helmRun(t, bin, home, "voyage", "new", "--as", "ann", "--parent", id, "Review the fix"))
	helmRun(t, bin, home, "--voyage", sub, "note", "--as", "ann", "Reads well.")
	helmRun(t, bin, home, "--voyage", sub, "complete", "--as", "ann", "--summary", "Approved.")
	helmRun(t, bin, home, "--voyage", id, "complete", "--as", "john-agent", "--summary", "Fixed.")
	return id, sub
}

func TestOtlpExportIsReceivedByTheCollectorsOTLPReceiver(t *testing.T) {
	bin := buildHelm(t)
	home := filepath.Join(t.TempDir(), "home")
	id, sub := crewVoyage(t, bin, home)
	endpoint, sink := otlpCollector(t)

	out := helmRun(t, bin, home, "voyage", "export", id, "--otlp-endpoint", endpoint, "--otlp-header", "Authorization=Bearer test")
	assert.Contains(t, out, "(5 spans) to "+endpoint+"/v1/traces")
	require.Equal(t, 5, sink.SpanCount(), "the receiver accepted every span")
	traces := sink.AllTraces()
	require.Len(t, traces, 1, "one request")
	s := spanIndex(traces)

	rs := traces[0].ResourceSpans().At(0)
	name, _ := rs.Resource().Attributes().Get("service.name")
	assert.Equal(t, "helm", name.AsString())

	root := s["voyage Resolve #42: fix widget crash"]
	child := s["voyage Review the fix"]
	assert.Equal(t, pcommon.TraceID(uuid.MustParse(id)), root.TraceID(), "the trace id is the voyage's")
	assert.True(t, root.ParentSpanID().IsEmpty(), "the voyage is the root span")
	assert.Equal(t, ptrace.StatusCodeOk, root.Status().Code())
	assert.Equal(t, id, attr(root, "helm.voyage.id"))
	assert.Equal(t, "completed", attr(root, "helm.voyage.outcome"))
	assert.Equal(t, root.TraceID(), child.TraceID(), "one trace")
	assert.Equal(t, root.SpanID(), child.ParentSpanID(), "the sub-voyage is a child of its parent")
	assert.Equal(t, sub, attr(child, "helm.voyage.id"))
	for name, parent := range map[string]ptrace.Span{"bearing": root, "note": root, "note 2": child} {
		assert.Equal(t, parent.SpanID(), s[name].ParentSpanID(), "%s is under its voyage", name)
	}
	assert.Equal(t, "Reads well.", attr(s["note 2"], "helm.note.text"))
	assert.Equal(t, "ann", attr(s["note 2"], "helm.identity"))

	// Sent again: the same ids, so a viewer keeps one copy.
	helmRun(t, bin, home, "voyage", "export", id, "--otlp-endpoint", endpoint)
	again := sink.AllTraces()
	require.Len(t, again, 2)
	assert.Equal(t, traces[0], again[1], "the same trace, ids included")
}

func TestOtlpFileExportIsValidOTLPJSONForTheReceiver(t *testing.T) {
	bin := buildHelm(t)
	home := filepath.Join(t.TempDir(), "home")
	id, _ := crewVoyage(t, bin, home)
	endpoint, sink := otlpCollector(t)
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	helmRun(t, bin, home, "voyage", "export", id, "--format", "otlp", "-o", path)

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	lines := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	client := &http.Client{Timeout: 30 * time.Second}
	for sc.Scan() {
		lines++
		resp, err := client.Post(endpoint+"/v1/traces", "application/json", bytes.NewReader(sc.Bytes()))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "line %d is accepted", lines)
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, 1, lines, "one ExportTraceServiceRequest a line")
	assert.Equal(t, 5, sink.SpanCount())

	// What the file holds is what --otlp-endpoint sends.
	fromFile := sink.AllTraces()[0]
	helmRun(t, bin, home, "voyage", "export", id, "--otlp-endpoint", endpoint)
	assert.Equal(t, fromFile, sink.AllTraces()[1])
}

// sessionVoyage records in home, through the library, a Claude Code
// session as a hook records it: a Bash call whose result came 2.5 s later
// with the model's usage, an rm -r -f a rule denied, and a subagent whose
// sub-voyage holds its own Read; and returns the voyage's id.
func sessionVoyage(t *testing.T, home string) string {
	t.Helper()
	ctx := context.Background()
	h, err := helm.Open(home, nil)
	require.NoError(t, err)
	agent := logbook.Who{Identity: "john", Role: "coder", Method: "claude-code"}
	v, err := h.Start(ctx, "Fix the flaky widget test", helm.OpenWaters, agent, &helm.StartOptions{Session: "claude-code:s-1"})
	require.NoError(t, err)
	defer v.Close()
	step := func(v *helm.Voyage, s logbook.Step) {
		t.Helper()
		s.Agent, s.Session = "claude-code", "s-1"
		_, err := v.Step(ctx, s, agent)
		require.NoError(t, err)
	}
	step(v, logbook.Step{Kind: logbook.StepPrompt, Text: "Make TestWidget pass reliably."})
	step(v, logbook.Step{Kind: logbook.StepTool, ID: "toolu_01", Tool: "Bash", Text: "go test ./...", Input: json.RawMessage(`{"command":"go test ./..."}`), Decision: &logbook.StepDecision{Verdict: "allow"}})
	step(v, logbook.Step{Kind: logbook.StepTool, ID: "toolu_01", Tool: "Bash",
		Result: &logbook.StepResult{Output: "ok", Duration: 2500 * time.Millisecond},
		Usage:  &logbook.Usage{Model: "claude-sonnet-4-5", InputTokens: 10, OutputTokens: 40, CacheReadTokens: 1000, CacheWriteTokens: 50}})
	step(v, logbook.Step{Kind: logbook.StepTool, ID: "toolu_02", Tool: "Bash", Text: "rm -r -f build",
		Decision: &logbook.StepDecision{Verdict: "deny", Rule: `"no rm -rf" (policy.toml:1)`, Reason: "recursive deletes need a person"}})
	sub, err := h.Start(ctx, "Explore", helm.OpenWaters, agent, &helm.StartOptions{Parent: v.ID(), Session: "claude-code:s-1/agent-1"})
	require.NoError(t, err)
	defer sub.Close()
	step(v, logbook.Step{Kind: logbook.StepSubagent, ID: "agent-1", Text: "Explore", Voyage: sub.ID()})
	step(sub, logbook.Step{Kind: logbook.StepTool, ID: "toolu_03", Tool: "Read", Text: "widget_test.go"})
	step(sub, logbook.Step{Kind: logbook.StepTool, ID: "toolu_03", Tool: "Read", Result: &logbook.StepResult{Output: "package widget", Duration: 30 * time.Millisecond}})
	return v.ID()
}

func TestOtlpToolStepsReachTheCollectorWithGenAIAttributes(t *testing.T) {
	bin := buildHelm(t)
	home := filepath.Join(t.TempDir(), "home")
	id := sessionVoyage(t, home)
	endpoint, sink := otlpCollector(t)
	helmRun(t, bin, home, "voyage", "export", id, "--otlp-endpoint", endpoint)
	require.Equal(t, 7, sink.SpanCount(), "two voyages, a prompt, two Bash calls, the subagent step and its Read")
	s := spanIndex(sink.AllTraces())

	root := s["voyage Fix the flaky widget test"]
	bash := s["execute_tool Bash"]
	denied := s["execute_tool Bash 2"]
	sub := s["voyage Explore"]
	read := s["execute_tool Read"]
	assert.Equal(t, root.SpanID(), bash.ParentSpanID())
	assert.Equal(t, 2500*time.Millisecond, bash.EndTimestamp().AsTime().Sub(bash.StartTimestamp().AsTime()), "a call lasts until its result")
	for k, want := range map[string]string{
		"gen_ai.operation.name":                    "execute_tool",
		"gen_ai.tool.name":                         "Bash",
		"gen_ai.tool.call.id":                      "toolu_01",
		"gen_ai.provider.name":                     "anthropic",
		"gen_ai.request.model":                     "claude-sonnet-4-5",
		"gen_ai.usage.input_tokens":                "1060",
		"gen_ai.usage.output_tokens":               "40",
		"gen_ai.usage.cache_read.input_tokens":     "1000",
		"gen_ai.usage.cache_creation.input_tokens": "50",
		"helm.guard.verdict":                       "allow",
	} {
		assert.Equal(t, want, attr(bash, k), k)
	}
	assert.Equal(t, "deny", attr(denied, "helm.guard.verdict"))
	assert.Equal(t, `"no rm -rf" (policy.toml:1)`, attr(denied, "helm.guard.rule"))
	assert.Equal(t, s["subagent Explore"].SpanID(), sub.ParentSpanID(), "the sub-voyage hangs under the step that opened it")
	assert.Equal(t, sub.SpanID(), read.ParentSpanID())
	assert.Equal(t, 30*time.Millisecond, read.EndTimestamp().AsTime().Sub(read.StartTimestamp().AsTime()))
	assert.Equal(t, root.TraceID(), read.TraceID(), "one trace")
}
