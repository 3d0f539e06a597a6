package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/markkind"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/internal/safetext"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/sighting"
)

func newObserveCmd(a *app) *cobra.Command {
	c := group(a, &cobra.Command{
		Use:   "observe KIND ARGS... [--out FILE|-]",
		Short: "look at a mark and put the observation on the slate",
		Long: `Look at a mark and put the observation (mark, sighting, time) on the
voyage's slate, replacing an earlier observation of the same mark. Prints
one line; --out also writes the observation as JSON, for bearing
--observation or another tool.

A look that failed is recorded all the same: a file that is not there, a
program that exits non-zero or is killed at its timeout, an HTTP error
status, a URL that cannot be fetched. helm then says what failed, one
"helm: observed, but ..." line on stderr for each, and exits 3.`,
		Example: "  helm observe rust-project . --out obs.json",
	})
	for _, k := range markkind.Kinds {
		args := k.Args
		if k.ObserveArgs != "" {
			args = withFlag(args, k.ObserveArgs)
		}
		c.AddCommand(markCompletions(k, leafCmd(a, &cobra.Command{
			Use:     k.Name + " " + withFlag(args, "[--out FILE|-]"),
			Short:   k.Summary,
			Example: "  helm observe " + k.Example,
		}, &observeCommandLeaf{kind: k})))
	}
	return c
}

// withFlag adds a flag's usage to the usage of a kind's arguments: at the
// end, or before "--" where the arguments after it are a program's, for
// a flag there would be the program's argument.
func withFlag(args, flag string) string {
	if before, after, ok := strings.Cut(args, " -- "); ok {
		return before + " " + flag + " -- " + after
	}
	if strings.HasPrefix(args, "-- ") {
		return flag + " " + args
	}
	return strings.TrimSpace(args + " " + flag)
}

// markCompletions registers the values the flags of k complete to on c.
func markCompletions(k *markkind.Kind, c *cobra.Command) *cobra.Command {
	if len(k.Focus) > 0 {
		fixedValues(c, "focus", k.Focus...)
	}
	if k.Name == "command" {
		// After --, complete the program and its files as the shell would.
		c.ValidArgsFunction = func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveDefault
		}
	}
	return c
}

// observeCommandLeaf observes one mark kind.
type observeCommandLeaf struct {
	kind *markkind.Kind
	p    markkind.Params
	o    markkind.ObserveFlags
	out  string
}

func (c *observeCommandLeaf) Flags(fs *pflag.FlagSet) {
	if c.kind.Flags != nil {
		c.kind.Flags(fs, &c.p)
	}
	if c.kind.ObserveFlags != nil {
		c.kind.ObserveFlags(fs, &c.o)
	}
	fs.StringVar(&c.out, "out", "", "also write the observation as JSON to `FILE` (- for stdout)")
}

func (c *observeCommandLeaf) Run(ctx context.Context, a *app, args []string) error {
	// The arguments first: a usage error says so before anything is opened.
	m, err := a.buildMark(ctx, c.kind, &c.p, args)
	if err != nil {
		return err
	}
	if c.kind.ObserveFlags != nil && c.o.Timeout <= 0 {
		return usageErrorf(a.cmd, "%s: --timeout must be positive, got %s", commandName(a.cmd), c.o.Timeout)
	}
	for _, n := range c.o.PassEnv {
		if n == "" || strings.ContainsAny(n, "= \t\n") {
			return usageErrorf(a.cmd, "%s: --pass-env %q is not an environment variable's name", commandName(a.cmd), n)
		}
	}
	v, who, err := a.activeVoyage(ctx, false)
	if err != nil {
		return err
	}
	// On a terminal, a program's output shows as it runs (escaped, as
	// every output to a terminal is); a pipe gets the observation alone.
	var progress io.Writer
	var pw *safetext.Writer
	if isTerminalWriter(a.stderr) {
		pw = safetext.NewWriter(a.stderr)
		progress = pw
	}
	// A long look (large files, a slow page) says on a terminal that it
	// is under way, on a line erased when it is done.
	stop := func() {}
	if slowKinds[c.kind.Name] && isTerminalWriter(a.stderr) {
		stop = startProgress(a.stderr, "observing "+c.kind.Name+" "+m.Key())
	}
	o, err := a.observe(ctx, v, who, m, c.p.Repo, c.o, progress)
	stop()
	if pw != nil {
		_ = pw.Flush() // a terminal gone is no reason to fail the observation
	}
	if err != nil {
		return err
	}
	obs, res := o.Observation, view.ObservedOf(v, o)
	// Recorded, but what was looked at failed: each failure is said on
	// stderr once the observation is reported, and helm exits 3.
	var failed error
	if len(res.Failures) > 0 {
		failed = &observedFailures{Failures: res.Failures, Erase: eraseLine(a.args, c.kind.Name, a.cmd.Flags())}
	}
	// With --out -, stdout carries the observation; the line goes to stderr.
	line := a.stdout
	if c.out == "-" {
		line = a.stderr
		if err := writeObservation(a.stdout, obs); err != nil {
			return fmt.Errorf("write observation of %s: %w (it is on the slate all the same)", m, err)
		}
	} else if c.out != "" {
		// Only its owner reads it, as only its owner reads the helm home:
		// a sighting may hold what the files read held. A file that is
		// there already keeps its mode.
		if err := writeObservationFile(a.abs(c.out), obs); err != nil {
			return fmt.Errorf("write observation: %w (it is on the slate all the same)", err)
		}
		res.Out = c.out
	}
	if a.g.json && c.out != "-" {
		if err := writeJSON(a.stdout, res); err != nil {
			return err
		}
		return failed
	}
	fmt.Fprintln(line, res.Line())
	if res.Out != "" {
		fmt.Fprintf(line, "Observation written to %s\n", printable(res.Out))
	}
	return failed
}

// observe looks at m for v, as who, and records the observation: a
// GitHub mark through who's gh (on repo, when given), a command's output
// copied to progress as it runs, when it is set.
func (a *app) observe(ctx context.Context, v *helm.Voyage, who logbook.Who, m marks.Mark, repo string, o markkind.ObserveFlags, progress io.Writer) (helm.Observed, error) {
	r, err := a.runner(who.Identity, repo)
	if err != nil {
		return helm.Observed{}, err
	}
	env := &marks.Env{Dir: a.main.Dir, GitHub: r, CommandTimeout: o.Timeout, Progress: progress, PassEnv: o.PassEnv}
	obs, err := v.Observe(ctx, m, who, &helm.ObserveOptions{Env: env, Confirmed: o.Yes})
	if _, failed := errors.AsType[*helm.ObservationError](err); failed {
		// Recorded: the callers report the observation, then its
		// failures (Observed.Failures), as the command line and the
		// tools say them.
		err = nil
	}
	return obs, err
}

// isTerminalWriter reports whether w is a terminal (a person watching).
func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// writeObservation writes an observation file's JSON to w: indented, or,
// for a sighting of large files (whose texts are streamed from the store,
// never held whole), on one line.
func writeObservation(w io.Writer, obs helm.Observation) error {
	if sighting.HasSources(obs.Sighting) {
		if err := obs.WriteJSON(w); err != nil {
			return err
		}
		_, err := io.WriteString(w, "\n")
		return err
	}
	data, err := json.MarshalIndent(obs, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// writeObservationFile writes an observation file at path (mode 0600 when
// it is new; a file there already keeps its mode). It is written beside
// path and renamed over it, so that a write that fails part way (a full
// disk, a large sighting's damaged store) leaves no half file behind.
func writeObservationFile(path string, obs helm.Observation) error {
	mode := os.FileMode(0o600)
	if info, err := os.Stat(path); err == nil {
		mode = info.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	err = f.Chmod(mode)
	if err == nil {
		err = writeObservation(f, obs)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// eraseLine is the command line that takes off the slate the mark an
// observe command line (args, helm's own) looked at: its global flags
// (--voyage, --as, ...) and the mark's arguments, without what only
// observing takes (--out, --timeout, --pass-env, --yes). "" when args
// hold no observe KIND.
func eraseLine(args []string, kind string, fs *pflag.FlagSet) string {
	at := slices.Index(args, "observe")
	if at < 0 || at+1 >= len(args) || args[at+1] != kind {
		return ""
	}
	observing := map[string]bool{"out": true, "timeout": true, "pass-env": true, "yes": true}
	words := append([]string{"helm"}, args[:at]...)
	words = append(words, "slate", "erase", kind)
	rest := args[at+2:]
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		name, _, withValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if strings.HasPrefix(w, "--") && observing[name] {
			if f := fs.Lookup(name); !withValue && f != nil && f.NoOptDefVal == "" {
				i++ // its value
			}
			continue
		}
		words = append(words, w)
	}
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
			words[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return strings.Join(words, " ")
}
