package homeindex

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFoldTrustsOnlyVoyagesEveryWriterClosed(t *testing.T) {
	t.Parallel()
	a, b, c := NewToken(), NewToken(), NewToken()
	rec := func(kind byte, tok Token, id string, seq uint64, view string) record {
		r := record{kind: kind, token: tok, id: id, seq: seq}
		if view != "" {
			r.view = []byte(view)
		}
		return r
	}
	tests := []struct {
		name string
		recs []record
		want map[string]string // id -> trusted view
	}{
		{"open and closed", []record{rec(kindOpen, a, "x", 0, ""), rec(kindClose, a, "x", 5, "v5")}, map[string]string{"x": "v5"}},
		{"a writer at work", []record{rec(kindOpen, a, "x", 0, ""), rec(kindClose, a, "x", 5, "v5"), rec(kindOpen, b, "x", 0, "")}, map[string]string{}},
		{"the highest seq wins", []record{rec(kindOpen, a, "x", 0, ""), rec(kindOpen, b, "x", 0, ""),
			rec(kindClose, b, "x", 8, "v8"), rec(kindClose, a, "x", 7, "v7")}, map[string]string{"x": "v8"}},
		{"a close whose open is unknown trusts nothing", []record{rec(kindClose, a, "x", 5, "v5")}, map[string]string{}},
		{"a stale close distrusts", []record{rec(kindOpen, a, "x", 0, ""), rec(kindClose, a, "x", 5, "v5"),
			rec(kindOpen, b, "x", 0, ""), rec(kindStale, b, "x", 0, "")}, map[string]string{}},
		{"until a writer opened after it closes", []record{rec(kindOpen, a, "x", 0, ""), rec(kindOpen, b, "x", 0, ""),
			rec(kindStale, b, "x", 0, ""), rec(kindClose, a, "x", 9, "v9"), rec(kindOpen, c, "x", 0, ""), rec(kindClose, c, "x", 9, "v9c")},
			map[string]string{"x": "v9c"}},
		{"voyages apart", []record{rec(kindOpen, a, "x", 0, ""), rec(kindOpen, b, "y", 0, ""), rec(kindClose, b, "y", 2, "y2")},
			map[string]string{"y": "y2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := header(headerSize)
			for _, r := range tt.recs {
				data = appendRecord(data, r)
			}
			path := filepath.Join(t.TempDir(), Name)
			require.NoError(t, os.WriteFile(path, data, 0o600))
			got, err := Read(path)
			require.NoError(t, err)
			gotS := map[string]string{}
			for id, v := range got {
				gotS[id] = string(v)
			}
			assert.Equal(t, tt.want, gotS)
		})
	}
}

// Compaction keeps what the index says, and the tokens of writers still
// at work, so their closes still count.
func TestCompactionKeepsViewsAndWritersAtWork(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rebuild := func() (map[string]View, error) { t.Fatal("no rebuild for an undamaged index"); return nil, nil }
	// Many closed sessions of one voyage, past CompactAbove.
	view := make([]byte, 4<<10)
	for i := 0; i < int(CompactAbove)/len(view)+2; i++ {
		w, err := Open(dir, "x", true, rebuild)
		require.NoError(t, err)
		require.NoError(t, w.Close("x", uint64(i+1), view))
	}
	atWork, err := Open(dir, "y", true, rebuild)
	require.NoError(t, err)
	before, err := os.Stat(filepath.Join(dir, Name))
	require.NoError(t, err)
	require.NoError(t, MaybeCompact(dir, true, rebuild))
	after, err := os.Stat(filepath.Join(dir, Name))
	require.NoError(t, err)
	assert.Less(t, after.Size(), before.Size()/4, "compacted")

	got, err := Read(filepath.Join(dir, Name))
	require.NoError(t, err)
	assert.Contains(t, got, "x")
	assert.NotContains(t, got, "y", "still at work")
	require.NoError(t, atWork.Close("y", 3, []byte("y3")))
	got, err = Read(filepath.Join(dir, Name))
	require.NoError(t, err)
	assert.Equal(t, "y3", string(got["y"]), "the writer's token survived the compaction")
}

// An index of live records, past the size to compact above, is not rewritten, and is
// not read again for that until it has doubled: closing n voyages one
// after another reads the index O(log n) times, not n.
func TestALiveIndexIsLookedAtAgainOnlyWhenItHasDoubled(t *testing.T) {
	t.Parallel()
	const above = 16 << 10
	dir := t.TempDir()
	rebuild := func() (map[string]View, error) { t.Fatal("no rebuild for an undamaged index"); return nil, nil }
	path := filepath.Join(dir, Name)
	base := func() uint64 {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		return binary.LittleEndian.Uint64(data[len(magic):headerSize])
	}
	looks := 0
	last := uint64(headerSize)
	for i := range 400 { // one session each of voyages apart: every record live
		id := fmt.Sprintf("voyage-%03d", i)
		w, err := Open(dir, id, true, rebuild)
		require.NoError(t, err)
		require.NoError(t, w.Close(id, 1, []byte("a view of "+id)))
		require.NoError(t, maybeCompact(dir, true, rebuild, above))
		if b := base(); b != last {
			info, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, uint64(info.Size()), b, "the base is the size looked at")
			assert.GreaterOrEqual(t, b, 2*last, "looked at again only once doubled")
			last = b
			looks++
		}
	}
	assert.Greater(t, looks, 0, "past the size to compact above, it was looked at")
	assert.Less(t, looks, 6)
	got, err := Read(path)
	require.NoError(t, err)
	assert.Len(t, got, 400, "nothing was lost")
}

// A rebuild waits for no writer: with a session open it leaves the
// damaged index alone.
func TestNoRebuildWhileAWriterIsAtWork(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rebuilt := 0
	rebuild := func() (map[string]View, error) {
		rebuilt++
		return map[string]View{"x": {Seq: 1, Data: []byte("x1")}}, nil
	}
	w, err := Open(dir, "x", true, rebuild)
	require.NoError(t, err)
	path := filepath.Join(dir, Name)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data[:len(data)-3], 0o600))
	other, err := Open(dir, "y", true, rebuild)
	require.NoError(t, err)
	assert.Equal(t, 0, rebuilt, "a session is open")
	require.NoError(t, other.Close("y", 1, []byte("y1")))
	require.NoError(t, w.Close("x", 1, []byte("x1")))
	_, err = Read(path)
	assert.ErrorIs(t, err, ErrDamaged)

	// The damage is now in the middle: readers distrust the whole index
	// until a compaction, with no session open, rebuilds it.
	last, err := Open(dir, "z", true, rebuild)
	require.NoError(t, err)
	require.NoError(t, maybeCompact(dir, true, rebuild, 0))
	assert.Equal(t, 0, rebuilt, "a session is open")
	require.NoError(t, last.Close("z", 1, []byte("z1")))
	require.NoError(t, maybeCompact(dir, true, rebuild, 0))
	assert.Equal(t, 1, rebuilt, "no session open: rebuilt")
	got, err := Read(path)
	require.NoError(t, err)
	assert.Equal(t, map[string][]byte{"x": []byte("x1")}, got, "what the voyages are now")
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add(appendRecord(nil, record{kind: kindOpen, token: NewToken(), id: "x"}))
	f.Add(appendRecord(nil, record{kind: kindClose, token: NewToken(), id: "voyage", seq: 7, view: []byte("view")}))
	f.Add(appendRecord(nil, record{kind: kindStale, id: "y"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, n, err := decodeRecord(b)
		if err != nil {
			return
		}
		again := appendRecord(nil, r)
		if string(again) != string(b[:n]) {
			t.Fatalf("record %q re-encodes as %q", b[:n], again)
		}
	})
}

// Seqs says how far each voyage's log went, as its writers' closes
// recorded: the highest, whether or not a writer opened it since, and
// whether or not a stale close distrusted its view.
func TestSeqsRecordsTheHighestCloseOfEachVoyage(t *testing.T) {
	t.Parallel()
	a, b, c := NewToken(), NewToken(), NewToken()
	tests := []struct {
		name string
		recs []record
		want map[string]uint64
	}{
		{"closed", []record{{kind: kindOpen, token: a, id: "x"}, {kind: kindClose, token: a, id: "x", seq: 5, view: []byte("v")}}, map[string]uint64{"x": 5}},
		{"a writer at work since", []record{{kind: kindOpen, token: a, id: "x"}, {kind: kindClose, token: a, id: "x", seq: 5, view: []byte("v")},
			{kind: kindOpen, token: b, id: "x"}}, map[string]uint64{"x": 5}},
		{"a stale close since", []record{{kind: kindOpen, token: a, id: "x"}, {kind: kindClose, token: a, id: "x", seq: 7, view: []byte("v")},
			{kind: kindOpen, token: b, id: "x"}, {kind: kindStale, token: b, id: "x"}}, map[string]uint64{"x": 7}},
		{"a lower close later", []record{{kind: kindOpen, token: a, id: "x"}, {kind: kindClose, token: a, id: "x", seq: 9, view: []byte("v")},
			{kind: kindOpen, token: c, id: "x"}, {kind: kindClose, token: c, id: "x", seq: 4, view: []byte("w")}}, map[string]uint64{"x": 9}},
		{"opened only", []record{{kind: kindOpen, token: a, id: "y"}}, map[string]uint64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data := header(headerSize)
			for _, r := range tt.recs {
				data = appendRecord(data, r)
			}
			path := filepath.Join(t.TempDir(), Name)
			require.NoError(t, os.WriteFile(path, data, 0o600))
			got, err := Seqs(path)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			for _, id := range []string{"x", "y", "z"} { // SeqOf says what Seqs says of each
				seq, ok, err := SeqOf(path, id)
				require.NoError(t, err)
				want, named := tt.want[id]
				assert.Equal(t, named, ok, id)
				assert.Equal(t, want, seq, id)
			}
		})
	}
}

// A record torn or damaged after others leaves what precedes it: those
// closes were written whole and still say how far the log went.
func TestSeqsReadsTheRecordsBeforeDamage(t *testing.T) {
	t.Parallel()
	a := NewToken()
	data := header(headerSize)
	data = appendRecord(data, record{kind: kindOpen, token: a, id: "x"})
	data = appendRecord(data, record{kind: kindClose, token: a, id: "x", seq: 12, view: []byte("v")})
	data = append(data, 1, 2, 3) // torn
	path := filepath.Join(t.TempDir(), Name)
	require.NoError(t, os.WriteFile(path, data, 0o600))
	got, err := Seqs(path)
	require.ErrorIs(t, err, ErrDamaged)
	assert.Equal(t, map[string]uint64{"x": 12}, got)
	seq, ok, err := SeqOf(path, "x")
	require.ErrorIs(t, err, ErrDamaged)
	assert.True(t, ok)
	assert.Equal(t, uint64(12), seq)
}

// Compaction keeps how far a voyage went even when no view of it is
// trusted any more (a stale close followed): the index stays evidence.
func TestCompactionKeepsTheHighestSeqOfAnUntrustedVoyage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rebuild := func() (map[string]View, error) { t.Fatal("no rebuild for an undamaged index"); return nil, nil }
	view := make([]byte, 4<<10)
	for i := 0; i < int(CompactAbove)/len(view)+2; i++ {
		w, err := Open(dir, "x", true, rebuild)
		require.NoError(t, err)
		require.NoError(t, w.Close("x", uint64(i+1), view))
	}
	w, err := Open(dir, "x", true, rebuild)
	require.NoError(t, err)
	require.NoError(t, w.Close("x", 0, nil)) // stale
	path := filepath.Join(dir, Name)
	before, err := Seqs(path)
	require.NoError(t, err)
	require.NoError(t, MaybeCompact(dir, true, rebuild))
	after, err := Seqs(path)
	require.NoError(t, err)
	assert.Equal(t, before, after)
	got, err := Read(path)
	require.NoError(t, err)
	assert.NotContains(t, got, "x", "still no trusted view")
}
