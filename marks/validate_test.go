package marks_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/marks"
)

// TestValidateRefusesWhatConstructorsRefuse: a mark decoded from a file
// (bearing --observation) or built as a literal passes the checks its
// constructor would have applied. Each case is the JSON such a file holds.
func TestValidateRefusesWhatConstructorsRefuse(t *testing.T) {
	tests := []struct {
		name string
		mark string
		want string // in the error; empty: valid
	}{
		{name: "file-contents", mark: `{"kind":"file-contents","paths":["a.go","./b.go"]}`},
		{name: "file-contents anchored", mark: `{"kind":"file-contents","paths":["a.go"],"base":"/w"}`},
		{name: "file-contents without paths", mark: `{"kind":"file-contents","paths":[]}`, want: "no files to read"},
		{name: "file-contents null paths", mark: `{"kind":"file-contents"}`, want: "no files to read"},
		{name: "file-contents empty path", mark: `{"kind":"file-contents","paths":["a.go",""]}`, want: "empty path"},
		{name: "file-contents NUL", mark: `{"kind":"file-contents","paths":["a\u0000b"]}`, want: "NUL"},
		{name: "file-contents relative base", mark: `{"kind":"file-contents","paths":["a.go"],"base":"../elsewhere"}`, want: `base "../elsewhere" is not an absolute directory`},
		{name: "directory-tree", mark: `{"kind":"directory-tree","root":"src","skip":["node_modules"],"max_depth":0}`},
		{name: "directory-tree empty root", mark: `{"kind":"directory-tree","root":""}`, want: "empty root"},
		{name: "directory-tree negative depth", mark: `{"kind":"directory-tree","root":".","max_depth":-3}`, want: "max depth -3 is negative"},
		{name: "directory-tree skip path", mark: `{"kind":"directory-tree","root":".","skip":["../.."]}`, want: `skip "../.." is not a file name`},
		{name: "rust-project empty", mark: `{"kind":"rust-project","root":""}`, want: "empty path"},
		{name: "go-project empty", mark: `{"kind":"go-project","root":""}`, want: "empty path"},
		{name: "context", mark: `{"kind":"context","description":"a call"}`},
		{name: "context blank", mark: `{"kind":"context","description":"  \n "}`, want: "empty description"},
		{name: "command", mark: `{"kind":"command","program":"go","args":["test","./..."]}`},
		{name: "command without program", mark: `{"kind":"command","program":"","args":["x"]}`, want: "no program to run"},
		{name: "command NUL argument", mark: `{"kind":"command","program":"echo","args":["a\u0000"]}`, want: `argument 1 "a\x00" contains a NUL byte`},
		{name: "command empty dir is fine", mark: `{"kind":"command","dir":"","program":"true"}`},
		{name: "web", mark: `{"kind":"web","url":"https://example.com/"}`},
		{name: "web credentials", mark: `{"kind":"web","url":"https://alice:s3cret@example.com/"}`, want: "carries credentials"},
		{name: "web scheme", mark: `{"kind":"web","url":"file:///etc/passwd"}`, want: "not http or https"},
		{name: "web no host", mark: `{"kind":"web","url":"http:///x"}`, want: "has no host"},
		{name: "github-pr", mark: `{"kind":"github-pr","repo":"octo/widgets","number":45,"focus":["diff"]}`},
		{name: "github-pr zero", mark: `{"kind":"github-pr","repo":"octo/widgets","number":0,"focus":[]}`, want: "number 0 is not a positive"},
		{name: "github-pr negative", mark: `{"kind":"github-pr","repo":"octo/widgets","number":-4,"focus":[]}`, want: "number -4 is not a positive"},
		{name: "github-pr unknown focus", mark: `{"kind":"github-pr","repo":"octo/widgets","number":1,"focus":["secrets"]}`, want: `unknown focus "secrets"`},
		{name: "github-issue zero", mark: `{"kind":"github-issue","repo":"octo/widgets","number":0}`, want: "number 0"},
		{name: "github-issue bad repo", mark: `{"kind":"github-issue","repo":"../../etc","number":1}`, want: `repository "../../etc" is not OWNER/NAME`},
		{name: "github-repo", mark: `{"kind":"github-repo","repo":"octo/widgets","focus":["issues"]}`},
		{name: "github-repo path in repo", mark: `{"kind":"github-repo","repo":"octo/widgets/../../x"}`, want: "is not OWNER/NAME"},
		{name: "github-repo unknown focus", mark: `{"kind":"github-repo","repo":"o/r","focus":["wiki"]}`, want: `unknown focus "wiki"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := marks.Unmarshal([]byte(tt.mark))
			require.NoError(t, err, "decoding is lenient; validating is not")
			err = marks.Validate(m)
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, marks.ErrInvalid)
			assert.ErrorContains(t, err, m.Kind()+": invalid mark: ")
			assert.ErrorContains(t, err, tt.want)
			assert.NotContains(t, err.Error(), "s3cret", "errors never repeat credentials")
		})
	}
}

// Bytes that are not UTF-8 cannot be written in JSON text, so these are
// built as literals, as a library caller might.
func TestValidateRefusesInvalidUTF8WithItsOffset(t *testing.T) {
	tests := []struct {
		name string
		mark marks.Mark
		want string
	}{
		{"path", &marks.FileContents{Paths: []string{"ok.go", "caf\xe9.go"}}, `path "caf\xe9.go" is not valid UTF-8: byte 0xe9 at offset 3`},
		{"root", &marks.RustProject{Root: "\xffsrc"}, "byte 0xff at offset 0"},
		{"skip", &marks.DirectoryTree{Root: ".", Skip: []string{"a\x80"}}, "byte 0x80 at offset 1"},
		{"description", &marks.Context{Description: "call with \xc3"}, "description is not valid UTF-8: byte 0xc3 at offset 10"},
		{"argument", &marks.Command{Program: "echo", Args: []string{"ok", "x\xfe"}}, `argument 2 "x\xfe" is not valid UTF-8: byte 0xfe at offset 1`},
		{"url", &marks.Web{URL: "https://user:pw@example.com/\xff"}, "URL is not valid UTF-8: byte 0xff at offset 28"},
		{"base", &marks.GoProject{Root: ".", Anchor: marks.Anchor{Base: "/w/\xff"}}, "byte 0xff at offset 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := marks.Validate(tt.mark)
			require.ErrorIs(t, err, marks.ErrInvalid)
			assert.ErrorContains(t, err, tt.want)
			assert.NotContains(t, err.Error(), "pw@")
		})
	}
}

func TestValidateAcceptsEveryConstructedMark(t *testing.T) {
	for _, m := range sampleMarks() {
		assert.NoError(t, marks.Validate(m), "%s", m)
	}
	gh, err := marks.NewGitHubPR("octo/widgets", 45)
	require.NoError(t, err)
	assert.NoError(t, marks.Validate(gh))
}

func TestValidateRefusesNoMark(t *testing.T) {
	assert.ErrorIs(t, marks.Validate(nil), marks.ErrInvalid)
	assert.ErrorIs(t, marks.Validate((*marks.Web)(nil)), marks.ErrInvalid)
}

func TestConstructorsRefuseInvalidUTF8InCommands(t *testing.T) {
	_, err := marks.NewCommand("", "printf", "\xff")
	require.ErrorIs(t, err, marks.ErrInvalid)
	assert.ErrorContains(t, err, "argument 1")
	_, err = marks.NewContext("x\xff")
	assert.ErrorContains(t, err, "offset 1")
}
