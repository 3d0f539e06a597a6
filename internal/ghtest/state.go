package ghtest

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// Issue seeds an issue. Empty User means Login; empty State means "open".
type Issue struct {
	Title, Body, User string
	Labels            []string
	State             string
}

// PullRequest seeds a pull request. Empty User means Login, empty Base
// means the repository's default branch, empty HeadSHA a made-up one,
// empty Diff one built from the files' patches.
type PullRequest struct {
	Title, Body, User string
	Head, Base        string
	HeadSHA           string
	Diff              string
	Files             []File
	Draft             bool
	State             string
}

// File is a file changed by a pull request.
type File struct {
	Filename  string
	Status    string // added, modified, removed, renamed
	Additions int
	Deletions int
	Patch     string
}

// Review is a pull request review. State is APPROVED, CHANGES_REQUESTED,
// COMMENTED, ...
type Review struct {
	User, State, Body string
}

// ReviewComment is an inline comment on a pull request's diff.
type ReviewComment struct {
	User, Body, Path string
	Line             int
	InReplyTo        int64
}

// CheckRun is one check on a commit. Status is queued, in_progress or
// completed; Conclusion success, failure, ... when completed.
type CheckRun struct {
	Name, Status, Conclusion string
}

type repoState struct {
	fullName      string
	defaultBranch string
	bare          string // local bare repository holding the branches, if linked
	nextNumber    int
	issues        map[int]*issueState
	checkRuns     map[string][]checkRun
}

type issueState struct {
	Issue
	number             int
	createdAt          time.Time
	pr                 *PullRequest
	merged             bool
	mergeSHA           string
	requestedReviewers []string
	comments           []comment
	reviews            []review
	reviewComments     []reviewComment
}

type comment struct {
	id        int64
	user      string
	body      string
	createdAt time.Time
}

type review struct {
	Review
	id          int64
	submittedAt time.Time
}

type reviewComment struct {
	ReviewComment
	id        int64
	createdAt time.Time
}

type checkRun struct {
	CheckRun
	id int64
}

// epoch makes every timestamp deterministic: sightings of the same state
// have the same bytes.
var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func (s *Server) newID() int64 {
	s.nextID++
	return 1000 + s.nextID
}

func (s *Server) stamp(id int64) time.Time { return epoch.Add(time.Duration(id) * time.Minute) }

// AddRepo creates the repository OWNER/NAME with its default branch
// (empty means "main"). Adding it again changes only the default branch.
func (s *Server) AddRepo(fullName, defaultBranch string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addRepoLocked(fullName, defaultBranch)
}

func (s *Server) addRepoLocked(fullName, defaultBranch string) *repoState {
	if defaultBranch == "" {
		defaultBranch = "main"
	}
	if r, ok := s.repos[fullName]; ok {
		r.defaultBranch = defaultBranch
		return r
	}
	r := &repoState{fullName: fullName, defaultBranch: defaultBranch, nextNumber: 1,
		issues: map[int]*issueState{}, checkRuns: map[string][]checkRun{}}
	s.repos[fullName] = r
	return r
}

func (s *Server) mustRepo(fullName string) *repoState {
	r, ok := s.repos[fullName]
	if !ok {
		panic(fmt.Sprintf("ghtest: no repository %q; call AddRepo first", fullName))
	}
	return r
}

func (s *Server) mustNumber(fullName string, number int) *issueState {
	is, ok := s.mustRepo(fullName).issues[number]
	if !ok {
		panic(fmt.Sprintf("ghtest: %s has no issue or pull request #%d", fullName, number))
	}
	return is
}

// AddIssue adds an issue and returns its number.
func (s *Server) AddIssue(repo string, is Issue) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addIssueLocked(s.mustRepo(repo), is, nil).number
}

func (s *Server) addIssueLocked(r *repoState, is Issue, pr *PullRequest) *issueState {
	if is.User == "" {
		is.User = Login
	}
	if is.State == "" {
		is.State = "open"
	}
	st := &issueState{Issue: is, number: r.nextNumber, createdAt: s.stamp(s.newID()), pr: pr}
	r.issues[st.number] = st
	r.nextNumber++
	return st
}

// AddPull adds a pull request and returns its number (pull requests and
// issues share numbers, as on GitHub).
func (s *Server) AddPull(repo string, pr PullRequest) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(repo)
	if pr.Base == "" {
		pr.Base = r.defaultBranch
	}
	if pr.HeadSHA == "" {
		pr.HeadSHA = fakeSHA(repo, pr.Head, strconv.Itoa(r.nextNumber))
	}
	return s.addIssueLocked(r, Issue{Title: pr.Title, Body: pr.Body, User: pr.User, State: pr.State}, &pr).number
}

// AddIssueComment adds a conversation comment to an issue or pull request
// and returns its id. Empty user means Login.
func (s *Server) AddIssueComment(repo string, number int, user, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addCommentLocked(s.mustNumber(repo, number), user, body).id
}

func (s *Server) addCommentLocked(is *issueState, user, body string) comment {
	if user == "" {
		user = Login
	}
	id := s.newID()
	c := comment{id: id, user: user, body: body, createdAt: s.stamp(id)}
	is.comments = append(is.comments, c)
	return c
}

// AddReview adds a review to a pull request and returns its id.
func (s *Server) AddReview(repo string, number int, rv Review) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.mustNumber(repo, number)
	if rv.User == "" {
		rv.User = Login
	}
	id := s.newID()
	is.reviews = append(is.reviews, review{Review: rv, id: id, submittedAt: s.stamp(id)})
	return id
}

// AddReviewComment adds an inline review comment to a pull request and
// returns its id.
func (s *Server) AddReviewComment(repo string, number int, rc ReviewComment) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addReviewCommentLocked(s.mustNumber(repo, number), rc).id
}

func (s *Server) addReviewCommentLocked(is *issueState, rc ReviewComment) reviewComment {
	if rc.User == "" {
		rc.User = Login
	}
	id := s.newID()
	c := reviewComment{ReviewComment: rc, id: id, createdAt: s.stamp(id)}
	is.reviewComments = append(is.reviewComments, c)
	return c
}

// AddCheckRun adds a check run on the commit sha.
func (s *Server) AddCheckRun(repo, sha string, cr CheckRun) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(repo)
	id := s.newID()
	r.checkRuns[sha] = append(r.checkRuns[sha], checkRun{CheckRun: cr, id: id})
	return id
}

// PullHeadSHA returns the head commit of pull request number.
func (s *Server) PullHeadSHA(repo string, number int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.mustNumber(repo, number)
	if is.pr == nil {
		panic(fmt.Sprintf("ghtest: %s#%d is an issue", repo, number))
	}
	return is.pr.HeadSHA
}

// IssueState returns "open" or "closed" for an issue or pull request.
func (s *Server) IssueState(repo string, number int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mustNumber(repo, number).State
}

// RequestedReviewers returns the reviewers requested on a pull request.
func (s *Server) RequestedReviewers(repo string, number int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.mustNumber(repo, number).requestedReviewers)
}

// CommentIDs returns the ids of the comments on an issue or a pull
// request's conversation, and of the inline review comments on a pull
// request's diff.
func (s *Server) CommentIDs(repo string, number int) (comments, review []int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.mustNumber(repo, number)
	for _, c := range st.comments {
		comments = append(comments, c.id)
	}
	for _, c := range st.reviewComments {
		review = append(review, c.id)
	}
	return comments, review
}

func fakeSHA(parts ...string) string {
	h := sha1.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func atoi(s string) (int, error) { return strconv.Atoi(s) }
