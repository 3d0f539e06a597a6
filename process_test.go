package helm_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

// TestHelperProcessWorker is not a test: TestConcurrentProcessesLoseNothing
// runs the test binary again with HELM_TEST_WORKER set, and this function
// is then a worker process observing and taking bearings on one voyage.
func TestHelperProcessWorker(t *testing.T) {
	name := os.Getenv("HELM_TEST_WORKER")
	if name == "" {
		t.Skip("runs only as a child of TestConcurrentProcessesLoseNothing")
	}
	ctx := context.Background()
	rounds, _ := strconv.Atoi(os.Getenv("HELM_TEST_ROUNDS"))
	h, err := helm.Open(os.Getenv("HELM_TEST_HOME"), nil)
	require.NoError(t, err)
	me := logbook.Who{Identity: name, Role: "coder", Method: "test"}
	for r := 0; r < rounds; r++ {
		// Each round opens the voyage afresh, as a CLI command does.
		v, err := h.Voyage(ctx, os.Getenv("HELM_TEST_VOYAGE"))
		require.NoError(t, err)
		_, err = v.Observe(ctx, &note{Topic: fmt.Sprint(name, "-", r), Text: fmt.Sprint(name, r)}, me, nil)
		require.NoError(t, err)
		if r%2 == 1 {
			if _, err := v.TakeBearing(ctx, fmt.Sprint("reading ", name, r), me, nil); err != nil {
				require.ErrorIs(t, err, helm.ErrEmptySlate)
			}
		}
		require.NoError(t, v.Close())
	}
}

func TestConcurrentProcessesLoseNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	ctx := context.Background()
	dir := t.TempDir()
	h, err := helm.Open(dir, nil)
	require.NoError(t, err)
	v, err := h.Start(ctx, "shared voyage", helm.OpenWaters, who, nil)
	require.NoError(t, err)
	require.NoError(t, v.Close())

	const procs, rounds = 4, 12
	cmds := make([]*exec.Cmd, procs)
	outs := make([]bytes.Buffer, procs)
	for i := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcessWorker$", "-test.count=1")
		cmd.Env = append(os.Environ(),
			"HELM_TEST_WORKER="+fmt.Sprint("proc-", i), "HELM_TEST_HOME="+dir,
			"HELM_TEST_VOYAGE="+v.ID(), "HELM_TEST_ROUNDS="+strconv.Itoa(rounds))
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		require.NoError(t, cmd.Start())
		cmds[i] = cmd
	}
	for i, cmd := range cmds {
		require.NoError(t, cmd.Wait(), "worker %d: %s", i, outs[i].String())
	}

	v2, err := h.Voyage(ctx, v.ID())
	require.NoError(t, err)
	defer v2.Close()
	seen := map[string]int{}
	for _, o := range v2.Slate() {
		seen[o.Key]++
	}
	for _, e := range entriesOf(t, v2) {
		for _, o := range e.Bearing.Observations {
			seen[o.Key]++
		}
	}
	assert.Len(t, seen, procs*rounds, "every observation of every process is recorded")
	for k, n := range seen {
		assert.Equal(t, 1, n, "%s sealed exactly once", k)
	}
	rep, err := h.Verify(ctx, v2.ID(), nil)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%v", rep.Problems)
}
