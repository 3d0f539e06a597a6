package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/helmlog/helm"
)

// cliStartRuns is how many times each program is started: the figures are
// medians of as many runs.
const cliStartRuns = 20

// helloSource is the Go hello world helm's start is measured against.
const helloSource = `package main

import "fmt"

func main() { fmt.Println("hello") }
`

// benchCLIStart times, from process start to exit, a Go hello world
// built here, helm version, and helm note on a small voyage of a disk
// home (one change recorded durably), interleaved, cliStartRuns each
// after one warm-up run of each, and reports the medians' ratios.
func benchCLIStart(ctx context.Context, dir string, r *report) error {
	work := filepath.Join(dir, "clistart")
	if err := os.MkdirAll(work, 0o700); err != nil {
		return err
	}
	defer os.RemoveAll(work)
	hello, err := buildHello(ctx, work)
	if err != nil {
		return err
	}
	bin, err := buildCLI(ctx, work)
	if err != nil {
		return err
	}
	homeDir := filepath.Join(work, "home")
	home, err := helm.Open(homeDir, nil)
	if err != nil {
		return err
	}
	v, err := home.Start(ctx, "bench CLI start", helm.OpenWaters, who, nil)
	if err != nil {
		return err
	}
	id := v.ID()
	if err := v.Close(); err != nil {
		return err
	}
	programs := []struct {
		name string
		args []string
	}{
		{hello, nil},
		{bin, []string{"version"}},
		{bin, []string{"--home", homeDir, "--voyage", id, "--as", "bench", "--role", "coder", "--method", "bench", "note", "a note"}},
	}
	times := make([][]float64, len(programs))
	for i := range cliStartRuns + 1 { // the first warms the page cache
		for j, p := range programs {
			cmd := exec.CommandContext(ctx, p.name, p.args...)
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("%s: %v\n%s", cmd, err, out)
			}
			if i > 0 {
				times[j] = append(times[j], ms(time.Since(start)))
			}
		}
	}
	h, ver, note := median(times[0]), median(times[1]), median(times[2])
	r.put("cli_version_vs_hello", ver/h, fmt.Sprintf("helm version %s ms, a Go hello world %s ms, medians of %d interleaved runs, process start to exit", formatValue(ver), formatValue(h), cliStartRuns))
	r.put("cli_note_vs_hello", note/h, fmt.Sprintf("helm note on a one-event voyage of a disk home, durable, %s ms; hello %s ms", formatValue(note), formatValue(h)))
	return benchCLIStartCosts(ctx, hello, bin, r)
}

// buildHello builds the hello world into dir, in a module of its own.
func buildHello(ctx context.Context, dir string) (string, error) {
	src := filepath.Join(dir, "hello")
	if err := os.MkdirAll(src, 0o700); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module hello\n\ngo 1.26\n"), 0o600); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(helloSource), 0o600); err != nil {
		return "", err
	}
	bin, err := filepath.Abs(filepath.Join(dir, "hello-bin"))
	if err != nil {
		return "", err
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	build.Dir = src
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build hello: %v\n%s", err, out)
	}
	return bin, nil
}
