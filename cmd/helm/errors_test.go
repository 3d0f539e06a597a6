package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestErrorsEscapeHostileText(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.start("errors")
	r := h.fails(1, "observe", "directory-tree", "no\x1b[2Ksuch")
	assertNoRaw(t, "error", r.Stderr)
	assert.Contains(t, r.Stderr, `no\x1b[2Ksuch`)
}
