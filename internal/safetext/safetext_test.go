package safetext

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckNamesFieldByteAndOffset(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, s string
		offset  int
		want    string
	}{
		{name: "valid", s: "héllo ✓", offset: -1},
		{name: "empty", s: "", offset: -1},
		{name: "replacement character is valid", s: "a\uFFFDb", offset: -1},
		{name: "lone continuation byte", s: "ab\x80", offset: 2, want: "reading is not valid UTF-8: byte 0x80 at offset 2"},
		{name: "latin-1", s: "caf\xe9", offset: 3, want: "byte 0xe9 at offset 3"},
		{name: "after multi-byte runes", s: "ü✓\xff", offset: 5, want: "byte 0xff at offset 5"},
		{name: "truncated sequence", s: "x\xe2\x9c", offset: 1, want: "byte 0xe2 at offset 1"},
		{name: "surrogate half", s: "\xed\xa0\x80", offset: 0, want: "byte 0xed at offset 0"},
		{name: "overlong", s: "\xc0\xaf", offset: 0, want: "byte 0xc0 at offset 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.offset, InvalidUTF8(tt.s))
			err := Check("reading", tt.s)
			if tt.offset < 0 {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

func TestLineAndBlockEscapeWhatDrivesTheTerminal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		in    string
		line  string
		block string // with indent "    "
	}{
		{name: "plain", in: "Fix widget crash", line: "Fix widget crash", block: "Fix widget crash"},
		{name: "unicode and emoji", in: "café ✓ 👩‍💻 日本", line: "café ✓ 👩‍💻 日本", block: "café ✓ 👩‍💻 日本"},
		{name: "backslashes stay", in: `C:\src\a.go`, line: `C:\src\a.go`, block: `C:\src\a.go`},
		{name: "erase line", in: "ok\x1b[2K\rforged", line: `ok\x1b[2K\rforged`, block: `ok\x1b[2K\rforged`},
		{name: "colour", in: "\x1b[31mred\x1b[0m", line: `\x1b[31mred\x1b[0m`, block: `\x1b[31mred\x1b[0m`},
		{name: "OSC title with BEL", in: "\x1b]0;pwned\x07", line: `\x1b]0;pwned\x07`, block: `\x1b]0;pwned\x07`},
		{name: "newline", in: "one\ntwo", line: `one\ntwo`, block: "one\n    two"},
		{name: "forged entry", in: "x\n── Bearing 9 ──", line: `x\n── Bearing 9 ──`, block: "x\n    ── Bearing 9 ──"},
		{name: "tab", in: "a\tb", line: `a\tb`, block: `a\tb`},
		{name: "NUL and DEL", in: "a\x00b\x7f", line: `a\x00b\x7f`, block: `a\x00b\x7f`},
		{name: "C1 CSI", in: "a\u009b2Kb", line: `a\u009b2Kb`, block: `a\u009b2Kb`},
		{name: "bidi override", in: "abc\u202edcb", line: `abc\u202edcb`, block: `abc\u202edcb`},
		{name: "bidi isolate", in: "\u2066x\u2069", line: `\u2066x\u2069`, block: `\u2066x\u2069`},
		{name: "line separator", in: "a\u2028b", line: `a\u2028b`, block: `a\u2028b`},
		{name: "invalid UTF-8", in: "caf\xe9", line: `caf\xe9`, block: `caf\xe9`},
		{name: "CRLF", in: "a\r\nb", line: `a\r\nb`, block: "a\\r\n    b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := Line(tt.in)
			assert.Equal(t, tt.line, line)
			assert.Equal(t, tt.block, Block(tt.in, "    "))
			assert.True(t, utf8.ValidString(line))
			assert.False(t, strings.ContainsAny(line, "\x1b\r\n\t\x00\x07\x7f\u009b\u202e"), "nothing raw is left: %q", line)
		})
	}
}

// TestTextKeepsTabsAndLinesButEscapesTheRest: a program's own message
// (git's advice, indented with tabs) is shown as it was written, and
// nothing in it drives the terminal.
func TestTextKeepsTabsAndLinesButEscapesTheRest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{name: "git advice", in: "hint: Updates were rejected\n\thint: git pull", want: "hint: Updates were rejected\n  \thint: git pull"},
		{name: "escape in a tabbed line", in: "\tok\x1b[2K\rforged", want: "\tok\\x1b[2K\\rforged"},
		{name: "bidi override", in: "a\t\u202eb", want: "a\t\\u202eb"},
		{name: "plain", in: "nothing to do", want: "nothing to do"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Text(tt.in, "  ")
			assert.Equal(t, tt.want, got)
			assert.False(t, strings.ContainsAny(got, "\x1b\r\u202e"), "nothing raw drives the terminal: %q", got)
		})
	}
}

// Not parallel: AllocsPerRun counts the whole process's allocations (and
// sets GOMAXPROCS), so it runs before the parallel tests start, alone.
func TestLineDoesNotAllocateForPlainText(t *testing.T) {
	s := strings.Repeat("an ordinary reading, ünicode too. ", 20)
	allocs := testing.AllocsPerRun(100, func() { _ = Line(s) })
	assert.Zero(t, allocs)
}

func FuzzLine(f *testing.F) {
	for _, s := range []string{"plain", "\x1b[2K\r", "a\nb", "caf\xe9", "\u202e", "\u009b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Line(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Line(%q) = %q is not valid UTF-8", s, out)
		}
		for _, r := range out {
			if r < 0x20 || r == 0x7f || unsafeRune(r) {
				t.Fatalf("Line(%q) = %q keeps %U", s, out, r)
			}
		}
		if InvalidUTF8(s) < 0 && !needsEscape(s, false, false) && out != s {
			t.Fatalf("Line changed text that needs no escape: %q → %q", s, out)
		}
	})
}

func TestWriterEscapesAStreamKeepingLinesAndTabs(t *testing.T) {
	t.Parallel()
	in := "ok  \tpkg\t0.1s\n\x1b[31mFAIL\x1b[0m café\r\n\u202ex\n"
	want := "ok  \tpkg\t0.1s\n\\x1b[31mFAIL\\x1b[0m café\\r\n\\u202ex\n"
	// Whatever the writes' boundaries (one cuts "é" in two), the output is
	// the same.
	for split := 0; split <= len(in); split++ {
		var b strings.Builder
		w := NewWriter(&b)
		n, err := w.Write([]byte(in[:split]))
		require.NoError(t, err)
		assert.Equal(t, split, n)
		_, err = w.Write([]byte(in[split:]))
		require.NoError(t, err)
		require.NoError(t, w.Flush())
		assert.Equal(t, want, b.String(), "split at %d", split)
	}
	// A stream that ends inside a sequence shows its bytes at Flush.
	var b strings.Builder
	w := NewWriter(&b)
	_, err := w.Write([]byte("caf\xc3"))
	require.NoError(t, err)
	assert.Equal(t, "caf", b.String())
	require.NoError(t, w.Flush())
	assert.Equal(t, `caf\xc3`, b.String())
}

// FuzzWriter: a stream escaped in two writes reads as it does in one, and
// keeps nothing that drives the terminal but line breaks and tabs.
func FuzzWriter(f *testing.F) {
	for _, s := range []string{"plain\n", "\x1b[2K\r", "a\tb", "caf\xc3\xa9", "\xe9\x80\x80\x80", "\u202e"} {
		f.Add(s, uint(3))
	}
	f.Fuzz(func(t *testing.T, s string, k uint) {
		split := int(k % uint(len(s)+1))
		var whole, parts strings.Builder
		w := NewWriter(&whole)
		w.Write([]byte(s))
		w.Flush()
		w = NewWriter(&parts)
		w.Write([]byte(s[:split]))
		w.Write([]byte(s[split:]))
		w.Flush()
		if whole.String() != parts.String() {
			t.Fatalf("%q split at %d: %q, whole: %q", s, split, parts.String(), whole.String())
		}
		out := whole.String()
		if !utf8.ValidString(out) {
			t.Fatalf("%q → %q is not valid UTF-8", s, out)
		}
		for _, r := range out {
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || unsafeRune(r) {
				t.Fatalf("%q → %q keeps %U", s, out, r)
			}
		}
	})
}
