package helm

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/helmlog/helm/projection"
)

// Views are a voyage's views as Replay folds them from its events: what
// Info, Slate, Logbook, FailedActions and Artifacts return for the voyage
// open.
type Views struct {
	Info          VoyageInfo
	Slate         []ObservationRecord
	Logbook       []Entry
	FailedActions []Entry
	Artifacts     []ArtifactInfo
}

// Replay folds events into fresh views, as opening a voyage does. Tests
// use it to check the views of a recorded voyage (see ReadEvents). Events
// read from a log carry their sequence numbers (Event.Seq); events without
// one are numbered from 1 in order.
func Replay(events []projection.Event) (*Views, error) {
	st := &projection.State{}
	for i := range events {
		seq := events[i].Seq
		if seq == 0 {
			seq = uint64(i) + 1
		}
		if err := st.Apply(seq, &events[i]); err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
	}
	return viewsOf(st), nil
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
