package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeNATS listens on loopback and speaks the first lines of the NATS
// protocol: INFO, then, to the client's CONNECT, reply (a -ERR line), or
// nothing when reply is "" (the client fails before it sends one). It is
// no server; integration/ runs helm against a real one.
func fakeNATS(t *testing.T, reply string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				fmt.Fprintf(c, "INFO {\"server_id\":\"FAKE\",\"version\":\"2.10.0\",\"proto\":1,\"max_payload\":1048576}\r\n")
				line, err := bufio.NewReader(c).ReadString('\n')
				if err == nil && strings.HasPrefix(line, "CONNECT ") && reply != "" {
					fmt.Fprintf(c, "%s\r\n", reply)
				}
			})
		}
	})
	return ln.Addr().String()
}

// The [nats] table's files are named relative to the home; a
// HELM_NATS_CREDS relative to the working directory, as HELM_HOME is.
// A file that is not there is named as helm looked for it, and the hint
// says where each is relative to.
func TestStoreFilesRelativeToHomeAndWorkingDirectory(t *testing.T) {
	t.Parallel()
	addr := fakeNATS(t, "")
	h := newHarness(t)
	h.Env["HELM_STORE"] = "nats://" + addr + "/team"
	writeConfig(t, h, "[nats]\ncreds = \"nats/ana.creds\"\n")
	r := h.fails(1, "voyage", "list")
	assert.Contains(t, r.Stderr, filepath.Join(h.Home, "nats", "ana.creds")+": no such file")
	assert.Contains(t, r.Stderr, "nats://"+addr, "the message names the server")
	assert.Contains(t, r.Stderr, "Try: check the files that the [nats] table of "+filepath.Join(h.Home, "config.toml")+" names (relative to the home) and HELM_NATS_CREDS (relative to the working directory)\n")

	h.Env["HELM_NATS_CREDS"] = "ana.creds"
	r = h.fails(1, "voyage", "list")
	assert.Contains(t, r.Stderr, filepath.Join(h.Dir, "ana.creds")+": no such file")

	writeConfig(t, h, "[nats]\nca = \"tls/ca.pem\"\n")
	delete(h.Env, "HELM_NATS_CREDS")
	r = h.fails(1, "voyage", "list")
	assert.Contains(t, r.Stderr, filepath.Join(h.Home, "tls", "ca.pem")+": no such file")
}

// A server that refuses helm's credentials: the hint names the way to
// give them, or the file given; a password or a token in the URL is in
// no message.
func TestStoreRefusedSaysWhichCredentials(t *testing.T) {
	t.Parallel()
	addr := fakeNATS(t, "-ERR 'Authorization Violation'")
	h := newHarness(t)
	config := filepath.Join(h.Home, "config.toml")
	writeConfig(t, h, "")

	r := h.fails(1, "--store", "nats://"+addr+"/team", "voyage", "list")
	assert.Contains(t, r.Stderr, "helm: jetstream: connect to nats://"+addr+": nats: Authorization Violation")
	assert.Contains(t, r.Stderr, "Try: give the server a user's credentials: HELM_NATS_CREDS=FILE, or creds = \"FILE\" in the [nats] table of "+config)

	for _, u := range []string{"nats://ana:s3cret@" + addr + "/team", "nats://s3cret@" + addr + "/team"} {
		r = h.fails(1, "--store", u, "voyage", "list")
		assert.NotContains(t, r.Stderr, "s3cret")
		assert.Contains(t, r.Stderr, addr)
	}
}

func TestDialHintByCause(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := &app{main: h.main()}
	table := "the [nats] table of " + filepath.Join(h.Home, "config.toml")
	wrap := func(err error) error { return fmt.Errorf("jetstream: connect to nats://h:4222: %w (...)", err) }
	for _, tc := range []struct {
		name  string
		err   error
		creds string
		want  string
	}{
		{"no credentials", wrap(nats.ErrAuthorization), "", "give the server a user's credentials: HELM_NATS_CREDS=FILE, or creds = \"FILE\" in " + table},
		{"credentials refused", wrap(nats.ErrAuthorization), "/x/ana.creds", "the server refused the credentials in /x/ana.creds"},
		{"expired", wrap(nats.ErrAuthExpired), "/x/ana.creds", "the server refused the credentials in /x/ana.creds"},
		{"unknown CA", wrap(fmt.Errorf("%w: %w", nats.ErrTLS, &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}})), "", "set ca in " + table},
		{"wrong host", wrap(x509.HostnameError{Host: "h"}), "", "set ca in " + table},
		{"TLS closed after the handshake", wrap(fmt.Errorf("%w: connection closed by remote after TLS handshake", nats.ErrTLS)), "", "set cert and key in " + table},
		{"TLS alert", wrap(&net.OpError{Op: "remote error", Err: errors.New("tls: certificate required")}), "", "set cert and key in " + table},
		{"a file not there", wrap(&fs.PathError{Op: "open", Path: "/x", Err: fs.ErrNotExist}), "", "check the files that " + table},
		{"no server", wrap(errors.New("nats: no servers available for connection")), "", "check that a nats-server with JetStream (-js) runs there, and " + table},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Contains(t, a.dialHint(tc.err, tc.creds), tc.want)
		})
	}
}
