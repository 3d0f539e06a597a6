package segment_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/helmlog/helm/segment"
)

// A log is a directory: open it, append durably, read it back.
func Example() {
	dir, _ := os.MkdirTemp("", "voyage")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	l, err := segment.Open(ctx, filepath.Join(dir, "log"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()

	first, _ := l.Append(ctx, []byte("set sail"), []byte("wind north-east"))
	fmt.Println("first seq:", first)

	_ = l.Scan(ctx, 1, func(r segment.Record) error {
		fmt.Printf("%d %s\n", r.Seq, r.Data)
		return nil
	})
	// Output:
	// first seq: 1
	// 1 set sail
	// 2 wind north-east
}

// Commit decides what to append after seeing the current tail, under the
// writer lock: here a record is appended only if no record says "landed".
func ExampleLog_Commit() {
	dir, _ := os.MkdirTemp("", "voyage")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	l, _ := segment.Open(ctx, dir, nil)
	defer l.Close()
	_, _ = l.Append(ctx, []byte("landed"))

	errLanded := errors.New("voyage already landed")
	_, err := l.Commit(ctx, func(tx *segment.Tx) ([][]byte, error) {
		landed := false
		if err := tx.Scan(1, func(r segment.Record) error {
			landed = landed || string(r.Data) == "landed"
			return nil
		}); err != nil {
			return nil, err
		}
		if landed {
			return nil, errLanded
		}
		return [][]byte{[]byte("observation")}, nil
	})
	fmt.Println(err, l.Last())
	// Output: voyage already landed 1
}

// AppendIf appends only if nobody appended since the caller last looked.
func ExampleLog_AppendIf() {
	dir, _ := os.MkdirTemp("", "voyage")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	l, _ := segment.Open(ctx, dir, nil)
	defer l.Close()
	_, _ = l.Append(ctx, []byte("a"))

	_, err := l.AppendIf(ctx, 0, []byte("b"))
	fmt.Println(errors.Is(err, segment.ErrConflict), err)
	first, err := l.AppendIf(ctx, 1, []byte("b"))
	fmt.Println(first, err)
	// Output:
	// true segment: log tail moved: expected last seq 0, found 1
	// 2 <nil>
}

// Verify checks every record of a log without locking it.
func ExampleVerify() {
	dir, _ := os.MkdirTemp("", "voyage")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	l, _ := segment.Open(ctx, dir, nil)
	_, _ = l.Append(ctx, []byte("a"), []byte("b"))
	l.Close()

	rep, err := segment.Verify(ctx, dir, nil)
	fmt.Println(rep.Segments, rep.Records, err)
	// Output: 1 2 <nil>
}
