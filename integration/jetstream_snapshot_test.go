package integration

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/store"
	"github.com/helmlog/helm/store/natsstore"
)

// The recorded agent holds the store's credentials: it can replace a
// voyage's snapshot object with one whose point is not the log's. The
// store refuses each (store.ErrBadSnapshot: the facade folds from the
// first event), and one after the log's end is damage, as a summary
// beyond the log is; the genuine one reads back with the records after it.
func TestJetStreamRefusesAForgedSnapshot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := startServer(t, "snapshots", nil)
	home := newHome()
	st := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer st.Close()

	// Two voyages of the same shape: units of records 1-2, 3, 4-5.
	logs := map[string]store.Log{}
	for _, id := range []string{"genuine", "other"} {
		l, err := st.Create(ctx, id)
		require.NoError(t, err)
		defer l.Close()
		for _, u := range [][]string{{"a", "b"}, {"c"}, {"d", "e"}} {
			last, err := l.Last(ctx)
			require.NoError(t, err)
			var rs [][]byte
			for _, r := range u {
				rs = append(rs, []byte(id+" "+r))
			}
			_, err = l.AppendIf(ctx, last, rs...)
			require.NoError(t, err)
			if last == 0 {
				require.NoError(t, l.(store.Snapshots).PutSnapshot(ctx, 2, []byte("views at 2")))
			}
		}
		logs[id] = l
	}
	require.NoError(t, logs["genuine"].(store.Snapshots).PutSnapshot(ctx, 5, []byte("views at 5")))

	obs, err := rawJS(t, srv).ObjectStore(ctx, "HELM_"+home+"_artifacts")
	require.NoError(t, err)
	object := func(id string) (point map[string]any, data []byte) {
		b, err := obs.GetBytes(ctx, id+"/snapshot")
		require.NoError(t, err)
		n := int(binary.LittleEndian.Uint32(b[8:]))
		require.NoError(t, json.Unmarshal(b[12:12+n], &point))
		return point, b[12+n:]
	}
	put := func(id string, point map[string]any, data []byte) {
		pj, err := json.Marshal(point)
		require.NoError(t, err)
		b := binary.LittleEndian.AppendUint32([]byte("HELMJSN1"), uint32(len(pj)))
		_, err = obs.PutBytes(ctx, id+"/snapshot", append(append(b, pj...), data...))
		require.NoError(t, err)
	}
	genuine, data := object("genuine")
	other, _ := object("other")

	read := func(t *testing.T) (store.Snapshot, error) {
		c := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
		defer c.Close()
		l, err := c.Open(ctx, "genuine")
		require.NoError(t, err)
		defer l.Close()
		return l.(store.Snapshots).Snapshot(ctx)
	}
	snap, err := read(t)
	require.NoError(t, err, "the genuine snapshot, at the log's end")
	assert.Equal(t, uint64(5), snap.Head.Seq)
	assert.Equal(t, "views at 5", string(snap.Data))

	clone := func(edit func(p map[string]any)) map[string]any {
		p := map[string]any{}
		for k, v := range genuine {
			p[k] = v
		}
		head := map[string]any{}
		for k, v := range genuine["head"].(map[string]any) {
			head[k] = v
		}
		p["head"] = head
		edit(p)
		return p
	}
	for _, tc := range []struct {
		name    string
		point   map[string]any
		raw     []byte
		damaged bool
	}{
		{name: "another hash at its record", point: clone(func(p map[string]any) {
			p["head"].(map[string]any)["hash"] = other["head"].(map[string]any)["hash"]
		})},
		{name: "another voyage's unit at the same record", point: clone(func(p map[string]any) {
			p["stream"], p["head"] = other["stream"], other["head"]
		})},
		{name: "an earlier unit of the voyage, named as a later record", point: clone(func(p map[string]any) {
			p["stream"] = float64(1)
			p["head"].(map[string]any)["seq"] = float64(3)
		})},
		{name: "another chain value", point: clone(func(p map[string]any) { p["chain"] = float64(12345) })},
		{name: "after the log's end", point: clone(func(p map[string]any) { p["head"].(map[string]any)["seq"] = float64(9) }), damaged: true},
		{name: "not a snapshot of this version", raw: []byte("HELMJSN9 whatever")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.raw != nil {
				_, err := obs.PutBytes(ctx, "genuine/snapshot", tc.raw)
				require.NoError(t, err)
			} else {
				put("genuine", tc.point, data)
			}
			_, err := read(t)
			if tc.damaged {
				var de *store.DamageError
				require.ErrorAs(t, err, &de)
				assert.Contains(t, de.Reason, "the log lost records it had acknowledged, or the snapshot was forged")
				return
			}
			require.ErrorIs(t, err, store.ErrBadSnapshot)
			assert.NotErrorIs(t, err, store.ErrDamaged, "a cache not to trust, not damage of the log")
		})
	}
}

// An object the agent put in the snapshot's place that is larger than any
// snapshot helm writes compresses to (256 MiB) is refused before it is
// read: a reader never holds it.
func TestJetStreamRefusesAnOversizedSnapshotUnread(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 257 MiB to the server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := startServer(t, "snapshot-size", nil)
	home := newHome()
	st := openStore(t, srv.ClientURL(), natsstore.Options{Home: home})
	defer st.Close()
	l, err := st.Create(ctx, "big")
	require.NoError(t, err)
	defer l.Close()
	_, err = l.AppendIf(ctx, 0, []byte("a"))
	require.NoError(t, err)

	obs, err := rawJS(t, srv).ObjectStore(ctx, "HELM_"+home+"_artifacts")
	require.NoError(t, err)
	const size = 257 << 20
	_, err = obs.Put(ctx, jetstream.ObjectMeta{Name: "big/snapshot"}, io.LimitReader(zeros{}, size))
	require.NoError(t, err)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = l.(store.Snapshots).Snapshot(ctx)
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, store.ErrBadSnapshot)
	assert.NotErrorIs(t, err, store.ErrDamaged, "a cache not to trust, not damage of the log")
	assert.Contains(t, err.Error(), "big/snapshot")
	assert.Contains(t, err.Error(), "larger than 256 MiB")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "the object was not read")
}

// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
