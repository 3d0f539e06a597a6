package actions

import (
	"context"
	"fmt"
	"strings"

	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/runner"
)

// The action kinds that callers perform by name, each described once:
// what it does, its parameters, and how they become the action. The
// helm program makes of each a command (its flags, arguments and help)
// and an MCP tool (its input schema and description), so that a kind
// added to Kinds is both with no other edit; how a command line spells a
// parameter is the program's to say, not this package's.

// Action is what every action offers (see the package doc): a voyage
// performs it, shows it as a dry run and checks it against guard rules.
type Action interface {
	Kind() string
	Perform(ctx context.Context) (logbook.ActionResult, error)
	DryRun(ctx context.Context) string
	Target(ctx context.Context) (Target, error)
}

// Resolver is an action whose parameters default to the state of the
// world (Push's and CreatePullRequest's branch: the one checked out).
// Resolve fills them in, so that a dry run shows, and the intent records,
// what will run.
type Resolver interface {
	Resolve(ctx context.Context) error
}

// Kind describes one kind of action for the callers that perform it by
// name.
type Kind struct {
	// Name is the kind, as its action's Kind method says it:
	// "create-pull-request".
	Name string
	// Summary says what it does in a line: lower case, no final period.
	Summary string
	// GitHub: it acts on a GitHub repository, which a caller may name
	// (by default the one the origin remote names).
	GitHub bool
	// Irreversible: no action takes it back (undo has none), so a host
	// warns of it.
	Irreversible bool
	// Params are its parameters, in the order a person reads them.
	Params []Param
	// Build makes the action from the parameters a caller gave, performed
	// with r; bad parameters are an error wrapping ErrInvalid.
	Build func(r *runner.Runner, v Values) (Action, error)
}

// Param is one parameter of an action kind.
type Param struct {
	// Name names it, in snake_case: merge_method.
	Name string
	Type Type
	// Doc says what it is: a phrase, lower case.
	Doc string
	// Required: no action of the kind goes without it.
	Required bool
	// Positive: an Int that is at least 1 (a number, an id).
	Positive bool
	// Enum lists the values it takes, when they are a few words.
	Enum []string
}

// Type is the type of a parameter's values.
type Type int

const (
	String Type = iota // a string
	Int                // an int64
	Bool               // a bool
	List               // a []string; "a,b" is two values
)

// Values are the parameters of one action as a caller gave them, by
// Param.Name: a string, an int64, a bool or a []string, as the
// parameter's Type says. A parameter not given is absent and reads as its
// zero value.
type Values map[string]any

// String is the String parameter name.
func (v Values) String(name string) string { return value[string](v, name) }

// Int is the Int parameter name.
func (v Values) Int(name string) int64 { return value[int64](v, name) }

// Bool is the Bool parameter name.
func (v Values) Bool(name string) bool { return value[bool](v, name) }

// List is the List parameter name, each value split at commas and
// trimmed, blanks dropped: a flag repeated and a comma-separated list say
// the same.
func (v Values) List(name string) []string {
	var out []string
	for _, s := range value[[]string](v, name) {
		for p := range strings.SplitSeq(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// value reads parameter name as a T; a value of another type is a bug in
// the caller that set it or the kind that reads it.
func value[T any](v Values, name string) T {
	x, ok := v[name]
	if !ok {
		var zero T
		return zero
	}
	t, ok := x.(T)
	if !ok {
		panic(fmt.Sprintf("actions: parameter %s holds a %T, read as a %T", name, x, t))
	}
	return t
}

// built is a constructor's action as an Action: none when it failed.
func built[A Action](a A, err error) (Action, error) {
	if err != nil {
		return nil, err
	}
	return a, nil
}

// KindNamed returns the kind called name, and whether there is one.
func KindNamed(name string) (Kind, bool) {
	for _, k := range Kinds() {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// number is the number of the pull request or issue a kind acts on.
func number(doc string) Param {
	return Param{Name: "number", Type: Int, Doc: doc, Required: true, Positive: true}
}

// Kinds returns the action kinds, in the order helm lists them: git's,
// then GitHub's pull requests, then issues.
func Kinds() []Kind {
	return []Kind{
		{
			Name: "commit", Summary: "commit the staged changes (git commit -m)",
			Params: []Param{{Name: "message", Type: String, Doc: "the commit message", Required: true}},
			Build: func(r *runner.Runner, v Values) (Action, error) {
				return built(NewCommit(r, Commit{Message: v.String("message")}))
			},
		},
		{
			Name: "push", Summary: "push a branch (git push origin BRANCH)",
			Params: []Param{
				{Name: "branch", Type: String, Doc: "the branch to push, or a refspec git takes (default: the branch checked out in helm's working directory); guard rules see every ref git resolves it to"},
				{Name: "remote", Type: String, Doc: "the remote to push to (default origin)"},
				{Name: "force", Type: Bool, Doc: "push even where it is not a fast-forward (guard rules see a forced update)"},
			},
			Build: func(r *runner.Runner, v Values) (Action, error) {
				return built(NewPush(r, Push{Branch: v.String("branch"), Remote: v.String("remote"), Force: v.Bool("force")}))
			},
		},
		{
			Name: "create-pull-request", Summary: "open a pull request, and request reviews", GitHub: true,
			Params: []Param{
				{Name: "title", Type: String, Doc: "the pull request's title", Required: true},
				{Name: "branch", Type: String, Doc: "the head branch, pushed already (default: the branch checked out)"},
				{Name: "body", Type: String, Doc: "the pull request's description"},
				{Name: "base", Type: String, Doc: "the branch to merge into (default: the repository's default branch)"},
				{Name: "reviewers", Type: List, Doc: "logins to request reviews from"},
			},
			Build: func(r *runner.Runner, v Values) (Action, error) {
				return built(NewCreatePullRequest(r, CreatePullRequest{Branch: v.String("branch"), Title: v.String("title"), Body: v.String("body"), Base: v.String("base"), Reviewers: v.List("reviewers")}))
			},
		},
		{
			Name: "merge-pull-request", Summary: "merge a pull request", GitHub: true, Irreversible: true,
			Params: []Param{
				number("the pull request's number"),
				{Name: "merge_method", Type: String, Doc: "merge, squash or rebase (default merge)", Enum: []string{"merge", "squash", "rebase"}},
			},
			Build: func(r *runner.Runner, v Values) (Action, error) {
				return built(NewMergePullRequest(r, MergePullRequest{Number: int(v.Int("number")), Method: v.String("merge_method")}))
			},
		},
		{
			Name: "comment-pull-request", Summary: "comment on a pull request's conversation", GitHub: true,
			Params: []Param{number("the pull request's number"), {Name: "body", Type: String, Doc: "the comment", Required: true}},
			Build: func(r *runner.Runner, v Values) (Action, error) {
				return built(NewCommentPullRequest(r, CommentPullRequest{Number: int(v.Int("number")), Body: v.String("body")}))
			},
		},
		{
			Name: "reply-pull-request", Summary: "reply to an inline review comment", GitHub: true,
			Params: []Param{
				number("the pull request's number"),
				{Name: "comment_id", Type: Int, Doc: "the id of the inline review comment to reply to (observe github-pr with focus comments lists them)", Required: true, Positive: true},
				{Name: "body", Type: String, Doc: "the reply", Required: true},
			},
			Build: func(r *runner.Runner, v Values) (Action, error) {
				return built(NewReplyPullRequest(r, ReplyPullRequest{Number: int(v.Int("number")), CommentID: v.Int("comment_id"), Body: v.String("body")}))
			},
		},
		{
			Name: "request-review", Summary: "request reviews on a pull request", GitHub: true,
			Params: []Param{
				number("the pull request's number"),
				{Name: "reviewers", Type: List, Doc: "logins or ORG/TEAM names to request reviews from", Required: true},
			},
			Build: func(r *runner.Runner, v Values) (Action, error) {
				return built(NewRequestReview(r, RequestReview{Number: int(v.Int("number")), Reviewers: v.List("reviewers")}))
			},
		},
		{
			Name: "create-issue", Summary: "open an issue", GitHub: true,
			Params: []Param{
				{Name: "title", Type: String, Doc: "the issue's title", Required: true},
				{Name: "body", Type: String, Doc: "the issue's description"},
			},
			Build: func(r *runner.Runner, v Values) (Action, error) {
				return built(NewCreateIssue(r, CreateIssue{Title: v.String("title"), Body: v.String("body")}))
			},
		},
		{
			Name: "close-issue", Summary: "close an issue", GitHub: true,
			Params: []Param{number("the issue's number")},
			Build: func(r *runner.Runner, v Values) (Action, error) {
				return built(NewCloseIssue(r, CloseIssue{Number: int(v.Int("number"))}))
			},
		},
		{
			Name: "comment-issue", Summary: "comment on an issue", GitHub: true,
			Params: []Param{number("the issue's number"), {Name: "body", Type: String, Doc: "the comment", Required: true}},
			Build: func(r *runner.Runner, v Values) (Action, error) {
				return built(NewCommentIssue(r, CommentIssue{Number: int(v.Int("number")), Body: v.String("body")}))
			},
		},
	}
}
