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
//	decision  allow, deny or confirm (required)
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
// The guard decides what helm does. It cannot stop what is done behind
// helm's back (git and gh run directly), nor a policy file edited by
// whoever can write it: the voyage records the Digest of the policy each
// of its changes ran under, so a change of rules shows in its story.
package policy
