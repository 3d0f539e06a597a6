package helm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/runner"
)

// A voyage's working tree (StartOptions.Worktree), and its removal once
// the voyage is no longer active.

// ErrWorktreeHoldsWork: the voyage's working tree holds what removing it
// would lose (changed, untracked or ignored files, commits no branch or
// tag keeps); nothing was removed. Every *WorktreeError matches it.
var ErrWorktreeHoldsWork = errors.New("the working tree holds work that removing it would lose")

// RemoveWorktreeOptions are the optional parts of RemoveWorktree.
type RemoveWorktreeOptions struct {
	// Force removes the working tree whatever it holds, which is lost
	// (the removal is recorded as forced). Without it, a working tree
	// that holds work is left as it is: a *WorktreeError says what.
	Force bool
	// Git runs git: in the working tree, to see what it holds, and in
	// the repository it was made from (VoyageInfo.Dir), to remove it.
	// Nil runs the git on PATH with the process's environment.
	Git *runner.Runner
}

// WorktreeError is a working tree that holds what removing it would lose.
// Its message lists it, at most maxListed names; the fields hold all.
type WorktreeError struct {
	// Path is the working tree.
	Path string
	// Modified, Untracked and Ignored are files (or directories, ending
	// in /, whose files all are) as git status names them, relative to
	// Path: tracked files changed (staged or not), files git does not
	// track, and files it ignores (.gitignore: a .env, a build).
	Modified, Untracked, Ignored []string
	// Commits are HEAD's commits that no branch, tag or other ref keeps,
	// newest first, each "SHA subject"; at most maxListed of them.
	Commits []string
	// Unkept counts those commits (Commits may list fewer).
	Unkept int
	// Head is HEAD's commit: a branch made at it keeps all of Commits.
	Head string
}

// maxListed is how many names a WorktreeError's message shows.
const maxListed = 20

func (e *WorktreeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the working tree %s holds what removing it would lose; nothing was removed:", e.Path)
	listed := 0
	line := func(what, name string) bool {
		if listed == maxListed {
			return false
		}
		listed++
		fmt.Fprintf(&b, "\n  %s: %s", what, name)
		return true
	}
	total := len(e.Modified) + len(e.Untracked) + len(e.Ignored) + e.Unkept
	func() {
		for _, g := range []struct {
			what  string
			names []string
		}{{"modified", e.Modified}, {"untracked", e.Untracked}, {"ignored", e.Ignored}, {"commit no branch or tag keeps", e.Commits}} {
			for _, n := range g.names {
				if !line(g.what, n) {
					return
				}
			}
		}
	}()
	if total > listed {
		fmt.Fprintf(&b, "\n  and %d more", total-listed)
	}
	return b.String()
}

// Is reports whether target is ErrWorktreeHoldsWork.
func (e *WorktreeError) Is(target error) bool { return target == ErrWorktreeHoldsWork }

// RemoveWorktree removes the voyage's working tree (git worktree remove,
// its branch kept) and records that it did. The voyage may not be active;
// it must have a working tree not removed yet. Unless opts.Force, a
// working tree that holds work is left as it is and nothing is recorded:
// the error is a *WorktreeError (matching ErrWorktreeHoldsWork) whose hint
// says how to keep the work or to force. A working tree gone already
// (removed by hand) is recorded as removed. opts may be nil.
func (v *Voyage) RemoveWorktree(ctx context.Context, who logbook.Who, opts *RemoveWorktreeOptions) error {
	const op = "remove worktree"
	if opts == nil {
		opts = &RemoveWorktreeOptions{}
	}
	if err := checkWho(who); err != nil {
		return v.fail(op, err, hint.Hint{})
	}
	if err := v.refresh(ctx); err != nil {
		return v.fail(op, err, hint.Hint{})
	}
	v.mu.Lock()
	vv := v.st.Voyage
	v.mu.Unlock()
	if err := removable(&vv); err != nil {
		return v.fail(op, err, hint.Hint{})
	}
	git := runner.Runner{}
	if opts.Git != nil {
		git = *opts.Git
	}
	if _, err := os.Stat(vv.Worktree); err == nil {
		if !opts.Force {
			wt := git
			wt.Dir = vv.Worktree
			held, err := heldIn(ctx, &wt)
			if err != nil {
				return v.fail(op, fmt.Errorf("look at the working tree %s: %w", vv.Worktree, err), hint.Hint{})
			}
			if held != nil {
				return v.fail(op, held, hint.Hint{Kind: hint.KeepWork, Text: keepWorkHint(held)})
			}
		}
		if vv.Dir == "" {
			return v.fail(op, fmt.Errorf("%w: the voyage does not record the repository its working tree %s was made from", ErrInvalid, vv.Worktree), hint.Hint{})
		}
		repo := git
		repo.Dir = vv.Dir
		// Without Force git refuses, too, a working tree that changed
		// since it was looked at.
		if err := repo.RemoveWorktree(ctx, vv.Worktree, opts.Force); err != nil {
			return v.fail(op, fmt.Errorf("git worktree remove %s: %w", vv.Worktree, err), hint.Hint{})
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return v.fail(op, fmt.Errorf("look at the working tree: %w", err), hint.Hint{})
	}
	_, err := v.commit(ctx, op, func(st *projection.State, _ stower) ([]*projection.Event, error) {
		if err := removable(&st.Voyage); err != nil {
			return nil, err
		}
		w, err := resolveWho(st, who, false)
		if err != nil {
			return nil, err
		}
		return []*projection.Event{{Type: projection.WorktreeRemoved, Who: w, Removal: &projection.Removal{Path: st.Voyage.Worktree, Forced: opts.Force}}}, nil
	})
	if err == nil {
		v.rec.summarize(ctx)
	}
	return err
}

// removable says why the working tree of voyage vv may not be removed:
// it has none, it was removed, or the voyage is active.
func removable(vv *projection.VoyageView) error {
	switch {
	case vv.Worktree == "":
		return fmt.Errorf("%w: the voyage has no working tree of its own", ErrInvalid)
	case !vv.WorktreeRemoved.IsZero():
		return fmt.Errorf("%w: its working tree %s was removed at %s", ErrInvalid, vv.Worktree, stampOf(vv.WorktreeRemoved))
	case projection.NormalStatus(vv.Status, vv.Outcome) == projection.StatusActive:
		return fmt.Errorf("%w: the voyage is active: complete it before removing its working tree", ErrInvalid)
	}
	return nil
}

// keepWorkHint says, in the library's terms, how to keep what e lists.
func keepWorkHint(e *WorktreeError) string {
	var keep []string
	if len(e.Modified)+len(e.Untracked) > 0 {
		keep = append(keep, "commit or move the files")
	}
	if len(e.Ignored) > 0 {
		keep = append(keep, "move the ignored files you need out of it")
	}
	if e.Unkept > 0 {
		keep = append(keep, "keep the commits on a branch (git branch NAME "+e.Head+" in it)")
	}
	return strings.Join(keep, ", ") + "; or remove it anyway, losing them (RemoveWorktreeOptions.Force)"
}

// heldIn returns what the working tree git runs in holds that removing it
// would lose, or nil when it holds nothing.
func heldIn(ctx context.Context, git *runner.Runner) (*WorktreeError, error) {
	e := &WorktreeError{Path: git.Dir}
	// -z: names as they are, NUL-ended; a rename or copy is followed by
	// its source. --ignored lists a directory all of whose files are
	// ignored as the directory, as it does untracked ones.
	status, err := git.Git(ctx, "status", "--porcelain=v1", "-z", "--ignored", "--untracked-files=normal")
	if err != nil {
		return nil, err
	}
	fields := bytes.Split(status, []byte{0})
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 {
			continue
		}
		xy, name := string(f[:2]), string(f[3:])
		switch {
		case xy == "??":
			e.Untracked = append(e.Untracked, name)
		case xy == "!!":
			e.Ignored = append(e.Ignored, name)
		default:
			e.Modified = append(e.Modified, name)
			if xy[0] == 'R' || xy[0] == 'C' {
				i++ // the source of the rename or copy
			}
		}
	}
	if head, err := git.Git(ctx, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err == nil {
		e.Head = strings.TrimSpace(string(head))
		// HEAD's commits that no ref keeps: the worktree's own HEAD is
		// no ref, nor is another worktree's (it moves on).
		unkept := []string{e.Head, "--not", "--glob=refs/*"}
		n, err := git.Git(ctx, append([]string{"rev-list", "--count"}, unkept...)...)
		if err != nil {
			return nil, err
		}
		if e.Unkept, err = strconv.Atoi(strings.TrimSpace(string(n))); err != nil {
			return nil, fmt.Errorf("git rev-list counted %q commits, not a number", n)
		}
		if e.Unkept > 0 {
			out, err := git.Git(ctx, append([]string{"log", "--oneline", "--no-decorate", "--max-count=" + strconv.Itoa(maxListed)}, unkept...)...)
			if err != nil {
				return nil, err
			}
			e.Commits = strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		}
	}
	if len(e.Modified)+len(e.Untracked)+len(e.Ignored)+e.Unkept == 0 {
		return nil, nil
	}
	return e, nil
}
