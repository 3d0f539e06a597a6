package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// voyage push and pull between two homes on disk: a new copy, one up to
// date, one brought up to date, a diverged one refused with what to do,
// and the messages name both homes.
func TestVoyagePushPullBetweenHomes(t *testing.T) {
	h := newHarness(t)
	other := filepath.Join(t.TempDir(), "other-home")
	id := h.start("Carried between homes")
	h.ok("note", "one")

	out := h.ok("voyage", "push", id, "--to", other)
	assert.Contains(t, out, "a new copy")
	assert.Contains(t, out, other)
	assert.Contains(t, h.ok("voyage", "push", id[:8], "--to", other), "up to date already")
	h.ok("note", "two")
	assert.Contains(t, h.ok("voyage", "push", "--to", other), "1 record appended")

	// Pulled back into a third home, the story is the same.
	third := newHarness(t)
	third.Env = h.Env
	third.Env["HELM_HOME"] = filepath.Join(t.TempDir(), "third")
	third.ok("voyage", "pull", id[:8], "--from", other)
	assert.Equal(t, h.ok("--voyage", id, "log"), third.ok("--voyage", id, "log"))

	// Diverged: a note in the other home, another here.
	h.Env["HELM_HOME"], other = other, h.Env["HELM_HOME"]
	h.ok("--voyage", id, "note", "there")
	h.Env["HELM_HOME"], other = other, h.Env["HELM_HOME"]
	h.ok("note", "here")
	r := h.fails(1, "voyage", "push", id, "--to", other)
	assert.Contains(t, r.Stderr, "diverged")
	assert.Contains(t, r.Stderr, "helm log --voyage "+id[:8])
	r = h.fails(1, "voyage", "pull", id, "--from", other)
	assert.Contains(t, r.Stderr, "diverged")

	// Usage: no STORE, the same home, no VOYAGE to pull.
	h.fails(2, "voyage", "push", id)
	h.fails(2, "voyage", "push", id, "--to", h.Env["HELM_HOME"])
	h.fails(2, "voyage", "pull", "--from", other)
	r = h.fails(2, "voyage", "pull", "ffffffff", "--from", other)
	assert.Contains(t, r.Stderr, other, "a voyage the other home lacks is named with it")
	assert.Contains(t, r.Stderr, "helm --home "+other+" voyage list", "the hint lists the other home's voyages, not this one's")
}

// A --store that is no JetStream URL is a usage error that does not
// print the password it holds.
func TestStoreURLErrorsHideThePassword(t *testing.T) {
	h := newHarness(t)
	for _, raw := range []string{"nats://alice:s3cret-pass@host:4222/team?x=1", "http://alice:s3cret-pass@host/", "nats://alice:s3cret-pass@host:4222/team#frag"} {
		r := h.fails(2, "--store", raw, "voyage", "list")
		assert.NotContains(t, r.Stderr, "s3cret-pass", raw)
		assert.Contains(t, r.Stderr, "is not a JetStream server's URL")
	}
}
