package helm

import (
	"encoding/json"
	"fmt"
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
