package helm

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/redact"
)

// Redaction: every text that enters a voyage's log passes one redactor
// (package redact) before it is hashed, compressed and stored — sightings
// of every kind, marks, intents, readings, challenges, summaries, action
// parameters and results — so a secret that was on screen, in a file or
// in the environment is stored as a marker naming the rule that found
// it, never as its value.

// Redaction says what a home hides besides redact's built-in rules (the
// token families providers issue, private keys, credentials in URLs,
// secret-looking assignments, HTTP authorization and cookie headers,
// password flags: see package redact),
// the values of the process's secret-looking environment variables and
// the tokens in the identities' gh configurations under the home.
type Redaction struct {
	// ExtraEnv names more environment variables whose values are hidden.
	ExtraEnv []string
	// Patterns are extra rules (a name and a regular expression).
	Patterns []redact.Pattern
	// Environ is the environment whose secret-looking variables' values
	// are hidden; nil means the process's (os.Environ).
	Environ []string
}

// ErrSecret is an action whose parameters hold a secret, refused unless
// the caller allows it (PerformOptions.AllowSecret). It comes with
// ErrInvalid.
var ErrSecret = errSecret{}

type errSecret struct{}

func (errSecret) Error() string { return "the action's parameters hold a secret" }
func (errSecret) Is(target error) bool {
	return target == ErrInvalid
}

// redactor returns the home's redactor, built once: the environment is
// read then, and so are the gh logins under the home.
func (h *Home) redactor() (*redact.Redactor, error) {
	h.redOnce.Do(func() {
		env := h.opts.Redaction.Environ
		if env == nil {
			env = os.Environ()
		}
		h.red, h.redErr = redact.New(&redact.Options{
			Environ:  env,
			ExtraEnv: h.opts.Redaction.ExtraEnv,
			Values:   ghLoginTokens(h.dir),
			Patterns: h.opts.Redaction.Patterns,
		})
	})
	return h.red, h.redErr
}

// ghLoginTokens returns the tokens stored in the identities' gh
// configurations under home, by marker name (gh-login:IDENTITY). Files
// that cannot be read are passed over: they hold nothing gh could send.
func ghLoginTokens(home string) map[string]string {
	paths, _ := filepath.Glob(filepath.Join(home, "gh-config", "*", "hosts.yml"))
	sort.Strings(paths)
	out := map[string]string{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		id := filepath.Base(filepath.Dir(p))
		for i, line := range strings.Split(string(data), "\n") {
			k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok || strings.TrimSpace(k) != "oauth_token" {
				continue
			}
			if v = strings.Trim(strings.TrimSpace(v), `"'`); v != "" {
				name := "gh-login:" + id
				if _, dup := out[name]; dup {
					name += "#" + string(rune('0'+i%10))
				}
				out[name] = v
			}
		}
	}
	return out
}

// redactSighting redacts a sighting's JSON and records in it how many
// secrets were hidden (a "redactions" member, which decoding ignores).
func redactSighting(r *redact.Redactor, data []byte) ([]byte, int) {
	out, n := r.JSON(data)
	if n == 0 {
		return out, 0
	}
	out = bytes.TrimRight(out, " \t\r\n")
	if len(out) > 0 && out[len(out)-1] == '}' {
		tail, _ := json.Marshal(n)
		out = append(append(append(out[:len(out)-1:len(out)-1], `,"redactions":`...), tail...), '}')
	}
	return out, n
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

// isAddress reports whether s is a content address: 64 lower-case hex
// digits, a BLAKE3 hash as helm writes them. A field tagged
// redact:"address" holding one is left as it is; holding anything else,
// it is redacted as text.
func isAddress(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// redactEvent hides the secrets in every text of e, in place, and
// returns how many it hid.
func redactEvent(r *redact.Redactor, e *projection.Event) int {
	return redactValue(r, reflect.ValueOf(e))
}

// redactValue hides the secrets in every text v holds, in place: every
// string reached through exported fields, pointers, interfaces (a value
// they hold is redacted as a copy and put back), slices, arrays and
// string-to-string maps (keys and values; a json.RawMessage as JSON; a
// map's value also when its key looks secret), but not a content address in a field tagged
// redact:"address". It walks v by the plan of its type (redactPlanOf):
// the fields that can hold no text are passed by, and struct tags are read
// once per type, not once per event.
func redactValue(r *redact.Redactor, v reflect.Value) int {
	if p := redactPlanOf(v.Type()); p != nil {
		return p(r, v)
	}
	return 0
}

// redactPlan redacts a value of one type in place; nil: the type holds no
// text the walk reaches.
type redactPlan func(r *redact.Redactor, v reflect.Value) int

// redactPlans caches the plan of each type walked (a redactPlan, nil for
// a type that holds no text); plans are built under redactPlanMu.
var (
	redactPlans  sync.Map
	redactPlanMu sync.Mutex
)

// redactPlanOf returns the plan of values of type t (nil: they hold no
// text).
func redactPlanOf(t reflect.Type) redactPlan {
	if p, ok := redactPlans.Load(t); ok {
		return p.(redactPlan)
	}
	redactPlanMu.Lock()
	defer redactPlanMu.Unlock()
	b := &redactPlanBuilder{plans: map[reflect.Type]*redactPlan{}}
	p := b.plan(t)
	// Published once every plan the build made is complete: a type that
	// holds itself calls its plan through the pointer it was built in.
	for t, p := range b.plans {
		redactPlans.Store(t, *p)
	}
	return p
}

// redactPlanBuilder builds the plans of a type and of the types it holds.
type redactPlanBuilder struct {
	plans map[reflect.Type]*redactPlan // built, or being built
}

func (b *redactPlanBuilder) plan(t reflect.Type) redactPlan {
	if p, ok := redactPlans.Load(t); ok {
		return p.(redactPlan)
	}
	if p, ok := b.plans[t]; ok {
		if *p != nil {
			return *p
		}
		// Being built: a type that holds itself, assumed to hold text.
		return func(r *redact.Redactor, v reflect.Value) int {
			if *p == nil {
				return 0
			}
			return (*p)(r, v)
		}
	}
	p := new(redactPlan)
	b.plans[t] = p
	*p = b.build(t)
	return *p
}

func (b *redactPlanBuilder) build(t reflect.Type) redactPlan {
	switch t.Kind() {
	case reflect.Interface:
		return func(r *redact.Redactor, v reflect.Value) int {
			if v.IsNil() {
				return 0
			}
			e := v.Elem()
			if e.CanSet() || !v.CanSet() {
				return redactValue(r, e)
			}
			// A value held by the interface (a string, a struct) cannot be
			// set in place: redact a copy, and put it back.
			c := reflect.New(e.Type()).Elem()
			c.Set(e)
			n := redactValue(r, c)
			if n > 0 {
				v.Set(c)
			}
			return n
		}
	case reflect.Pointer:
		elem := b.plan(t.Elem())
		if elem == nil {
			return nil
		}
		return func(r *redact.Redactor, v reflect.Value) int {
			if v.IsNil() {
				return 0
			}
			return elem(r, v.Elem())
		}
	case reflect.Struct:
		type field struct {
			index   int
			address bool
			plan    redactPlan
		}
		var fields []field
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue // unexported: not settable, as the walk has always left them
			}
			if p := b.plan(f.Type); p != nil {
				fields = append(fields, field{index: i, address: f.Tag.Get("redact") == "address", plan: p})
			}
		}
		if len(fields) == 0 {
			return nil
		}
		return func(r *redact.Redactor, v reflect.Value) int {
			n := 0
			for _, fd := range fields {
				f := v.Field(fd.index)
				if !f.CanSet() || fd.address && isAddress(f.String()) {
					continue // a content address helm computed: no text, and a rule must not change it
				}
				n += fd.plan(r, f)
			}
			return n
		}
	case reflect.String:
		return func(r *redact.Redactor, v reflect.Value) int {
			s, n := r.String(v.String())
			if n > 0 {
				v.SetString(s)
			}
			return n
		}
	case reflect.Array:
		elem := b.plan(t.Elem())
		if elem == nil {
			return nil
		}
		return func(r *redact.Redactor, v reflect.Value) int {
			n := 0
			for i := range v.Len() {
				n += elem(r, v.Index(i))
			}
			return n
		}
	case reflect.Slice:
		if t == rawMessage {
			return func(r *redact.Redactor, v reflect.Value) int {
				out, n := r.JSON(v.Bytes())
				if n > 0 {
					v.SetBytes(out)
				}
				return n
			}
		}
		if t.Elem().Kind() == reflect.Uint8 {
			return nil
		}
		elem := b.plan(t.Elem())
		if elem == nil {
			return nil
		}
		return func(r *redact.Redactor, v reflect.Value) int {
			n := 0
			for i := range v.Len() {
				n += elem(r, v.Index(i))
			}
			return n
		}
	case reflect.Map:
		if t.Elem().Kind() != reflect.String || t.Key().Kind() != reflect.String {
			return nil
		}
		return func(r *redact.Redactor, v reflect.Value) int {
			n := 0
			for _, k := range v.MapKeys() {
				s, c := r.String(v.MapIndex(k).String())
				if c == 0 && redact.LooksSecret(k.String()) && len(s) >= redact.MinValue && !strings.HasPrefix(s, "[REDACTED:") {
					s, c = redact.Marker("secret-field:"+k.String()), 1
				}
				// A key is text too: one holding a secret is stored under
				// its redaction.
				key, kc := r.String(k.String())
				if kc > 0 {
					v.SetMapIndex(k, reflect.Value{}) // removed, then set under the redacted key
					k = reflect.ValueOf(key).Convert(t.Key())
				}
				if c > 0 || kc > 0 {
					v.SetMapIndex(k, reflect.ValueOf(s).Convert(t.Elem()))
					n += c + kc
				}
			}
			return n
		}
	}
	return nil
}

var markerName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[REDACTED:([^\]]+)\]`) })

// secretRules names the rules whose markers text holds, once each.
func secretRules(text []byte) []string {
	var out []string
	for _, m := range markerName().FindAllSubmatch(text, -1) {
		if name := string(m[1]); !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}
