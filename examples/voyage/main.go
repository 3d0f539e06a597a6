// Command voyage walks one voyage from start to finish through the helm
// library, against a real (but throwaway) git repository:
//
//  1. open a helm home and start a resolve-issue voyage;
//  2. observe marks — a Go project and one of its files — and take a
//     bearing that seals them;
//  3. fix the file, then perform two actions in the world: a git commit
//     and a git push (to a bare repository standing in for GitHub);
//  4. complete the voyage and print the story its logbook tells.
//
// Everything happens in a temporary directory that is removed at the end,
// and nothing touches the network:
//
//	go run ./examples/voyage
//	go run ./examples/voyage -home /tmp/helm-demo   # keep the voyage, then:
//	helm --home /tmp/helm-demo --voyage ID log       # ID as printed on stderr
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/runner"
	"github.com/helmlog/helm/sighting"
	"github.com/helmlog/helm/story"
)

func main() {
	home := flag.String("home", "", "helm home to record the voyage in (default: a temporary one, removed at exit)")
	flag.Parse()
	if err := run(context.Background(), *home, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "voyage:", err)
		os.Exit(1)
	}
}

// run sails the voyage, printing the story to stdout and what happens on
// the way to stderr.
func run(ctx context.Context, homeDir string, stdout, stderr io.Writer) error {
	// A scratch directory for the git repositories (and the helm home,
	// unless -home names one to keep).
	scratch, err := os.MkdirTemp("", "helm-voyage-example-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	if homeDir == "" {
		homeDir = filepath.Join(scratch, "helm-home")
	}

	// The world the voyage works on: a small Go module in a git
	// repository whose origin is a bare repository next to it.
	work := filepath.Join(scratch, "widget")
	git, err := newRepo(ctx, work, filepath.Join(scratch, "origin.git"))
	if err != nil {
		return fmt.Errorf("set up the example repository: %w", err)
	}

	// Open the home (nil options: the production defaults).
	h, err := helm.Open(homeDir, nil)
	if err != nil {
		return err
	}
	// Where marks are observed: Env.Dir is where they resolve relative
	// paths, so the marks below can say "." and "widget.go" and the
	// logbook reads "GoProject @ ." rather than a temporary path.
	in := &helm.ObserveOptions{Env: &marks.Env{Dir: work}}

	// Who: every logbook entry records who took it (identity), in what
	// framing (role) and by what engine (method: a model name, "human").
	// The voyage's identity is the default for later calls; role and
	// method must be given for bearings and actions.
	who := logbook.Who{Identity: "john-agent", Role: "coder", Method: "example-model"}

	v, err := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, who, nil)
	if err != nil {
		return err
	}
	defer v.Close()
	fmt.Fprintf(stderr, "started voyage %s in %s\n\n", v.ID(), h.Dir())

	// Observe. Each observation lands on the slate; its sighting (the raw
	// evidence) is stored as a compressed, content-addressed artifact.
	// First orient with the whole project...
	project, err := marks.NewGoProject(".")
	if err != nil {
		return err
	}
	obs, err := v.Observe(ctx, project, who, in)
	if err != nil {
		return err
	}
	// ...the sighting is typed: a Go project reports its modules and
	// packages (and its tree and docs, but never function bodies).
	if gp, ok := obs.Observation.Sighting.(*sighting.GoProject); ok && len(gp.Modules) > 0 {
		fmt.Fprintf(stderr, "observed %s: module %s, %d package(s)\n", obs.Record.Label, gp.Modules[0].Module, len(gp.Packages))
	}

	// ...then target the file that matters.
	file, err := marks.NewFileContents("widget.go")
	if err != nil {
		return err
	}
	if obs, err = v.Observe(ctx, file, who, in); err != nil {
		return err
	}
	if f, ok := obs.Observation.Sighting.(*sighting.Files); ok && len(f.Contents) > 0 {
		fmt.Fprintf(stderr, "observed %s: %s\n", obs.Record.Label, f.Contents[0].Content)
	}
	fmt.Fprintf(stderr, "the slate holds %d observation(s)\n", len(v.Slate()))

	// Take a bearing: what the observations meant. It seals everything on
	// the slate into one logbook entry and empties the slate, atomically.
	bearing, err := v.TakeBearing(ctx, "Init dereferences w without a nil check: a nil widget crashes.", who, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "bearing %d sealed %d observation(s); the slate holds %d\n\n",
		bearing.N, len(bearing.Bearing.Observations), len(v.Slate()))

	// Do the work. Editing files and staging them is the caller's
	// business; helm records the actions that change the world beyond
	// the working tree.
	if _, err := git.Git(ctx, "switch", "-q", "-c", "fix-widget"); err != nil {
		return err
	}
	fixed := strings.Replace(widgetGo, "\treturn w.name\n", "\tif w == nil {\n\t\treturn \"\"\n\t}\n\treturn w.name\n", 1)
	if err := os.WriteFile(filepath.Join(work, "widget.go"), []byte(fixed), 0o644); err != nil {
		return err
	}
	if _, err := git.Git(ctx, "add", "widget.go"); err != nil {
		return err
	}

	// Perform actions. Perform records the intent durably before running
	// git, then records the result: a crash in between would leave an
	// "outcome unknown" entry rather than a silent gap.
	commit, err := actions.NewCommit(git, actions.Commit{Message: "Fix nil check in widget Init"})
	if err != nil {
		return err
	}
	if _, err := v.Perform(ctx, commit, who, nil); err != nil {
		return err
	}
	push, err := actions.NewPush(git, actions.Push{Branch: "fix-widget"}) // no Remote: origin
	if err != nil {
		return err
	}
	pushed, err := v.Perform(ctx, push, who, nil)
	if err != nil {
		// git refusing is a *helm.ActionError carrying git's own message;
		// the failure is recorded in the action's entry, which keeps its number.
		var ae *helm.ActionError
		if errors.As(err, &ae) {
			return fmt.Errorf("git refused the %s: %w", ae.Kind, ae.Err)
		}
		return err
	}
	// The action's result says what it left in the world; check it
	// against the remote itself.
	res := pushed.Action.Result
	remote, err := git.Git(ctx, "ls-remote", "origin", "refs/heads/"+res.Branch)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(string(remote), res.SHA) {
		return fmt.Errorf("origin's %s is %q, not the pushed %s", res.Branch, remote, res.SHA)
	}
	fmt.Fprintf(stderr, "origin's %s is now %s\n\n", res.Branch, res.SHA[:7])

	// Complete: nothing more is observed, sealed or performed afterwards.
	if err := v.Complete(ctx, logbook.OutcomeCompleted, "Added the nil check to widget Init; pushed fix-widget.", who); err != nil {
		return err
	}

	// The story, as the helm program's log command prints it.
	return story.WriteText(ctx, stdout, v)
}

// widgetGo is the file with the bug the voyage fixes.
const widgetGo = `// Package widget draws widgets.
package widget

// Widget is a named widget.
type Widget struct{ name string }

// Init returns the widget's name.
func (w *Widget) Init() string {
	return w.name
}
`

// newRepo creates a git repository at dir holding a small Go module, with
// a bare repository at origin as its "origin" remote, and returns a runner
// working in dir. The runner is what the git actions use.
func newRepo(ctx context.Context, dir, origin string) (*runner.Runner, error) {
	files := map[string]string{
		"go.mod":    "module example.com/widget\n\ngo 1.26\n",
		"README.md": "# widget\n\nDraws widgets.\n",
		"widget.go": widgetGo,
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	// Runner.Env adds to git's environment: a fixed author, and no
	// global or system git configuration, so the example behaves the same
	// on every machine (no signing or hooks from ~/.gitconfig).
	env := []string{
		"GIT_AUTHOR_NAME=john-agent", "GIT_AUTHOR_EMAIL=john-agent@example.com",
		"GIT_COMMITTER_NAME=john-agent", "GIT_COMMITTER_EMAIL=john-agent@example.com",
		"GIT_CONFIG_GLOBAL=" + os.DevNull, "GIT_CONFIG_NOSYSTEM=1",
	}
	bare := &runner.Runner{Env: env}
	if _, err := bare.Git(ctx, "init", "-q", "--bare", "-b", "main", origin); err != nil {
		return nil, err
	}
	r := &runner.Runner{Dir: dir, Env: env}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "."},
		{"commit", "-q", "-m", "Add widget"},
		{"remote", "add", "origin", origin},
		{"push", "-q", "origin", "main"},
	} {
		if _, err := r.Git(ctx, args...); err != nil {
			return nil, err
		}
	}
	return r, nil
}
