package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/helmlog/helm/logbook"
)

// config is $HELM_HOME/config.toml.
type config struct {
	Identity string `toml:"identity"`
	Role     string `toml:"role"`
	Method   string `toml:"method"`
	// Identities holds what is particular to one identity, by name
	// ([identities.NAME] tables).
	Identities map[string]identityConfig `toml:"identities"`
	// Redact adds to what is hidden before anything is stored.
	Redact redactConfig `toml:"redact"`
	// Policy is the guard rules' file; empty means
	// $HELM_HOME/policy.toml, if there is one.
	Policy string `toml:"policy"`
	// Store is where the home's voyages are (a JetStream server's URL);
	// empty means on this machine's disk, in the home.
	Store string `toml:"store"`
	// NATS tunes the connection to a JetStream store.
	NATS natsConfig `toml:"nats"`
}

// natsConfig is the [nats] table.
type natsConfig struct {
	// Replicas is the replication factor of the home's stream, object
	// store and bucket when helm creates them (1; 3 in a cluster).
	Replicas int `toml:"replicas"`
	// Creds is a NATS credentials file (a user's JWT and seed).
	Creds string `toml:"creds"`
	// CA, Cert and Key are TLS files: the servers' certificate
	// authority, and this client's certificate and key, if the servers
	// ask for one.
	CA   string `toml:"ca"`
	Cert string `toml:"cert"`
	Key  string `toml:"key"`
}

// redactConfig is the [redact] table.
type redactConfig struct {
	// Env names more environment variables whose values are hidden.
	Env []string `toml:"env"`
	// Patterns are more rules: [[redact.patterns]] name = "...", regexp = "...".
	Patterns []redactPattern `toml:"patterns"`
}

type redactPattern struct {
	Name   string `toml:"name"`
	Regexp string `toml:"regexp"`
}

// identityConfig is one [identities.NAME] table.
type identityConfig struct {
	// PassEnv names variables of helm's environment that this identity's
	// gh and git see (GH_HOST, or a GH_TOKEN that is this identity's):
	// without it, credentials in the environment reach no gh call.
	PassEnv []string `toml:"pass_env"`
}

// configKeys are the keys config.toml may hold, in config's order.
var configKeys = []string{"identity", "role", "method", "identities.NAME.pass_env", "redact.env", "redact.patterns", "policy", "store", "nats.replicas", "nats.creds", "nats.ca", "nats.cert", "nats.key"}

// config reads $HELM_HOME/config.toml; a missing file is an empty config.
// A key helm does not know is a usage error naming its line: a typo
// (rol = "coder") would otherwise be silently ignored.
func (a *app) config() (*config, error) {
	if a.cfg != nil {
		return a.cfg, nil
	}
	dir, err := a.homeDir()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "config.toml")
	c := &config{}
	data, err := a.readHomeFile(path, "config.toml", dir)
	if isUntrusted(err) {
		return nil, err
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, &usageError{Err: fmt.Errorf("read %s: %w", path, err), Hint: "make the file readable, or point --home at another helm home"}
	}
	md, err := toml.Decode(string(data), c)
	if err != nil {
		return nil, &usageError{Err: fmt.Errorf("read %s: %w", path, err), Hint: "fix the file; it holds identity, role, method and [identities.NAME] tables, e.g. identity = \"john-agent\""}
	}
	if err := unknownKeys(path, data, md.Undecoded()); err != nil {
		return nil, err
	}
	c.Identity, c.Role, c.Method = strings.TrimSpace(c.Identity), strings.TrimSpace(c.Role), strings.TrimSpace(c.Method)
	for name, ic := range c.Identities {
		if err := logbook.ValidateIdentity(name); err != nil {
			return nil, &usageError{Err: fmt.Errorf("%s: [identities.%s]: %w", path, name, err), Hint: "name the table after an identity, e.g. [identities.john-agent]"}
		}
		for _, v := range ic.PassEnv {
			if v == "" || strings.ContainsAny(v, "= \t") {
				return nil, &usageError{Err: fmt.Errorf("%s: [identities.%s] pass_env: %q is not an environment variable name", path, name, v), Hint: `list names, e.g. pass_env = ["GH_HOST"]`}
			}
		}
	}
	for i, p := range c.Redact.Patterns {
		if _, err := regexp.Compile(p.Regexp); err != nil || strings.TrimSpace(p.Name) == "" {
			why := "it has no name"
			if err != nil {
				why = err.Error()
			}
			return nil, &usageError{Err: fmt.Errorf("%s: [redact] pattern %d (%q): %s", path, i+1, p.Name, why), Hint: `give each pattern a name and a Go regular expression, e.g. { name = "ticket", regexp = 'TICKET-\d+' }`}
		}
	}
	a.cfg = c
	return c, nil
}

func (a *app) configPath() string {
	dir, err := a.homePath()
	if err != nil {
		return "$HELM_HOME/config.toml"
	}
	return filepath.Join(dir, "config.toml")
}

// unknownKeys reports the keys of config file path (its bytes data) that
// helm does not know, one a line as "FILE:LINE: unknown key ...". A table
// helm does not know is reported once, not with every key inside it.
func unknownKeys(path string, data []byte, undecoded []toml.Key) error {
	var lines []string
	reported := map[string]bool{}
	for _, k := range undecoded {
		if len(k) > 1 && reported[k[:len(k)-1].String()] {
			reported[k.String()] = true
			continue
		}
		reported[k.String()] = true
		where := path
		if n := keyLine(data, k); n > 0 {
			where = fmt.Sprintf("%s:%d", path, n)
		}
		lines = append(lines, fmt.Sprintf("%s: unknown key %q (known: %s)", where, k.String(), strings.Join(configKeys, ", ")))
	}
	if len(lines) == 0 {
		return nil
	}
	return &usageError{
		Err:  errors.New(strings.Join(lines, "\n")),
		Hint: "fix or remove the key in " + path + `; it holds identity, role, method and [identities.NAME] tables, e.g. role = "coder"`,
	}
}

// keyLine returns the 1-based line of data where key k is defined, or 0.
// TOML's decoder keeps no positions for keys, so the file is scanned: the
// first table header or assignment whose full key (the table's path, then
// the assigned dotted key) is k or lies under it defines k. Quoted keys
// holding dots or brackets may be missed; then the error names the file
// alone.
func keyLine(data []byte, k toml.Key) int {
	var table []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#':
			continue
		case line[0] == '[':
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			table = keyPath(strings.Trim(line[:end], "[ \t"))
			if under(table, k) {
				return n
			}
		default:
			left, _, ok := strings.Cut(line, "=")
			if ok && under(append(append([]string(nil), table...), keyPath(left)...), k) {
				return n
			}
		}
	}
	return 0
}

// keyPath splits a dotted TOML key into its parts, unquoted.
func keyPath(s string) []string {
	parts := strings.Split(s, ".")
	for i, p := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(p), `"'`)
	}
	return parts
}

// under reports whether path is key k or a key inside it.
func under(path []string, k toml.Key) bool {
	if len(path) < len(k) {
		return false
	}
	for i := range k {
		if path[i] != k[i] {
			return false
		}
	}
	return true
}
