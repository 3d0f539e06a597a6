// Package policy reads guard rules and decides, for one action or command
// about to run, whether it is allowed, denied, or held until a person
// confirms it. It knows nothing of voyages: the caller describes what is
// about to happen as a Request (who, which action, on which repository
// and branch, with which arguments) and acts on the Verdict.
//
// A policy is a TOML file of ordered [[rule]] tables:
//
//	[[rule]]
//	name = "agents may not merge"
//	action = "merge-pull-request"
//	actor = "agent"
//	decision = "deny"
//
//	[[rule]]
//	name = "merges need a person's yes"
//	action = "merge-pull-request"
//	decision = "confirm"
//
// The first rule whose every given field matches decides; when no rule
// matches, the request is allowed. A rule's fields:
//
//	name      shown in messages; a rule without one is called "rule N (line L)"
//	decision  allow, deny or confirm (required); ask, block: see tool calls below
//	action    the action kind: merge-pull-request, push, ...; observe-command for commands
//	identity  who acts
//	role      the role they act in
//	method    how they act (human, or the agent's method)
//	actor     agent or human: human when the method is human, else agent
//	repo      the repository, OWNER/NAME
//	branch    the branch acted on, resolved (the one checked out when none was named)
//	args      the action's arguments (or the command's words) joined by single spaces
//	ref       the full name of a ref a push updates on the remote (refs/heads/main, refs/tags/v1)
//	force     true or false (not a glob): the ref update is a forced one
//	delete    true or false (not a glob): the ref update deletes the ref
//	status    the status of the voyage acted on (jettison, reduce): a glob, or
//	          open (active, blocked, partial) or closed (completed, failed, cancelled)
//
// Every field but name and decision is a glob matched against the whole
// value, case-sensitively (repo excepted: GitHub's names are
// case-insensitive, so octo/prod matches OCTO/Prod): * matches any run of characters (slashes and
// spaces included), ? one character, [abc] or [a-z] one character of a
// class and [!a-z] one outside it, and a backslash makes the next
// character literal (\*). A field left out (or empty) matches anything, so
// a rule with none matches every request. Because matching is anchored,
// `branch = "main"` does not match main-next, and `args = "*rm -rf*"`
// needs its stars to catch rm -rf anywhere in a command line.
//
// Parse rejects what it does not understand rather than ignore it: an
// unknown field or table, a missing or unknown decision, an actor that can
// match neither agent nor human, a malformed glob. Its errors name the
// file and line (see Error).
//
// A push is checked once for every repository its remote names (the URL
// and push URL as configured, and as git rewrites them) and every ref it
// would update, as git resolves them: a rule that matches any one of them
// decides (deny wins), so `branch = "main"` catches +main, heads/main,
// HEAD:main and :main alike. The caller resolves those facts (package
// actions asks git); CheckAll takes the requests and returns the
// strictest verdict. Stack puts a system policy under a home's: the
// strictest of the two decides, so the home's cannot loosen it.
//
// Tool calls. A coding agent's host (Claude Code, Gemini CLI) asks helm,
// through its hooks, whether a tool call may run, and whether the agent
// may stop; the same [[rule]] list decides. A rule with any of these
// fields is a tool-call rule: it decides tool calls (and gates) only,
// and a rule with none of them decides actions only, so a policy written
// for actions keeps its meaning:
//
//	tool      the tool's name, a glob with | between alternatives: "Bash", "Edit|Write", "mcp__*"
//	command   a command and flags, "rm -rf", "git push --force": see MatchCommand
//	path      a path the call touches (absolute, cleaned, symlinks resolved), a glob, or "outside-project"
//	host      a host the call fetches from, a glob, case folded: "*.example.com"
//	event     tool (the default: a call about to run, and a permission request for one),
//	          permission (permission requests only), stop or subagent-stop (gates)
//	until     a gate's condition: bearing-since-edit, or tests-pass with command = "go test"
//	reason    what the agent is shown when the rule denies, asks or holds it (any rule)
//
// identity, role, method and actor match tool calls too; action, repo,
// branch, args, ref, force and delete are an action's and Parse rejects
// them on a tool-call rule. A tool call's decision is allow, deny or ask
// (a person decides in the host); confirm on a tool-call rule means ask,
// and ask on an action rule means confirm. A gate's decision is block.
//
// A command pattern matches every command a shell call runs, whatever
// the spelling: rm -rf matches rm -r -f, rm -fr, /bin/rm --recursive
// --force, and the same inside sh -c, pipelines and lists (the caller
// parses the script; see UnknownCommand). What the caller could not know
// before it runs — a command name from a variable, a flag from one, a
// path or host from one — matches every rule that denies or asks, and no
// rule that allows: the guard fails closed. A call makes one request per
// command, path and host (CheckAll): a rule allows the call only when
// rules allowed every one of them, and any deny denies it.
//
// Gates (Gates) all apply, not the first alone: each holds an agent that
// wants to stop until its condition holds over the voyage.
//
// helm's built-in rules (Defaults) hold that an agent may not jettison or
// reduce the evidence of a closed voyage. WithDefaults puts them under a
// policy: a rule of a system policy (System: one the recorded agent
// cannot change) is tried before them and may loosen them; any other
// policy is stacked over them and can only tighten them.
//
// The guard decides what helm does. It cannot stop what is done behind
// helm's back (git and gh run directly), nor a policy file edited by
// whoever can write it: the voyage records the Digest of the policy each
// of its changes ran under, so a change of rules shows in its story.
package policy
