package actions

// What an action of each kind is about and what its result says, for the
// packages that read a voyage afterwards (search, report) and must not
// keep lists of kinds of their own: a new action is described here, next
// to its definition, or a test of this package fails
// (TestEveryKindSaysWhatItIsAbout).

// about is what the actions of one kind are about.
type about struct {
	// pullRequest and issue: the number the action names (its parameter
	// number, or its result's Number) is a pull request's, an issue's. A
	// comment deleted may be on either.
	pullRequest, issue bool
	// movesHead: the result's SHA is where the branch the action worked
	// on then is.
	movesHead bool
}

// kinds describes every kind of action this package performs, undos
// included.
var kinds = map[string]about{
	"commit":                {movesHead: true},
	"push":                  {movesHead: true},
	"create-pull-request":   {pullRequest: true},
	"merge-pull-request":    {pullRequest: true},
	"comment-pull-request":  {pullRequest: true},
	"reply-pull-request":    {pullRequest: true},
	"request-review":        {pullRequest: true},
	"create-issue":          {issue: true},
	"close-issue":           {issue: true},
	"comment-issue":         {issue: true},
	"reset-commit":          {movesHead: true}, // the branch is reset to the commit's parent
	"revert-commit":         {movesHead: true}, // a new commit takes the old one back
	"delete-remote-branch":  {},
	"close-pull-request":    {pullRequest: true},
	"delete-comment":        {pullRequest: true, issue: true},
	"delete-review-comment": {pullRequest: true},
	"remove-review-request": {pullRequest: true},
	"reopen-issue":          {issue: true},
}

// OnPullRequest reports whether an action of kind acts on a pull
// request: the number in its parameters ("number") or its result
// (Number) is the pull request's. A kind this package does not perform
// (recorded by another program) acts on none.
func OnPullRequest(kind string) bool { return kinds[kind].pullRequest }

// OnIssue reports whether an action of kind acts on an issue, as
// OnPullRequest does for pull requests. A deleted comment may have been
// on either.
func OnIssue(kind string) bool { return kinds[kind].issue }

// MovesHead reports whether the SHA in the result of an action of kind
// is where the branch it worked on then is: a commit, a push, and the
// undos of a commit (reset to its parent, or a revert commit).
func MovesHead(kind string) bool { return kinds[kind].movesHead }
