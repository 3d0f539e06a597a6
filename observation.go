package helm

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/sighting"
)

// Observation is one look: a mark, the sighting that came back, and when.
// It encodes to and from self-describing JSON, so that an observation made
// in one place can be written to a file and sealed by a bearing in another
// (BearingOptions.Observations).
type Observation struct {
	Mark       marks.Mark
	Sighting   sighting.Sighting
	ObservedAt time.Time
}

type observationJSON struct {
	Mark       json.RawMessage `json:"mark"`
	Sighting   json.RawMessage `json:"sighting"`
	ObservedAt time.Time       `json:"observed_at"`
}

// MarshalJSON encodes the observation with tagged mark and sighting.
func (o Observation) MarshalJSON() ([]byte, error) {
	m, err := marks.Marshal(o.Mark)
	if err != nil {
		return nil, err
	}
	s, err := sighting.Marshal(o.Sighting)
	if err != nil {
		return nil, err
	}
	return json.Marshal(observationJSON{Mark: m, Sighting: s, ObservedAt: o.ObservedAt})
}

// UnmarshalJSON decodes an observation written by MarshalJSON.
func (o *Observation) UnmarshalJSON(data []byte) error {
	var raw observationJSON
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("decode observation: %w", err)
	}
	if len(raw.Mark) == 0 || len(raw.Sighting) == 0 {
		return fmt.Errorf("decode observation: it needs both \"mark\" and \"sighting\"")
	}
	m, err := marks.Unmarshal(raw.Mark)
	if err != nil {
		return fmt.Errorf("decode observation: %w", err)
	}
	s, err := sighting.Unmarshal(raw.Sighting)
	if err != nil {
		return fmt.Errorf("decode observation: %w", err)
	}
	if s.Kind() != m.Kind() {
		return fmt.Errorf("decode observation: a %s sighting cannot answer a %s mark", s.Kind(), m.Kind())
	}
	*o = Observation{Mark: m, Sighting: s, ObservedAt: raw.ObservedAt}
	return nil
}

// WriteJSON writes the observation's JSON to w: what MarshalJSON returns,
// except that a sighting with texts read from their sources (a large
// file's, sighting.HasSources) is streamed from them, never held whole.
func (o Observation) WriteJSON(w io.Writer) error {
	if !sighting.HasSources(o.Sighting) {
		data, err := o.MarshalJSON()
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	m, err := marks.Marshal(o.Mark)
	if err != nil {
		return err
	}
	at, err := json.Marshal(o.ObservedAt)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.WriteString(`{"mark":`)
	bw.Write(m)
	bw.WriteString(`,"sighting":`)
	if err := sighting.Encode(bw, o.Sighting, nil); err != nil {
		return fmt.Errorf("encode observation of %s: %w", o.Mark, err)
	}
	bw.WriteString(`,"observed_at":`)
	bw.Write(at)
	bw.WriteByte('}')
	return bw.Flush()
}
