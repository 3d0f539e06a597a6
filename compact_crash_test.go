package helm_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	mrand "math/rand"

	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

var compactRounds = flag.Int("helm.compactrounds", 20, "rounds of the compaction crash stress test")

// TestHelperCompactChild is not a test: TestCompactCrashStress runs the
// test binary again with HELM_COMPACT_CHILD set ("home|voyage|role|acks"),
// and it is then a writer (observes, jettisons, and appends to acks what
// was acknowledged) or the compactor (compacts in a loop), until killed.
func TestHelperCompactChild(t *testing.T) {
	spec := os.Getenv("HELM_COMPACT_CHILD")
	if spec == "" {
		t.Skip("runs only as a child of TestCompactCrashStress")
	}
	p := strings.Split(spec, "|")
	home, id, role, ackPath := p[0], p[1], p[2], p[3]
	ctx := context.Background()
	h, err := helm.Open(home, nil)
	if err != nil {
		panic(err)
	}
	v, err := h.Voyage(ctx, id)
	if err != nil {
		panic(err)
	}
	if role == "compactor" {
		for {
			if _, err := v.Compact(ctx); err != nil {
				panic(err)
			}
		}
	}
	acks, err := os.OpenFile(ackPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		panic(err)
	}
	me := logbook.Who{Identity: role, Role: "coder", Method: "test"}
	var mine []string
	for i := 0; ; i++ {
		// Sizes either side of the inline limit: blob records and pack frames.
		n := []int{200, 2000, 24 << 10}[i%3]
		b := make([]byte, n)
		rand.Read(b)
		o, err := v.Observe(ctx, &note{Topic: fmt.Sprintf("%s-%d-%d", role, os.Getpid(), i), Text: hex.EncodeToString(b)}, me, nil)
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(acks, "stowed %s\n", o.Record.Artifact)
		mine = append(mine, o.Record.Artifact)
		if i%2 == 1 {
			k := mrand.Intn(len(mine))
			hash := mine[k]
			mine = append(mine[:k], mine[k+1:]...)
			if err := v.Jettison(ctx, hash, "stress", me); err != nil {
				panic(err)
			}
			fmt.Fprintf(acks, "jettisoned %s\n", hash)
		}
	}
}

// TestCompactCrashStress kills writers and a compactor at random moments,
// round after round, on one voyage: every acknowledged observation is
// still there, readable unless jettisoned, and the voyage always verifies.
func TestCompactCrashStress(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	ctx := context.Background()
	dir := t.TempDir()
	h, err := helm.Open(dir, nil)
	require.NoError(t, err)
	v, err := h.Start(ctx, "compaction under fire", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	id := v.ID()
	require.NoError(t, v.Close())
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := mrand.New(mrand.NewSource(seed))
	stowed, jettisoned := map[string]bool{}, map[string]bool{}
	var reclaimedRecords uint64
	// On a loaded machine the children may all be killed before the
	// compactor got anywhere: rounds go on, each longer than the last,
	// until it has reclaimed something (a bound catches a compactor that
	// never does).
	rounds := 0
	for round := 0; round < *compactRounds || reclaimedRecords == 0 && round < 5**compactRounds; round++ {
		rounds++
		extra := time.Duration(max(0, round-*compactRounds+1))
		var cmds []*exec.Cmd
		for _, role := range []string{"writer-a", "writer-b", "compactor"} {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCompactChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), fmt.Sprintf("HELM_COMPACT_CHILD=%s|%s|%s|%s", dir, id, role, filepath.Join(dir, fmt.Sprintf("acks-%d-%s", round, role))))
			require.NoError(t, cmd.Start())
			cmds = append(cmds, cmd)
		}
		time.Sleep(time.Duration(150+rng.Intn(250)) * time.Millisecond * (1 + extra))
		for _, cmd := range cmds {
			time.Sleep(time.Duration(rng.Intn(20)) * time.Millisecond)
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		}
		for _, cmd := range cmds {
			require.Error(t, cmd.Wait(), "a child exited on its own: it failed")
		}
		for _, role := range []string{"writer-a", "writer-b"} {
			readAcks(t, filepath.Join(dir, fmt.Sprintf("acks-%d-%s", round, role)), stowed, jettisoned)
		}

		rep, err := h.Verify(ctx, id, nil)
		require.NoError(t, err)
		require.True(t, rep.OK(), "round %d: %v", round, rep.Problems)
		reclaimedRecords = rep.Events.Reclaimed
		v, err := h.Voyage(ctx, id)
		require.NoError(t, err, "round %d", round)
		status := map[string]logbook.ArtifactStatus{}
		for _, a := range artifactsOf(t, v) {
			status[a.Hash] = a.Status
		}
		for hash := range stowed {
			st, ok := status[hash]
			require.True(t, ok, "round %d: acknowledged artifact %s lost", round, hash)
			if jettisoned[hash] {
				require.Equal(t, logbook.ArtifactJettisoned, st, "round %d: %s", round, hash)
				continue
			}
			if st == logbook.ArtifactStowed {
				_, err := readArtifact(ctx, v, hash)
				require.NoError(t, err, "round %d: artifact %s unreadable", round, hash)
			}
		}
		require.NoError(t, v.Close())
	}
	t.Logf("%d rounds: %d artifacts acknowledged, %d jettisoned, %d log records reclaimed at the end", rounds, len(stowed), len(jettisoned), reclaimedRecords)
	require.Positive(t, reclaimedRecords, "the compactor reclaimed something")
}

func readAcks(t *testing.T, path string, stowed, jettisoned map[string]bool) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return
	}
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		what, hash, ok := strings.Cut(sc.Text(), " ")
		if !ok || len(hash) != 64 {
			continue // a line cut by the kill
		}
		switch what {
		case "stowed":
			stowed[hash] = true
		case "jettisoned":
			jettisoned[hash] = true
		}
	}
}
