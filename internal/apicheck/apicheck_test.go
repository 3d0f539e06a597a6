package apicheck

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// module writes a one-package module in dir with the given source.
func module(t *testing.T, dir, src string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n\ngo 1.26.0\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "m.go"), []byte(src), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "internal", "x"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "internal", "x", "x.go"), []byte("package x\n\nfunc Hidden() {}\n"), 0o644))
}

const v1 = `package m

import "io"

type Kind string

const KindA Kind = "a"

var ErrX error

type T struct {
	Name string
	io.Reader
	hidden int
}

func (t T) Value() int      { return 0 }
func (t *T) Set(n int)      {}
func New(r io.Reader) *T    { return nil }
func Map[K comparable, V any](m map[K]V) []K { return nil }

type I interface{ Do(int) error }
type A = T
`

func TestFeaturesListEveryExportedThingOnce(t *testing.T) {
	dir := t.TempDir()
	module(t, dir, v1)
	got, err := Features(context.Background(), dir, "./...")
	require.NoError(t, err)
	assert.Equal(t, []string{
		"pkg example.com/m, const KindA Kind = \"a\"",
		"pkg example.com/m, func Map[K comparable, V any](m map[K]V) []K",
		"pkg example.com/m, func New(r io.Reader) *T",
		"pkg example.com/m, method (*T) Set(n int)",
		"pkg example.com/m, method (T) Read(p []byte) (n int, err error)",
		"pkg example.com/m, method (T) Value() int",
		"pkg example.com/m, type A = T",
		"pkg example.com/m, type I interface { Do }",
		"pkg example.com/m, type I interface, Do(int) error",
		"pkg example.com/m, type Kind string",
		"pkg example.com/m, type T struct",
		"pkg example.com/m, type T struct, Name string",
		"pkg example.com/m, type T struct, embedded io.Reader",
		"pkg example.com/m, var ErrX error",
	}, got)
}

func TestCheckRefusesUnannouncedIncompatibleChanges(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		from    string
		to      string
		wantErr string
	}{
		{"a removed method", "func (t *T) Set(n int)      {}", "", "method (*T) Set(n int)"},
		{"a changed field type", "\tName string", "\tName []byte", "type T struct, Name string"},
		{"a changed constant", `const KindA Kind = "a"`, `const KindA Kind = "b"`, `const KindA Kind = "a"`},
		{"a method added to an interface", "Do(int) error }", "Do(int) error; Undo() }", "type I interface { Do }"},
		{"a value method made a pointer method", "func (t T) Value() int", "func (t *T) Value() int", "method (T) Value() int"},
		{"a new function, not recorded yet", "type A = T", "type A = T\nfunc Extra() {}", "func Extra()"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			module(t, dir, v1)
			record, announced := filepath.Join(dir, "api.txt"), filepath.Join(dir, "incompatible.txt")
			require.NoError(t, Check(ctx, dir, record, announced, true, "./..."))
			require.NoError(t, Check(ctx, dir, record, announced, false, "./..."), "the record just written matches")
			src := replace(t, v1, tc.from, tc.to)
			module(t, dir, src)
			err := Check(ctx, dir, record, announced, false, "./...")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
}

func TestCheckAcceptsAnnouncedChangesAndRecordsThem(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	module(t, dir, v1)
	record, announced := filepath.Join(dir, "api.txt"), filepath.Join(dir, "incompatible.txt")
	require.NoError(t, Check(ctx, dir, record, announced, true, "./..."))
	module(t, dir, replace(t, v1, "func (t *T) Set(n int)      {}", ""))
	err := Check(ctx, dir, record, announced, true, "./...")
	require.Error(t, err, "update refuses an unannounced removal")
	assert.Contains(t, err.Error(), "incompatible.txt")

	require.NoError(t, os.WriteFile(announced, []byte("# Set goes: T is immutable now.\npkg example.com/m, method (*T) Set(n int)\n"), 0o644))
	require.NoError(t, Check(ctx, dir, record, announced, false, "./..."), "an announced removal passes")
	require.NoError(t, Check(ctx, dir, record, announced, true, "./..."))
	b, err := os.ReadFile(record)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "Set(")
	assert.NotContains(t, string(b), "Hidden", "internal packages are not API")
}

func replace(t *testing.T, s, from, to string) string {
	t.Helper()
	require.Contains(t, s, from)
	return strings.Replace(s, from, to, 1)
}
