package view

import (
	"encoding/json"
	"fmt"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/exit"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
)

// What a bearing takes from its caller besides its reading: observations
// written to files, and whose words the reading is.

// ParseObservation reads an observation's JSON, as observe --out writes
// it, from where (an --observation FILE, a tool's observation_files).
func ParseObservation(data []byte, where string) (helm.Observation, error) {
	const hint, tool = "helm observe KIND ... --out FILE, to write one", "write one with helm observe KIND ... --out FILE"
	var o helm.Observation
	if err := json.Unmarshal(data, &o); err != nil {
		return o, &exit.UsageError{Err: fmt.Errorf("%s: %w: %v", where, helm.ErrInvalid, err), Hint: hint, Tool: tool}
	}
	// What observe's constructors refuse, a file may not bring in.
	if err := marks.Validate(o.Mark); err != nil {
		return o, &exit.UsageError{Err: fmt.Errorf("%s: %w", where, err), Hint: hint, Tool: tool}
	}
	return o, nil
}

// SourceOf is the source of a reading: given (agent or user), or, when
// given is empty, the one who's method implies: a person's (method human)
// words are the user's. False: given is neither.
func SourceOf(given string, who logbook.Who) (logbook.Source, bool) {
	switch logbook.Source(given) {
	case logbook.SourceAgent, logbook.SourceUser:
		return logbook.Source(given), true
	case "":
		if who.Method == "human" {
			return logbook.SourceUser, true
		}
		return logbook.SourceAgent, true
	}
	return "", false
}
