//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Reading a large sighting back is bounded: every read path (verify,
// sighting show, log --evidence, export, MCP, serve) runs as a process of
// its own on a voyage holding one large file-contents sighting, and its
// peak RSS (getrusage's ru_maxrss of the child) stays under a ceiling
// that does not grow with the sighting: half its size plus 100 MB at
// most, generous at 64 MB and far below what reading it whole costs.
//
// It prints one "name: value" line per path. HELM_READS_MB sets the
// sighting's size (64 by default; 1024 for the figures in the bench's
// README); HELM_READS_BIN measures a helm binary built elsewhere (another
// version) instead of this one, its ceilings then only printed.

// TestReadingALargeSightingStaysBounded measures every read path's peak
// RSS on a voyage holding one large sighting, and holds each under the
// ceiling.
func TestReadingALargeSightingStaysBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and observes a large file")
	}
	mb := 64
	if s := os.Getenv("HELM_READS_MB"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "HELM_READS_MB")
		mb = n
	}
	dir := t.TempDir()
	bin, other := os.Getenv("HELM_READS_BIN"), true
	if bin == "" {
		bin, other = buildBinary(t).path, false
	}
	home := filepath.Join(dir, "home")
	require.NoError(t, os.MkdirAll(home, 0o700))
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "HELM_HOME=" + home,
		"HELM_IDENTITY=reader", "HELM_ROLE=coder", "HELM_METHOD=human"}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env, cmd.Dir = env, dir
		out, err := cmd.Output()
		var stderr []byte
		if xe, ok := err.(*exec.ExitError); ok {
			stderr = xe.Stderr
		}
		require.NoError(t, err, "helm %s: %s", strings.Join(args, " "), stderr)
		return string(out)
	}
	file := filepath.Join(dir, "large.go")
	writeSource(t, file, int64(mb)<<20)
	id := strings.TrimSpace(run("voyage", "new", "read a large sighting back"))
	env = append(env, "HELM_VOYAGE="+id)
	run("observe", "file-contents", "--read", file)
	var arts []struct {
		Hash string `json:"hash"`
		Size int64  `json:"size"`
	}
	require.NoError(t, json.Unmarshal([]byte(run("artifact", "list", "--json")), &arts))
	require.Len(t, arts, 1)
	require.Greater(t, arts[0].Size, int64(mb)<<20, "the sighting holds the whole file")
	hash := arts[0].Hash
	run("bearing", "--reading", "a large file, read")
	require.NoError(t, os.Remove(file))

	ceiling := float64(mb)/2 + 100
	report := func(name string, mib float64) {
		t.Helper()
		fmt.Printf("reads_%dmb_%s_peak_rss_mb: %.0f (ceiling %.0f)\n", mb, name, mib, ceiling)
		if !other {
			assert.Less(t, mib, ceiling, "%s: peak RSS reading a %d MB sighting back", name, mb)
		}
	}
	archive := filepath.Join(dir, "voyage.jsonl")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"verify", []string{"voyage", "verify"}},
		{"sighting_show", []string{"sighting", "show", hash}},
		{"sighting_show_json", []string{"sighting", "show", hash, "--json"}},
		{"log_evidence", []string{"log", "--evidence"}},
		{"export_jsonl", []string{"voyage", "export", "--format", "jsonl", "-o", archive}},
		{"export_md", []string{"voyage", "export", "--format", "md"}},
		{"export_html", []string{"voyage", "export", "--format", "html"}},
	} {
		report(c.name, peakRSSOf(t, env, dir, bin, c.args...))
	}
	// The archive, imported into another home, reads back as bounded.
	other2 := filepath.Join(dir, "home2")
	require.NoError(t, os.MkdirAll(other2, 0o700))
	importEnv := append(append([]string(nil), env[:len(env)-1]...), "HELM_HOME="+other2)
	report("import", peakRSSOf(t, importEnv, dir, bin, "voyage", "import", archive))

	for _, c := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"mcp_sighting_show", "sighting_show", map[string]any{"sighting": hash, "limit": 65536}},
		{"mcp_sighting_show_json_offset", "sighting_show", map[string]any{"sighting": hash, "format": "json", "offset": 1 << 20, "limit": 65536}},
		{"mcp_log_evidence", "log", map[string]any{"evidence": true, "limit": 65536}},
	} {
		report(c.name, mcpPeakRSS(t, bin, env, dir, func(cs *mcp.ClientSession) {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
			require.NoError(t, err)
			require.False(t, res.IsError, "%s: %v", c.tool, res.Content)
		}))
	}
	report("mcp_resource", mcpPeakRSS(t, bin, env, dir, func(cs *mcp.ClientSession) {
		_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "helm://voyages/" + id + "/sightings/" + hash})
		require.NoError(t, err)
	}))
	report("serve", servePeakRSS(t, bin, env, dir, "/voyages/"+id, "/voyages/"+id+"/sightings/"+hash, "/voyages/"+id+"/artifacts/"+hash))
}

// writeSource writes size bytes of generated source lines to path: a
// block of 64 KiB of them, again and again, which compresses as well as
// the sighting of a 188 KB archive that expands to 1 GB.
func writeSource(t *testing.T, path string, size int64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(29, 2))
	var block []byte
	for len(block) < 64<<10 {
		block = fmt.Appendf(block, "\tv%d := compute(%d, %q)\n", rng.IntN(1000), rng.IntN(1<<20), strconv.Itoa(rng.IntN(1e6)))
	}
	f, err := os.Create(path)
	require.NoError(t, err)
	w := bufio.NewWriterSize(f, 1<<20)
	for n := int64(0); n < size; n += int64(len(block)) {
		_, err := w.Write(block[:min(int64(len(block)), size-n)])
		require.NoError(t, err)
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
}

// peakRSSOf runs bin with args, its output discarded, and returns its
// peak RSS in MiB (measured by underPeakRSS's helper).
func peakRSSOf(t *testing.T, env []string, dir, bin string, args ...string) float64 {
	t.Helper()
	cmd, peak := underPeakRSS(t, env, bin, args...)
	cmd.Dir, cmd.Stdout = dir, io.Discard
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Run(), "%s: %s", cmd, stderr.String())
	code, mib := peak()
	require.Zero(t, code, "%s %v: %s", bin, args, stderr.String())
	return mib
}

// mcpPeakRSS runs helm mcp, calls it once through the SDK's client, and
// returns the server's peak RSS in MiB.
func mcpPeakRSS(t *testing.T, bin string, env []string, dir string, call func(*mcp.ClientSession)) float64 {
	t.Helper()
	cmd, peak := underPeakRSS(t, env, bin, "mcp")
	cmd.Dir = dir
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "helm-reads", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	call(cs)
	require.NoError(t, cs.Close())
	require.NotNil(t, cmd.ProcessState, "helm mcp has exited")
	_, mib := peak()
	return mib
}

// servePeakRSS runs helm serve on a free port, gets each path from it
// (reading every byte), stops it, and returns its peak RSS in MiB.
func servePeakRSS(t *testing.T, bin string, env []string, dir string, paths ...string) float64 {
	t.Helper()
	cmd, peak := underPeakRSS(t, env, bin, "serve", "--addr", "127.0.0.1:0")
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	at := strings.Index(line, "http://")
	require.GreaterOrEqual(t, at, 0, "serve printed %q", line)
	base := strings.TrimSuffix(strings.Fields(line[at:])[0], "/")
	client := &http.Client{Timeout: 10 * time.Minute}
	for _, p := range paths {
		resp, err := client.Get(base + p)
		require.NoError(t, err)
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.NoError(t, err, "GET %s", p)
		assert.Equal(t, http.StatusOK, resp.StatusCode, "GET %s", p)
	}
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	_ = cmd.Wait() // interrupted: its status says so
	_, mib := peak()
	return mib
}
