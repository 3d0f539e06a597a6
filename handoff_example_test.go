package helm_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

// A person hands an agent's voyage to herself: from that entry on, what
// is recorded without naming an identity is hers, and so are the
// credentials its actions use.
func ExampleHome_Handoff() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example-")
	defer os.RemoveAll(dir)
	h, err := helm.Open(dir, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	agent := logbook.Who{Identity: "claude-a", Role: "coder", Method: "claude"}
	v, err := h.Start(ctx, "Fix the widget", helm.OpenWaters, agent, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer v.Close()

	ann := logbook.Who{Identity: "ann", Role: "lead", Method: "human"}
	e, err := h.Handoff(ctx, v.ID(), ann, logbook.Handoff{To: "ann", Why: "taking over the review"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(e.N, logbook.DescribeHandoff(e.Handoff, e.Who))

	// An agent may not hand a voyage off (unless a rule allows it).
	_, err = h.Handoff(ctx, v.ID(), agent, logbook.Handoff{To: "claude-a"})
	fmt.Println(errors.Is(err, helm.ErrRefused))
	// Output:
	// 1 identity handed off from claude-a to ann, by ann (human): taking over the review
	// true
}
