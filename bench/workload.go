package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// The workload is the same for helm and SQLite: a stream of operations,
// three observes to one bearing. Each observe records a bench-file
// sighting whose JSON is PayloadSize bytes of source-code-like text;
// RepeatFraction of the observes repeat an earlier observation (same path,
// same content: the artifact deduplicates) and the rest read new content at
// a path cycling over Paths names, so the slate is upserted.
const (
	PayloadSize        = 2048
	RepeatFraction     = 0.3
	Paths              = 8
	ObservesPerBearing = 3
)

// Op is one operation of the workload.
type Op struct {
	Bearing  bool
	Reading  string         // a bearing's reading
	Mark     *benchMark     // an observe's mark
	Sighting *benchSighting // an observe's sighting
	Repeat   bool           // the sighting repeats an earlier one
}

// Workload generates operations deterministically from a seed.
type Workload struct {
	rng    *rand.Rand
	prefix string
	n      int // operations generated
	obs    int
	acc    float64
	seen   []*benchSighting
}

// NewWorkload returns a generator; prefix keeps the paths of several
// generators (one per goroutine) apart.
func NewWorkload(seed uint64, prefix string) *Workload {
	return &Workload{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), prefix: prefix}
}

// Next returns the next operation.
func (w *Workload) Next() Op {
	w.n++
	if w.n%(ObservesPerBearing+1) == 0 {
		return Op{Bearing: true, Reading: fmt.Sprintf("Reading %d: the %s module keeps its state in %s; %s needs the lock before %s.",
			w.n, pick(w.rng, nouns), pick(w.rng, nouns), pick(w.rng, verbs), pick(w.rng, verbs))}
	}
	w.obs++
	w.acc += RepeatFraction
	if w.acc >= 1 && len(w.seen) > 0 {
		w.acc--
		s := w.seen[w.rng.IntN(len(w.seen))]
		return Op{Mark: &benchMark{Path: s.Path}, Sighting: s, Repeat: true}
	}
	path := fmt.Sprintf("%ssrc/%s/%s.go", w.prefix, nouns[w.obs%Paths], nouns[(w.obs*7+3)%Paths])
	s := &benchSighting{Path: path}
	s.Content = fitContent(s, PayloadSize, func(b *strings.Builder) { codeLine(w.rng, b) },
		fmt.Sprintf("// %s revision %d\n", path, w.obs))
	w.seen = append(w.seen, s)
	return Op{Mark: &benchMark{Path: path}, Sighting: s}
}

// Ops returns the next n operations.
func (w *Workload) Ops(n int) []Op {
	out := make([]Op, n)
	for i := range out {
		out[i] = w.Next()
	}
	return out
}

// fitContent returns content (starting with head, then lines from gen) such
// that the sighting's JSON encoding (kind, path and content) is exactly size
// bytes.
func fitContent(s *benchSighting, size int, gen func(*strings.Builder), head string) string {
	var b strings.Builder
	b.WriteString(head)
	for jsonLen(s, b.String()) < size {
		gen(&b)
	}
	c := b.String()
	// Cut back (the text is ASCII) until it fits, then pad with spaces.
	for jsonLen(s, c) > size {
		over := jsonLen(s, c) - size
		c = c[:len(c)-max(1, over/2)]
	}
	if pad := size - jsonLen(s, c); pad > 0 {
		c += strings.Repeat(" ", pad)
	}
	return c
}

func jsonLen(s *benchSighting, content string) int {
	c := *s
	c.Content = content
	data, err := json.Marshal(struct {
		Kind string `json:"kind"`
		benchSighting
	}{benchKind, c})
	if err != nil {
		panic(err)
	}
	return len(data)
}

var (
	nouns = []string{"segment", "voyage", "slate", "bearing", "artifact", "logbook", "summary", "pack",
		"reader", "writer", "cursor", "frame", "index", "record", "handler", "server", "client", "config",
		"store", "cache", "ledger", "request", "response", "session", "token", "buffer", "queue", "worker"}
	verbs = []string{"open", "close", "append", "scan", "read", "write", "sync", "flush", "apply", "decode",
		"encode", "verify", "commit", "rollback", "lookup", "insert", "delete", "update", "resolve", "list"}
	types = []string{"string", "int", "int64", "uint64", "[]byte", "error", "bool", "time.Time",
		"context.Context", "*os.File", "map[string]int", "[]string"}
)

func pick(r *rand.Rand, s []string) string { return s[r.IntN(len(s))] }

func title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// codeLine appends a few lines of Go-like source: the kind of text
// sightings of files hold, which compresses like code does.
func codeLine(r *rand.Rand, b *strings.Builder) {
	n1, n2, v1, v2 := pick(r, nouns), pick(r, nouns), pick(r, verbs), pick(r, verbs)
	switch r.IntN(9) {
	case 0:
		fmt.Fprintf(b, "\n// %s%s %ss the %s and returns the %s it %ss.\n", title(v1), title(n1), v2, n2, n1, v1)
		fmt.Fprintf(b, "func (s *%s) %s%s(ctx context.Context, %s %s) (%s, error) {\n", title(n1), title(v1), title(n2), n2, pick(r, types), pick(r, types))
	case 1:
		fmt.Fprintf(b, "\tif err := s.%s.%s(ctx, %s); err != nil {\n\t\treturn nil, fmt.Errorf(\"%s %s %%s: %%w\", %s.ID, err)\n\t}\n", n1, title(v1), n2, v1, n2, n2)
	case 2:
		fmt.Fprintf(b, "\t%s, err := %s%s(%s, %d)\n", n1, v1, title(n2), n2, r.IntN(4096))
	case 3:
		fmt.Fprintf(b, "\tfor i, %s := range s.%ss {\n\t\tif %s.%s == nil {\n\t\t\tcontinue\n\t\t}\n\t\ts.%s[i] = %s\n\t}\n", n1, n2, n1, title(n2), v1, n1)
	case 4:
		fmt.Fprintf(b, "\tdefer s.%s.%s()\n", n1, title(v1))
	case 5:
		fmt.Fprintf(b, "\treturn %s, nil\n}\n", n1)
	case 6:
		fmt.Fprintf(b, "\ts.mu.Lock()\n\t%s := s.%s[%s.Key()]\n\ts.mu.Unlock()\n", n1, n2, n1)
	case 7:
		fmt.Fprintf(b, "\ntype %s%s struct {\n\t%s %s\n\t%s %s // %s before %s\n}\n", title(n1), title(n2), title(v1), pick(r, types), title(v2), pick(r, types), v1, v2)
	default:
		fmt.Fprintf(b, "\tswitch %s.Kind {\n\tcase %s%s:\n\t\treturn s.%s(%s)\n\t}\n", n1, title(n2), title(v1), v2, n1)
	}
}

// bigSightings returns a generator of distinct sightings of about size
// bytes of code-like text each, cut from one shared pool so that making a
// gigabyte of them is cheap.
func bigSightings(seed uint64, size int) func(i int) *benchSighting {
	r := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	for b.Len() < 2*size+1<<20 {
		codeLine(r, &b)
	}
	pool := b.String()
	return func(i int) *benchSighting {
		off := (i * 7919) % (len(pool) - size)
		path := fmt.Sprintf("big/%s/%d.go", nouns[i%len(nouns)], i)
		return &benchSighting{Path: path, Content: fmt.Sprintf("// %s, sighting %d\n", path, i) + pool[off:off+size]}
	}
}
