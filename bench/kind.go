package main

import (
	"context"
	"errors"

	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/sighting"
)

// benchKind is the mark and sighting kind this module registers: a file
// at a path and the text that was read there. Being bench-only, it lets
// the workload control the exact sighting bytes.
const benchKind = "bench-file"

func init() {
	marks.Register(benchKind, func() marks.Mark { return &benchMark{} })
	sighting.Register(benchKind, func() sighting.Sighting { return &benchSighting{} })
}

// benchMark is a file the workload pretends to have read.
type benchMark struct {
	Path string `json:"path"`
}

func (*benchMark) Kind() string     { return benchKind }
func (m *benchMark) Key() string    { return benchKind + ":" + m.Path }
func (m *benchMark) String() string { return "BenchFile @ " + m.Path }

// Observe is never called: the benchmark records observations it made up.
func (m *benchMark) Observe(context.Context, *marks.Env) (sighting.Sighting, error) {
	return nil, errors.New("bench-file marks are recorded, not observed")
}

// benchSighting is what came back from a bench-file mark.
type benchSighting struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func (*benchSighting) Kind() string { return benchKind }
