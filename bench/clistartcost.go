package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// benchCLIStartCosts reports two figures of helm version's start that
// move little with the machine's load, where the times do: the minor
// page faults of the process (the pages of the binary and of the heap it
// touches; a smaller binary and fewer package inits make fewer), and the
// time the package inits take before main, as GODEBUG=inittrace=1 prints
// it. Medians of cliStartRuns runs, after one warm-up run.
func benchCLIStartCosts(ctx context.Context, hello, bin string, r *report) error {
	var faults, helloFaults, inits []float64
	for i := range cliStartRuns + 1 {
		f, err := minorFaults(exec.CommandContext(ctx, bin, "version"))
		if err != nil {
			return err
		}
		hf, err := minorFaults(exec.CommandContext(ctx, hello))
		if err != nil {
			return err
		}
		cmd := exec.CommandContext(ctx, bin, "version")
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %v\n%s", cmd, err, stderr.Bytes())
		}
		ms, err := initClock(stderr.Bytes())
		if err != nil {
			return err
		}
		if i > 0 {
			faults, helloFaults, inits = append(faults, f), append(helloFaults, hf), append(inits, ms)
		}
	}
	if faults[0] >= 0 {
		r.put("cli_version_minor_faults", median(faults), fmt.Sprintf("minor page faults of helm version; a Go hello world %s; medians of %d runs", formatValue(median(helloFaults)), cliStartRuns))
	}
	r.put("cli_version_init_ms", median(inits), fmt.Sprintf("helm version's package inits, the clock GODEBUG=inittrace=1 prints summed; median of %d runs", cliStartRuns))
	return nil
}

// initClock sums the clock of every package init in GODEBUG=inittrace=1
// output: lines such as "init os @0.66 ms, 0.027 ms clock, 432 bytes, 9
// allocs".
func initClock(trace []byte) (float64, error) {
	sum, lines := 0.0, 0
	sc := bufio.NewScanner(bytes.NewReader(trace))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 7 || f[0] != "init" || f[6] != "clock," {
			continue
		}
		v, err := strconv.ParseFloat(f[4], 64)
		if err != nil {
			return 0, fmt.Errorf("inittrace line %q: %w", sc.Text(), err)
		}
		sum += v
		lines++
	}
	if lines == 0 {
		return 0, fmt.Errorf("no inittrace lines in helm version's stderr:\n%s", trace)
	}
	return sum, nil
}
