package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/store"
	"github.com/helmlog/helm/store/natsstore"
	"github.com/helmlog/helm/store/storetest"
)

// The command line's end-to-end scripts (cmd/helm/testdata/script) run
// a second time here with every voyage in JetStream: each script gets a
// home of its own on one embedded server (cmd/helm's TestScripts reads
// HELM_TEST_STORE). Every command works the same on either store.
func TestCLIScriptsOnJetStream(t *testing.T) {
	srv := startServer(t, "scripts", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	test := exec.CommandContext(ctx, "go", "test", "-count=1", "-run", "^TestScripts$", "./cmd/helm")
	test.Dir = ".."
	test.Env = append(os.Environ(), "HELM_TEST_STORE="+srv.ClientURL())
	out, err := test.CombinedOutput()
	require.NoError(t, err, "cmd/helm's scripts on JetStream:\n%s", out)
}

// natsServer is a nats-server process, as a team runs one: the binary
// built from the nats-server module this module requires.
type natsServer struct {
	bin, dir, url string
	port          int
	cmd           *exec.Cmd
}

// servers are the nats-server programs the standalone tests run: the
// one built from the module this module requires, and nats-server 2.9,
// the oldest helm supports, when HELM_NATS_SERVER_2_9 names its binary
// (.ci/run installs it from the module proxy).
func servers(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"module": func(t *testing.T) string {
			bin := filepath.Join(t.TempDir(), "nats-server")
			build := exec.Command("go", "build", "-o", bin, "github.com/nats-io/nats-server/v2")
			out, err := build.CombinedOutput()
			require.NoError(t, err, "go build nats-server: %s", out)
			return bin
		},
		"v2.9": func(t *testing.T) string {
			bin := os.Getenv("HELM_NATS_SERVER_2_9")
			if bin == "" {
				t.Skip("HELM_NATS_SERVER_2_9 names no nats-server 2.9 binary (.ci/run installs one)")
			}
			return bin
		},
	}
}

// startNATSServer runs the nats-server program bin with JetStream, on a
// loopback port, its storage in a temporary directory.
func startNATSServer(t *testing.T, bin string) *natsServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &natsServer{bin: bin, dir: t.TempDir(), port: port, url: fmt.Sprintf("nats://127.0.0.1:%d", port)}
	s.start(t)
	t.Cleanup(s.stop)
	return s
}

func (s *natsServer) start(t *testing.T) {
	t.Helper()
	s.cmd = exec.Command(s.bin, "-js", "-a", "127.0.0.1", "-p", fmt.Sprint(s.port), "-sd", s.dir)
	require.NoError(t, s.cmd.Start())
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.port))
		if err == nil {
			c.Close()
			return
		}
		require.True(t, time.Now().Before(deadline), "nats-server did not listen on %d", s.port)
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *natsServer) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(os.Interrupt)
		s.cmd.Wait()
		s.cmd = nil
	}
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
}

// The whole flow of the command line against a standalone nats-server
// -js: a voyage started, observed (a large file among them), a bearing, a
// commit performed in a real repository, a note, completed; read back
// (log, report, transcript, verify, artifacts); pulled into a home on
// disk and pushed back; a diverged copy refused; and all of it still
// there after the server restarts.
func TestCLIOnStandaloneNATSServer(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	bin := buildHelm(t)
	for name, server := range servers(t) {
		t.Run(name, func(t *testing.T) { cliFlow(t, startNATSServer(t, server(t)), bin) })
	}
}

// The JetStream store passes the conformance suite on each standalone
// server, nats-server 2.9 among them.
func TestJetStreamConformsOnStandaloneServers(t *testing.T) {
	for name, server := range servers(t) {
		if name == "module" {
			continue // TestJetStreamConforms runs it in this process
		}
		t.Run(name, func(t *testing.T) {
			srv := startNATSServer(t, server(t))
			storetest.Run(t, func(t *testing.T) func() store.Store {
				home := newHome()
				return func() store.Store { return openStore(t, srv.url, natsstore.Options{Home: home}) }
			})
		})
	}
}

func cliFlow(t *testing.T, srv *natsServer, bin string) {
	work := t.TempDir()
	repo := filepath.Join(work, "repo")
	require.NoError(t, os.MkdirAll(repo, 0o755))
	git(t, repo, "init", "-q", "-b", "main")
	git(t, repo, "config", "user.email", "ana@helm.invalid")
	git(t, repo, "config", "user.name", "ana")
	require.NoError(t, os.WriteFile(filepath.Join(repo, "widget.go"), []byte("package widget\n"), 0o644))
	big := make([]byte, 200<<10)
	rand.Read(big)
	require.NoError(t, os.WriteFile(filepath.Join(repo, "big.txt"), []byte(hex.EncodeToString(big)), 0o644))

	store := srv.url + "/team"
	home := filepath.Join(work, "home")
	gitEnv := []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0"}
	helm := newHelmCLI(t, bin, home, append(gitEnv, "HELM_STORE="+store)...)
	helm.dir = repo

	out, stderr := helm.exits(0, "voyage", "new", "--kind", "resolve-issue", "Fix #7: widget init")
	assert.Contains(t, stderr, "helm: warning: the home team on "+srv.url+" has one replica", "the command that makes the home warns")
	id := strings.TrimSpace(out)
	require.Len(t, id, 36)
	_, stderr = helm.exits(0, "observe", "file-contents", "widget.go")
	assert.Empty(t, stderr, "once")
	out, _ = helm.exits(0, "observe", "file-contents", "big.txt")
	assert.Contains(t, out, "Observed FileContents: big.txt")
	helm.exits(0, "observe", "command", "--", "git", "status", "--short")
	helm.exits(0, "bearing", "--reading", "widget.go needs its init")
	require.NoError(t, os.WriteFile(filepath.Join(repo, "widget.go"), []byte("package widget\n\nfunc Init() {}\n"), 0o644))
	git(t, repo, "add", "widget.go")
	out, _ = helm.exits(0, "action", "commit", "--message", "widget: Init", "--why", "the bearing")
	assert.Contains(t, out, "Action 2 performed for voyage")
	helm.exits(0, "note", "committed; a person opens the pull request")
	helm.exits(0, "complete", "--outcome", "partial", "--summary", "Init added; the pull request is next")

	log, _ := helm.exits(0, "log", "--voyage", id)
	for _, want := range []string{"Voyage: Fix #7: widget init", "── Bearing 1 ──", "Mark: FileContents: big.txt", "── Action 2 ──", "committed (", "── Note 3 ──", "Status: partial"} {
		assert.Contains(t, log, want)
	}
	list, _ := helm.exits(0, "voyage", "list", "--status", "all")
	assert.Contains(t, list, id[:8])
	assert.Contains(t, list, "partial")
	verify, _ := helm.exits(0, "voyage", "verify", "--voyage", id)
	assert.Contains(t, verify, "OK: nothing damaged")
	assert.Contains(t, verify, "3 checked against their BLAKE3 address")
	report, _ := helm.exits(0, "report", "--voyage", id)
	assert.Contains(t, report, "Fix #7: widget init")
	transcript, _ := helm.exits(0, "transcript", "--voyage", id)
	assert.Contains(t, transcript, "committed")
	arts, _ := helm.exits(0, "--json", "artifact", "list", "--voyage", id)
	var rows []struct {
		Hash string `json:"hash"`
		Size int64  `json:"size"`
	}
	require.NoError(t, json.Unmarshal([]byte(arts), &rows))
	require.Len(t, rows, 3)
	out, _ = helm.exits(0, "voyage", "compact", "--voyage", id)
	assert.Contains(t, out, "nothing to reclaim", "nothing jettisoned yet")

	// Pulled into a home on disk: the same story, verified there.
	disk := newHelmCLI(t, bin, home, gitEnv...)
	disk.dir = repo
	out, _ = disk.exits(0, "voyage", "pull", id[:8], "--from", store)
	assert.Contains(t, out, "a new copy")
	diskLog, _ := disk.exits(0, "log", "--voyage", id)
	assert.Equal(t, log, diskLog)
	verify, _ = disk.exits(0, "voyage", "verify", "--voyage", id)
	assert.Contains(t, verify, "OK: nothing damaged")
	out, _ = disk.exits(0, "voyage", "pull", id, "--from", store)
	assert.Contains(t, out, "up to date already")

	// Pushed to another home on the server, then both go on: a
	// diverged copy is refused, and left as it was.
	other := srv.url + "/crew-b"
	out, _ = disk.exits(0, "voyage", "push", id, "--to", other)
	assert.Contains(t, out, "a new copy")
	helm.exits(0, "--store", other, "voyage", "resume", "--voyage", id, "--reason", "one more thing")
	helm.exits(0, "--store", other, "note", "--voyage", id, "recorded on crew-b")
	disk.exits(0, "voyage", "resume", "--voyage", id, "--reason", "another thing")
	disk.exits(0, "note", "--voyage", id, "recorded on disk")
	_, stderr = disk.exits(1, "voyage", "push", id, "--to", other)
	assert.Contains(t, stderr, "diverged")
	otherLog, _ := helm.exits(0, "--store", other, "log", "--voyage", id)
	assert.Contains(t, otherLog, "recorded on crew-b")
	assert.NotContains(t, otherLog, "recorded on disk")

	// The server restarts: everything acknowledged is there.
	srv.stop()
	srv.start(t)
	again, _ := helm.exits(0, "log", "--voyage", id)
	assert.Equal(t, log, again)
	verify, _ = helm.exits(0, "voyage", "verify", "--voyage", id)
	assert.Contains(t, verify, "OK: nothing damaged")

	// A jettison erases the artifact's key: it no longer reads, verify
	// proves the chain and counts it skipped, compaction erases nothing
	// more.
	helm.exits(0, "voyage", "resume", "--voyage", id, "--reason", "one more look")
	helm.exits(0, "artifact", "jettison", rows[0].Hash, "--voyage", id, "--reason", "a customer's data")
	show, _ := helm.exits(0, "sighting", "show", rows[0].Hash[:12], "--voyage", id)
	assert.Contains(t, show, "jettisoned by ana (role coder, method human) at ", "shows that it was jettisoned, not its bytes")
	assert.Contains(t, show, ": a customer's data", "and why")
	verify, _ = helm.exits(0, "voyage", "verify", "--voyage", id)
	assert.Contains(t, verify, "OK: nothing damaged")
	assert.Contains(t, verify, "1 jettisoned")
	out, _ = helm.exits(0, "voyage", "compact", "--voyage", id)
	assert.Contains(t, out, "1 artifact erased")
}
