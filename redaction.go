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

func redactValue(r *redact.Redactor, v reflect.Value) int {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return 0
		}
		return redactValue(r, v.Elem())
	case reflect.Struct:
		n := 0
		for i := range v.NumField() {
			f := v.Field(i)
			if !f.CanSet() || v.Type().Field(i).Tag.Get("redact") == "address" && isAddress(f.String()) {
				continue // a content address helm computed: no text, and a rule must not change it
			}
			n += redactValue(r, f)
		}
		return n
	case reflect.String:
		s, n := r.String(v.String())
		if n > 0 {
			v.SetString(s)
		}
		return n
	case reflect.Slice:
		if v.Type() == rawMessage {
			out, n := r.JSON(v.Bytes())
			if n > 0 {
				v.SetBytes(out)
			}
			return n
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return 0
		}
		n := 0
		for i := range v.Len() {
			n += redactValue(r, v.Index(i))
		}
		return n
	case reflect.Map:
		if v.Type().Elem().Kind() != reflect.String || v.Type().Key().Kind() != reflect.String {
			return 0
		}
		n := 0
		for _, k := range v.MapKeys() {
			s, c := r.String(v.MapIndex(k).String())
			if c == 0 && redact.LooksSecret(k.String()) && len(s) >= redact.MinValue && !strings.HasPrefix(s, "[REDACTED:") {
				s, c = redact.Marker("secret-field:"+k.String()), 1
			}
			if c > 0 {
				v.SetMapIndex(k, reflect.ValueOf(s).Convert(v.Type().Elem()))
				n += c
			}
		}
		return n
	}
	return 0
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
