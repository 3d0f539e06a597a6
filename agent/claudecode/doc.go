// Package claudecode is helm's adapter for Claude Code's hooks: it reads
// a hook payload (JSON on the hook's standard input) into an
// agent.Event, writes a guard's Decision back as Claude Code's own
// output, turns an event into the logbook.Step a person reads, and adds
// helm's hooks to a settings.json (and finds and removes them).
//
// Built against Claude Code 2.1.332 (the version that runs here, from
// npm) and its hooks reference, https://code.claude.com/docs/en/hooks,
// as published in 2026: the common input fields (session_id,
// transcript_path, cwd, permission_mode, hook_event_name, and agent_id
// and agent_type on a hook fired inside a subagent), each event's own
// fields, the hookSpecificOutput of PreToolUse (permissionDecision) and
// PermissionRequest (decision.behavior), the decision "block" of Stop
// and SubagentStop, and systemMessage. PostToolUseFailure (error,
// is_interrupt) and PermissionDenied (reason; since 2.1.88) are read as
// that reference and its changelog describe them. The golden payloads
// in testdata/ follow those schemas; what the hooks of 2.1.332 were seen
// to send offline is in the project's notes.
//
// Events helm does not record (PostCompact, StopFailure, TaskCreated,
// ConfigChange, ...) are not installed, and Parse refuses them by name.
package claudecode

// Agent is the host's name in events and steps, and the word after
// "hook" in helm's hook command.
const Agent = "claude-code"
