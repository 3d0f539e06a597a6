package sighting

func init() {
	Register("command", func() Sighting { return &Command{} })
}

// Command answers a command mark: how the program ended and what it wrote.
// The environment it ran with is deliberately not recorded (it holds
// secrets). A non-zero exit is an observation all the same; Failures says
// how the program failed.
type Command struct {
	// ExitCode is the program's exit status; nil when it did not exit by
	// itself (it could not start, was killed, or timed out).
	ExitCode *int `json:"exit_code,omitzero"`
	// Stdout and Stderr are the program's output as UTF-8 text (invalid
	// bytes replaced by U+FFFD). Output beyond the observer's cap keeps its
	// beginning and end around a "… [truncated N bytes] …" marker.
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	// StdoutTruncatedBytes and StderrTruncatedBytes count the bytes cut
	// from the middle of each stream.
	StdoutTruncatedBytes int64 `json:"stdout_truncated_bytes,omitempty"`
	StderrTruncatedBytes int64 `json:"stderr_truncated_bytes,omitempty"`
	// DurationMS is the wall-clock run time in milliseconds. It varies
	// between runs, so two otherwise equal sightings rarely share a hash.
	DurationMS int64 `json:"duration_ms"`
	// TimedOut says the program was killed for exceeding the timeout.
	TimedOut bool `json:"timed_out,omitempty"`
	// TimeoutMS is the timeout the program ran under, in milliseconds;
	// 0 in sightings recorded before it was.
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
	// Signal names the signal that ended the program, as Go names it
	// ("killed", "segmentation fault"), when one did and it was not the
	// observer's at the timeout.
	Signal string `json:"signal,omitempty"`
	// Dir is the working directory as the mark names it ("." for the
	// default), recorded only when it could not be entered; DirError
	// then says why ("no such file or directory", "not a directory") and
	// the program was not started.
	Dir      string `json:"dir,omitempty"`
	DirError string `json:"dir_error,omitempty"`
	// Error says why the program could not be run, such as
	// `exec: "nope": executable file not found in $PATH`.
	Error string `json:"error,omitempty"`
}

// Kind returns "command".
func (*Command) Kind() string { return "command" }
