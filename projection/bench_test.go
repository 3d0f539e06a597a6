package projection

import "testing"

// BenchmarkDecodeApply decodes and folds a typical mix of events: the cost
// of replay per event, without I/O.
func BenchmarkDecodeApply(b *testing.B) {
	var stored [][]byte
	for _, e := range sampleEvents() {
		if e.Type == VoyageStarted || e.Type == VoyageCompleted || e.Type == ReadingChallenged || e.Type == ActionPerformed {
			continue
		}
		data, _ := Encode(e)
		stored = append(stored, data)
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		var st State
		st.Apply(1, &Event{Type: VoyageStarted, V: 1, Voyage: &VoyageInfo{ID: "v"}})
		for i, data := range stored {
			e, err := Decode(data)
			if err != nil {
				b.Fatal(err)
			}
			if e.Type == ActionIntended {
				e.Action.ID = "x"
			}
			st.Apply(uint64(i+2), e)
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}
