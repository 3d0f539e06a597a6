// Package jsonl reads the session logs agent hosts write, one JSON
// object a line, with a bound on each line: a host's log is read whole
// before anything of it is recorded, and an error names the line.
package jsonl

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxLine bounds one line of a session log (16 MiB): a line holds one
// message or one tool result, a large file's content at most.
const MaxLine = 16 << 20

// LineError is a line of a session log that could not be read: its
// number (from 1) and why.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// Line is one non-blank line of a log and its number.
type Line struct {
	N    int
	Data []byte
}

// Read reads every non-blank line of r, each at most MaxLine bytes and
// each a JSON object; host names the log in errors ("Claude Code
// transcript").
func Read(r io.Reader, host string) ([]Line, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	var lines []Line
	n := 0
	for sc.Scan() {
		n++
		data := bytes.TrimSpace(sc.Bytes())
		if len(data) == 0 {
			continue
		}
		if data[0] != '{' {
			return nil, &LineError{Line: n, Err: fmt.Errorf("not a JSON object: a %s has one JSON object a line", host)}
		}
		lines = append(lines, Line{N: n, Data: bytes.Clone(data)})
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &LineError{Line: n + 1, Err: fmt.Errorf("longer than the limit of %d bytes (16 MiB)", MaxLine)}
		}
		return nil, fmt.Errorf("read the %s: %w", host, err)
	}
	return lines, nil
}
