package replay_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/replay"
)

// exported is a voyage of every view (jettisoned and reduced artifacts,
// compacted: their records are stubs) in its home, and the forms helm
// gives it outside the home: an export archive, a recording's events,
// and a copy of its directory, each named so that no extension tells its
// form.
type exported struct {
	home, id                   string
	events                     []helm.Event
	views                      *replay.Views
	archive, recording, copied string
}

func exportEveryForm(t *testing.T, compact bool) exported {
	t.Helper()
	ctx := context.Background()
	home := t.TempDir()
	h, err := helm.Open(home, nil)
	require.NoError(t, err)
	v := everyView(t, h)
	if compact {
		_, err = v.Compact(ctx)
		require.NoError(t, err)
	}
	var events []helm.Event
	for e, err := range v.Events(ctx, 1) {
		require.NoError(t, err)
		events = append(events, e)
	}
	views, err := replay.Fold(events)
	require.NoError(t, err)
	out := t.TempDir()
	x := exported{home: home, id: v.ID(), events: events, views: views,
		archive: filepath.Join(out, "voyage.export"), recording: filepath.Join(out, "voyage.events"), copied: filepath.Join(out, "elsewhere", "copy")}
	var archive, recording bytes.Buffer
	require.NoError(t, h.Export(ctx, v.ID(), &archive))
	require.NoError(t, replay.WriteEvents(ctx, &recording, v))
	require.NoError(t, v.Close())
	require.NoError(t, os.WriteFile(x.archive, archive.Bytes(), 0o644))
	require.NoError(t, os.WriteFile(x.recording, recording.Bytes(), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Dir(x.copied), 0o755))
	require.NoError(t, os.CopyFS(x.copied, os.DirFS(filepath.Join(home, "voyages", v.ID()))))
	return x
}

// hashTree is the SHA-256 of every file under dir, by path, and every
// directory (""): a tree read must leave as it was.
func hashTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			out[p] = ""
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		out[p] = hex.EncodeToString(sum[:])
		return nil
	}))
	return out
}

func TestOpenReplaysEveryFormHelmExportsAsTheVoyageInItsHome(t *testing.T) {
	x := exportEveryForm(t, true)
	tests := []struct {
		name string
		path string
		form replay.Form
	}{
		{name: "export archive", path: x.archive, form: replay.Archive},
		{name: "recording", path: x.recording, form: replay.Recorded},
		{name: "voyage directory copied out of its home", path: x.copied, form: replay.VoyageDir},
		{name: "voyage directory in its home", path: filepath.Join(x.home, "voyages", x.id), form: replay.VoyageDir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := hashTree(t, filepath.Dir(tt.path))
			src, err := replay.Open(context.Background(), tt.path)
			require.NoError(t, err)
			assert.Equal(t, tt.form, src.Form)
			assert.Nil(t, src.Torn)
			got, err := replay.Fold(src.Events)
			require.NoError(t, err)
			assert.Equal(t, x.views, got)
			assert.Equal(t, before, hashTree(t, filepath.Dir(tt.path)), "reading wrote")
		})
	}
}

func TestOpenRefusesATamperedArchiveNamingTheLine(t *testing.T) {
	x := exportEveryForm(t, true)
	data, err := os.ReadFile(x.archive)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	at := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "init() lacks a null check.") })
	require.Positive(t, at)
	lines[at] = strings.Replace(lines[at], "a null check", "no null check", 1)
	tampered := filepath.Join(t.TempDir(), "tampered")
	require.NoError(t, os.WriteFile(tampered, []byte(strings.Join(lines, "")), 0o644))

	_, err = replay.Open(context.Background(), tampered)
	require.Error(t, err)
	assert.ErrorIs(t, err, helm.ErrInvalid)
	assert.Contains(t, err.Error(), tampered)
	assert.Contains(t, err.Error(), "archive line "+strconv.Itoa(at+1)+":")
	assert.Contains(t, err.Error(), "the line was changed")
}

func TestOpenReportsACopiedDirectorysTornTailWithoutCuttingIt(t *testing.T) {
	x := exportEveryForm(t, false) // compacted, its last segment holds no unit to tear
	segs, err := filepath.Glob(filepath.Join(x.copied, "events", "*.seg"))
	require.NoError(t, err)
	require.NotEmpty(t, segs)
	last := segs[len(segs)-1]
	// A write cut short: the last unit loses its end.
	fi, err := os.Stat(last)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(last, fi.Size()-3))
	before := hashTree(t, filepath.Dir(x.copied))

	src, err := replay.Open(context.Background(), x.copied)
	require.NoError(t, err)
	require.NotNil(t, src.Torn, "the torn tail is reported")
	assert.Equal(t, last, src.Torn.File)
	assert.Positive(t, src.Torn.Bytes)
	require.Less(t, len(src.Events), len(x.events), "the events of the torn write are not read")
	assert.Equal(t, x.events[:len(src.Events)], src.Events, "the events before the torn write are")
	assert.Equal(t, before, hashTree(t, filepath.Dir(x.copied)), "the torn tail was cut, or reading wrote")
}

func TestOpenRefusesWhatHelmDoesNotExportNamingTheFormsItReads(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.jsonl")
	require.NoError(t, os.WriteFile(notes, []byte("{\"hello\":1}\n"), 0o644))
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	plain := filepath.Join(dir, "plain")
	require.NoError(t, os.Mkdir(plain, 0o755))
	tests := []struct{ name, path string }{
		{name: "JSON lines of something else", path: notes},
		{name: "an empty file", path: empty},
		{name: "a directory that is not a voyage's", path: plain},
		{name: "nothing there", path: filepath.Join(dir, "missing")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := replay.Open(context.Background(), tt.path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.path)
			assert.Contains(t, err.Error(), replay.Accepted)
		})
	}
}
