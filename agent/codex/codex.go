// Package codex is helm's reader of Codex CLI's session logs: the rollout
// files Codex writes under ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl,
// read after the fact into the events of helm's agent model (Codex CLI
// has no hooks helm installs).
//
// Built against the rollout format of Codex CLI 0.46 to 0.65 (late
// 2025), as openai/codex defines it in codex-rs/protocol: each line
// {timestamp, type, payload} with type session_meta (the session's id,
// cwd, cli_version), turn_context (the model), response_item (a
// ResponseItem: message, reasoning, function_call with its arguments as
// a JSON string, function_call_output, custom_tool_call and its output,
// local_shell_call, web_search_call), event_msg (user_message,
// agent_message, token_count with info.last_token_usage and
// info.total_token_usage) and compacted. The goldens in testdata follow
// that format (testdata/README.md).
package codex

// Agent is the host's name in events and steps.
const Agent = "codex"
