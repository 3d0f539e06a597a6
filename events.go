package helm

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
)

// eventsOf adapts fn to the records of the event log in dir of voyage id:
// the one path by which a voyage's records become events. Blob records
// (and reclaimed ones) are skipped (an artifact's bytes are read only when the artifact is);
// events are decoded, and upcast to the current schema; a record that
// does not decode is an error naming the voyage, the log and the record.
func eventsOf(id, dir string, fn func(seq uint64, e *projection.Event) error) func(segment.Record) error {
	return func(r segment.Record) error {
		if artifact.IsBlob(r.Data) || r.Reclaimed {
			// A reclaimed record held a jettisoned artifact's bytes
			// (Voyage.Compact); Verify checks that an artifact names it.
			return nil
		}
		e, err := projection.Decode(r.Data)
		if err != nil {
			return fmt.Errorf("voyage %s, %s, record %d: %w", id, dir, r.Seq, err)
		}
		return fn(r.Seq, e)
	}
}

// Export writes the voyage's events as JSON lines, one event a line, in
// the order they were recorded: the form ReadEvents reads back.
func (v *Voyage) Export(ctx context.Context, w io.Writer) error {
	bw := bufio.NewWriter(w)
	err := v.rec.Scan(ctx, 1, eventsOf(v.id, v.rec.Dir(), func(seq uint64, e *projection.Event) error {
		e.Seq = seq
		data, err := json.Marshal(e)
		if err != nil {
			return err
		}
		bw.Write(data)
		return bw.WriteByte('\n')
	}))
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return v.fail("export", err, Hint{})
	}
	return nil
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
