package integration

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The scripted session every Claude Code test runs: a prompt; Bash ls;
// Read a file; Edit it; Write a new one; a subagent that runs one Bash;
// a Bash rm -r -f the guard denies; a final text; then the session
// resumed with a second prompt. The tool_use ids are fixed, so payloads
// and transcripts carry the same ids every run.

// The session's id: given with --session-id, so the transcript's file
// name and every payload's session_id are the same every run.
const scriptSessionID = "4d1e6f2a-0b7c-4c39-9a52-6f0e2d8b1c11"

const (
	scriptPrompt       = "Tidy the notes: mark them final, write a summary, have a helper count the lines, and clear out the victim directory."
	scriptResumePrompt = "What did you change?"
	// The denied command: rm with its flags apart, as an agent may
	// spell it to slip past a text match.
	scriptDeniedCommand = "rm -r -f victim"
	scriptDenyReason    = "helm guard: rm -rf is denied in this project (rule no-rm-rf)"
	scriptFinalText     = "Done: notes.md is final, summary.md written, notes.md has 3 lines; removing victim/ was denied."
	scriptResumeText    = "I marked notes.md final and wrote summary.md; victim/ is untouched."
	scriptSubagentText  = "notes.md has 3 lines."

	idLs       = "toolu_01HarnessBashLs0000000"
	idRead     = "toolu_02HarnessReadNotes000"
	idEdit     = "toolu_03HarnessEditNotes000"
	idWrite    = "toolu_04HarnessWriteSummary"
	idAgent    = "toolu_05HarnessAgentCount00"
	idSubWc    = "toolu_06HarnessSubBashWc000"
	idRm       = "toolu_07HarnessBashRmVictim"
	notesDraft = "# Notes\nstatus: draft\nowner: helm\n"
	notesFinal = "# Notes\nstatus: final\nowner: helm\n"
	summary    = "# Summary\nThe notes are final.\n"
)

// seedProject writes the files the script works on: notes.md, and
// victim/ with a file the denied rm would remove.
func seedProject(t *testing.T, project string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(project, "notes.md"), []byte(notesDraft), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(project, "victim"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(project, "victim", "keep.txt"), []byte("must survive\n"), 0o644))
}

// sessionScript is the model's side of the session in project.
func sessionScript(project string) []modelTurn {
	notes := filepath.Join(project, "notes.md")
	return []modelTurn{
		{Role: roleMain, Text: "Let me look around first.", Tools: []toolUse{{ID: idLs, Name: "Bash", Input: map[string]any{"command": "ls", "description": "List the project's files"}}}},
		{Role: roleMain, Tools: []toolUse{{ID: idRead, Name: "Read", Input: map[string]any{"file_path": notes}}}},
		{Role: roleMain, Tools: []toolUse{{ID: idEdit, Name: "Edit", Input: map[string]any{"file_path": notes, "old_string": "status: draft", "new_string": "status: final"}}}},
		{Role: roleMain, Tools: []toolUse{{ID: idWrite, Name: "Write", Input: map[string]any{"file_path": filepath.Join(project, "summary.md"), "content": summary}}}},
		{Role: roleMain, Tools: []toolUse{{ID: idAgent, Name: "Agent", Input: map[string]any{
			"description": "Count the notes' lines", "prompt": "Count the lines of notes.md and say how many.", "subagent_type": "general-purpose",
			// In the foreground: 2.1.332 runs subagents in the background by
			// default, and the parent's next turn would race the subagent's.
			"run_in_background": false}}}},
		{Role: roleSubagent, Tools: []toolUse{{ID: idSubWc, Name: "Bash", Input: map[string]any{"command": "wc -l notes.md", "description": "Count the lines of notes.md"}}}},
		{Role: roleSubagent, Text: scriptSubagentText},
		{Role: roleMain, Tools: []toolUse{{ID: idRm, Name: "Bash", Input: map[string]any{"command": scriptDeniedCommand, "description": "Remove the victim directory"}}}},
		{Role: roleMain, Text: scriptFinalText},
		// The resumed session's one turn.
		{Role: roleMain, Text: scriptResumeText},
	}
}

// scriptedSession is one run of the script: the session and the results
// of its two claude -p runs.
type scriptedSession struct {
	*claudeSession
	first, resumed claudeResult
	// elapsed is the wall time of both runs.
	elapsed time.Duration
}

// runScriptedSession runs the script in a new project whose hooks
// install writes (before the first run), then checks what every run of
// it must show whatever the hooks record: each scripted turn served and
// nothing else asked of the model; the files as the tools left them, the
// victim surviving the denied rm; the denial in Claude Code's own
// permission_denials and in the tool_result the model was sent; the
// resume kept the session's id.
//
// denyReason is what the model must be told of the denial (a part of
// the guard's reason).
func runScriptedSession(t *testing.T, program, denyReason string, install func(s *claudeSession)) *scriptedSession {
	t.Helper()
	s := &scriptedSession{claudeSession: newClaudeSession(t, program, sessionScript)}
	seedProject(t, s.project)
	install(s.claudeSession)

	start := time.Now()
	s.first = s.run(scriptPrompt, "--session-id", scriptSessionID)
	// --resume with the session's id continues it under the same id
	// (2.1.332 also has --continue: the directory's latest session).
	s.resumed = s.run(scriptResumePrompt, "--resume", scriptSessionID)
	s.elapsed = time.Since(start)
	t.Logf("the scripted session (two claude -p runs) took %s", s.elapsed.Round(time.Millisecond))

	assert.Empty(t, s.egress.Seen(), "Claude Code tried no traffic beyond the model stand-in")
	left, problems := s.model.Unserved()
	require.Empty(t, problems, "the stand-in served every request from the script")
	require.Empty(t, left, "every scripted turn was asked for")

	assert.Equal(t, scriptSessionID, s.first.SessionID)
	assert.Equal(t, scriptFinalText, s.first.Result)
	assert.Equal(t, scriptSessionID, s.resumed.SessionID, "the resumed run continues the same session")
	assert.Equal(t, scriptResumeText, s.resumed.Result)

	notes, err := os.ReadFile(filepath.Join(s.project, "notes.md"))
	require.NoError(t, err)
	assert.Equal(t, notesFinal, string(notes), "Edit ran")
	written, err := os.ReadFile(filepath.Join(s.project, "summary.md"))
	require.NoError(t, err)
	assert.Equal(t, summary, string(written), "Write ran")
	assert.FileExists(t, filepath.Join(s.project, "victim", "keep.txt"), "the denied rm -r -f did not run")

	require.Len(t, s.first.PermissionDenials, 1, "Claude Code lists the denied call: %s", s.first.Raw)
	denial := s.first.PermissionDenials[0]
	assert.Equal(t, "Bash", denial.ToolName)
	assert.Equal(t, idRm, denial.ToolUseID)
	assert.Equal(t, scriptDeniedCommand, denial.ToolInput["command"])

	// The model was told: the request after the denied call carries its
	// tool_result as an error with the reason.
	var told bool
	for _, r := range s.model.Requests() {
		if b, ok := r.toolResult(idRm); ok {
			told = true
			assert.True(t, b.IsError, "the denied call's tool_result is an error")
			assert.Contains(t, b.text(), denyReason, "the model is told why")
		}
	}
	assert.True(t, told, "a request carried the denied call's tool_result")

	// The subagent's Bash came between the parent's requests, from the
	// subagent, and its result went back to the subagent only.
	var subResults int
	for _, r := range s.model.Requests() {
		if _, ok := r.toolResult(idSubWc); ok {
			assert.Equal(t, roleSubagent, r.Role, "only the subagent is sent its own tool's result")
			subResults++
		}
	}
	assert.Equal(t, 1, subResults, "the subagent's next request carried its Bash result")
	return s
}
