package helm

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
)

// Events returns every event of the voyage in order, decoded (and upcast
// to the current schema).
func (v *Voyage) Events(ctx context.Context) ([]projection.Event, error) {
	var out []projection.Event
	err := v.log.Scan(ctx, 1, func(r segment.Record) error {
		if artifact.IsBlob(r.Data) {
			return nil
		}
		e, err := projection.Decode(r.Data)
		if err != nil {
			return fmt.Errorf("voyage %s, record %d: %w", v.id, r.Seq, err)
		}
		e.Seq = r.Seq
		out = append(out, *e)
		return nil
	})
	if err != nil {
		return nil, v.fail("read events", err, "")
	}
	return out, nil
}

// Export writes the voyage's events as JSON lines, one event a line, in
// the order they were recorded: the form Replay reads back.
func (v *Voyage) Export(ctx context.Context, w io.Writer) error {
	bw := bufio.NewWriter(w)
	err := v.log.Scan(ctx, 1, func(r segment.Record) error {
		if artifact.IsBlob(r.Data) {
			return nil
		}
		e, err := projection.Decode(r.Data)
		if err != nil {
			return fmt.Errorf("voyage %s, record %d: %w", v.id, r.Seq, err)
		}
		e.Seq = r.Seq
		data, err := json.Marshal(e)
		if err != nil {
			return err
		}
		bw.Write(data)
		return bw.WriteByte('\n')
	})
	if err != nil {
		return v.fail("export", err, "")
	}
	return bw.Flush()
}

// Replay folds events into fresh views, as opening a voyage does. Tests
// use it to check the views of a recorded voyage. Events read from a log
// carry their sequence numbers (Event.Seq); events without one are
// numbered from 1 in order.
func Replay(events []projection.Event) (*projection.State, error) {
	st := &projection.State{}
	for i := range events {
		seq := events[i].Seq
		if seq == 0 {
			seq = uint64(i) + 1
		}
		if err := st.Apply(seq, &events[i]); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// ReadEvents reads events exported by Voyage.Export.
func ReadEvents(r io.Reader) ([]projection.Event, error) {
	var out []projection.Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 64<<20)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		e, err := projection.Decode(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("read events: line %d: %w", line, err)
		}
		out = append(out, *e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return out, nil
}

// ReplayDir folds the events of the voyage stored in dir (a directory
// under $HELM_HOME/voyages, or a copy of one) into fresh views, without
// taking its lock or writing anything.
func ReplayDir(ctx context.Context, dir string) (*projection.State, error) {
	st := &projection.State{}
	err := segment.ScanDir(ctx, filepath.Join(dir, "events"), 1, func(r segment.Record) error {
		if artifact.IsBlob(r.Data) {
			return nil
		}
		e, err := projection.Decode(r.Data)
		if err != nil {
			return fmt.Errorf("%s, record %d: %w", dir, r.Seq, err)
		}
		return st.Apply(r.Seq, e)
	})
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w", dir, err)
	}
	return st, nil
}

// Deterministic returns options that make a scripted voyage record the
// same bytes on every run, for tests that replay it or compare it with a
// recording: the clock starts at start and moves step at every reading,
// and ids are UUIDs made of idPrefix (8 hexadecimal digits) and a counter
// from 1 ("a3b0fc12-0000-4000-8000-000000000001", ...). The clock and the
// counter are safe for concurrent use; the order in which goroutines read
// them is theirs to make deterministic.
func Deterministic(start time.Time, step time.Duration, idPrefix string) *Options {
	if len(idPrefix) != 8 {
		panic("helm.Deterministic: idPrefix must be 8 hexadecimal digits, got " + strconv.Quote(idPrefix))
	}
	var mu sync.Mutex
	t, n := start.UTC(), 0
	return &Options{
		Clock: func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			t = t.Add(step)
			return t
		},
		NewID: func() uuid.UUID {
			mu.Lock()
			defer mu.Unlock()
			n++
			return uuid.MustParse(fmt.Sprintf("%s-0000-4000-8000-%012d", idPrefix, n))
		},
	}
}
