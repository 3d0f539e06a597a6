package helm

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
)

var stepWho = logbook.Who{Identity: "ann", Role: "coder", Method: "claude-code"}

// stepVoyage starts a voyage of a Claude Code session in a home of its
// own, with a snapshot every snapEvery events (0: the default).
func stepVoyage(t *testing.T, snapEvery uint64) (*Home, *Voyage) {
	t.Helper()
	h, err := Open(t.TempDir(), &Options{NoSync: true, snapshotEvery: snapEvery})
	require.NoError(t, err)
	v, err := h.Start(context.Background(), "claude-code session s-1", OpenWaters, stepWho, &StartOptions{Session: "claude-code:s-1"})
	require.NoError(t, err)
	t.Cleanup(func() { v.Close() })
	return h, v
}

// ccStep is a step of Claude Code's session s-1.
func ccStep(kind logbook.StepKind, mod func(*logbook.Step)) logbook.Step {
	s := logbook.Step{Kind: kind, Agent: "claude-code", Session: "s-1"}
	if mod != nil {
		mod(&s)
	}
	return s
}

func bashCall(id, command string) logbook.Step {
	return ccStep(logbook.StepTool, func(s *logbook.Step) {
		s.ID, s.Tool, s.Text = id, "Bash", command
		s.Input, _ = json.Marshal(map[string]string{"command": command})
	})
}

func TestStepRecordsEachKind(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		step logbook.Step
	}{
		{"prompt", ccStep(logbook.StepPrompt, func(s *logbook.Step) { s.ID, s.Text = "p1", "fix the test" })},
		{"tool call with its decision", ccStep(logbook.StepTool, func(s *logbook.Step) {
			s.ID, s.Tool, s.Text = "t1", "Bash", "rm -r -f build"
			s.Input = json.RawMessage(`{"command":"rm -r -f build"}`)
			s.Decision = &logbook.StepDecision{Verdict: "deny", Rule: `"no rm -rf" (policy.toml:3)`, Reason: "recursive deletes need a person"}
		})},
		{"tool call run and answered at once", ccStep(logbook.StepTool, func(s *logbook.Step) {
			s.Tool, s.Text = "Read", "README.md"
			s.Result = &logbook.StepResult{Output: "# helm", Duration: time.Millisecond}
		})},
		{"permission", ccStep(logbook.StepPermission, func(s *logbook.Step) {
			s.ID, s.Tool, s.Text = "t2", "Bash", "git push"
			s.Decision = &logbook.StepDecision{Verdict: "ask"}
		})},
		{"notification", ccStep(logbook.StepNotification, func(s *logbook.Step) { s.Text = "Claude needs your permission" })},
		{"compaction", ccStep(logbook.StepCompaction, func(s *logbook.Step) { s.Text = "auto" })},
		{"subagent", ccStep(logbook.StepSubagent, func(s *logbook.Step) { s.Text, s.Voyage = "Explore", "1a2b3c4d" })},
		{"message with usage", ccStep(logbook.StepMessage, func(s *logbook.Step) {
			s.Text = "Done."
			s.Usage = &logbook.Usage{Model: "claude-sonnet-4", InputTokens: 1200, OutputTokens: 300, CacheReadTokens: 5000, CacheWriteTokens: 20, CostUSD: 0.0123, Duration: 2 * time.Second}
		})},
		{"session", ccStep(logbook.StepSession, func(s *logbook.Step) { s.Text = "startup" })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			_, v := stepVoyage(t, 0)
			before := v.Info().Counts.Entries
			e, err := v.Step(ctx, tt.step, stepWho)
			require.NoError(t, err)
			assert.Equal(t, logbook.EntryStep, e.Kind)
			assert.Equal(t, before+1, e.N)
			assert.Equal(t, stepWho, e.Who)
			require.NotNil(t, e.Step)
			assert.Equal(t, tt.step, *e.Step)
			assert.Equal(t, 1, v.Info().Counts.Steps)
			var got []logbook.Entry
			for en, err := range v.Entries(ctx, nil) {
				require.NoError(t, err)
				got = append(got, en)
			}
			assert.Equal(t, []logbook.Entry{e}, got)
		})
	}
}

// TestStepResultAttachesToItsCall: the result of a tool call lands on the
// call's entry: one entry, its number kept, its usage summed.
func TestStepResultAttachesToItsCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, v := stepVoyage(t, 0)
	call := bashCall("toolu_1", "go test ./...")
	call.Decision = &logbook.StepDecision{Verdict: "allow"}
	call.Usage = &logbook.Usage{Model: "m", InputTokens: 10}
	first, err := v.Step(ctx, call, stepWho)
	require.NoError(t, err)
	require.Nil(t, first.Step.Result)
	_, err = v.Step(ctx, bashCall("toolu_2", "ls"), stepWho)
	require.NoError(t, err)

	done := ccStep(logbook.StepTool, func(s *logbook.Step) {
		s.ID = "toolu_1"
		s.Result = &logbook.StepResult{Output: "ok", Failed: true, Duration: time.Second}
		s.Usage = &logbook.Usage{Model: "m", OutputTokens: 4}
	})
	got, err := v.Step(ctx, done, stepWho)
	require.NoError(t, err)
	assert.Equal(t, first.N, got.N, "the call's entry")
	assert.Equal(t, first.Seq, got.Seq)
	assert.Equal(t, "go test ./...", got.Step.Text, "the call as it was recorded")
	assert.Equal(t, call.Decision, got.Step.Decision)
	assert.Equal(t, &logbook.StepResult{Output: "ok", Failed: true, Duration: time.Second}, got.Step.Result)
	assert.Equal(t, &logbook.Usage{Model: "m", InputTokens: 10, OutputTokens: 4}, got.Step.Usage)
	c := v.Info().Counts
	assert.Equal(t, 2, c.Entries, "no entry of its own")
	assert.Equal(t, 2, c.Steps)
}

// TestStepResultWithoutItsCallIsANewEntry: a result no waiting call of
// the same agent, session and id takes is a step of its own.
func TestStepResultWithoutItsCallIsANewEntry(t *testing.T) {
	t.Parallel()
	result := func(id, session string) logbook.Step {
		s := bashCall(id, "ls")
		s.Session = session
		s.Result = &logbook.StepResult{Output: "a b"}
		return s
	}
	tests := []struct {
		name   string
		before []logbook.Step
		step   logbook.Step
	}{
		{"no call at all", nil, result("toolu_9", "s-1")},
		{"a call of another session", []logbook.Step{bashCall("toolu_1", "ls")}, result("toolu_1", "s-2")},
		{"a call of another id", []logbook.Step{bashCall("toolu_1", "ls")}, result("toolu_2", "s-1")},
		{"a call finished already", []logbook.Step{bashCall("toolu_1", "ls"), result("toolu_1", "s-1")}, result("toolu_1", "s-1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			_, v := stepVoyage(t, 0)
			for _, s := range tt.before {
				_, err := v.Step(ctx, s, stepWho)
				require.NoError(t, err)
			}
			n := v.Info().Counts.Entries
			e, err := v.Step(ctx, tt.step, stepWho)
			require.NoError(t, err)
			assert.Equal(t, n+1, e.N, "a new entry")
			assert.Equal(t, tt.step.Result, e.Step.Result)
		})
	}
}

// segmentBytes returns the bytes of every file of the voyage's event log.
func segmentBytes(t *testing.T, v *Voyage) []byte {
	t.Helper()
	var all []byte
	err := filepath.WalkDir(filepath.Join(v.Storage().Dir, "events"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		all = append(all, data...)
		return err
	})
	require.NoError(t, err)
	return all
}

// TestStepRedactsEverySecret: the agent's secrets in a prompt, in a tool's
// input (a JSON string value), in its output and in a long output stowed
// as an artifact never reach the log or the artifact; the text around
// them does.
func TestStepRedactsEverySecret(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	_, v := stepVoyage(t, 0)
	prompt := ccStep(logbook.StepPrompt, func(s *logbook.Step) { s.Text = "use the token " + secret + " canary-prompt" })
	call := bashCall("toolu_1", "curl -s https://api.github.com")
	call.Input = json.RawMessage(`{"command":"curl -H 'Authorization: token ` + secret + `' https://api.github.com","description":"canary-input"}`)
	short := call
	short.Result = &logbook.StepResult{Output: "echoed " + secret + " canary-output"}
	longCall := bashCall("toolu_2", "env")
	longOut := strings.Repeat("line of output canary-long\n", 400) + "GITHUB_TOKEN=" + secret + "\n" + strings.Repeat("tail\n", 100)
	require.Greater(t, len(longOut), stepOutputInline)
	longDone := longCall
	longDone.Result = &logbook.StepResult{Output: longOut}

	var entries []logbook.Entry
	for _, s := range []logbook.Step{prompt, call, short, longCall, longDone} {
		e, err := v.Step(ctx, s, stepWho)
		require.NoError(t, err)
		entries = append(entries, e)
	}
	assert.NotContains(t, call.Input, "[REDACTED", "the caller's step is left as it was")

	raw := segmentBytes(t, v)
	for _, canary := range []string{"canary-prompt", "canary-input", "canary-output", "canary-long"} {
		assert.Contains(t, string(raw), canary, "the log holds the text around the secrets")
	}
	assert.NotContains(t, string(raw), secret, "no segment holds the secret")
	assert.NotContains(t, string(raw), secret[:20], "nor a part of it")

	for _, e := range entries {
		data, err := json.Marshal(e)
		require.NoError(t, err)
		assert.NotContains(t, string(data), secret)
	}
	var input map[string]string
	require.NoError(t, json.Unmarshal(entries[1].Step.Input, &input), "the input is JSON still")
	assert.Contains(t, input["command"], "[REDACTED:")

	long := entries[4].Step.Result
	require.NotEmpty(t, long.Artifact, "a long output is stowed")
	assert.LessOrEqual(t, len(long.Output), stepOutputHead)
	assert.True(t, strings.HasPrefix(longOut, long.Output), "the step keeps its head")
	r, err := v.OpenArtifact(ctx, long.Artifact)
	require.NoError(t, err)
	stowed, err := io.ReadAll(r)
	require.NoError(t, r.Close())
	require.NoError(t, err)
	assert.Contains(t, string(stowed), "canary-long")
	assert.Contains(t, string(stowed), "GITHUB_TOKEN=[REDACTED:")
	assert.NotContains(t, string(stowed), secret, "the artifact holds the redacted output")
	assert.Equal(t, strings.Count(longOut, "\n"), strings.Count(string(stowed), "\n"), "the whole output, as text")
}

// TestStepValidationRecordsNothing: a step helm cannot record says why
// (ErrInvalid, ErrMissingWho) and leaves the voyage as it was.
func TestStepValidationRecordsNothing(t *testing.T) {
	t.Parallel()
	ok := bashCall("toolu_1", "ls")
	with := func(mod func(*logbook.Step)) logbook.Step {
		s := ok
		s.Input = append(json.RawMessage(nil), ok.Input...)
		mod(&s)
		return s
	}
	long := strings.Repeat("x", stepOutputInline+1)
	tests := []struct {
		name string
		step logbook.Step
		who  logbook.Who
		want error
	}{
		{"unknown kind", with(func(s *logbook.Step) { s.Kind = "telepathy" }), stepWho, ErrInvalid},
		{"no agent", with(func(s *logbook.Step) { s.Agent = " " }), stepWho, ErrInvalid},
		{"text not UTF-8", with(func(s *logbook.Step) { s.Text = "caf\xe9" }), stepWho, ErrInvalid},
		{"output not UTF-8", with(func(s *logbook.Step) { s.Result = &logbook.StepResult{Output: "\xff"} }), stepWho, ErrInvalid},
		{"long output not UTF-8", with(func(s *logbook.Step) { s.Result = &logbook.StepResult{Output: long + "\xff"} }), stepWho, ErrInvalid},
		{"input not JSON", with(func(s *logbook.Step) { s.Input = json.RawMessage(`{"command":`) }), stepWho, ErrInvalid},
		{"unknown verdict", with(func(s *logbook.Step) { s.Decision = &logbook.StepDecision{Verdict: "maybe"} }), stepWho, ErrInvalid},
		{"an artifact of its own", with(func(s *logbook.Step) {
			s.Result = &logbook.StepResult{Artifact: strings.Repeat("ab", 32)}
		}), stepWho, ErrInvalid},
		{"negative tokens", with(func(s *logbook.Step) { s.Usage = &logbook.Usage{OutputTokens: -1} }), stepWho, ErrInvalid},
		{"cost not a number", with(func(s *logbook.Step) { s.Usage = &logbook.Usage{CostUSD: math.NaN()} }), stepWho, ErrInvalid},
		{"negative duration", with(func(s *logbook.Step) { s.Result = &logbook.StepResult{Duration: -time.Second} }), stepWho, ErrInvalid},
		{"no role", ok, logbook.Who{Identity: "ann", Method: "claude-code"}, ErrMissingWho},
		{"who not UTF-8", ok, logbook.Who{Identity: "ann", Role: "c\xff", Method: "m"}, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			_, v := stepVoyage(t, 0)
			before := v.Info()
			logBefore := segmentBytes(t, v)
			_, err := v.Step(ctx, tt.step, tt.who)
			require.ErrorIs(t, err, tt.want)
			var ve *VoyageError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, v.ID(), ve.Voyage, "the error names the voyage")
			assert.Equal(t, before, v.Info(), "nothing recorded")
			assert.Equal(t, logBefore, segmentBytes(t, v), "the log is as it was")
		})
	}
}

// TestStepRefusedUnlessActive: a completed voyage takes no step, a paused
// one none until it is resumed, as for a note.
func TestStepRefusedUnlessActive(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		outcome logbook.Outcome
		want    error
	}{
		{"completed", logbook.OutcomeCompleted, ErrVoyageCompleted},
		{"partial", logbook.OutcomePartial, ErrVoyagePaused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			_, v := stepVoyage(t, 0)
			_, err := v.Step(ctx, bashCall("toolu_1", "ls"), stepWho)
			require.NoError(t, err)
			require.NoError(t, v.Complete(ctx, tt.outcome, "session ended", stepWho))
			before := v.Info()
			done := bashCall("toolu_1", "ls")
			done.Result = &logbook.StepResult{Output: "x"}
			for _, s := range []logbook.Step{ccStep(logbook.StepPrompt, func(s *logbook.Step) { s.Text = "more" }), done} {
				_, err = v.Step(ctx, s, stepWho)
				assert.ErrorIs(t, err, tt.want)
			}
			assert.Equal(t, before, v.Info())
		})
	}
}

// TestVoyageWithStepsReopens: a voyage of steps opens from its snapshot
// to the entries its events fold to from the first, also when a call
// recorded before the snapshot gets its result after it (the snapshot's
// entries are read for it), and the session it records stays its.
func TestVoyageWithStepsReopens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, v := stepVoyage(t, 3)
	steps := []logbook.Step{
		ccStep(logbook.StepSession, func(s *logbook.Step) { s.Text = "startup" }),
		ccStep(logbook.StepPrompt, func(s *logbook.Step) { s.Text = "run the tests" }),
		bashCall("toolu_1", "go test ./..."),
		bashCall("toolu_2", "go vet ./..."),
	}
	for _, s := range steps {
		_, err := v.Step(ctx, s, stepWho)
		require.NoError(t, err)
	}
	require.NoError(t, v.Close())

	again, err := h.Voyage(ctx, v.ID())
	require.NoError(t, err)
	defer again.Close()
	require.NotZero(t, again.snapSeq, "opened from a snapshot")
	require.NotZero(t, again.st.Pending()&projection.SectionEntries, "its entries unread")
	done := bashCall("toolu_1", "")
	done.Result = &logbook.StepResult{Output: "ok", Duration: time.Second}
	e, err := again.Step(ctx, done, stepWho)
	require.NoError(t, err)
	assert.Equal(t, 3, e.N, "the call recorded before the snapshot")
	assert.Equal(t, "go test ./...", e.Step.Text)
	assert.Equal(t, "claude-code:s-1", again.Info().Session)

	var st projection.State
	for ev, err := range again.Events(ctx, 1) {
		require.NoError(t, err)
		require.NoError(t, st.Apply(ev.Seq, &ev))
	}
	folded := logbook.Clone(st.Entries)
	assert.Equal(t, folded, entriesOf(t, again), "the snapshot's views are the fold's")
	assert.Equal(t, 4, len(folded))
	require.NotNil(t, folded[2].Step.Result)
	assert.Nil(t, folded[3].Step.Result)
	list, err := h.List(ctx, nil)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "claude-code:s-1", list[0].Session, "a listing names the session")
}

// TestStartRefusesASessionThatIsNotText: the session key is text like
// every other field of the start.
func TestStartRefusesASessionThatIsNotText(t *testing.T) {
	t.Parallel()
	h, err := Open(t.TempDir(), &Options{NoSync: true})
	require.NoError(t, err)
	_, err = h.Start(context.Background(), "x", OpenWaters, stepWho, &StartOptions{Session: "claude-code:\xff"})
	assert.ErrorIs(t, err, ErrInvalid)
	list, err := h.List(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, list)
}
