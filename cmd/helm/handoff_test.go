package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/internal/ghtest"
	"github.com/helmlog/helm/logbook"
)

// showVoyage reads helm voyage show --json's voyage.
func showVoyage(t *testing.T, h *harness, args ...string) helm.VoyageInfo {
	t.Helper()
	var s struct {
		Voyage helm.VoyageInfo `json:"voyage"`
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok(append(args, "voyage", "show", "--json")...)), &s))
	return s.Voyage
}

// logEntries reads helm log --json's entries.
func logEntries(t *testing.T, h *harness) []logbook.Entry {
	t.Helper()
	var doc struct {
		Entries []logbook.Entry `json:"entries"`
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok("log", "--json")), &doc))
	return doc.Entries
}

// tokensSeen lists the distinct tokens the stand-in's requests carried.
func tokensSeen(srv *ghtest.Server) map[string]bool {
	seen := map[string]bool{}
	for _, r := range srv.Requests() {
		seen[r.Token] = true
	}
	return seen
}

// Credentials follow the voyage's identity: after a handoff from alice
// to bob, an action recorded without --as is bob's, made with bob's gh
// configuration (the real gh, against the loopback stand-in); one
// recorded --as alice afterwards is alice's, with alice's token, and
// says so. No request carries another identity's token.
func TestHandoffActionsRunWithTheNewIdentitysGHConfig(t *testing.T) {
	t.Parallel()
	srv := ghtest.NewServer(t)
	srv.AddRepo("octo/widgets", "main")
	issue := srv.AddIssue("octo/widgets", ghtest.Issue{Title: "crash"})
	srv.AddToken("alice-token-1", "alice")
	srv.AddToken("bob-token-2", "bob")
	h := newHarness(t)
	h.ExtraEnv = srv.HostEnv()
	h.Env["HELM_ROLE"], h.Env["HELM_METHOD"] = "coder", "human"
	for _, who := range []struct{ id, token string }{{"alice", "alice-token-1"}, {"bob", "bob-token-2"}} {
		h.Stdin = who.token + "\n"
		h.ok("auth", "login", "--as", who.id, "--with-token")
	}
	h.Stdin = ""
	h.ok("voyage", "new", "--as", "alice", "shared issue")
	comment := func(args ...string) map[string]bool {
		t.Helper()
		srv.ClearRequests()
		h.ok(append(args, "action", "comment-issue", itoa(issue), "--repo", "octo/widgets", "--body", "a comment")...)
		return tokensSeen(srv)
	}

	assert.Equal(t, map[string]bool{"alice-token-1": true}, comment(), "before the handoff: the voyage's identity, alice")
	out := h.ok("voyage", "handoff", "--to", "bob", "--why", "bob takes over")
	assert.Contains(t, out, "handed off from alice to bob (entry 2)")
	assert.Equal(t, map[string]bool{"bob-token-2": true}, comment(), "after it: bob's configuration")
	assert.Equal(t, map[string]bool{"alice-token-1": true}, comment("--as", "alice"), "--as alice: alice's own, never bob's")

	var who []string
	for _, e := range logEntries(t, h) {
		who = append(who, string(e.Kind)+" "+e.Who.Identity)
	}
	assert.Equal(t, []string{"action alice", "handoff alice", "action bob", "action alice"}, who,
		"earlier entries keep their identity; later ones are recorded as who made them")
	info := showVoyage(t, h)
	assert.Equal(t, "alice", info.Identity)
	assert.Equal(t, "bob", info.CurrentIdentity)
	require.Len(t, info.Handoffs, 1)
	assert.Equal(t, logbook.Handoff{From: "alice", To: "bob", Why: "bob takes over"}, *info.Handoffs[0].Handoff)
}

// voyage show and the story name the current identity and each
// handoff; the refused attempt of an agent is in the story too.
func TestVoyageShowNamesTheCurrentIdentityAndItsHandoffs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.Env["HELM_ROLE"], h.Env["HELM_METHOD"] = "coder", "claude"
	h.ok("voyage", "new", "--as", "claude-a", "Fix the widget")
	h.at(1)
	h.ok("note", "found the null check")
	h.at(2)
	r := h.fails(4, "voyage", "handoff", "--to", "ann", "--why", "I am done")
	assert.Contains(t, r.Stderr, `denied by rule "a person hands a voyage off" (helm's built-in rules:`)
	assert.Contains(t, r.Stderr, "Try: ask a person to do it (method human); only a rule of the system policy (root's) can let an agent do it, not one of the home's")
	h.at(3)
	h.ok("--as", "ann", "--role", "lead", "--method", "human", "voyage", "handoff", "--to", "ann", "--why", "taking over the review")
	h.at(4)
	h.ok("note", "recorded without --as") // as the voyage's identity now: ann, by claude
	show := h.ok("voyage", "show")
	assert.Contains(t, show, "Identity:  ann (started by claude-a)\n")
	list := h.ok("voyage", "list")
	assert.Contains(t, list, "  ann  ")
	golden(t, "voyage-handoff.golden", show+"\n"+h.ok("log"))

	info := showVoyage(t, h)
	assert.Equal(t, "claude-a", info.Identity)
	assert.Equal(t, "ann", info.CurrentIdentity)
	entries := logEntries(t, h)
	require.Len(t, entries, 4)
	last := entries[3]
	assert.Equal(t, logbook.Who{Identity: "ann", Role: "coder", Method: "claude"}, last.Who,
		"the handoff changes no method: the note records its recorder's")
}

// TestAttackAgentCannotHandItselfTheVoyage: the recorded agent, which
// runs helm as the same user, tries to take a person's voyage, or to
// hand its own on, with "human" spelled every way it can think of, in
// a flag, the environment or a config it plants. Every attempt is
// refused (exit 4) and recorded; the voyage's identity stays the
// person's. A handoff to the identity it has, or of a closed voyage,
// is refused before anything is recorded. (The exact word, trimmed of
// spaces, is a claim like --as: it is recorded as made, DESIGN's
// "identity claims ... are claims"; a hooked agent cannot make it.)
func TestAttackAgentCannotHandItselfTheVoyage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := strings.TrimSpace(h.ok("--as", "ann", "--role", "lead", "--method", "human", "voyage", "new", "Ann's voyage"))
	tests := []struct {
		name   string
		method string // by --method
		env    string // by HELM_METHOD
		config string // config.toml's method
	}{
		{name: "an agent says what it is", method: "claude"},
		{name: "capitalised", method: "Human"},
		{name: "shouted", method: "HUMAN"},
		{name: "zero-width space", method: "human\u200b"},
		{name: "zero-width inside", method: "hu\u200dman"},
		{name: "full-width letters", method: "ｈｕｍａｎ"},
		{name: "Cyrillic lookalike", method: "humаn"},
		{name: "plural", method: "humans"},
		{name: "with a model", method: "human/claude"},
		{name: "environment", env: "Human"},
		{name: "planted config", config: "HUMAN"},
	}
	refused := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"--as", "claude-a", "--role", "coder"}
			if tt.method != "" {
				args = append(args, "--method", tt.method)
			}
			delete(h.Env, "HELM_METHOD")
			if tt.env != "" {
				h.Env["HELM_METHOD"] = tt.env
			}
			h.writeHome("config.toml", "")
			if tt.config != "" {
				h.writeHome("config.toml", "method = \""+tt.config+"\"\n")
			}
			r := h.run(append(args, "voyage", "handoff", "--to", "claude-a", "--why", "mine now")...)
			if r.Code == 2 {
				return // a method helm does not accept at all: nothing recorded
			}
			require.Equal(t, 4, r.Code, "%s", r)
			refused++
			info := showVoyage(t, h)
			assert.Equal(t, "ann", info.CurrentIdentity)
			assert.Empty(t, info.Handoffs)
			assert.Equal(t, refused, showRefused(t, h), "the refusal is recorded")
		})
	}
	delete(h.Env, "HELM_METHOD")
	h.writeHome("config.toml", "identity = \"claude-a\"\nmethod = \"human\"\nrole = \"coder\"\n")
	// A handoff to the identity the voyage has: nothing to do, nothing recorded.
	before := showVoyage(t, h).Seq
	r := h.fails(2, "--as", "claude-a", "voyage", "handoff", "--to", "ann")
	assert.Contains(t, r.Stderr, "the voyage's identity is ann already")
	// An identity that is a path.
	r = h.fails(2, "--as", "claude-a", "voyage", "handoff", "--to", "ann/../bob")
	assert.Contains(t, r.Stderr, "path separator")
	assert.Equal(t, before, showVoyage(t, h).Seq, "bad input leaves the voyage untouched")

	// The planted config names the agent; the voyage's identity comes
	// first, so what it records without --as is still recorded as ann,
	// with its own method.
	h.Env["HELM_METHOD"] = "claude"
	h.ok("note", "who am I")
	entries := logEntries(t, h)
	assert.Equal(t, logbook.Who{Identity: "ann", Role: "coder", Method: "claude"}, entries[len(entries)-1].Who)

	// A closed voyage keeps the identity it closed with.
	h.ok("--as", "ann", "--method", "human", "complete", "--summary", "done")
	before = showVoyage(t, h, "--voyage", id).Seq
	r = h.fails(1, "--as", "ann", "--method", "human", "voyage", "handoff", id, "--to", "bob")
	assert.Contains(t, r.Stderr, "voyage is completed")
	assert.Contains(t, r.Stderr, "keeps the identity it closed with")
	assert.Equal(t, before, showVoyage(t, h, "--voyage", id).Seq)
}

// showRefused is the number of refused actions voyage show --json
// counts in the logbook.
func showRefused(t *testing.T, h *harness) int {
	t.Helper()
	var s struct {
		Logbook helm.LogbookCounts `json:"logbook"`
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok("voyage", "show", "--json")), &s))
	return s.Logbook.Refused
}

// TestAttackPlantedPolicyCannotLoosenTheRule: the agent owns its home,
// so it can plant a policy.toml that allows its handoff; helm's built-in
// rule holds under it all the same (the home's rules tighten, never
// loosen, it). A system policy (root's) decides: one that denies holds
// whatever the home's says, one that allows lets the agent hand off,
// recorded as the agent's, by its method.
func TestAttackPlantedPolicyCannotLoosenTheRule(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.Env["HELM_ROLE"], h.Env["HELM_METHOD"] = "coder", "claude"
	h.ok("--as", "ann", "--method", "human", "voyage", "new", "Ann's voyage")
	sys := filepath.Join(t.TempDir(), "policy.toml")
	require.NoError(t, os.WriteFile(sys, []byte("[[rule]]\nname = \"no agent hands off\"\naction = \"handoff\"\nactor = \"agent\"\ndecision = \"deny\"\n"), 0o644))
	h.SystemPolicy = sys
	h.writeHome("policy.toml", "[[rule]]\nname = \"agents hand off\"\naction = \"handoff\"\ndecision = \"allow\"\n")
	r := h.fails(4, "--as", "claude-a", "voyage", "handoff", "--to", "claude-a")
	assert.Contains(t, r.Stderr, `denied by rule "no agent hands off" (`+sys+`:1)`)
	out := h.ok("--as", "claude-a", "policy", "check", "handoff", "--", "claude-a")
	assert.Contains(t, out, "Decision: denied by rule \"no agent hands off\"")

	h.SystemPolicy = ""
	out = h.ok("--as", "claude-a", "policy", "check", "handoff", "--", "claude-a")
	assert.Contains(t, out, "Decision: denied by rule \"a person hands a voyage off\"", "the planted allow does not loosen the built-in rule:\n%s", out)
	r = h.fails(4, "--as", "claude-a", "voyage", "handoff", "--to", "claude-a", "--why", "my policy says so")
	assert.Contains(t, r.Stderr, `(helm's built-in rules:`)
	assert.Equal(t, "ann", showVoyage(t, h).CurrentIdentity)

	require.NoError(t, os.WriteFile(sys, []byte("[[rule]]\nname = \"claude-a hands off\"\naction = \"handoff\"\nidentity = \"claude-a\"\ndecision = \"allow\"\n"), 0o644))
	h.SystemPolicy = sys
	h.ok("--as", "claude-a", "voyage", "handoff", "--to", "claude-a", "--why", "root's policy says so")
	entries := logEntries(t, h)
	last := entries[len(entries)-1]
	assert.Equal(t, logbook.EntryHandoff, last.Kind)
	assert.Equal(t, logbook.Who{Identity: "claude-a", Role: "coder", Method: "claude"}, last.Who, "the handoff is recorded as the agent's, by its method")
	assert.Equal(t, "claude-a", showVoyage(t, h).CurrentIdentity)
}
