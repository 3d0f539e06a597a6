// Command subvoyages runs a crew of three on one issue: ann leads the
// main voyage and splits the work; bob (a coding agent) fixes the bug and
// carol (another agent) writes the regression test, each in a sub-voyage
// of their own, at the same time, in goroutines. Then it prints what a
// team lead reads afterwards: the merged transcript, the crew's figures
// (critical steps, parallelism) and the report for the pull request,
// with the files changed taken from the real git repository.
//
// The guard is on: the home's policy forbids agents to push to main, and
// bob's attempt is refused and recorded; ann pushes the branch.
//
//	go run ./examples/subvoyages
//
// The program checks what it printed (every voyage completed, the
// refusal recorded, the figures consistent) and exits 1 if not.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/actions"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/policy"
	"github.com/helmlog/helm/report"
	"github.com/helmlog/helm/runner"
	"github.com/helmlog/helm/transcript"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "subvoyages:", err)
		os.Exit(1)
	}
}

// rules are the home's guard rules: agents may not push to main.
const rules = `
[[rule]]
name = "agents do not push to main"
action = "push"
branch = "main"
actor = "agent"
decision = "deny"
`

var (
	ann   = logbook.Who{Identity: "ann", Role: "lead", Method: "human"}
	bob   = logbook.Who{Identity: "bob", Role: "coder", Method: "example-model"}
	carol = logbook.Who{Identity: "carol", Role: "tester", Method: "example-model"}
	dave  = logbook.Who{Identity: "dave", Role: "judge", Method: "human"}
)

func run(ctx context.Context, stdout io.Writer) error {
	scratch, err := os.MkdirTemp("", "helm-subvoyages-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	work := filepath.Join(scratch, "widget")
	git, err := newRepo(ctx, work, filepath.Join(scratch, "origin.git"))
	if err != nil {
		return fmt.Errorf("set up the example repository: %w", err)
	}
	pol, err := policy.Parse([]byte(rules), "policy.toml")
	if err != nil {
		return err
	}
	h, err := helm.Open(filepath.Join(scratch, "helm-home"), &helm.Options{Policy: pol})
	if err != nil {
		return err
	}
	in := &helm.ObserveOptions{Env: &marks.Env{Dir: work}}

	// The main voyage records the repository it starts in: its base
	// commit is what the report diffs against.
	ws, err := git.Workspace(ctx)
	if err != nil {
		return err
	}
	where := helm.StartOptions{Repo: ws.Repo, Dir: ws.Top, Base: ws.Head, Branch: ws.Branch}
	lead, err := h.Start(ctx, "Resolve #42: the widget crashes on a nil config", helm.ResolveIssue, ann, &where)
	if err != nil {
		return err
	}
	defer lead.Close()
	if err := observe(ctx, lead, ann, in, "widget.go"); err != nil {
		return err
	}
	if _, err := lead.TakeBearing(ctx, "Init dereferences a nil widget: bob fixes it, carol writes the test.", ann, nil); err != nil {
		return err
	}
	if _, err := git.Git(ctx, "switch", "-q", "-c", "fix-widget"); err != nil {
		return err
	}

	// Two sub-voyages at once. Their voyages are theirs alone; the
	// working tree is shared, so their git steps take turns (gitMu) —
	// a worktree each would spare that.
	var gitMu sync.Mutex
	sub := func(who logbook.Who, intent string, work func(v *helm.Voyage) error) error {
		opts := where
		opts.Parent = lead.ID()
		v, err := h.Start(ctx, intent, helm.OpenWaters, who, &opts)
		if err != nil {
			return err
		}
		defer v.Close()
		if err := work(v); err != nil {
			return fmt.Errorf("%s: %w", who.Identity, err)
		}
		return v.Complete(ctx, logbook.OutcomeCompleted, "Done: "+intent+".", who)
	}
	commit := func(v *helm.Voyage, who logbook.Who, file, text, message, why string) error {
		gitMu.Lock()
		defer gitMu.Unlock()
		if err := os.WriteFile(filepath.Join(work, file), []byte(text), 0o644); err != nil {
			return err
		}
		if _, err := git.Git(ctx, "add", file); err != nil {
			return err
		}
		c, err := actions.NewCommit(git, actions.Commit{Message: message})
		if err != nil {
			return err
		}
		_, err = v.Perform(ctx, c, who, &helm.PerformOptions{Why: why})
		return err
	}
	errs := make(chan error, 2)
	go func() {
		errs <- sub(bob, "Fix the nil dereference in Init", func(v *helm.Voyage) error {
			if err := observe(ctx, v, bob, in, "widget.go"); err != nil {
				return err
			}
			if _, err := v.TakeBearing(ctx, "A nil check at the top of Init fixes it.", bob, nil); err != nil {
				return err
			}
			fixed := strings.Replace(widgetGo, "\treturn w.name\n", "\tif w == nil {\n\t\treturn \"\"\n\t}\n\treturn w.name\n", 1)
			if err := commit(v, bob, "widget.go", fixed, "Check for a nil widget in Init", "the bearing says so"); err != nil {
				return err
			}
			// An agent pushing to main: the guard refuses, and records it.
			push, err := actions.NewPush(git, actions.Push{Branch: "main"})
			if err != nil {
				return err
			}
			if _, err := v.Perform(ctx, push, bob, nil); !errors.Is(err, helm.ErrRefused) {
				return fmt.Errorf("a push to main by an agent was not refused: %v", err)
			}
			_, err = v.Note(ctx, "Pushing is ann's: the fix is on fix-widget.", bob)
			return err
		})
	}()
	go func() {
		errs <- sub(carol, "A regression test for #42", func(v *helm.Voyage) error {
			for _, file := range []string{"widget.go", "go.mod"} {
				if err := observe(ctx, v, carol, in, file); err != nil {
					return err
				}
			}
			if _, err := v.TakeBearing(ctx, "Init on a nil *Widget must return \"\", not panic.", carol, nil); err != nil {
				return err
			}
			return commit(v, carol, "widget_test.go", widgetTest, "Test Init on a nil widget", "it fails without the fix")
		})
	}()
	for range 2 {
		if err := <-errs; err != nil {
			return err
		}
	}

	// Back on the main voyage: look at what the crew did, push, complete.
	if err := observe(ctx, lead, ann, in, "widget.go", "widget_test.go"); err != nil {
		return err
	}
	if _, err := lead.TakeBearing(ctx, "The fix and its test are in: ready for review.", ann, nil); err != nil {
		return err
	}
	push, err := actions.NewPush(git, actions.Push{Branch: "fix-widget"})
	if err != nil {
		return err
	}
	if _, err := lead.Perform(ctx, push, ann, &helm.PerformOptions{Why: "the crew is done"}); err != nil {
		return err
	}
	if err := lead.Complete(ctx, logbook.OutcomeCompleted, "Fixed with a regression test; fix-widget pushed for review.", ann); err != nil {
		return err
	}
	if _, err := lead.Judge(ctx, logbook.Judgement{Score: 8, Dimension: "correctness", Evidence: []int{1, 2}, Text: "The fix is minimal and tested."}, dave); err != nil {
		return err
	}

	// What the team lead reads: the transcript, the figures, the report.
	lines, err := transcript.Read(ctx, h, []string{lead.ID()}, &transcript.Options{Descendants: true})
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "# Transcript")
	if err := transcript.Write(stdout, lines); err != nil {
		return err
	}
	stats := transcript.StatsOf(lines)
	if len(stats) != 1 {
		return fmt.Errorf("%d main voyages in the transcript, want 1", len(stats))
	}
	s := stats[0]
	fmt.Fprintf(stdout, "\n# Figures\n%d steps, %d critical, %d overhead: parallelism %.2f\n", s.TotalSteps, s.CriticalSteps, s.Overhead, s.Parallelism)
	for _, c := range s.Crew {
		fmt.Fprintf(stdout, "  %-6s %2d steps (%d observations, %d bearings, %d actions, %d refused, %d notes)\n",
			c.Identity, c.Steps, c.Observations, c.Bearings, c.Actions, c.Refused, c.Notes)
	}
	rep, err := report.Of(ctx, h, lead.ID(), &report.Options{DiffStat: diffStat(git)})
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\n# Report")
	if err := rep.WriteMarkdown(stdout); err != nil {
		return err
	}
	return check(s, lines)
}

// check is what the program promises: every voyage completed, bob's push
// to main refused, and figures that add up.
func check(s transcript.Stats, lines []transcript.Line) error {
	completed, refused := 0, 0
	for _, l := range lines {
		switch l.Type {
		case "voyage-completed":
			completed++
		case "action-refused":
			refused++
		}
	}
	switch {
	case completed != 3:
		return fmt.Errorf("%d voyages completed, want 3", completed)
	case refused != 1:
		return fmt.Errorf("%d refused actions, want 1 (bob's push to main)", refused)
	case len(s.Subs) != 2 || s.CriticalSteps > s.TotalSteps || s.CriticalSteps < 1:
		return fmt.Errorf("figures do not add up: %+v", s)
	}
	return nil
}

func observe(ctx context.Context, v *helm.Voyage, who logbook.Who, in *helm.ObserveOptions, files ...string) error {
	m, err := marks.NewFileContents(files...)
	if err != nil {
		return err
	}
	_, err = v.Observe(ctx, m, who, in)
	return err
}

// diffStat counts the files changed between two commits with git, for
// the report: the voyage itself never runs git.
func diffStat(git *runner.Runner) func(ctx context.Context, dir, base, head string) ([]report.FileChange, error) {
	return func(ctx context.Context, dir, base, head string) ([]report.FileChange, error) {
		r := *git
		r.Dir = dir
		stats, err := r.DiffStat(ctx, base, head)
		if err != nil {
			return nil, err
		}
		out := make([]report.FileChange, len(stats))
		for i, f := range stats {
			out[i] = report.FileChange{Path: f.Path, Added: f.Added, Deleted: f.Deleted, Binary: f.Binary}
		}
		return out, nil
	}
}

const widgetGo = `// Package widget draws widgets.
package widget

// Widget is a named widget.
type Widget struct{ name string }

// Init returns the widget's name.
func (w *Widget) Init() string {
	return w.name
}
`

const widgetTest = `package widget

import "testing"

func TestInitNil(t *testing.T) {
	var w *Widget
	if got := w.Init(); got != "" {
		t.Fatalf("Init() = %q", got)
	}
}
`

// newRepo creates a git repository at dir holding a small Go module, with
// a bare repository at origin as its "origin" remote, and returns a runner
// working in dir, with a fixed author and no global git configuration.
func newRepo(ctx context.Context, dir, origin string) (*runner.Runner, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for name, text := range map[string]string{"go.mod": "module example.com/widget\n\ngo 1.26\n", "widget.go": widgetGo} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	env := []string{
		"GIT_AUTHOR_NAME=crew", "GIT_AUTHOR_EMAIL=crew@example.com",
		"GIT_COMMITTER_NAME=crew", "GIT_COMMITTER_EMAIL=crew@example.com",
		"GIT_CONFIG_GLOBAL=" + os.DevNull, "GIT_CONFIG_NOSYSTEM=1",
	}
	if _, err := (&runner.Runner{Env: env}).Git(ctx, "init", "-q", "--bare", "-b", "main", origin); err != nil {
		return nil, err
	}
	r := &runner.Runner{Dir: dir, Env: env}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "Add widget"},
		{"remote", "add", "origin", origin}, {"push", "-q", "origin", "main"},
	} {
		if _, err := r.Git(ctx, args...); err != nil {
			return nil, err
		}
	}
	return r, nil
}
