package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/store/natsstore"
)

// storeURL resolves where the home's voyages are: --store, then
// HELM_STORE, then config.toml's store; "" means in the home directory.
func (a *app) storeURL() (string, error) {
	if a.g.store != "" || a.cmd != nil && a.cmd.Flags().Changed("store") {
		return strings.TrimSpace(a.g.store), nil // --store "": this machine's disk
	}
	if s := a.getenv("HELM_STORE"); s != "" {
		return s, nil
	}
	cfg, err := a.config()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(cfg.Store), nil
}

// openStore opens the home in dir, its voyages where storeURL says.
func (a *app) openStore(dir string, opts *helm.Options) (*helm.Home, error) {
	raw, err := a.storeURL()
	if err != nil {
		return nil, err
	}
	if raw == "" {
		return helm.Open(dir, opts)
	}
	return a.sharedHome(dir, raw, opts)
}

// sharedHome opens the home of dir whose voyages are in the store at raw
// (a.close closes the connection).
func (a *app) sharedHome(dir, raw string, opts *helm.Options) (*helm.Home, error) {
	st, where, err := a.dialStore(raw)
	if err != nil {
		return nil, err
	}
	return helm.OpenStore(dir, st, where, opts)
}

// dialStore connects to the JetStream store at raw: nats://HOST:PORT
// (several, comma-separated, of one cluster; tls:// for TLS), with the
// home's name as its path (default "default").
func (a *app) dialStore(raw string) (*natsstore.Store, string, error) {
	hint := "give --store nats://HOST:PORT/HOME (or HELM_STORE, or store in config.toml): the JetStream server, and the home's name on it"
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "nats" && u.Scheme != "tls") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		shown := fmt.Sprintf("%q", raw)
		switch {
		case err != nil && strings.Contains(raw, "@"):
			shown = "given" // it may hold a password
		case err == nil && u.User != nil:
			c := *u
			if _, ok := c.User.Password(); ok {
				c.User = url.UserPassword(c.User.Username(), "xxxxx")
			}
			shown = fmt.Sprintf("%q", c.String())
		}
		return nil, "", &usageError{Err: fmt.Errorf("store %s is not a JetStream server's URL (nats://HOST:PORT/HOME)", shown), Hint: hint}
	}
	home := strings.Trim(u.Path, "/")
	if home == "" {
		home = "default"
	}
	servers := u.Scheme + "://" + u.Host
	if u.User != nil {
		servers = u.Scheme + "://" + u.User.String() + "@" + u.Host
	}
	cfg, err := a.config()
	if err != nil {
		return nil, "", err
	}
	// The [nats] table's files are named relative to the home;
	// HELM_NATS_CREDS, as HELM_HOME, relative to the working directory.
	dir, _ := a.homeDir()
	inHome := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	creds := inHome(cfg.NATS.Creds)
	if c := a.getenv("HELM_NATS_CREDS"); c != "" {
		creds = a.abs(c)
	}
	st, err := natsstore.Open(context.Background(), servers, &natsstore.Options{
		Home: home, Replicas: cfg.NATS.Replicas, Name: "helm",
		Warn:      func(m string) { fmt.Fprintf(a.stderr, "helm: warning: %s\n", m) },
		CredsFile: creds, CAFile: inHome(cfg.NATS.CA), CertFile: inHome(cfg.NATS.Cert), KeyFile: inHome(cfg.NATS.Key),
	})
	if err != nil {
		return nil, "", &hinted{Err: err, Hint: a.dialHint(err, creds)}
	}
	a.stores = append(a.stores, st)
	where := "home " + home + " on " + redactedURL(u)
	return st, where, nil
}

// dialHint says what to check when the JetStream server could not be
// reached or refused helm (err), by what went wrong; creds is the
// credentials file helm gave, if any.
func (a *app) dialHint(err error, creds string) string {
	table := "the [nats] table of " + a.configPath()
	var unknownCA x509.UnknownAuthorityError
	var badName x509.HostnameError
	var badCert *tls.CertificateVerificationError
	var alert *net.OpError // crypto/tls reports the peer's alerts as a "remote error"
	var unsafe *natsstore.SettingsError
	switch {
	case errors.As(err, &unsafe):
		return unsafe.Hint()
	case errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrAuthExpired),
		errors.Is(err, nats.ErrAuthRevoked), errors.Is(err, nats.ErrAccountAuthExpired):
		if creds != "" {
			return "the server refused the credentials in " + creds + ": check that they are a user of an account its operator signed, and not expired or revoked (HELM_NATS_CREDS, or creds in " + table + ")"
		}
		return "give the server a user's credentials: HELM_NATS_CREDS=FILE, or creds = \"FILE\" in " + table + " (a NATS credentials file, a user's JWT and seed, as nsc generate creds writes it)"
	case errors.As(err, &unknownCA), errors.As(err, &badName), errors.As(err, &badCert):
		return "the server's TLS certificate did not verify: set ca in " + table + " to the PEM file of the certificate authority that signed it (relative to the home), and give --store the host name the certificate names"
	case errors.Is(err, nats.ErrTLS), errors.As(err, &alert) && alert.Op == "remote error":
		// A TLS error, or the server's TLS alert (certificate required,
		// bad certificate); a refused client certificate shows as one
		// or as the connection closed right after the handshake,
		// depending on whether helm read or wrote first.
		return "the TLS connection failed: if the server asks for a client certificate, set cert and key in " + table + " (PEM files, relative to the home); check ca there too"
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission):
		return "check the files that " + table + " names (relative to the home) and HELM_NATS_CREDS (relative to the working directory)"
	}
	return "check that a nats-server with JetStream (-js) runs there, and " + table
}

// redactedURL is u without its password, for messages, and without its
// user name if it has no password: NATS takes that for a token.
func redactedURL(u *url.URL) string {
	c := *u
	c.Path = ""
	if c.User != nil {
		if _, ok := c.User.Password(); ok {
			c.User = url.User(c.User.Username())
		} else {
			c.User = nil
		}
	}
	return c.String()
}

// otherHome opens the home that --to or --from names: a JetStream
// store's URL, or a home directory. Its guard rules and redaction are this
// home's.
func (a *app) otherHome(raw string) (*helm.Home, error) {
	dir, opts, err := a.homeOptions()
	if err != nil {
		return nil, err
	}
	if !strings.Contains(raw, "://") {
		return helm.Open(a.abs(raw), opts)
	}
	return a.sharedHome(dir, raw, opts)
}

// homeName names a home in messages: its store, or its directory.
func homeName(h *helm.Home) string {
	if s := h.StoreName(); s != "" {
		return s
	}
	return h.Dir()
}

func newVoyagePushCmd(a *app) *cobra.Command {
	return leafCmd(a, &cobra.Command{
		Use:   "push [VOYAGE] --to STORE",
		Short: "copy a voyage, with its artifacts, to a JetStream store or another home",
		Long: `Copy the voyage to STORE: a JetStream server, nats://HOST:PORT/HOME, or
another home's directory. Every event and every artifact's bytes go, and
each is checked on arrival (the events folded, the artifacts against
their BLAKE3 address, the digest of the whole) before anything is
recorded there.

A copy STORE holds already is brought up to date: the records after its
own are appended, if its events are this voyage's first. A copy that
diverged (someone recorded in both places) or is ahead is refused and
left as it is (exit 1).

VOYAGE is an id or an unambiguous prefix, as --voyage takes; without
either, the only active voyage.`,
		Example: "  helm voyage push a3b --to nats://nats.example.com:4222/team\n  helm --store nats://nats.example.com:4222/team voyage pull a3b --from ~/.helm",
	}, &voyageCopyCommand{push: true})
}

func newVoyagePullCmd(a *app) *cobra.Command {
	return leafCmd(a, &cobra.Command{
		Use:   "pull [VOYAGE] --from STORE",
		Short: "copy a voyage, with its artifacts, from a JetStream store or another home",
		Long: `Copy the voyage VOYAGE (or --voyage: an id or an unambiguous prefix,
as STORE lists it) from STORE, a JetStream server (nats://HOST:PORT/HOME)
or another home's directory, into this home. Every event and every
artifact's bytes come, and each is checked on arrival before anything is
recorded here.

A copy this home holds already is brought up to date: the records after
its own are appended, if its events are the voyage's first. A copy that
diverged or is ahead is refused and left as it is (exit 1).`,
		Example: "  helm voyage pull a3b --from nats://nats.example.com:4222/team\n  helm voyage compact --voyage a3b",
	}, &voyageCopyCommand{})
}

// voyageCopyCommand is voyage push and voyage pull.
type voyageCopyCommand struct {
	push  bool
	other string
}

func (c *voyageCopyCommand) Flags(fs *pflag.FlagSet) {
	if c.push {
		fs.StringVar(&c.other, "to", "", "the `STORE` to copy the voyage to: nats://HOST:PORT/HOME, or a home's directory")
		return
	}
	fs.StringVar(&c.other, "from", "", "the `STORE` to copy the voyage from: nats://HOST:PORT/HOME, or a home's directory")
}

func (c *voyageCopyCommand) Run(ctx context.Context, a *app, args []string) error {
	name, flag := "voyage pull", "--from"
	if c.push {
		name, flag = "voyage push", "--to"
	}
	arg := firstArg(args)
	switch {
	case len(args) > 1:
		return usageErrorf(a.cmd, "%s: one VOYAGE at most, got %d arguments %q", name, len(args), args)
	case !c.push && arg != "" && a.g.voyage != "" && arg != a.g.voyage:
		return usageErrorf(a.cmd, "%s: VOYAGE %s and --voyage %s disagree; give one of them", name, printable(arg), printable(a.g.voyage))
	case !c.push && arg == "" && a.g.voyage == "":
		return usageErrorf(a.cmd, "%s: which voyage? give its id (or a prefix) as the other store lists it, as VOYAGE or --voyage", name)
	case strings.TrimSpace(c.other) == "":
		return usageErrorf(a.cmd, "%s: %s STORE is required: nats://HOST:PORT/HOME, or a home's directory", name, flag)
	}
	if arg == "" {
		arg = a.g.voyage
	}
	here, err := a.openHome()
	if err != nil {
		return err
	}
	there, err := a.otherHome(strings.TrimSpace(c.other))
	if err != nil {
		return err
	}
	src, dst, id := there, here, arg
	if c.push {
		v, err := a.openVoyageArg(ctx, arg)
		if err != nil {
			return err
		}
		src, dst, id = here, there, v.ID()
	}
	if homeName(src) == homeName(dst) {
		return usageErrorf(a.cmd, "%s: %s names this home (%s): give another", name, flag, homeName(src))
	}
	rep, err := src.Copy(ctx, id, dst)
	if !c.push && errors.Is(err, helm.ErrNoVoyage) {
		// Not this home's voyage list: the other one's.
		there := "--home " + printable(homeName(src))
		if src.StoreName() != "" {
			there = "--store STORE" // its URL may hold a password
		}
		return &hinted{Err: err, Hint: fmt.Sprintf("list the voyages there: helm %s voyage list --status all", there)}
	}
	if errors.Is(err, helm.ErrDiverged) {
		return &hinted{Err: err, Hint: fmt.Sprintf("compare the two: helm log --voyage %s, here and with --store or --home naming the other; both copies stay as they are (a JetStream home keeps every record): go on recording in one of them", short(id))}
	}
	if err != nil {
		return err
	}
	if a.g.json {
		return writeJSON(a.stdout, struct {
			helm.CopyReport
			From string `json:"from"`
			To   string `json:"to"`
		}{rep, homeName(src), homeName(dst)})
	}
	what := fmt.Sprintf("%d records appended", rep.Appended)
	if rep.Appended == 1 {
		what = "1 record appended"
	}
	switch {
	case rep.Created:
		what = "a new copy"
	case rep.Appended == 0:
		what = "up to date already"
	}
	_, err = fmt.Fprintf(a.stdout, "Copied voyage %s from %s to %s: %s; the copy holds %d records, each checked on arrival\n",
		rep.Voyage, homeName(src), homeName(dst), what, rep.Records)
	return err
}
