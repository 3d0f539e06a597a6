package helm_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

// A fork: a new voyage whose history is the first entries of another,
// linked to it, that then goes its own way.
func ExampleHome_Start_fork() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, err := helm.Open(dir, deterministic(time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC), time.Minute, "a3b0fc12"))
	if err != nil {
		panic(err)
	}
	who := logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}
	v, err := h.Start(ctx, "Fix the widget", helm.OpenWaters, who, nil)
	if err != nil {
		panic(err)
	}
	defer v.Close()
	for _, n := range []string{"Reproduced the crash.", "The null check is missing in init().", "Guarded it in the caller."} {
		if _, err := v.Note(ctx, n, who); err != nil {
			panic(err)
		}
	}

	f, err := h.Start(ctx, "What if the guard goes in init()", helm.OpenWaters, who, &helm.StartOptions{ForkOf: v.ID(), ForkAt: 2})
	if err != nil {
		panic(err)
	}
	defer f.Close()
	if _, err := f.Note(ctx, "Guarded it in init() instead.", who); err != nil {
		panic(err)
	}
	fork := f.Info().Fork
	fmt.Printf("forked from %s at entry %d\n", fork.Voyage[:8], fork.Entry)
	for e, err := range f.Entries(ctx, nil) {
		if err != nil {
			panic(err)
		}
		fmt.Println(e.N, e.Note.Text)
	}
	rep, err := h.Verify(ctx, f.ID(), nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(rep.OK(), rep.Origin == "checked against voyage "+v.ID()+" up to record "+fmt.Sprint(fork.Seq))
	// Output:
	// forked from a3b0fc12 at entry 2
	// 1 Reproduced the crash.
	// 2 The null check is missing in init().
	// 3 Guarded it in init() instead.
	// true true
}

// Salvage carries what is intact of a damaged voyage into a new one, and
// says what was lost; ReadIntact reads the same events without writing.
func ExampleHome_Salvage() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	h, err := helm.Open(dir, deterministic(time.Date(2026, 2, 26, 17, 0, 0, 0, time.UTC), time.Minute, "a3b0fc12"))
	if err != nil {
		panic(err)
	}
	who := logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}
	v, err := h.Start(ctx, "Fix the widget", helm.OpenWaters, who, nil)
	if err != nil {
		panic(err)
	}
	for _, n := range []string{"alpha", "bravo", "charlie"} {
		if _, err := v.Note(ctx, n, who); err != nil {
			panic(err)
		}
	}
	v.Close()
	// A byte of the third note's record flips on the disk.
	segs, _ := filepath.Glob(filepath.Join(dir, "voyages", v.ID(), "events", "*.seg"))
	data, _ := os.ReadFile(segs[0])
	data[bytes.Index(data, []byte("charlie"))] ^= 0x20
	if err := os.WriteFile(segs[0], data, 0o600); err != nil {
		panic(err)
	}

	damage, err := h.ReadIntact(ctx, v.ID(), nil, func(e helm.Event) error {
		if e.Note != nil {
			fmt.Println("intact:", e.Note.Text)
		}
		return nil
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("first damage at record", damage.Seq)

	s, err := h.Salvage(ctx, v.ID(), who, nil)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	o := s.Info().Salvage
	fmt.Printf("carried records up to %d; lost from record %d\n", o.Seq, o.Lost.Seq)
	// Output:
	// intact: alpha
	// intact: bravo
	// first damage at record 4
	// carried records up to 3; lost from record 4
}
