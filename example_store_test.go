package helm_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/store/storetest"
)

// A home whose voyages are in a store: a crew's JetStream server
// (store/natsstore.Open) in production; here the test store on disk
// (storetest.Dir), which passes the same conformance suite. Two homes on one store, as on two
// machines, record on one voyage; each change decides on the store's
// tail.
func ExampleOpenStore() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	st := storetest.OpenDir(filepath.Join(dir, "shared"), nil)
	defer st.Close()

	ana, _ := helm.OpenStore(filepath.Join(dir, "ana"), st, "the crew's store", nil)
	bob, _ := helm.OpenStore(filepath.Join(dir, "bob"), st, "the crew's store", nil)
	who := logbook.Who{Identity: "ana", Role: "coder", Method: "human"}
	v, err := ana.Start(ctx, "Fix #7", helm.OpenWaters, who, nil)
	if err != nil {
		panic(err)
	}
	defer v.Close()
	v.Note(ctx, "from ana's machine", who)

	w, _ := bob.Voyage(ctx, v.ID())
	defer w.Close()
	w.Note(ctx, "from bob's machine", logbook.Who{Identity: "bob", Role: "reviewer", Method: "human"})

	v.Refresh(ctx)
	for e, err := range v.Entries(ctx, nil) {
		if err != nil {
			panic(err)
		}
		fmt.Println(e.N, e.Who.Identity, e.Note.Text)
	}
	// Output:
	// 1 ana from ana's machine
	// 2 bob from bob's machine
}

// Copying a voyage to another home brings the copy up to date when it is
// behind, and refuses one that diverged.
func ExampleHome_Copy() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "helm-example")
	defer os.RemoveAll(dir)
	here, _ := helm.Open(filepath.Join(dir, "here"), nil)
	there, _ := helm.Open(filepath.Join(dir, "there"), nil)
	who := logbook.Who{Identity: "ana", Role: "coder", Method: "human"}
	v, _ := here.Start(ctx, "Fix #7", helm.OpenWaters, who, nil)
	defer v.Close()

	rep, _ := here.Copy(ctx, v.ID(), there)
	fmt.Println("created:", rep.Created, "records:", rep.Records)
	v.Note(ctx, "one more", who)
	rep, _ = here.Copy(ctx, v.ID(), there)
	fmt.Println("appended:", rep.Appended)

	w, _ := there.Voyage(ctx, v.ID())
	w.Note(ctx, "recorded there", who)
	w.Close()
	v.Note(ctx, "recorded here", who)
	_, err := here.Copy(ctx, v.ID(), there)
	fmt.Println(errors.Is(err, helm.ErrDiverged))
	// Output:
	// created: true records: 1
	// appended: 1
	// true
}
