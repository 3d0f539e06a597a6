package integration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The helm program against a JetStream server that wants TLS (and a
// client certificate) or a user's credentials (operator mode): what a
// crew's shared server asks. Everything is on loopback, with throwaway
// keys made here.

// helmCLI runs the helm program with a home of its own and nothing of
// the test's environment but PATH.
type helmCLI struct {
	t   *testing.T
	bin string
	env []string
	dir string // the working directory ("": the test's)
}

func newHelmCLI(t *testing.T, bin, home string, env ...string) *helmCLI {
	return &helmCLI{t: t, bin: bin, env: append([]string{
		"HELM_HOME=" + home, "HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"),
		"HELM_IDENTITY=ana", "HELM_ROLE=coder", "HELM_METHOD=human",
	}, env...)}
}

// run runs helm with args; the context only keeps a hung helm from
// hanging the test, no assertion is timed.
func (c *helmCLI) run(args ...string) (stdout, stderr string, code int) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Env, cmd.Dir = c.env, c.dir
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	require.NoError(c.t, ctx.Err(), "helm %q hung; stderr:\n%s", args, errOut.String())
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		return out.String(), errOut.String(), xe.ExitCode()
	}
	require.NoError(c.t, err, "helm %q", args)
	return out.String(), errOut.String(), 0
}

// exits runs helm and requires it to exit with status want.
func (c *helmCLI) exits(want int, args ...string) (stdout, stderr string) {
	c.t.Helper()
	stdout, stderr, code := c.run(args...)
	require.Equal(c.t, want, code, "helm %q:\n%s%s", args, stdout, stderr)
	return stdout, stderr
}

// ok runs helm and requires it to succeed.
func (c *helmCLI) ok(args ...string) string {
	c.t.Helper()
	stdout, stderr, code := c.run(args...)
	require.Equal(c.t, 0, code, "helm %q:\n%s%s", args, stdout, stderr)
	return stdout
}

// voyageFlow records a voyage through the store the home's
// configuration (and c's environment) name, a note in it, and reads it
// back: helm log tells the note, helm voyage verify passes.
func voyageFlow(t *testing.T, c *helmCLI, args ...string) {
	t.Helper()
	out := c.ok(append(args, "voyage", "new", "Keep the crew's voyages on a secured server")...)
	t.Logf("helm voyage new: %s", strings.TrimSpace(out))
	c.ok(append(args, "note", "Written through a secured connection")...)
	log := c.ok(append(args, "log")...)
	assert.Contains(t, log, "Voyage: Keep the crew's voyages on a secured server")
	assert.Contains(t, log, "Written through a secured connection")
	assert.Contains(t, log, "Identity: ana")
	c.ok(append(args, "voyage", "verify")...)
	list := c.ok(append(args, "voyage", "list")...)
	assert.Contains(t, list, "Keep the crew's voyages on a secured server")
}

// refused runs a helm command that cannot reach the store: it exits 1,
// names the server, says what to check (each of want, in either the
// message or its Try line), and records nothing, in the home or on the
// server (stored reports the streams of the server's account).
func refused(t *testing.T, c *helmCLI, home, server string, stored func() int, want []string, args ...string) {
	t.Helper()
	before := files(t, home)
	streams := stored()
	stdout, stderr, code := c.run(append(args, "voyage", "new", "Nothing should come of this")...)
	t.Logf("helm voyage new, refused (exit %d):\n%s", code, stderr)
	assert.Equal(t, 1, code, "exit status 1: the operation failed and nothing was recorded")
	assert.Empty(t, stdout)
	assert.True(t, strings.HasPrefix(stderr, "helm: "), stderr)
	assert.Contains(t, stderr, server, "the message names the server")
	for _, w := range want {
		assert.Contains(t, stderr, w)
	}
	assert.Equal(t, before, files(t, home), "nothing written in the home")
	assert.Equal(t, streams, stored(), "nothing created on the server")
}

// files lists the paths under dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel)
		return nil
	}))
	slices.Sort(out)
	return out
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
}

func port(srv *server.Server) int { return srv.Addr().(*net.TCPAddr).Port }

// streamsOf counts the streams of an account on srv (nil: the global
// account).
func streamsOf(t *testing.T, srv *server.Server, account string) func() int {
	return func() int {
		acc := srv.GlobalAccount()
		if account != "" {
			var err error
			acc, err = srv.LookupAccount(account)
			require.NoError(t, err)
		}
		return acc.JetStreamUsage().Streams
	}
}

// pki is a throwaway certificate authority.
type pki struct {
	t    *testing.T
	dir  string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newPKI(t *testing.T) *pki {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "helm test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	p := &pki{t: t, dir: t.TempDir(), cert: cert, key: key}
	p.write("ca.pem", "CERTIFICATE", der)
	return p
}

func (p *pki) write(name, kind string, der []byte) string {
	path := filepath.Join(p.dir, name)
	require.NoError(p.t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600))
	return path
}

// issue makes a certificate signed by the CA for name (a server's for
// 127.0.0.1, or a client's) and writes NAME.pem and NAME-key.pem.
func (p *pki) issue(name string, serial int64, usage x509.ExtKeyUsage) (certFile, keyFile string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(p.t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	if usage == x509.ExtKeyUsageServerAuth {
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.cert, &key.PublicKey, p.key)
	require.NoError(p.t, err)
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(p.t, err)
	return p.write(name+".pem", "CERTIFICATE", der), p.write(name+"-key.pem", "PRIVATE KEY", kder)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	require.NoError(t, err)
	writeFile(t, to, string(data))
}

// TestJetStreamTLS: a server that requires TLS and a client certificate
// signed by its CA. A home whose config.toml names the store (tls://)
// and, relative to the home, the CA, the client certificate and its key
// records a voyage there and reads it back. Without the CA, or without
// the client certificate, helm exits 1, naming the server and the
// [nats] table to check, and records nothing.
func TestJetStreamTLS(t *testing.T) {
	t.Parallel()
	bin := buildHelm(t)
	ca := newPKI(t)
	serverCert, serverKey := ca.issue("server", 2, x509.ExtKeyUsageServerAuth)
	clientCert, clientKey := ca.issue("client", 3, x509.ExtKeyUsageClientAuth)
	srv := startServer(t, "tls", func(o *server.Options) {
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{
			CertFile: serverCert, KeyFile: serverKey, CaFile: filepath.Join(ca.dir, "ca.pem"), Verify: true,
		})
		require.NoError(t, err)
		require.Equal(t, tls.RequireAndVerifyClientCert, tc.ClientAuth)
		o.TLSConfig, o.TLS, o.TLSVerify, o.TLSTimeout = tc, true, true, 5
	})
	store := fmt.Sprintf("tls://127.0.0.1:%d", port(srv))
	streams := streamsOf(t, srv, "")

	// A home with everything: the files sit in the home, named relative
	// to it.
	home := filepath.Join(t.TempDir(), "helm-home")
	copyFile(t, filepath.Join(ca.dir, "ca.pem"), filepath.Join(home, "tls", "ca.pem"))
	copyFile(t, clientCert, filepath.Join(home, "tls", "client.pem"))
	copyFile(t, clientKey, filepath.Join(home, "tls", "client-key.pem"))
	config := fmt.Sprintf("store = %q\n\n[nats]\nca = \"tls/ca.pem\"\ncert = \"tls/client.pem\"\nkey = \"tls/client-key.pem\"\n", store+"/team")
	writeFile(t, filepath.Join(home, "config.toml"), config)
	c := newHelmCLI(t, bin, home)

	t.Run("without the CA", func(t *testing.T) {
		noCA := filepath.Join(t.TempDir(), "helm-home")
		copyFile(t, clientCert, filepath.Join(noCA, "client.pem"))
		copyFile(t, clientKey, filepath.Join(noCA, "client-key.pem"))
		writeFile(t, filepath.Join(noCA, "config.toml"), fmt.Sprintf("store = %q\n\n[nats]\ncert = \"client.pem\"\nkey = \"client-key.pem\"\n", store+"/team"))
		refused(t, newHelmCLI(t, bin, noCA), noCA, store, streams,
			[]string{"x509: certificate signed by unknown authority", "Try: the server's TLS certificate did not verify: set ca in the [nats] table of " + filepath.Join(noCA, "config.toml")})
	})
	t.Run("without the client certificate", func(t *testing.T) {
		noCert := filepath.Join(t.TempDir(), "helm-home")
		copyFile(t, filepath.Join(ca.dir, "ca.pem"), filepath.Join(noCert, "ca.pem"))
		writeFile(t, filepath.Join(noCert, "config.toml"), fmt.Sprintf("store = %q\n\n[nats]\nca = \"ca.pem\"\n", store+"/team"))
		refused(t, newHelmCLI(t, bin, noCert), noCert, store, streams,
			[]string{"tls", "Try: the TLS connection failed: if the server asks for a client certificate, set cert and key in the [nats] table of " + filepath.Join(noCert, "config.toml")})
	})
	t.Run("with the CA and a client certificate", func(t *testing.T) {
		voyageFlow(t, c)
		assert.Equal(t, 4, streams(), "the home's stream, its two buckets' and its keys' are on the server")
	})
	t.Run("a CA file that is not there", func(t *testing.T) {
		// Named relative to the home, and missing there: the message
		// names the file as helm looked for it.
		writeFile(t, filepath.Join(home, "config.toml"), strings.Replace(config, "tls/ca.pem", "tls/gone.pem", 1))
		_, stderr, code := c.run("log")
		assert.Equal(t, 1, code)
		assert.Contains(t, stderr, filepath.Join(home, "tls", "gone.pem"))
		assert.Contains(t, stderr, "Try: check the files that the [nats] table of "+filepath.Join(home, "config.toml")+" names (relative to the home)")
	})
}

// operator is a NATS operator (JWT mode) with a system account and an
// account with JetStream, whose users' credentials it issues.
type operator struct {
	claims   *jwt.OperatorClaims
	resolver *server.MemAccResolver
	system   string
	account  string // the JetStream account's public key
	accKey   nkeys.KeyPair
}

func newOperator(t *testing.T) *operator {
	okp, err := nkeys.CreateOperator()
	require.NoError(t, err)
	opub, err := okp.PublicKey()
	require.NoError(t, err)
	op := &operator{resolver: &server.MemAccResolver{}}
	account := func(name string, js bool) (string, nkeys.KeyPair) {
		akp, err := nkeys.CreateAccount()
		require.NoError(t, err)
		apub, err := akp.PublicKey()
		require.NoError(t, err)
		ac := jwt.NewAccountClaims(apub)
		ac.Name = name
		if js {
			ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
		}
		ajwt, err := ac.Encode(okp)
		require.NoError(t, err)
		require.NoError(t, op.resolver.Store(apub, ajwt))
		return apub, akp
	}
	op.system, _ = account("SYS", false)
	op.account, op.accKey = account("CREW", true)
	op.claims = jwt.NewOperatorClaims(opub)
	op.claims.Name = "helm-test"
	op.claims.SystemAccount = op.system
	_, err = op.claims.Encode(okp) // self-signed, as nsc makes it
	require.NoError(t, err)
	return op
}

// creds writes the credentials file of a new user of the JetStream
// account.
func (op *operator) creds(t *testing.T, path string) {
	ukp, err := nkeys.CreateUser()
	require.NoError(t, err)
	upub, err := ukp.PublicKey()
	require.NoError(t, err)
	uc := jwt.NewUserClaims(upub)
	uc.Name = "ana"
	ujwt, err := uc.Encode(op.accKey)
	require.NoError(t, err)
	seed, err := ukp.Seed()
	require.NoError(t, err)
	text, err := jwt.FormatUserConfig(ujwt, seed)
	require.NoError(t, err)
	writeFile(t, path, string(text))
}

// TestJetStreamAuth: a server in operator mode, whose accounts and users
// are JWTs. A user's credentials file, given by HELM_NATS_CREDS or by
// creds in config.toml's [nats] (relative to the home), lets helm record
// a voyage in the account's JetStream and read it back. Without
// credentials, or with a user the operator did not issue, helm exits 1,
// naming the server and what to check, and records nothing.
func TestJetStreamAuth(t *testing.T) {
	t.Parallel()
	bin := buildHelm(t)
	op := newOperator(t)
	srv := startServer(t, "auth", func(o *server.Options) {
		o.TrustedOperators = []*jwt.OperatorClaims{op.claims}
		o.AccountResolver = op.resolver
		o.SystemAccount = op.system
	})
	store := fmt.Sprintf("nats://127.0.0.1:%d", port(srv))
	streams := streamsOf(t, srv, op.account)
	creds := filepath.Join(t.TempDir(), "ana.creds")
	op.creds(t, creds)

	home := filepath.Join(t.TempDir(), "helm-home")
	require.NoError(t, os.MkdirAll(home, 0o700))

	t.Run("without credentials", func(t *testing.T) {
		refused(t, newHelmCLI(t, bin, home), home, store, streams,
			[]string{"Authorization Violation", "Try: give the server a user's credentials: HELM_NATS_CREDS=FILE, or creds = \"FILE\" in the [nats] table of " + filepath.Join(home, "config.toml")},
			"--store", store+"/team")
	})
	t.Run("a user the operator did not issue", func(t *testing.T) {
		stranger := newOperator(t)
		strangerCreds := filepath.Join(t.TempDir(), "stranger.creds")
		stranger.creds(t, strangerCreds)
		refused(t, newHelmCLI(t, bin, home, "HELM_NATS_CREDS="+strangerCreds), home, store, streams,
			[]string{"Authorization Violation", "Try: the server refused the credentials in " + strangerCreds},
			"--store", store+"/team")
	})
	t.Run("a password in the URL", func(t *testing.T) {
		// Refused (the server takes JWTs only), and shown in no message.
		stdout, stderr, code := newHelmCLI(t, bin, home).run("--store", "nats://ana:s3cret@127.0.0.1:"+fmt.Sprint(port(srv))+"/team", "voyage", "list")
		assert.Equal(t, 1, code)
		assert.Contains(t, stderr, "127.0.0.1:"+fmt.Sprint(port(srv)))
		assert.NotContains(t, stdout+stderr, "s3cret")
	})
	t.Run("HELM_NATS_CREDS", func(t *testing.T) {
		voyageFlow(t, newHelmCLI(t, bin, home, "HELM_NATS_CREDS="+creds), "--store", store+"/team")
		assert.Equal(t, 4, streams(), "the home's stream, its two buckets' and its keys' are in the account's JetStream")
	})
	t.Run("creds in config.toml", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "helm-home")
		op.creds(t, filepath.Join(other, "nats", "ana.creds"))
		writeFile(t, filepath.Join(other, "config.toml"), fmt.Sprintf("store = %q\n\n[nats]\ncreds = \"nats/ana.creds\"\n", store+"/team2"))
		voyageFlow(t, newHelmCLI(t, bin, other))
		assert.Equal(t, 8, streams(), "and the second home's")
	})
}
