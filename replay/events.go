package replay

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/projection"
)

// WriteEvents writes the events of voyage v to w as JSON lines, one event
// a line with its sequence number, in the order they were recorded: the
// form ReadEvents reads back, and the one transcripts and the logbook's
// JSON share (docs/transcript.md). It reads v's log as it is when it gets
// to its end (helm.Voyage.Events).
func WriteEvents(ctx context.Context, w io.Writer, v *helm.Voyage) error {
	bw := bufio.NewWriter(w)
	for e, err := range v.Events(ctx, 1) {
		if err != nil {
			return err
		}
		data, err := json.Marshal(&e)
		if err != nil {
			return fmt.Errorf("write events of voyage %s: event %d: %w", v.ID(), e.Seq, err)
		}
		bw.Write(data)
		if err := bw.WriteByte('\n'); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// maxEventLine bounds a line of a recording, and with it what reading
// one costs: an event is bounded by the log's largest record
// (segment.DefaultMaxRecordSize), and its JSON is about as long.
const maxEventLine = 64 << 20

// ReadEvents reads events written by WriteEvents, decoding each as the
// log's reader does: an event of an older schema is brought to today's.
// A line that is not an event is an error naming it.
func ReadEvents(r io.Reader) ([]helm.Event, error) {
	var out []helm.Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), maxEventLine)
	line := 1
	for ; sc.Scan(); line++ {
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
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("read events: line %d: %w: the line is longer than %d bytes, longer than any event helm writes", line, helm.ErrInvalid, maxEventLine)
		}
		return nil, fmt.Errorf("read events: line %d: %w", line, err)
	}
	return out, nil
}
