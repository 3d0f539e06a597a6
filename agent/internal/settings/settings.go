// Package settings edits the hooks block of an agent host's settings
// file (Claude Code's and Gemini CLI's settings.json share its shape):
//
//	{"hooks": {"EVENT": [{"matcher": "*", "hooks": [{"type": "command", "command": "..."}]}]}}
//
// It adds, finds and removes helm's own hook handlers and leaves every
// other byte of the document as it was: other keys, other tools' hooks
// on the same events, their order, the indentation, the escapes. An edit
// is a splice of the document's bytes, never a re-encoding of it; the
// values it adds are indented as their new neighbours are.
//
// helm's handlers are recognised by their command: one whose words are
// "<a program named helm...> hook <host> ...". Installing replaces them,
// so a second install changes nothing; uninstalling removes them, then
// the matcher groups, event lists and the hooks object they leave empty.
// Uninstalling what an install added gives back the bytes it was given,
// unless that document held an empty hooks object or event list (those
// go too: they hold nothing) or was an empty object with space inside
// ("{ }" comes back as "{}").
package settings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"slices"
	"strings"
)

// Event is a hook event helm installs a handler for, and its matcher
// ("" for an event without matchers: none is written).
type Event struct {
	Name    string
	Matcher string
}

// Host describes one agent host's settings: the word naming it in
// helm's hook command ("claude-code"), the events helm hooks, and the
// handler object it writes for a command.
type Host struct {
	Name    string
	Events  []Event
	Handler func(command string) any
}

// Status is what a settings document holds of helm's hooks: the events
// with a helm handler, those of the host's events without one, the
// distinct commands helm's handlers run, and each command's program.
type Status struct {
	Events   []string `json:"events"`
	Missing  []string `json:"missing"`
	Commands []string `json:"commands"`
	Programs []string `json:"programs"`
}

// Complete says every event helm hooks has its handler.
func (s Status) Complete() bool { return len(s.Events) > 0 && len(s.Missing) == 0 }

// Install returns doc with helm's handler running command on each of the
// host's events, replacing any helm handler already there. An empty doc
// (an absent file) becomes a new document.
func (h Host) Install(doc []byte, command string) ([]byte, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = []byte("{}\n")
	}
	handler := h.Handler(command)
	current, err := h.current(doc, handler)
	if err != nil || current {
		return doc, err
	}
	if doc, err = h.Uninstall(doc); err != nil {
		return nil, err
	}
	for _, ev := range h.Events {
		if doc, err = h.add(doc, ev, handler); err != nil {
			return nil, err
		}
	}
	return doc, nil
}

// current says doc holds exactly the handlers Install would write: one
// on each of the host's events, in a group with its matcher, and none
// elsewhere. Installing over it changes nothing.
func (h Host) current(doc []byte, handler any) (bool, error) {
	_, hooks, err := h.hooks(doc)
	if err != nil || hooks == nil {
		return false, err
	}
	var want any
	_ = json.Unmarshal(mustMarshal(handler), &want)
	matchers := map[string]string{}
	for _, ev := range h.Events {
		matchers[ev.Name] = ev.Matcher
	}
	count := map[string]int{}
	for _, m := range hooks.members {
		for _, g := range groups(m.val) {
			for _, hd := range handlers(g) {
				if _, ok := h.helmCommand(hd); !ok {
					continue
				}
				matcher, ours := matchers[m.key]
				var got, gm any
				_ = json.Unmarshal(doc[hd.start:hd.end], &got)
				if _, mn := g.member("matcher"); mn != nil {
					_ = json.Unmarshal(doc[mn.start:mn.end], &gm)
				} else {
					gm = ""
				}
				if !ours || gm != matcher || !reflect.DeepEqual(got, want) {
					return false, nil
				}
				count[m.key]++
			}
		}
	}
	for _, ev := range h.Events {
		if count[ev.Name] != 1 {
			return false, nil
		}
	}
	return true, nil
}

// Uninstall returns doc without helm's handlers.
func (h Host) Uninstall(doc []byte) ([]byte, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return doc, nil
	}
	for {
		root, hooks, err := h.hooks(doc)
		if err != nil {
			return nil, err
		}
		if hooks == nil {
			return doc, nil
		}
		next, done := h.removeOne(doc, root, hooks)
		if done {
			return doc, nil
		}
		doc = next
	}
}

// Installed reads what doc holds of helm's handlers.
func (h Host) Installed(doc []byte) (Status, error) {
	st := Status{Events: []string{}, Missing: []string{}, Commands: []string{}, Programs: []string{}}
	var hooks *node
	if len(bytes.TrimSpace(doc)) > 0 {
		var err error
		if _, hooks, err = h.hooks(doc); err != nil {
			return st, err
		}
	}
	found := map[string]bool{}
	if hooks != nil {
		for _, m := range hooks.members {
			for _, g := range groups(m.val) {
				for _, hd := range handlers(g) {
					if c, ok := h.helmCommand(hd); ok {
						found[m.key] = true
						if !slices.Contains(st.Commands, c) {
							argv, _ := Split(c) // helm's: it splits
							st.Commands = append(st.Commands, c)
							st.Programs = append(st.Programs, argv[0])
						}
					}
				}
			}
		}
	}
	for _, ev := range h.Events {
		if found[ev.Name] {
			st.Events = append(st.Events, ev.Name)
		} else {
			st.Missing = append(st.Missing, ev.Name)
		}
	}
	return st, nil
}

// hooks parses doc and returns its root and its "hooks" object (nil when
// there is none). A hooks member that is not an object, an event whose
// value is not a list, or a key given twice (hosts read the last, a
// reader the first: they could disagree on what runs) is an error.
func (h Host) hooks(doc []byte) (*node, *node, error) {
	root, err := parse(doc)
	if err != nil {
		return nil, nil, err
	}
	if err := unique(doc, root); err != nil {
		return nil, nil, err
	}
	_, hooks := root.member("hooks")
	if hooks == nil {
		return root, nil, nil
	}
	if hooks.kind != '{' {
		return nil, nil, syntaxErr(doc, hooks.start, `"hooks" is not an object`)
	}
	if err := unique(doc, hooks); err != nil {
		return nil, nil, err
	}
	for _, m := range hooks.members {
		if m.val.kind != '[' {
			return nil, nil, syntaxErr(doc, m.val.start, "hooks.%s is not a list", m.key)
		}
	}
	return root, hooks, nil
}

func unique(doc []byte, obj *node) error {
	seen := map[string]bool{}
	for _, m := range obj.members {
		if seen[m.key] {
			return syntaxErr(doc, m.keyStart, "key %q is given twice", m.key)
		}
		seen[m.key] = true
	}
	return nil
}

// groups are an event list's matcher groups (objects).
func groups(list *node) []*node {
	var out []*node
	for _, g := range list.elems {
		if g.kind == '{' {
			out = append(out, g)
		}
	}
	return out
}

// handlers are a group's handler objects.
func handlers(group *node) []*node {
	_, list := group.member("hooks")
	if list == nil || list.kind != '[' {
		return nil
	}
	var out []*node
	for _, hd := range list.elems {
		if hd.kind == '{' {
			out = append(out, hd)
		}
	}
	return out
}

// helmCommand returns the command of handler hd when it is helm's.
func (h Host) helmCommand(hd *node) (string, bool) {
	_, c := hd.member("command")
	if c == nil || c.kind != '"' {
		return "", false
	}
	return c.str, IsHelm(h.Name, c.str)
}

// IsHelm says command is helm's hook command for host: its words are a
// program whose name starts with "helm", then "hook", then host.
func IsHelm(host, command string) bool {
	argv, ok := Split(command)
	if !ok || len(argv) < 3 {
		return false
	}
	return strings.HasPrefix(path.Base(strings.ReplaceAll(argv[0], `\`, "/")), "helm") && argv[1] == "hook" && argv[2] == host
}

// removeOne removes one helm handler from doc, with what it leaves
// empty; done says there was none.
func (h Host) removeOne(doc []byte, root, hooks *node) ([]byte, bool) {
	for mi, m := range hooks.members {
		for gi, g := range m.val.elems {
			if g.kind != '{' {
				continue
			}
			_, list := g.member("hooks")
			if list == nil || list.kind != '[' {
				continue
			}
			for hi, hd := range list.elems {
				if hd.kind != '{' {
					continue
				}
				if _, ok := h.helmCommand(hd); !ok {
					continue
				}
				switch {
				case len(list.elems) > 1:
					return removeElem(doc, list, hi), false
				case len(m.val.elems) > 1:
					return removeElem(doc, m.val, gi), false
				case len(hooks.members) > 1:
					return removeMember(doc, hooks, mi), false
				default:
					hi, _ := root.member("hooks")
					return removeMember(doc, root, hi), false
				}
			}
		}
	}
	return doc, true
}

// removeElem removes element i of array a: with the comma and space
// before it when it is the last, else with those after it.
func removeElem(doc []byte, a *node, i int) []byte {
	spans := make([][2]int, len(a.elems))
	for k, e := range a.elems {
		spans[k] = [2]int{e.start, e.end}
	}
	return removeSpan(doc, a, spans, i)
}

func removeMember(doc []byte, o *node, i int) []byte {
	spans := make([][2]int, len(o.members))
	for k, m := range o.members {
		spans[k] = [2]int{m.keyStart, m.val.end}
	}
	return removeSpan(doc, o, spans, i)
}

func removeSpan(doc []byte, container *node, spans [][2]int, i int) []byte {
	var from, to int
	switch {
	case len(spans) == 1: // the container becomes empty: {} or []
		from, to = container.start+1, container.end-1
	case i == len(spans)-1:
		from, to = spans[i-1][1], spans[i][1]
	default:
		from, to = spans[i][0], spans[i+1][0]
	}
	return splice(doc, from, to, nil)
}

func splice(doc []byte, from, to int, with []byte) []byte {
	out := make([]byte, 0, len(doc)-(to-from)+len(with))
	out = append(out, doc[:from]...)
	out = append(out, with...)
	return append(out, doc[to:]...)
}

// add appends a group running handler to ev's list, creating the list
// and the hooks object as needed.
func (h Host) add(doc []byte, ev Event, handler any) ([]byte, error) {
	root, hooks, err := h.hooks(doc)
	if err != nil {
		return nil, err
	}
	group := groupValue{Matcher: ev.Matcher, Hooks: []any{handler}}
	if hooks == nil {
		return appendMember(doc, root, "hooks", map[string][]groupValue{ev.Name: {group}})
	}
	if _, list := hooks.member(ev.Name); list != nil {
		return appendElem(doc, list, group)
	}
	return appendMember(doc, hooks, ev.Name, []groupValue{group})
}

// groupValue is a matcher group as helm writes it.
type groupValue struct {
	Matcher string `json:"matcher,omitempty"`
	Hooks   []any  `json:"hooks"`
}

// style is how a container's children are laid out: each on a line of
// its own with indent, or all on one line (a compact document).
type style struct {
	multiline bool
	indent    string // of the children
	unit      string // one level more
	colon     string // between a key and its value
	nl        string // "\n", or "\r\n" in a document that uses it
}

// styleOf reads the layout of container c from its children, else from
// the document around it.
func styleOf(doc []byte, c *node) style {
	st := style{unit: unitOf(doc), colon: colonOf(doc), nl: "\n"}
	if bytes.Contains(doc, []byte("\r\n")) {
		st.nl = "\r\n"
	}
	first := -1
	if len(c.members) > 0 {
		first = c.members[0].keyStart
	} else if len(c.elems) > 0 {
		first = c.elems[0].start
	}
	if first >= 0 {
		gap := doc[c.start+1 : first]
		if nl := bytes.LastIndexByte(gap, '\n'); nl >= 0 {
			st.multiline, st.indent = true, string(gap[nl+1:])
			return st
		}
		return st
	}
	// An empty container: one level deeper than its line, multiline
	// unless the whole document is on one line.
	st.multiline = bytes.ContainsRune(bytes.TrimSpace(doc), '\n') || len(bytes.TrimSpace(doc)) <= 2
	st.indent = lineIndent(doc, c.start) + st.unit
	return st
}

// unitOf is the document's indentation step: the indentation of its
// first indented line, else two spaces.
func unitOf(doc []byte) string {
	for _, line := range bytes.Split(doc, []byte("\n"))[1:] {
		ind := line[:len(line)-len(bytes.TrimLeft(line, " \t"))]
		if len(ind) > 0 && len(bytes.TrimSpace(line)) > 0 {
			return string(ind)
		}
	}
	return "  "
}

// colonOf is what the document writes between its first key and value
// (": " when that holds a line break, or there is no key).
func colonOf(doc []byte) string {
	root, err := parse(doc)
	if err != nil || len(root.members) == 0 {
		return ": "
	}
	m := root.members[0]
	p := &parser{doc: doc, pos: m.keyStart}
	p.string()
	colon := string(doc[p.pos:m.val.start])
	if strings.ContainsAny(colon, "\r\n") {
		return ": "
	}
	return colon
}

func lineIndent(doc []byte, pos int) string {
	start := bytes.LastIndexByte(doc[:pos], '\n') + 1
	line := doc[start:pos]
	return string(line[:len(line)-len(bytes.TrimLeft(line, " \t"))])
}

func mustMarshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("settings: encode %T: %v", v, err)) // helm's own values always encode
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// encode writes v laid out in st: its own lines indented one unit
// deeper than st.indent.
func encode(v any, st style) []byte {
	raw := mustMarshal(v)
	if !st.multiline {
		return raw
	}
	var b bytes.Buffer
	_ = json.Indent(&b, raw, st.indent, st.unit) // raw is valid JSON
	out := b.Bytes()
	if st.colon != ": " {
		out = recolon(out, st.colon)
	}
	if st.nl != "\n" {
		out = bytes.ReplaceAll(out, []byte("\n"), []byte(st.nl))
	}
	return out
}

// recolon rewrites the ": " json.Indent puts after keys as colon.
func recolon(b []byte, colon string) []byte {
	var out []byte
	in := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case in && c == '\\':
			out = append(out, c, b[i+1])
			i++
			continue
		case c == '"':
			in = !in
		case !in && c == ':' && i+1 < len(b) && b[i+1] == ' ':
			out = append(out, colon...)
			i++
			continue
		}
		out = append(out, c)
	}
	return out
}

func appendElem(doc []byte, a *node, v any) ([]byte, error) {
	st := styleOf(doc, a)
	val := encode(v, st)
	if len(a.elems) == 0 {
		return fillEmpty(doc, a, st, val), nil
	}
	var b []byte
	b = append(b, ',')
	if st.multiline {
		b = append(b, st.nl...)
		b = append(b, st.indent...)
	}
	b = append(b, val...)
	last := a.elems[len(a.elems)-1].end
	return splice(doc, last, last, b), nil
}

func appendMember(doc []byte, o *node, key string, v any) ([]byte, error) {
	st := styleOf(doc, o)
	colon := st.colon
	if !st.multiline {
		colon = strings.TrimSpace(colon)
	}
	val := append(append(mustMarshal(key), colon...), encode(v, st)...)
	if len(o.members) == 0 {
		return fillEmpty(doc, o, st, val), nil
	}
	var b []byte
	b = append(b, ',')
	if st.multiline {
		b = append(b, st.nl...)
		b = append(b, st.indent...)
	}
	b = append(b, val...)
	last := o.members[len(o.members)-1].val.end
	return splice(doc, last, last, b), nil
}

// fillEmpty puts the first child val into the empty container c.
func fillEmpty(doc []byte, c *node, st style, val []byte) []byte {
	var b []byte
	if st.multiline {
		b = append(b, st.nl...)
		b = append(b, st.indent...)
		b = append(b, val...)
		b = append(b, st.nl...)
		b = append(b, lineIndent(doc, c.start)...)
	} else {
		b = val
	}
	return splice(doc, c.start+1, c.end-1, b)
}
