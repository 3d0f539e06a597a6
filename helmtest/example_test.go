package helmtest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/helmtest"
)

// These examples show test functions' bodies: each needs the test's t.

// Home gives a test a home whose clock and ids are the same on every run.
func ExampleHome() {
	t := &testing.T{} // in a test: the test's t
	h := helmtest.Home(t)
	v, _ := h.Start(context.Background(), "Fix #42", helm.OpenWaters, helm.Who{Identity: "ann"}, nil)
	fmt.Println(v.ID(), v.Info().Created)
}

// Given, When, Then: what a change records, from a given history.
func ExampleGiven() {
	t := &testing.T{} // in a test: the test's t
	ann := helm.Who{Identity: "ann", Role: "coder", Method: "human"}
	helmtest.Given(t,
		helmtest.Started("Fix #42", ann),
		helmtest.Observed("the crash report", ann),
	).When(func(v *helm.Voyage) error {
		_, err := v.TakeBearing(context.Background(), "A nil config.", ann, nil)
		return err
	}).Then(
		helmtest.Bearing("A nil config.", ann),
	)
}

// Record keeps a voyage as testdata/NAME.jsonl the first time, and
// replays it in every later run.
func ExampleRecord() {
	t := &testing.T{} // in a test: the test's t
	r := helmtest.Record(t, "fix-42", func(h *helm.Home) (*helm.Voyage, error) {
		return h.Start(context.Background(), "Fix #42", helm.OpenWaters, helm.Who{Identity: "ann"}, nil)
	})
	fmt.Println(r.Views.Info.Intent, len(r.Actions()))
}

// Replay checks a recording (a .jsonl export or a voyage directory, with
// its views beside it) against the code as it is now.
func ExampleReplay() {
	t := &testing.T{} // in a test: the test's t
	r := helmtest.Replay(t, "testdata/fix-42.jsonl")
	for _, a := range r.Actions() {
		fmt.Println(a.N, a.Kind, string(a.Params))
	}
}
