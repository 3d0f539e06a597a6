package projection

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/helmlog/helm/logbook"
)

// typicalMix is the bulk of a real voyage, in the order it is recorded:
// rounds of three stowed artifacts and their observations, a bearing
// sealing them, and an action intended and performed.
func typicalMix(rounds int) []*Event {
	at := time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC)
	who := logbook.Who{Identity: "john-agent", Role: "coder", Method: "claude-opus-4"}
	ev := func(t Type) *Event {
		at = at.Add(1700 * time.Millisecond)
		return &Event{Type: t, V: currentVersion[t], At: at, Who: who}
	}
	start := ev(VoyageStarted)
	start.Voyage = &VoyageInfo{ID: "a3b0fc12-0000-4000-8000-000000000001", Intent: "Resolve #42: fix widget crash", Kind: "resolve-issue"}
	events := []*Event{start}
	for r := range rounds {
		var obs []logbook.ObservationRecord
		for i := range 3 {
			hash := fmt.Sprintf("%064x", r*3+i)
			s := ev(ArtifactStowed)
			s.Artifact = &ArtifactRef{Hash: hash, Size: 4096 + int64(i), StoredSize: 1500, Offset: int64(r * 5000)}
			o := ev(Observed)
			o.Obs = &logbook.ObservationRecord{
				Key:   fmt.Sprintf("file:src/widget/mod%d.rs", i),
				Mark:  json.RawMessage(fmt.Sprintf(`{"kind":"file","path":"src/widget/mod%d.rs"}`, i)),
				Label: fmt.Sprintf("File src/widget/mod%d.rs", i), Artifact: hash, ObservedAt: o.At, ObservedBy: who,
			}
			obs = append(obs, *o.Obs)
			events = append(events, s, o)
		}
		b := ev(BearingTaken)
		b.Bearing = &logbook.Bearing{Observations: obs, Reading: logbook.Reading{Text: "The widget module misses a null check in init().", Source: logbook.SourceAgent}}
		id := fmt.Sprintf("act-%d", r)
		in := ev(ActionIntended)
		in.Action = &logbook.ActionRecord{ID: id, Kind: "commit", Params: json.RawMessage(`{"message":"widget: check for null in init","paths":["src/widget/mod0.rs"]}`)}
		done := ev(ActionPerformed)
		done.Action = &logbook.ActionRecord{ID: id, Kind: "commit", Result: &logbook.ActionResult{SHA: "9fceb02d0ae598e95dc970b74767f19372d61af8", Branch: "helm/fix-widget"}}
		events = append(events, b, in, done)
	}
	return events
}

// BenchmarkDecodeApply decodes and folds a typical mix of events, from the
// stored binary form and from exported JSON: the cost of replay per
// event, without I/O. One op is a fresh voyage of 1+9*rounds events.
func BenchmarkDecodeApply(b *testing.B) {
	events := typicalMix(10)
	for _, form := range []struct {
		name   string
		encode func(*Event) ([]byte, error)
	}{
		{"binary", Encode},
		{"json", func(e *Event) ([]byte, error) { return json.Marshal(e) }},
	} {
		b.Run(form.name, func(b *testing.B) {
			stored := make([][]byte, len(events))
			size := 0
			for i, e := range events {
				data, err := form.encode(e)
				if err != nil {
					b.Fatal(err)
				}
				stored[i] = data
				size += len(data)
			}
			benchReplay(b, stored, Decode)
			b.ReportMetric(float64(size)/float64(len(stored)), "B/event")
		})
	}
	// As opening a voyage decodes: a Decoder per replay.
	b.Run("binary-decoder", func(b *testing.B) {
		stored := make([][]byte, len(events))
		for i, e := range events {
			data, err := Encode(e)
			if err != nil {
				b.Fatal(err)
			}
			stored[i] = data
		}
		benchReplay(b, stored, nil)
	})
}

// BenchmarkReplay100k replays a random 100k-event voyage from its stored
// form, as opening it does: the whole voyage is one op.
func BenchmarkReplay100k(b *testing.B) {
	events := randomVoyage(rand.New(rand.NewPCG(1, 2)), 100_000)
	stored := make([][]byte, len(events))
	for i, e := range events {
		data, err := Encode(e)
		if err != nil {
			b.Fatal(err)
		}
		stored[i] = data
	}
	b.Run("decode", func(b *testing.B) { benchReplay(b, stored, Decode) })
	b.Run("decoder", func(b *testing.B) { benchReplay(b, stored, nil) })
}

// benchReplay folds stored into a fresh State per op, decoding with
// decode (nil: a Decoder per op, as opening a voyage does), and reports
// events/s and allocations per event.
func benchReplay(b *testing.B, stored [][]byte, decode func([]byte) (*Event, error)) {
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n := 0
	for b.Loop() {
		var st State
		dec := decode
		if dec == nil {
			dec = new(Decoder).Decode
		}
		for i, data := range stored {
			e, err := dec(data)
			if err != nil {
				b.Fatal(err)
			}
			if err := st.Apply(uint64(i+1), e); err != nil {
				b.Fatal(err)
			}
		}
		n += len(stored)
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(n), "allocs/event")
}

// BenchmarkSnapshot100k loads the snapshot of a random 100k-event voyage,
// against BenchmarkReplay100k (folding its events): what opening a long
// voyage from its snapshot costs instead of its replay.
func BenchmarkSnapshot100k(b *testing.B) {
	var st State
	for i, e := range randomVoyage(rand.New(rand.NewPCG(1, 2)), 100_000) {
		if err := st.Apply(uint64(i+1), e); err != nil {
			b.Fatal(err)
		}
	}
	snap, err := st.EncodeSnapshot()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeSnapshot(snap); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(snap)), "bytes")
	b.ReportMetric(100_000*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkOpenSnapshot100k opens the same snapshot lazily: its head
// alone, what opening a long voyage reads before a view needs more.
func BenchmarkOpenSnapshot100k(b *testing.B) {
	var st State
	for i, e := range randomVoyage(rand.New(rand.NewPCG(1, 2)), 100_000) {
		if err := st.Apply(uint64(i+1), e); err != nil {
			b.Fatal(err)
		}
	}
	snap, err := st.EncodeSnapshot()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := OpenSnapshot(bytes.NewReader(snap), int64(len(snap))); err != nil {
			b.Fatal(err)
		}
	}
}
