package webtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/replay"
)

// Claude is the identity of the seeded agent session, as helm hook
// install configures it.
var Claude = logbook.Who{Identity: "claude-1", Role: "coder", Method: "claude-code"}

// AgentSeeded names what SeedAgent recorded.
type AgentSeeded struct {
	// Dir is the helm home.
	Dir string
	// Session is the session's voyage, Sub its subagent's sub-voyage,
	// Hostile a session whose prompt, command, diff, output, decision
	// and input are XSS payloads.
	Session, Sub, Hostile string
	// Long is the long output stowed as an artifact (LongArtifact).
	Long, LongArtifact string
	// Huge is the output longer than the page shows (HugeArtifact).
	Huge, HugeArtifact string
}

// EditDiff is the seeded Edit's text: a unified diff.
const EditDiff = `--- a/widget/init.go
+++ b/widget/init.go
@@ -3,3 +3,6 @@
 // Init sets the widget up from its config.
 func Init(c *Config) *Widget {
-	return &Widget{name: c.Name}
+	if c == nil {
+		return &Widget{}
+	}
+	return &Widget{name: c.Name}
`

// SeedAgent records, into a new home in dir, what helm hook records of a
// Claude Code session: its start, a prompt of two lines, an allowed Bash
// call with its output, an Edit with its diff, a denied rm -r -f, a call
// whose long output is stowed as an artifact, one whose output is longer
// than a page shows, a failed call, a subagent with its own sub-voyage
// and steps, a permission held for a person, and the agent's message with
// the model's usage; and a hostile session.
func SeedAgent(ctx context.Context, dir string) (*AgentSeeded, error) {
	opts := replay.Deterministic(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), 3*time.Second, "c1a0de00")
	opts.NoSync = true
	var ids atomic.Int64 // ids whose first 8 digits differ, as random ones do
	opts.NewID = func() uuid.UUID {
		n := ids.Add(1)
		return uuid.MustParse(fmt.Sprintf("%08x-0000-4000-8000-%012d", 0xc1a00000+n*0x1111, n))
	}
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	h, err := helm.Open(home, opts)
	if err != nil {
		return nil, err
	}
	const session = "4d1e6f2a-0b7c-4c39-9a52-6f0e2d8b1c11"
	s := &AgentSeeded{Dir: home}
	var lines []string
	for i := range 120 {
		lines = append(lines, fmt.Sprintf("=== RUN   TestWidget%03d\n--- PASS: TestWidget%03d (0.00s)", i, i))
	}
	s.Long = strings.Join(lines, "\n") + "\nPASS\nok  \texample.com/widgets/widget\t0.412s\n"
	s.Huge = strings.Repeat("0123456789abcdef", 5<<10) + "\nthe end of the huge output\n" // 80 KiB and a line

	main, err := h.Start(ctx, "Fix the widget crash on a nil config", helm.OpenWaters, Claude,
		&helm.StartOptions{Session: "claude-code:" + session})
	if err != nil {
		return nil, err
	}
	defer main.Close()
	s.Session = main.ID()
	st := &stepper{ctx: ctx, v: main, agent: "claude-code", session: session}
	st.step(logbook.Step{Kind: logbook.StepSession, Text: "startup"})
	st.step(logbook.Step{Kind: logbook.StepPrompt, ID: "p1", Text: "The widget crashes on a nil config.\nFind out why, fix it, and run the tests."})
	st.call("toolu_01", "Bash", `{"command":"go test ./widget","description":"Run the widget's tests"}`, "go test ./widget",
		&logbook.StepDecision{Verdict: "allow", Rule: `"go tools" (policy.toml:9)`},
		&logbook.StepResult{Output: "ok  \texample.com/widgets/widget\t0.012s\n", Duration: 1234 * time.Millisecond})
	st.call("toolu_02", "Edit", `{"file_path":"widget/init.go","old_string":"\treturn &Widget{name: c.Name}","new_string":"\tif c == nil {\n\t\treturn &Widget{}\n\t}\n\treturn &Widget{name: c.Name}"}`,
		EditDiff, nil, &logbook.StepResult{Output: "The file widget/init.go has been updated.", Duration: 41 * time.Millisecond})
	st.call("toolu_03", "Bash", `{"command":"rm -r -f /tmp/victim"}`, "rm -r -f /tmp/victim",
		&logbook.StepDecision{Verdict: "deny", Rule: `"no recursive deletes" (policy.toml:3)`, Reason: "recursive deletes need a person"}, nil)
	st.call("toolu_04", "Bash", `{"command":"go test -v ./widget"}`, "go test -v ./widget", nil,
		&logbook.StepResult{Output: s.Long, Duration: 2500 * time.Millisecond})
	st.call("toolu_05", "Bash", `{"command":"cat testdata/huge.txt"}`, "cat testdata/huge.txt", nil,
		&logbook.StepResult{Output: s.Huge, Duration: 15 * time.Millisecond})
	st.call("toolu_06", "Bash", `{"command":"go vet ./..."}`, "go vet ./...", nil,
		&logbook.StepResult{Output: "widget/init.go:7:2: unreachable code\nexit status 1\n", Failed: true, Duration: 800 * time.Millisecond})

	sub, err := h.Start(ctx, "general-purpose: Count the widget's lines", helm.OpenWaters, Claude,
		&helm.StartOptions{Parent: main.ID(), Session: "claude-code:" + session + "/a1f0c2d3e4b5a6978"})
	if err != nil {
		return nil, err
	}
	defer sub.Close()
	s.Sub = sub.ID()
	st.step(logbook.Step{Kind: logbook.StepSubagent, ID: "a1f0c2d3e4b5a6978", Text: "general-purpose", Voyage: sub.ID()})
	in := &stepper{ctx: ctx, v: sub, agent: "claude-code", session: session}
	in.step(logbook.Step{Kind: logbook.StepPrompt, ID: "a1f0c2d3e4b5a6978", Text: "Count the lines of widget/init.go."})
	in.call("toolu_11", "Read", `{"file_path":"widget/init.go"}`, "", nil,
		&logbook.StepResult{Output: "     1\tpackage widget\n     2\t\n     3\t// Init sets the widget up from its config.\n", Duration: 9 * time.Millisecond})
	in.step(logbook.Step{Kind: logbook.StepMessage, Text: "widget/init.go has 9 lines.",
		Usage: &logbook.Usage{Model: "claude-haiku-4-5", InputTokens: 800, OutputTokens: 40, CostUSD: 0.0012, Duration: 900 * time.Millisecond}})
	st.step(logbook.Step{Kind: logbook.StepSubagent, ID: "a1f0c2d3e4b5a6978", Text: "general-purpose", Voyage: sub.ID(),
		Result: &logbook.StepResult{Duration: 4 * time.Second}})
	st.step(logbook.Step{Kind: logbook.StepPermission, ID: "toolu_07", Tool: "WebFetch", Input: json.RawMessage(`{"url":"https://example.com/widgets"}`),
		Decision: &logbook.StepDecision{Verdict: "ask", Rule: `"fetches need a person" (policy.toml:12)`, Reason: "a person approves web fetches"}})
	st.step(logbook.Step{Kind: logbook.StepMessage, Text: "Init now checks its config for nil; the tests pass.",
		Usage: &logbook.Usage{Model: "claude-sonnet-4-5", InputTokens: 12000, OutputTokens: 850, CacheReadTokens: 40000, CacheWriteTokens: 3000,
			CostUSD: 0.0731, Duration: 6400 * time.Millisecond}})
	if st.err != nil || in.err != nil {
		return nil, fmt.Errorf("seed the agent session: %w", cmpErr(st.err, in.err))
	}
	for e, err := range main.Entries(ctx, nil) {
		if err != nil {
			return nil, err
		}
		if e.Step != nil && e.Step.Result != nil && e.Step.Result.Artifact != "" {
			switch e.Step.ID {
			case "toolu_04":
				s.LongArtifact = e.Step.Result.Artifact
			case "toolu_05":
				s.HugeArtifact = e.Step.Result.Artifact
			}
		}
	}

	hostile, err := h.Start(ctx, "A session whose agent writes markup", helm.OpenWaters, Claude,
		&helm.StartOptions{Session: "claude-code:6e0e0000-0000-4000-8000-000000000001"})
	if err != nil {
		return nil, err
	}
	defer hostile.Close()
	s.Hostile = hostile.ID()
	hs := &stepper{ctx: ctx, v: hostile, agent: "claude-code", session: "6e0e0000-0000-4000-8000-000000000001"}
	hs.step(logbook.Step{Kind: logbook.StepPrompt, Text: XSS + "\n<img src=x onerror=alert(2)>"})
	hs.call("toolu_x1", "Bash", `{"command":"echo '<script>alert(1)</script>'"}`, "echo '"+XSS+"'", nil,
		&logbook.StepResult{Output: XSS + "\n<iframe src=javascript:alert(3)></iframe>\n", Duration: time.Millisecond})
	hs.call("toolu_x2", "Edit", `{"file_path":"<script>alert(1)</script>.html"}`, "--- a/x.html\n+++ b/x.html\n@@ -1 +1 @@\n-<p>hi</p>\n+"+XSS+"\n", nil,
		&logbook.StepResult{Output: "ok"})
	hs.call("toolu_x3", "Bash", `{"command":"rm -rf /"}`, "rm -rf / "+XSS,
		&logbook.StepDecision{Verdict: "deny", Rule: XSS, Reason: "<b onmouseover=alert(4)>no</b>"}, nil)
	hs.call("toolu_x4", "Bash", `{"command":"yes"}`, "yes '<script>alert(1)</script>'", nil,
		&logbook.StepResult{Output: strings.Repeat(XSS+"\n", 400), Failed: true})
	hs.step(logbook.Step{Kind: logbook.StepSubagent, Text: XSS, Voyage: `javascript:alert(5)`})
	hs.step(logbook.Step{Kind: logbook.StepMessage, Text: "done", Usage: &logbook.Usage{Model: XSS, InputTokens: 1}})
	if hs.err != nil {
		return nil, fmt.Errorf("seed the hostile session: %w", hs.err)
	}
	return s, nil
}

func cmpErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// stepper records an agent's steps on a voyage, keeping the first error.
type stepper struct {
	ctx            context.Context
	v              *helm.Voyage
	agent, session string
	err            error
}

func (s *stepper) step(st logbook.Step) {
	if s.err != nil {
		return
	}
	st.Agent, st.Session = s.agent, s.session
	_, s.err = s.v.Step(s.ctx, st, Claude)
}

// call records a tool call (its pre-tool step, with decision) and, when
// result is set, its result (the post-tool step).
func (s *stepper) call(id, tool, input, text string, d *logbook.StepDecision, result *logbook.StepResult) {
	s.step(logbook.Step{Kind: logbook.StepTool, ID: id, Tool: tool, Input: json.RawMessage(input), Text: text, Decision: d})
	if result != nil {
		s.step(logbook.Step{Kind: logbook.StepTool, ID: id, Tool: tool, Result: result})
	}
}
