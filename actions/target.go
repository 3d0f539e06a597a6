package actions

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/runner"
)

// Target is what an action acts on, resolved, for guard rules (package
// policy matches a rule's repo, branch and args against these fields).
// Every action's Target method reads the repository and changes nothing
// in it or on GitHub; Push's and CreatePullRequest's resolve the action
// first (see their Resolve), so that the branch checked is the branch the
// action then uses.
//
// Args are the action's parameters as they are typed on a command line,
// defaults filled in where they are known without GitHub. git actions
// take git's own form (what follows "git commit" or "git push" in
// DryRun); GitHub actions name their number first, then their other
// parameters as flags:
//
//	commit                -m MESSAGE
//	push                  REMOTE BRANCH                (origin when no remote was named)
//	create-pull-request   --branch HEAD --title TITLE [--body BODY] [--base BASE] [--reviewer LOGIN]...
//	merge-pull-request    N --merge-method METHOD      (merge when none was named)
//	comment-pull-request  N --body BODY
//	reply-pull-request    N --comment ID --body BODY
//	request-review        N --reviewer LOGIN...        (one flag per reviewer)
//	create-issue          --title TITLE [--body BODY]
//	close-issue           N
//	comment-issue         N --body BODY
//
// A create-pull-request without Base names none: its default base is
// GitHub's to say, and Target makes no network call.
//
// Repo is the action's Repo, else the runner's (see runner.Runner.Repo);
// a git action whose remote names no GitHub repository (a local path)
// has none. Branch is the branch pushed, a pull request's head, or the
// branch a commit lands on (empty on a detached HEAD); actions on an
// existing pull request or an issue have none, as the pull request's base
// is only known by asking GitHub.
//
// It is logbook.ActionTarget, so that a voyage checks any action that
// names its target without knowing this package.
type Target = logbook.ActionTarget

// Target names what the commit acts on, for guard rules: the repository
// (none when origin names no GitHub repository), the branch the commit
// lands on (the one checked out, which may have no commit yet; empty on a
// detached HEAD) and the arguments -m MESSAGE. It reads the repository
// and changes nothing.
func (a *Commit) Target(ctx context.Context) (Target, error) {
	if err := a.validate(); err != nil {
		return Target{}, err
	}
	branch, err := checkedOutBranch(ctx, a.Runner)
	if err != nil {
		return Target{}, fmt.Errorf("%s: %w", a.Kind(), err)
	}
	repo, err := remoteRepo(ctx, a.Runner, "origin")
	if err != nil {
		return Target{}, fmt.Errorf("%s: %w", a.Kind(), err)
	}
	return Target{Repo: repo, Branch: branch, Args: a.args()[1:]}, nil
}

// Target names what the push acts on, for guard rules, as git resolves
// it (see Resolve, which it calls when the push is not resolved yet):
// every ref it would change on the remote (Refs, with force and delete
// as facts; Branch is the first one's branch), every repository its
// remote names (Repo and Repos: the URL and push URL as configured, as
// git rewrites them with insteadOf and pushInsteadOf, and where git said
// it would push), and the arguments REMOTE SPEC as given. It changes
// nothing in the repository or on the remote.
func (a *Push) Target(ctx context.Context) (Target, error) {
	if err := a.Resolve(ctx); err != nil {
		return Target{}, err
	}
	repos, err := remoteRepos(ctx, a.Runner, a.remote(), a.urls)
	if err != nil {
		return Target{}, fmt.Errorf("%s: %w", a.Kind(), err)
	}
	t := Target{Args: []string{a.remote(), a.Branch}}
	if len(repos) > 0 {
		t.Repo = repos[0]
	}
	if len(repos) > 1 {
		t.Repos = repos[1:]
	}
	for _, u := range a.Updates {
		t.Refs = append(t.Refs, logbook.RefUpdate{Ref: u.Ref, Force: u.Force, Delete: u.Delete})
	}
	if len(a.Updates) > 0 {
		t.Branch = strings.TrimPrefix(a.Updates[0].Ref, "refs/heads/")
	}
	return t, nil
}

// remoteRepos returns every GitHub repository (OWNER/NAME) a push to
// remote may reach, without repeats: those its URLs name as configured
// (remote.NAME.url and pushurl), as git rewrites them (insteadOf,
// pushInsteadOf: `git remote get-url --all` and `--push --all`), and the
// URLs git said it pushes to (urls); for origin, the runner's Repository
// too. A URL that names none (a local path) adds nothing.
func remoteRepos(ctx context.Context, r *runner.Runner, remote string, urls []string) ([]string, error) {
	var raw []string
	for _, args := range [][]string{
		{"config", "--get-all", "remote." + remote + ".url"},
		{"config", "--get-all", "remote." + remote + ".pushurl"},
		{"remote", "get-url", "--all", remote},
		{"remote", "get-url", "--push", "--all", remote},
	} {
		out, err := r.Git(ctx, args...)
		if err != nil {
			var ee *runner.ExitError
			if errors.As(err, &ee) {
				continue // not set, or not a configured remote (a path or URL given as the remote)
			}
			return nil, fmt.Errorf("read the URLs of remote %s: %w", remote, err)
		}
		raw = append(raw, strings.Fields(string(out))...)
	}
	raw = append(raw, urls...)
	var repos []string
	if remote == "origin" && r.Repository != "" {
		repo, err := r.Repo(ctx)
		if err != nil {
			return nil, err
		}
		repos = append(repos, repo)
	}
	for _, u := range raw {
		if repo, err := runner.ParseRemoteURL(u); err == nil && !slices.Contains(repos, repo) {
			repos = append(repos, repo)
		}
	}
	return repos, nil
}

// Target names what the pull request acts on, for guard rules: the
// repository, the head branch and the arguments (see Target). Like
// Resolve, it fills in the head branch when none was given. It changes
// nothing, and does not ask GitHub for the default base.
func (a *CreatePullRequest) Target(ctx context.Context) (Target, error) {
	if err := a.Resolve(ctx); err != nil {
		return Target{}, err
	}
	repo, err := repoOf(ctx, a.Runner, a.Repo)
	if err != nil {
		return Target{}, fmt.Errorf("%s: %w", a.Kind(), err)
	}
	args := []string{"--branch", a.Branch, "--title", a.Title}
	if a.Body != "" {
		args = append(args, "--body", a.Body)
	}
	if a.Base != "" {
		args = append(args, "--base", a.Base)
	}
	return Target{Repo: repo, Branch: a.Branch, Args: append(args, flagEach("--reviewer", a.Reviewers)...)}, nil
}

// Target names what the merge acts on, for guard rules: the repository
// and the arguments N --merge-method METHOD; no branch (the pull
// request's base is GitHub's to say). It changes nothing.
func (a *MergePullRequest) Target(ctx context.Context) (Target, error) {
	method := a.Method
	if method == "" {
		method = "merge"
	}
	return githubTarget(ctx, a.Kind(), a.Runner, a.validate, a.Repo, strconv.Itoa(a.Number), "--merge-method", method)
}

// Target names what the comment acts on, for guard rules: the repository
// and the arguments N --body BODY. It changes nothing.
func (a *CommentPullRequest) Target(ctx context.Context) (Target, error) {
	return githubTarget(ctx, a.Kind(), a.Runner, a.validate, a.Repo, strconv.Itoa(a.Number), "--body", a.Body)
}

// Target names what the reply acts on, for guard rules: the repository
// and the arguments N --comment ID --body BODY. It changes nothing.
func (a *ReplyPullRequest) Target(ctx context.Context) (Target, error) {
	return githubTarget(ctx, a.Kind(), a.Runner, a.validate, a.Repo, strconv.Itoa(a.Number), "--comment", strconv.FormatInt(a.CommentID, 10), "--body", a.Body)
}

// Target names what the review request acts on, for guard rules: the
// repository and the arguments N --reviewer LOGIN... It changes nothing.
func (a *RequestReview) Target(ctx context.Context) (Target, error) {
	return githubTarget(ctx, a.Kind(), a.Runner, a.validate, a.Repo, append([]string{strconv.Itoa(a.Number)}, flagEach("--reviewer", a.Reviewers)...)...)
}

// Target names what the new issue acts on, for guard rules: the
// repository and the arguments --title TITLE [--body BODY]. It changes
// nothing.
func (a *CreateIssue) Target(ctx context.Context) (Target, error) {
	args := []string{"--title", a.Title}
	if a.Body != "" {
		args = append(args, "--body", a.Body)
	}
	return githubTarget(ctx, a.Kind(), a.Runner, a.validate, a.Repo, args...)
}

// Target names what closing the issue acts on, for guard rules: the
// repository and the argument N. It changes nothing.
func (a *CloseIssue) Target(ctx context.Context) (Target, error) {
	return githubTarget(ctx, a.Kind(), a.Runner, a.validate, a.Repo, strconv.Itoa(a.Number))
}

// Target names what the comment acts on, for guard rules: the repository
// and the arguments N --body BODY. It changes nothing.
func (a *CommentIssue) Target(ctx context.Context) (Target, error) {
	return githubTarget(ctx, a.Kind(), a.Runner, a.validate, a.Repo, strconv.Itoa(a.Number), "--body", a.Body)
}

// githubTarget is the Target of a GitHub action with no branch: it
// validates, and names the repository (an error when none can be found:
// the action could not run either).
func githubTarget(ctx context.Context, kind string, r *runner.Runner, validate func() error, repo string, args ...string) (Target, error) {
	if err := validate(); err != nil {
		return Target{}, err
	}
	name, err := repoOf(ctx, r, repo)
	if err != nil {
		return Target{}, fmt.Errorf("%s: %w", kind, err)
	}
	return Target{Repo: name, Args: args}, nil
}

// remoteRepo returns the GitHub repository a git action's remote names
// (for origin, the runner's Repository when set, as runner.Runner.Repo
// does), or "" when the remote does not exist or its URL names none (a
// local path): a git action runs all the same.
func remoteRepo(ctx context.Context, r *runner.Runner, remote string) (string, error) {
	if remote == "origin" && r.Repository != "" {
		return r.Repo(ctx)
	}
	out, err := r.Git(ctx, "remote", "get-url", remote)
	if err != nil {
		var ee *runner.ExitError
		if errors.As(err, &ee) {
			return "", nil // no such remote
		}
		return "", fmt.Errorf("read the URL of remote %s: %w", remote, err)
	}
	repo, err := runner.ParseRemoteURL(strings.TrimSpace(string(out)))
	if err != nil {
		return "", nil
	}
	return repo, nil
}

// flagEach puts flag before each value.
func flagEach(flag string, values []string) []string {
	out := make([]string, 0, 2*len(values))
	for _, v := range values {
		out = append(out, flag, v)
	}
	return out
}

// checkedOutBranch returns the branch HEAD names (`git symbolic-ref
// --short HEAD`), "" when HEAD is detached. Unlike currentBranch it names
// a branch with no commit yet, where a first commit lands.
func checkedOutBranch(ctx context.Context, r *runner.Runner) (string, error) {
	out, err := r.Git(ctx, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		var ee *runner.ExitError
		if errors.As(err, &ee) && ee.ExitCode == 1 {
			return "", nil // detached: --quiet says so with status 1 alone
		}
		return "", fmt.Errorf("find the current branch: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}
