// Package replay shows how to test a recorded voyage with package
// helmtest: its test records a voyage once (testdata/voyage.jsonl and its
// views, testdata/voyage.views.json), then on every run replays the
// recording with the code as it is now — reporting the first event after
// which the views diverge, and the fields that differ — and requires the
// script to record the same events again.
//
// The package has no code of its own; read replay_test.go. Run it with
//
//	go test ./examples/replay
//
// and, after an intended change to what helm records, rewrite the
// recording and review its diff:
//
//	HELMTEST_UPDATE=1 go test ./examples/replay
package replay
