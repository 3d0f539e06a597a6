// Package gemini is helm's adapter for Gemini CLI's hooks: it reads a
// hook payload into an agent.Event, writes a guard's Decision back as
// Gemini CLI's output, turns an event into the logbook.Step a person
// reads, and adds helm's hooks to .gemini/settings.json.
//
// Built against Gemini CLI's hooks reference, docs/hooks/reference.md
// and docs/hooks/index.md of google-gemini/gemini-cli as of commit
// b45b149 (early 2026; https://geminicli.com/docs/hooks/reference): the
// base input (session_id, transcript_path, cwd, hook_event_name,
// timestamp), each event's fields, and the common output (decision
// "allow" or "deny" with reason, systemMessage). The "ask" decision of
// BeforeTool is from the reference's later revision. Hook timeouts are
// in milliseconds there. No Gemini CLI binary runs here: the golden
// payloads in testdata/ follow the documented schemas.
//
// The model hooks (BeforeModel, AfterModel, BeforeToolSelection) fire
// for every model request or streamed chunk and carry the whole request;
// helm does not install them, and Parse refuses them by name.
package gemini

// Agent is the host's name in events and steps, and the word after
// "hook" in helm's hook command.
const Agent = "gemini-cli"
