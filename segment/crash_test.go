package segment

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	crashRounds = flag.Int("segment.crashrounds", 20, "rounds of the multi-process crash stress test")
	crashSeed   = flag.Int64("segment.crashseed", 0, "seed of the crash stress test's random choices (0: from the clock); the test logs the seed it used")
)

const crashChildEnv = "SEGMENT_CRASH_CHILD" // "dir|ackfile|id|seed"

// crashReclaimer is the id of the child that reclaims records (crashDrop)
// in a loop while the others append: a kill may land in a rewrite.
const crashReclaimer = 9

// crashBusy and above are children that commit from crashBusyWorkers
// goroutines at once (TestAttackAKillAroundWriterTurnsKeepsEveryAcknowledgedRecord).
const (
	crashBusy        = 20
	crashBusyWorkers = 6
)

// crashDrop selects the records the reclaimer reclaims: half of child 0's.
func crashDrop(r Record) bool { return bytes.HasPrefix(r.Data, []byte("c0-")) && r.Seq%2 == 0 }

// TestCrashChild is the child process of the crash stress test; it does
// nothing unless started by it (and so needs no t.Parallel).
func TestCrashChild(t *testing.T) {
	spec := os.Getenv(crashChildEnv)
	if spec == "" {
		t.Skip("child process of TestCrashStressKeepsEveryAcknowledgedRecord")
	}
	parts := strings.Split(spec, "|")
	dir, ackPath := parts[0], parts[1]
	id, _ := strconv.Atoi(parts[2])
	seed, _ := strconv.ParseInt(parts[3], 10, 64)
	ack, err := os.OpenFile(ackPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		panic(err)
	}
	l, err := Open(ctx, dir, &Options{SegmentSize: 16 << 10})
	if err != nil {
		panic(err)
	}
	if id == crashReclaimer {
		for {
			if _, err := l.Reclaim(ctx, crashDrop); err != nil {
				panic(err)
			}
		}
	}
	appendLoop := func(name string, rng *rand.Rand) {
		for i := 0; ; i++ {
			n := 1 + rng.Intn(3)
			recs := make([][]byte, n)
			for j := range recs {
				recs[j] = []byte(fmt.Sprintf("%s-%d-%d-%x", name, i, j, rng.Int63()))
				recs[j] = append(recs[j], bytes.Repeat([]byte{'.'}, rng.Intn(300))...)
			}
			first, err := l.Append(ctx, recs...)
			if err != nil {
				panic(err)
			}
			var line strings.Builder
			for j, r := range recs {
				fmt.Fprintf(&line, "%d %s\n", first+uint64(j), hex.EncodeToString(r))
			}
			// One write(2) per commit on an O_APPEND file: the lines of
			// two goroutines do not interleave.
			if _, err := ack.Write([]byte(line.String())); err != nil {
				panic(err)
			}
		}
	}
	if id >= crashBusy {
		// Commits back to back from several goroutines: the pipeline
		// never drains, and the Log gives its turn (holdTurn).
		for w := range crashBusyWorkers - 1 {
			go appendLoop(fmt.Sprintf("c%dw%d", id, w), rand.New(rand.NewSource(seed+int64(w)+1)))
		}
		appendLoop(fmt.Sprintf("c%dw%d", id, crashBusyWorkers-1), rand.New(rand.NewSource(seed)))
	}
	appendLoop(fmt.Sprintf("c%d", id), rand.New(rand.NewSource(seed)))
}

func TestCrashStressKeepsEveryAcknowledgedRecord(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("multi-process stress")
	}
	dir := t.TempDir()
	logDir := filepath.Join(dir, "log")
	seed := *crashSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed %d (replay its choices with -segment.crashseed=%d; the kills land where the scheduler puts them)", seed, seed)
	rng := rand.New(rand.NewSource(seed))
	acked := map[uint64][]byte{}
	reclaimed := 0
	for round := 0; round < *crashRounds; round++ {
		cmds := startCrashChildren(t, dir, logDir, round, []int{0, 1, 2, 3, crashReclaimer}, rng)
		// Kill each child at its own random moment.
		time.Sleep(time.Duration(100+rng.Intn(200)) * time.Millisecond)
		for _, cmd := range cmds {
			time.Sleep(time.Duration(rng.Intn(30)) * time.Millisecond)
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		}
		for c, cmd := range cmds {
			err := cmd.Wait()
			require.Error(t, err, "child %d exited on its own: it failed", c)
			collectAcks(t, filepath.Join(dir, fmt.Sprintf("ack-%d-%d", round, c)), acked)
		}

		reclaimed += checkAfterKills(t, logDir, acked, round)
	}
	rep, err := Verify(ctx, logDir, nil)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, rep.Records, uint64(len(acked)))
	t.Logf("%d rounds, %d acknowledged records, %d in log, %d segments; reclaimed records seen by the rounds' scans: %d", *crashRounds, len(acked), rep.Records, rep.Segments, reclaimed)
}

// startCrashChildren starts a TestCrashChild of each kind in kinds on the
// log in logDir; child c of round writes its acknowledgements to
// dir/ack-ROUND-C.
func startCrashChildren(t *testing.T, dir, logDir string, round int, kinds []int, rng *rand.Rand) []*exec.Cmd {
	t.Helper()
	var cmds []*exec.Cmd
	for _, c := range kinds {
		ackPath := filepath.Join(dir, fmt.Sprintf("ack-%d-%d", round, c))
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%s|%d|%d", crashChildEnv, logDir, ackPath, c, rng.Int63()))
		require.NoError(t, cmd.Start())
		cmds = append(cmds, cmd)
	}
	return cmds
}

// checkAfterKills opens the log the killed children left: gap-free, every
// acknowledged record at its seq (or reclaimed, when the reclaimer chose
// it), none twice. It returns how many reclaimed records the scan saw.
func checkAfterKills(t *testing.T, logDir string, acked map[uint64][]byte, round int) (reclaimed int) {
	t.Helper()
	l, err := Open(ctx, logDir, nil)
	require.NoError(t, err, "round %d", round)
	want := uint64(1)
	seen := map[string]bool{}
	require.NoError(t, l.Scan(ctx, 1, func(r Record) error {
		require.Equal(t, want, r.Seq, "gap-free")
		want++
		if r.Reclaimed {
			reclaimed++
			if a, ok := acked[r.Seq]; ok {
				require.True(t, crashDrop(Record{Seq: r.Seq, Data: a}), "seq %d was reclaimed but not selected", r.Seq)
			}
			return nil
		}
		require.False(t, seen[string(r.Data)], "duplicate record %.40q", r.Data)
		seen[string(r.Data)] = true
		if a, ok := acked[r.Seq]; ok {
			require.Equal(t, a, r.Data, "seq %d", r.Seq)
		}
		return nil
	}))
	for seq := range acked {
		require.Less(t, seq, want, "acknowledged seq %d lost in round %d", seq, round)
	}
	require.NoError(t, l.Close())
	return reclaimed
}

func collectAcks(t *testing.T, path string, acked map[uint64][]byte) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return
	}
	require.NoError(t, err)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i+1] // a line without its newline was cut by the kill
	} else {
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		seqStr, hexData, ok := strings.Cut(sc.Text(), " ")
		seq, err1 := strconv.ParseUint(seqStr, 10, 64)
		data, err2 := hex.DecodeString(hexData)
		if !ok || err1 != nil || err2 != nil {
			t.Fatalf("malformed ack line %q", sc.Text())
		}
		_, dup := acked[seq]
		require.False(t, dup, "seq %d acknowledged twice", seq)
		acked[seq] = data
	}
}
