package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/helmlog/helm/store/natsstore"
)

// TestMain makes the test binary helm itself when it is run as "helm":
// the scripts' `exec helm ...` run main in a fresh process without a
// build, so they test the real exit codes, streams and signals.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"helm": main})
}

// scriptHomes numbers the scripts' homes on a shared store.
var scriptHomes atomic.Int64

// TestScripts runs the end-to-end scripts in testdata/script: one
// behaviour of the command line each, as the Go toolchain tests cmd/go.
// Each runs in its own $WORK with its own helm home and git identity; see
// testscript's documentation for the commands, and exits below. With
// HELM_TEST_STORE=nats://HOST:PORT they run again with the voyages in
// that JetStream server, a home of its own each (the integration module
// does: integration/cli_store_test.go); [sharedstore] is true then.
func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		UpdateScripts:       *update,
		Setup: func(env *testscript.Env) error {
			home := filepath.Join(env.WorkDir, "home")
			for k, v := range map[string]string{
				"HOME":                home,
				"HELM_HOME":           filepath.Join(home, ".helm"),
				"GIT_CONFIG_NOSYSTEM": "1",
				"GIT_TERMINAL_PROMPT": "0",
				"GIT_AUTHOR_NAME":     "helm test", "GIT_AUTHOR_EMAIL": "test@helm.invalid",
				"GIT_COMMITTER_NAME": "helm test", "GIT_COMMITTER_EMAIL": "test@helm.invalid",
			} {
				env.Setenv(k, v)
			}
			if base := os.Getenv("HELM_TEST_STORE"); base != "" {
				// The scripts on a shared store: a home of its own each,
				// made here, so that their first command does not warn
				// that it has one replica.
				home := fmt.Sprintf("s%dx%d", os.Getpid(), scriptHomes.Add(1))
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				st, err := natsstore.Open(ctx, base, &natsstore.Options{Home: home})
				if err != nil {
					return err
				}
				st.Close()
				env.Setenv("HELM_STORE", base+"/"+home)
			}
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "sharedstore" { // the voyages are in HELM_TEST_STORE
				return os.Getenv("HELM_TEST_STORE") != "", nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":      exits,
			"stdout2env": stdout2env,
			"json2env":   json2env,
		},
	})
}

// exits N PROGRAM [ARG...] runs a program, as exec does, and checks that
// it exits with status N: the scripts tell 1 (failed) from 2 (bad usage).
// Its stdout and stderr are there for the stdout and stderr commands.
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exits")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exits N PROGRAM [ARG...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var xe *exec.ExitError
	switch {
	case errors.As(err, &xe):
		got = xe.ExitCode()
	case err != nil:
		ts.Fatalf("%s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// stdout2env NAME sets the environment variable NAME to what the last
// command printed on stdout, trimmed: a voyage's id, for --voyage.
func stdout2env(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: stdout2env NAME")
	}
	ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile("stdout")))
}

// json2env NAME KEY sets NAME to the string under KEY in the JSON object
// stdout holds, or in the first object of the array it holds.
func json2env(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: json2env NAME KEY")
	}
	var doc any
	ts.Check(json.Unmarshal([]byte(ts.ReadFile("stdout")), &doc))
	if list, ok := doc.([]any); ok && len(list) > 0 {
		doc = list[0]
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		ts.Fatalf("json2env: stdout is not a JSON object or an array of them")
	}
	v, ok := obj[args[1]].(string)
	if !ok {
		ts.Fatalf("json2env: no string %q in stdout", args[1])
	}
	ts.Setenv(args[0], v)
}
