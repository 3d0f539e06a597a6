// Package replay shows how to test a recorded voyage: its tests replay
// testdata/voyage.jsonl (a voyage exported as JSON lines) into fresh views
// and check them, and re-run the script that recorded it to catch any
// change in what helm records.
//
// The package has no code of its own; read replay_test.go. Run it with
//
//	go test ./examples/replay
//
// and, after an intended change to what helm records, rewrite the
// recording with
//
//	go test ./examples/replay -run TestScript -update
package replay
