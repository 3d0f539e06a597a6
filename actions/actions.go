// Package actions holds the operations helm performs in the world: git
// commits and pushes, and GitHub pull requests, reviews, comments and
// issues. Each action is a plain struct of JSON-tagged parameters (what the
// logbook records as the action's params) plus the *runner.Runner that
// performs it. Its constructor takes the parameters as that struct, so
// none can be passed in the place of another (New...(r, actions.X{...})),
// and checks them. Every action offers:
//
//	Kind() string                                        // "commit", "create-pull-request", ...
//	Perform(ctx) (logbook.ActionResult, error)           // touches the world
//	DryRun(ctx) string                                   // what Perform would run, running nothing
//	Target(ctx) (Target, error)                          // what it acts on, for guard rules
//
// GitHub writes go through `gh api -X METHOD PATH --input -` with a JSON
// body on standard input, so any text (quotes, newlines, a leading "@")
// reaches GitHub unchanged. A failure is returned with gh's or git's own
// message (see runner.ExitError); nothing is retried.
//
// DryRun never contacts GitHub and never changes a repository. To name the
// repository in the commands it may read the local origin URL (`git
// remote get-url origin`); when that fails it shows OWNER/NAME. An action
// whose base branch comes from GitHub (create-pull-request without Base)
// shows the lookup and the placeholder <default-branch>.
package actions

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/helmlog/helm/runner"
)

var (
	// ErrInvalid is wrapped by every constructor's (and Perform's) error
	// for bad parameters, so a CLI can tell bad usage from a failed action.
	ErrInvalid = errors.New("invalid action")
	// ErrDetachedHead is a push or pull request with no branch named
	// while HEAD is detached: there is no current branch. It comes with
	// ErrInvalid.
	ErrDetachedHead = errors.New("HEAD is detached")
)

func invalidf(kind, format string, args ...any) error {
	return fmt.Errorf("%s: %w: %s", kind, ErrInvalid, fmt.Sprintf(format, args...))
}

// validated returns the action a constructor built, or its first invalid
// parameter.
func validated[A interface{ validate() error }](a A) (A, error) {
	if err := a.validate(); err != nil {
		var none A
		return none, err
	}
	return a, nil
}

func needRunner(kind string, r *runner.Runner) error {
	if r == nil {
		return fmt.Errorf("%s: no runner: build the action with its constructor", kind)
	}
	return nil
}

func checkNumber(kind, what string, n int) error {
	if n <= 0 {
		return invalidf(kind, "%s %d is not a positive number", what, n)
	}
	return nil
}

func checkText(kind, what, s string) error {
	if strings.TrimSpace(s) == "" {
		return invalidf(kind, "%s is empty", what)
	}
	return nil
}

// checkRef rejects branch and remote names git would read as options or
// that no ref can have.
func checkRef(kind, what, s string) error {
	if s == "" {
		return invalidf(kind, "%s is empty", what)
	}
	if strings.HasPrefix(s, "-") || strings.ContainsAny(s, " \t\n\r~^:?*[\\") || strings.Contains(s, "..") {
		return invalidf(kind, "%s %q is not a valid name", what, s)
	}
	return nil
}

func checkReviewers(kind string, reviewers []string) error {
	if len(reviewers) == 0 {
		return invalidf(kind, "no reviewers given")
	}
	for _, r := range reviewers {
		if strings.TrimSpace(r) == "" || strings.ContainsAny(r, " \t\n") || strings.HasPrefix(r, "-") {
			return invalidf(kind, "reviewer %q is not a GitHub login or ORG/TEAM", r)
		}
	}
	return nil
}

func checkRepo(kind, repo string) error {
	if repo == "" {
		return nil
	}
	if err := runner.ValidateRepo(repo); err != nil {
		return invalidf(kind, "%v", err)
	}
	return nil
}

// checkGitHub checks what every GitHub action needs: a runner, and a valid
// repository when one is named.
func checkGitHub(kind string, r *runner.Runner, repo string) error {
	if err := needRunner(kind, r); err != nil {
		return err
	}
	return checkRepo(kind, repo)
}

// checkNumbered is checkGitHub for an action on one issue or pull request;
// what names its number in errors.
func checkNumbered(kind string, r *runner.Runner, repo, what string, number int) error {
	if err := checkGitHub(kind, r, repo); err != nil {
		return err
	}
	return checkNumber(kind, what, number)
}

// repoOf is the action's repository: its own Repo, else the runner's.
func repoOf(ctx context.Context, r *runner.Runner, repo string) (string, error) {
	if repo != "" {
		return repo, nil
	}
	return r.Repo(ctx)
}

// dryRepo names the repository for a dry run without contacting GitHub:
// it may read the local origin URL, under ctx and for 10 s at most.
func dryRepo(ctx context.Context, r *runner.Runner, repo string) string {
	if repo != "" || r == nil {
		return cmp.Or(repo, "OWNER/NAME")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if name, err := repoOf(ctx, r, repo); err == nil {
		return name
	}
	return "OWNER/NAME"
}

// ghGet reads path from GitHub's API into out.
func ghGet(ctx context.Context, r *runner.Runner, path string, out any) error {
	resp, err := r.GH(ctx, "api", path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(resp, out); err != nil {
		return fmt.Errorf("gh api %s: decode response: %w", path, err)
	}
	return nil
}

// ghWrite sends body as JSON to path with method and decodes the response
// into out (when non-nil).
func ghWrite(ctx context.Context, r *runner.Runner, method, path string, body, out any) error {
	in, err := encodeBody(body)
	if err != nil {
		return err
	}
	resp, err := r.GHInput(ctx, in, writeArgs(method, path)...)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(resp, out); err != nil {
		return fmt.Errorf("gh api %s %s: decode response: %w", method, path, err)
	}
	return nil
}

// encodeBody encodes a request body as compact JSON, leaving <, > and &
// as they are so dry runs read as written.
func encodeBody(body any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func writeArgs(method, path string) []string {
	return []string{"api", "-X", method, path, "--input", "-"}
}

// dryGHWrite renders the gh call ghWrite would make.
func dryGHWrite(r *runner.Runner, method, path string, body any) string {
	in, err := encodeBody(body)
	if err != nil {
		return "# cannot encode the request: " + err.Error()
	}
	return dryGH(r, in, writeArgs(method, path)...)
}

func dryGH(r *runner.Runner, stdin []byte, args ...string) string {
	if r == nil {
		return "# no runner"
	}
	c, err := r.GHCommand(stdin, args...)
	if err != nil {
		return "# cannot run gh: " + err.Error()
	}
	return c.String()
}

func dryGit(r *runner.Runner, args ...string) string {
	if r == nil {
		return "# no runner"
	}
	return r.GitCommand(args...).String()
}

// splitReviewers sends "org/team" entries as team reviewers (by slug),
// the rest as users, as GitHub's requested_reviewers endpoint wants.
func splitReviewers(reviewers []string) map[string][]string {
	body := map[string][]string{}
	for _, r := range reviewers {
		if _, team, ok := strings.Cut(r, "/"); ok {
			body["team_reviewers"] = append(body["team_reviewers"], team)
		} else {
			body["reviewers"] = append(body["reviewers"], r)
		}
	}
	return body
}

// GitHub's answers, as far as the actions read them.

type ghCreated struct {
	Number  int    `json:"number"`
	ID      int64  `json:"id"`
	HTMLURL string `json:"html_url"`
}

// call describes one GitHub write for a repository: method, path, body.
type call func(repo string) (method, path string, body any)

// perform validates, resolves the repository, and makes the call.
func perform(ctx context.Context, kind string, r *runner.Runner, validate func() error, repo string, c call, out any) error {
	return performAfter(ctx, kind, r, validate, repo, nil, c, out)
}

// performAfter is perform with a read of GitHub before the call (when
// read is not nil), for what the action's inverse must know of the world
// as it found it.
func performAfter(ctx context.Context, kind string, r *runner.Runner, validate func() error, repo string, read func(ctx context.Context, repo string) error, c call, out any) error {
	if err := validate(); err != nil {
		return err
	}
	name, err := repoOf(ctx, r, repo)
	if err != nil {
		return fmt.Errorf("%s: %w", kind, err)
	}
	if read != nil {
		if err := read(ctx, name); err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
	}
	method, path, body := c(name)
	if err := ghWrite(ctx, r, method, path, body, out); err != nil {
		return fmt.Errorf("%s: %w", kind, err)
	}
	return nil
}

// dryCall renders the gh call perform would make.
func dryCall(ctx context.Context, r *runner.Runner, repo string, c call) string {
	method, path, body := c(dryRepo(ctx, r, repo))
	return dryGHWrite(r, method, path, body)
}

func validateComment(kind string, r *runner.Runner, repo, what string, number int, body string) error {
	if err := checkNumbered(kind, r, repo, what, number); err != nil {
		return err
	}
	return checkText(kind, "comment body", body)
}

func joinLines(lines []string) string { return strings.Join(lines, "\n") }
