package sighting

func init() {
	Register("github-pr", func() Sighting { return &GitHubPullRequest{} })
	Register("github-issue", func() Sighting { return &GitHubIssue{} })
	Register("github-repo", func() Sighting { return &GitHubRepository{} })
}

// GitHubPullRequest answers a github-pr mark. Only the parts named by the
// mark's focus are filled; a focus whose request failed while others
// succeeded is listed in Errors instead. A list that was observed and
// found empty encodes as [], one not observed is left out.
type GitHubPullRequest struct {
	Repo   string   `json:"repo"`
	Number int      `json:"number"`
	Focus  []string `json:"focus"`
	// Summary is the pull request's metadata (focus summary).
	Summary *PullRequestSummary `json:"summary,omitempty"`
	// Files are the changed files with their patches (focus files).
	Files []PullRequestFile `json:"files,omitzero"`
	// Checks are the check runs on the head commit (focus checks).
	Checks []CheckRun `json:"checks,omitzero"`
	// Diff is the unified diff (focus diff).
	Diff string `json:"diff,omitempty"`
	// Comments are the conversation comments (focus comments).
	Comments []Comment `json:"comments,omitzero"`
	// ReviewComments are the inline comments on the diff, replies
	// included (focus comments); their IDs are what reply-pull-request
	// answers.
	ReviewComments []ReviewComment `json:"review_comments,omitzero"`
	// Reviews are the submitted reviews (focus reviews).
	Reviews []Review `json:"reviews,omitzero"`
	// Errors name the focuses that could not be observed.
	Errors []FocusError `json:"errors,omitempty"`
}

// Kind returns "github-pr".
func (*GitHubPullRequest) Kind() string { return "github-pr" }

// GitHubIssue answers a github-issue mark.
type GitHubIssue struct {
	Repo   string   `json:"repo"`
	Number int      `json:"number"`
	Focus  []string `json:"focus"`
	// Summary is the issue's metadata and body (focus summary).
	Summary *IssueSummary `json:"summary,omitempty"`
	// Comments are the issue's comments (focus comments).
	Comments []Comment `json:"comments,omitzero"`
	// Errors name the focuses that could not be observed.
	Errors []FocusError `json:"errors,omitempty"`
}

// Kind returns "github-issue".
func (*GitHubIssue) Kind() string { return "github-issue" }

// GitHubRepository answers a github-repo mark: the open issues and open
// pull requests, newest first.
type GitHubRepository struct {
	Repo  string   `json:"repo"`
	Focus []string `json:"focus"`
	// Issues are the open issues, pull requests excluded (focus issues).
	Issues []IssueSummary `json:"issues,omitzero"`
	// PullRequests are the open pull requests (focus pull-requests).
	PullRequests []PullRequestSummary `json:"pull_requests,omitzero"`
	// Errors name the focuses that could not be observed.
	Errors []FocusError `json:"errors,omitempty"`
}

// Kind returns "github-repo".
func (*GitHubRepository) Kind() string { return "github-repo" }

// FocusError says why one focus of a GitHub mark could not be observed,
// in gh's own words.
type FocusError struct {
	Focus string `json:"focus"`
	Error string `json:"error"`
}

// IssueSummary is an issue's metadata and body.
type IssueSummary struct {
	Number    int      `json:"number"`
	Title     string   `json:"title"`
	State     string   `json:"state"`
	Author    string   `json:"author"`
	Labels    []string `json:"labels,omitempty"`
	Body      string   `json:"body,omitempty"`
	Comments  int      `json:"comments"`
	URL       string   `json:"url"`
	CreatedAt string   `json:"created_at"`
	UpdatedAt string   `json:"updated_at"`
}

// PullRequestSummary is a pull request's metadata and description.
type PullRequestSummary struct {
	Number             int      `json:"number"`
	Title              string   `json:"title"`
	State              string   `json:"state"`
	Draft              bool     `json:"draft,omitempty"`
	Merged             bool     `json:"merged,omitempty"`
	Author             string   `json:"author"`
	Head               string   `json:"head"`
	HeadSHA            string   `json:"head_sha"`
	Base               string   `json:"base"`
	Labels             []string `json:"labels,omitempty"`
	RequestedReviewers []string `json:"requested_reviewers,omitempty"`
	Body               string   `json:"body,omitempty"`
	Additions          int      `json:"additions"`
	Deletions          int      `json:"deletions"`
	ChangedFiles       int      `json:"changed_files"`
	URL                string   `json:"url"`
	CreatedAt          string   `json:"created_at"`
	UpdatedAt          string   `json:"updated_at"`
}

// PullRequestFile is one file changed by a pull request.
type PullRequestFile struct {
	Filename  string `json:"filename"`
	Status    string `json:"status"`
	Additions int    `json:"additions"`
	Deletions int    `json:"deletions"`
	Patch     string `json:"patch,omitempty"`
}

// CheckRun is one check on a pull request's head commit.
type CheckRun struct {
	Name       string `json:"name"`
	Status     string `json:"status"`
	Conclusion string `json:"conclusion,omitempty"`
	URL        string `json:"url,omitempty"`
}

// Comment is a conversation comment on an issue or pull request.
type Comment struct {
	ID        int64  `json:"id"`
	Author    string `json:"author"`
	Body      string `json:"body"`
	URL       string `json:"url"`
	CreatedAt string `json:"created_at"`
}

// ReviewComment is an inline comment on a pull request's diff.
type ReviewComment struct {
	ID        int64  `json:"id"`
	InReplyTo int64  `json:"in_reply_to,omitempty"`
	Author    string `json:"author"`
	Path      string `json:"path"`
	Line      int    `json:"line,omitempty"`
	Body      string `json:"body"`
	URL       string `json:"url"`
	CreatedAt string `json:"created_at"`
}

// Review is a submitted pull request review.
type Review struct {
	ID          int64  `json:"id"`
	Author      string `json:"author"`
	State       string `json:"state"`
	Body        string `json:"body,omitempty"`
	URL         string `json:"url"`
	SubmittedAt string `json:"submitted_at"`
}
