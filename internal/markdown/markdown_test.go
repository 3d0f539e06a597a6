package markdown

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestInlineShowsHostileTextAsWritten(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "Fix the widget crash", "Fix the widget crash"},
		{"heading", "# Heading", `\# Heading`},
		{"heading later in a line is text", "see #42", "see #42"},
		{"pipe", "a | b", `a \| b`},
		{"html", "<script>alert(1)</script>", `\<script\>alert(1)\</script\>`},
		{"line breaks", "one\ntwo\r\nthree\rfour", "one two three four"},
		{"leading spaces would make code", "    indented", "indented"},
		{"ordered list", "1. first", `1\. first`},
		{"ordered list with paren", "12) twelfth", `12\) twelfth`},
		{"number that is text", "1.5 times", `1\.5 times`},
		{"quote", "> quoted", `\> quoted`},
		{"bullets", "- item", `\- item`},
		{"plus bullet", "+ item", `\+ item`},
		{"setext underline", "===", `\===`},
		{"code", "`rm -rf /`", "\\`rm -rf /\\`"},
		{"link", "[click](javascript:alert(1))", `\[click\](javascript:alert(1))`},
		{"emphasis", "**bold** _em_ ~~gone~~", `\*\*bold\*\* \_em\_ \~\~gone\~\~`},
		{"entity", "&lt;b&gt;", `\&lt;b\&gt;`},
		{"math", "$x^2$", `\$x^2\$`},
		{"backslash", `a\b`, `a\\b`},
		{"terminal escape", "\x1b[2Kgone", `\\x1b\[2Kgone`},
		{"bidi override", "abc\u202edef", `abc\\u202edef`},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Inline(tt.in))
		})
	}
}

func TestHeadingKeepsItsClosingHashes(t *testing.T) {
	assert.Equal(t, `Fix the crash \#`, Heading("Fix the crash #"))
	assert.Equal(t, `Fix # ##\#`, Heading("Fix # ###"))
	assert.Equal(t, `a\\\#`, Heading(`a\#`), "a backslash of the text, then the # escaped")
	assert.Equal(t, `Resolve #42: fix`, Heading("Resolve #42: fix"))
	assert.Equal(t, `\#`, Heading("#"))
}

func TestLinkMakesOnlyPlainWebAddresses(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"https://github.com/octo/widgets/pull/45", "<https://github.com/octo/widgets/pull/45>"},
		{"http://127.0.0.1:8080/o/r/pull/1", "<http://127.0.0.1:8080/o/r/pull/1>"},
		{"javascript:alert(1)", ""},
		{"https://a.example/x>y", ""},
		{"https://a.example/x y", ""},
		{"https://a.example/\x1b[2K", ""},
		{"https://a.example/é", ""},
		{"/relative", ""},
		{"", ""},
	} {
		assert.Equal(t, tt.want, Link(tt.in), "%q", tt.in)
	}
	assert.Equal(t, "a3b0fc12-0000", Code("a3b0fc12-0000"))
	assert.Equal(t, "", Code("`; x"), "a code span holds nothing that could end it")
}

func TestQuoteQuotesEveryLine(t *testing.T) {
	var b strings.Builder
	Quote(&b, "one\n\n# two\r\nthree")
	assert.Equal(t, "> one\n>\n> \\# two\n> three\n", b.String())
}

func TestRepositoryNamesWhatWasRecorded(t *testing.T) {
	assert.Equal(t, "octo/widgets, branch fix\\|x, base `abc1234`", Repository("octo/widgets", "fix|x", "abc1234def"))
	assert.Equal(t, "", Repository("", "", ""))
	assert.Equal(t, "base `bae`", Repository("", "", "b`ase|"), "a code span keeps only what it can hold")
}
