package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/itchyny/gojq"
)

// --json=FIELDS and --jq EXPR shape a command's JSON output as gh's
// --json FIELDS and --jq do: FIELDS keeps only those fields of each
// object (of each element, for a list), then EXPR, a jq program
// (github.com/itchyny/gojq: jq's language, in Go, no program to install),
// is run on each value; a string result is printed as it is, any other
// as JSON on one line. --jq implies --json. Both apply to what a command
// writes with --json, so to every command that has JSON output; the
// command runs as ever, and only what it prints is shaped.
//
// (--json takes FIELDS after "=": "--json id,intent" would read
// "id,intent" as an argument of the command, as --json alone has always
// been a flag without a value.)

// jsonFlag is --json: on, and the fields to keep ("" for all).
type jsonFlag struct {
	on     *bool
	fields *string
}

// jsonAll is --json's value when given alone.
const jsonAll = "*"

func (f jsonFlag) String() string {
	if *f.fields != "" {
		return *f.fields
	}
	if *f.on {
		return "true"
	}
	return "" // no default shown in the help
}

func (f jsonFlag) Set(s string) error {
	switch s {
	case jsonAll, "true":
		*f.on, *f.fields = true, ""
	case "false":
		*f.on, *f.fields = false, ""
	default:
		*f.on, *f.fields = true, s
	}
	return nil
}

func (jsonFlag) Type() string { return "FIELDS" }

// jqFlag is --jq: it implies --json.
type jqFlag struct {
	on   *bool
	expr *string
}

func (f jqFlag) String() string { return *f.expr }
func (f jqFlag) Set(s string) error {
	*f.on, *f.expr = true, s
	return nil
}
func (jqFlag) Type() string { return "EXPR" }

var fieldName = lazyRegexp(`^[a-z][a-z0-9_]*$`)

// jsonShaper shapes JSON values as --json=FIELDS and --jq ask.
type jsonShaper struct {
	fields []string
	code   *gojq.Code
	// seen and found say which fields the objects had and which of those
	// asked for were found, for the warning about a field none had.
	seen  map[string]bool
	found map[string]bool
}

// newJSONShaper checks FIELDS and compiles EXPR before the command runs:
// a mistake in either is bad usage, and nothing is done.
func (a *app) newJSONShaper() (*jsonShaper, error) {
	s := &jsonShaper{seen: map[string]bool{}, found: map[string]bool{}}
	if a.g.jsonFields != "" {
		for f := range strings.SplitSeq(a.g.jsonFields, ",") {
			f = strings.TrimSpace(f)
			if !fieldName().MatchString(f) {
				return nil, usageErrorf(a.cmd, "--json=%s: %q is not a field's name (fields are snake_case words: --json=id,intent)", a.g.jsonFields, f)
			}
			s.fields = append(s.fields, f)
		}
	}
	if a.g.jq != "" {
		q, err := gojq.Parse(a.g.jq)
		if err != nil {
			return nil, usageErrorf(a.cmd, "--jq %s: %v", a.g.jq, err)
		}
		s.code, err = gojq.Compile(q)
		if err != nil {
			return nil, usageErrorf(a.cmd, "--jq %s: %v", a.g.jq, err)
		}
	}
	return s, nil
}

// shapedJSON runs run with the command's output going through the
// shaper, when --json=FIELDS or --jq asks for one.
func (a *app) shapedJSON(run func() error) error {
	if a.g.jsonFields == "" && a.g.jq == "" {
		return run()
	}
	s, err := a.newJSONShaper()
	if err != nil {
		return err
	}
	out := a.stdout
	pr, pw := io.Pipe()
	a.stdout = pw
	done := make(chan error, 1)
	go func() {
		err := s.shape(pr, out)
		pr.CloseWithError(errShaped) // a command still writing stops
		done <- err
	}()
	err = run()
	pw.Close()
	serr := <-done
	a.stdout = out
	if serr != nil {
		var ue *usageError
		if err == nil && errors.As(serr, &ue) {
			// A jq program that fails on the output is bad input (exit
			// 2); the command ran, and what it did stands.
			return &usageError{Err: fmt.Errorf("%w (the command itself ran: only its output could not be shaped)", ue.Err), Hint: ue.Hint}
		}
		return serr // the command's own error, if any, is writing to a closed pipe
	}
	if err == nil {
		s.warnMissing(a)
	}
	return err
}

var errShaped = errors.New("the JSON output could not be shaped")

// shape reads JSON values from r, shapes each and writes it to w.
func (s *jsonShaper) shape(r io.Reader, w io.Writer) error {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return &hinted{Err: fmt.Errorf("--json/--jq: the command's output is not JSON (%v)", err),
				Hint: "the command without --json=FIELDS or --jq: it has no JSON output to shape"}
		}
		v = normalizeJSON(v)
		if s.fields != nil {
			v = s.selectFields(v)
		}
		if s.code == nil {
			if err := writeJSON(w, v); err != nil {
				return err
			}
			continue
		}
		iter := s.code.Run(v)
		for {
			x, ok := iter.Next()
			if !ok {
				break
			}
			if err, ok := x.(error); ok {
				var halt *gojq.HaltError
				if errors.As(err, &halt) && halt.Value() == nil {
					break
				}
				return &usageError{Err: fmt.Errorf("--jq: %w", err), Hint: "the command with --json alone, to see the JSON the jq program is run on"}
			}
			if err := writeJQResult(w, x); err != nil {
				return err
			}
		}
	}
}

// writeJQResult prints a string as it is and any other value as JSON on
// one line, as gh --jq does.
func writeJQResult(w io.Writer, x any) error {
	if s, ok := x.(string); ok {
		_, err := io.WriteString(w, s+"\n")
		return err
	}
	b, err := gojq.Marshal(x)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// selectFields keeps the asked-for fields of an object, or of each
// object of a list; a field the object lacks is null, as jq's {a, b}.
func (s *jsonShaper) selectFields(v any) any {
	switch v := v.(type) {
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = s.selectFields(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(s.fields))
		for k := range v {
			s.seen[k] = true
		}
		for _, f := range s.fields {
			x, ok := v[f]
			if ok {
				s.found[f] = true
			}
			out[f] = x
		}
		return out
	}
	return v
}

// warnMissing says which asked-for fields no object had (a typo, most
// likely), and which fields there were.
func (s *jsonShaper) warnMissing(a *app) {
	if len(s.seen) == 0 {
		return
	}
	var missing []string
	for _, f := range s.fields {
		if !s.found[f] && !slices.Contains(missing, f) {
			missing = append(missing, f)
		}
	}
	if len(missing) == 0 {
		return
	}
	fields := make([]string, 0, len(s.seen))
	for f := range s.seen {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	fmt.Fprintf(a.stderr, "helm: warning: --json: no object had %s (printed as null); its fields: %s\n",
		plural(len(missing), "field")+" "+strings.Join(missing, ", "), strings.Join(fields, ", "))
}

// normalizeJSON turns json.Numbers into the ints and floats gojq and
// encoding/json both take.
func normalizeJSON(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil && i >= math.MinInt && i <= math.MaxInt {
			return int(i)
		}
		f, _ := v.Float64()
		return f
	case []any:
		for i, e := range v {
			v[i] = normalizeJSON(e)
		}
	case map[string]any:
		for k, e := range v {
			v[k] = normalizeJSON(e)
		}
	}
	return v
}
