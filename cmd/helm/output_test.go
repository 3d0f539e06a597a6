package main

import (
	"encoding/json"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/cmd/helm/internal/view"
)

// raw are the bytes and characters no human output may print as they are.
var raw = []string{"\x1b", "\r", "\x07", "\x00", "\x7f", "\u009b", "\u202e"}

func assertNoRaw(t *testing.T, what, out string) {
	t.Helper()
	for _, r := range raw {
		assert.NotContains(t, out, r, "%s prints %q raw:\n%s", what, r, out)
	}
}

// TestHumanOutputEscapesHostileText: an intent, a mark, a reading, a
// feedback or a summary may hold escape sequences; every human output
// shows them as visible escapes, and --json keeps the text exact.
func TestHumanOutputEscapesHostileText(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	intent := "Fix crash\x1b[2K\rAll done, nothing to see"
	h.start(intent)
	h.ok("observe", "context", "agreed\x1b]0;pwned\x07 on a call")
	if runtime.GOOS != "windows" { // whose file names hold no control characters
		h.writeFile("evil\x1b[31m.txt", "hi")
		out := h.ok("observe", "file-contents", "--read", "evil\x1b[31m.txt")
		assertNoRaw(t, "observe", out)
		assert.Contains(t, out, `Observed FileContents: evil\x1b[31m.txt`)
	}

	outputs := map[string]string{}
	outputs["slate list"] = h.ok("slate", "list")
	outputs["voyage show"] = h.ok("voyage", "show")
	outputs["bearing"] = h.ok("bearing", "--reading", "fine\u202e\x1b[1A\nsecond line")
	outputs["challenge"] = h.ok("bearing", "challenge", "1", "--with", "no\u009b", "--reading", "better\x07")
	outputs["erase"] = func() string {
		h.ok("observe", "context", "again\x1b[2K")
		return h.ok("slate", "erase", "context", "again\x1b[2K")
	}()
	outputs["complete"] = h.ok("complete", "--summary", "done\r\x1b[2K")
	outputs["voyage list"] = h.ok("voyage", "list", "--status", "all")
	outputs["voyage show completed"] = h.ok("--voyage", "a3b00001", "voyage", "show")
	outputs["log"] = h.ok("--voyage", "a3b00001", "log")
	for what, out := range outputs {
		assertNoRaw(t, what, out)
	}
	assert.Contains(t, outputs["voyage list"], `Fix crash\x1b[2K\rAll done`)
	assert.Contains(t, outputs["voyage show"], `Intent:    Fix crash\x1b[2K\rAll done`)
	assert.Contains(t, outputs["slate list"], `Context: agreed\x1b]0;pwned\x07 on a call`)
	assert.Contains(t, outputs["bearing"], "  Reading: fine\\u202e\\x1b[1A\n           second line\n")
	assert.Contains(t, outputs["challenge"], `Reading: better\x07`)
	assert.Contains(t, outputs["log"], `last feedback: no\u009b`)
	assert.Contains(t, outputs["complete"], `Summary: done\r\x1b[2K`)
	assert.Contains(t, outputs["voyage show completed"], `Summary:   done\r\x1b[2K`)

	var lj view.Log
	require.NoError(t, json.Unmarshal([]byte(h.ok("--voyage", "a3b00001", "log", "--json")), &lj))
	assert.Equal(t, intent, lj.Voyage.Intent, "JSON keeps the text exact")
}
