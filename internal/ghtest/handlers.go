package ghtest

import (
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// route dispatches a request under /api/v3/ to the endpoint it names; the
// lock is held. Unknown endpoints answer 404 "Not Found", as GitHub does.
func (s *Server) route(w http.ResponseWriter, r *http.Request, req Request) {
	p := strings.Split(req.Path, "/")
	if len(p) < 3 || p[0] != "repos" {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	repo, ok := s.repos[p[1]+"/"+p[2]]
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	rest := p[3:]
	m := r.Method
	is := func(method string, pattern ...string) bool {
		if m != method || len(rest) != len(pattern) {
			return false
		}
		for i, seg := range pattern {
			if seg != "*" && seg != rest[i] {
				return false
			}
		}
		return true
	}
	switch {
	case is("GET"):
		writeJSON(w, http.StatusOK, s.repoJSON(repo))
	case is("GET", "issues"):
		s.listIssues(w, r, repo)
	case is("POST", "issues"):
		s.createIssue(w, repo, req.Body)
	case is("GET", "issues", "*"):
		s.withNumber(w, repo, rest[1], false, func(st *issueState) {
			writeJSON(w, http.StatusOK, s.issueJSON(repo, st))
		})
	case is("PATCH", "issues", "*"):
		s.withNumber(w, repo, rest[1], false, func(st *issueState) { s.editIssue(w, repo, st, req.Body) })
	case is("GET", "issues", "*", "comments"):
		s.withNumber(w, repo, rest[1], false, func(st *issueState) {
			items := make([]any, len(st.comments))
			for i, c := range st.comments {
				items[i] = s.commentJSON(repo, st, c)
			}
			s.paginate(w, r, items)
		})
	case is("POST", "issues", "*", "comments"):
		s.withNumber(w, repo, rest[1], false, func(st *issueState) {
			body := str(req.Body, "body")
			if body == "" {
				validationFailed(w, "IssueComment", "body", "missing_field")
				return
			}
			writeJSON(w, http.StatusCreated, s.commentJSON(repo, st, s.addCommentLocked(st, "", body)))
		})
	case is("GET", "pulls"):
		s.listPulls(w, r, repo)
	case is("POST", "pulls"):
		s.createPull(w, repo, req.Body)
	case is("GET", "pulls", "*"):
		s.withNumber(w, repo, rest[1], true, func(st *issueState) {
			if strings.Contains(req.Accept, "diff") {
				w.Header().Set("Content-Type", "application/vnd.github.diff; charset=utf-8")
				_, _ = w.Write([]byte(diffOf(st.pr)))
				return
			}
			writeJSON(w, http.StatusOK, s.pullJSON(repo, st))
		})
	case is("GET", "pulls", "*", "files"):
		s.withNumber(w, repo, rest[1], true, func(st *issueState) {
			items := make([]any, len(st.pr.Files))
			for i, f := range st.pr.Files {
				items[i] = map[string]any{"filename": f.Filename, "status": f.Status,
					"additions": f.Additions, "deletions": f.Deletions,
					"changes": f.Additions + f.Deletions, "patch": f.Patch}
			}
			s.paginate(w, r, items)
		})
	case is("GET", "pulls", "*", "reviews"):
		s.withNumber(w, repo, rest[1], true, func(st *issueState) {
			items := make([]any, len(st.reviews))
			for i, rv := range st.reviews {
				items[i] = map[string]any{"id": rv.id, "user": user(rv.User), "body": rv.Body,
					"state": rv.State, "commit_id": st.pr.HeadSHA,
					"html_url":     fmt.Sprintf("%s#pullrequestreview-%d", s.htmlURL(repo, st), rv.id),
					"submitted_at": rv.submittedAt.Format(time.RFC3339)}
			}
			s.paginate(w, r, items)
		})
	case is("GET", "pulls", "*", "comments"):
		s.withNumber(w, repo, rest[1], true, func(st *issueState) {
			items := make([]any, len(st.reviewComments))
			for i, c := range st.reviewComments {
				items[i] = s.reviewCommentJSON(repo, st, c)
			}
			s.paginate(w, r, items)
		})
	case is("POST", "pulls", "*", "comments", "*", "replies"):
		s.withNumber(w, repo, rest[1], true, func(st *issueState) { s.reply(w, repo, st, rest[3], req.Body) })
	case is("PATCH", "pulls", "*"):
		s.withNumber(w, repo, rest[1], true, func(st *issueState) { s.editPull(w, repo, st, req.Body) })
	case is("DELETE", "issues", "comments", "*"):
		s.deleteComment(w, repo, rest[2], false)
	case is("DELETE", "pulls", "comments", "*"):
		s.deleteComment(w, repo, rest[2], true)
	case is("POST", "pulls", "*", "requested_reviewers"):
		s.withNumber(w, repo, rest[1], true, func(st *issueState) { s.requestReviewers(w, repo, st, req.Body) })
	case is("DELETE", "pulls", "*", "requested_reviewers"):
		s.withNumber(w, repo, rest[1], true, func(st *issueState) { s.removeReviewers(w, repo, st, req.Body) })
	case is("PUT", "pulls", "*", "merge"):
		s.withNumber(w, repo, rest[1], true, func(st *issueState) { s.merge(w, repo, st, req.Body) })
	case is("GET", "commits", "*", "check-runs"):
		runs := repo.checkRuns[rest[1]]
		list := make([]any, len(runs))
		for i, c := range runs {
			list[i] = map[string]any{"id": c.id, "name": c.Name, "status": c.Status,
				"conclusion": nullable(c.Conclusion), "head_sha": rest[1],
				"html_url": fmt.Sprintf("%s/%s/runs/%d", s.URL, repo.fullName, c.id)}
		}
		writeJSON(w, http.StatusOK, map[string]any{"total_count": len(runs), "check_runs": list})
	default:
		writeError(w, http.StatusNotFound, "Not Found")
	}
}

// withNumber finds issue or pull request n; pullOnly answers 404 for an
// issue, as pulls/N does on GitHub.
func (s *Server) withNumber(w http.ResponseWriter, repo *repoState, n string, pullOnly bool, fn func(*issueState)) {
	num, err := strconv.Atoi(n)
	st, ok := repo.issues[num]
	if err != nil || !ok || (pullOnly && st.pr == nil) {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	fn(st)
}

func (s *Server) listIssues(w http.ResponseWriter, r *http.Request, repo *repoState) {
	state := stateFilter(r)
	var items []any
	for _, n := range sortedNumbers(repo) {
		st := repo.issues[n]
		if state == "all" || st.State == state {
			items = append(items, s.issueJSON(repo, st))
		}
	}
	s.paginate(w, r, items)
}

func (s *Server) listPulls(w http.ResponseWriter, r *http.Request, repo *repoState) {
	state := stateFilter(r)
	var items []any
	for _, n := range sortedNumbers(repo) {
		st := repo.issues[n]
		if st.pr != nil && (state == "all" || st.State == state) {
			items = append(items, s.pullJSON(repo, st))
		}
	}
	s.paginate(w, r, items)
}

func stateFilter(r *http.Request) string {
	if st := r.URL.Query().Get("state"); st != "" {
		return st
	}
	return "open"
}

// sortedNumbers lists newest first, GitHub's default order.
func sortedNumbers(repo *repoState) []int {
	ns := make([]int, 0, len(repo.issues))
	for n := range repo.issues {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	slices.Reverse(ns)
	return ns
}

func (s *Server) createIssue(w http.ResponseWriter, repo *repoState, body map[string]any) {
	title := str(body, "title")
	if title == "" {
		validationFailed(w, "Issue", "title", "missing_field")
		return
	}
	st := s.addIssueLocked(repo, Issue{Title: title, Body: str(body, "body")}, nil)
	writeJSON(w, http.StatusCreated, s.issueJSON(repo, st))
}

func (s *Server) editIssue(w http.ResponseWriter, repo *repoState, st *issueState, body map[string]any) {
	if edit(w, "Issue", st, body) {
		writeJSON(w, http.StatusOK, s.issueJSON(repo, st))
	}
}

// edit changes an issue's or a pull request's state, title and body as
// body says, and reports whether it did; an invalid state is a 422. A
// merged pull request stays closed, as GitHub keeps it.
func edit(w http.ResponseWriter, resource string, st *issueState, body map[string]any) bool {
	if v, ok := body["state"].(string); ok {
		switch {
		case v != "open" && v != "closed":
			validationFailed(w, resource, "state", "invalid")
			return false
		case v == "open" && st.merged:
			validationFailed(w, resource, "state", "state cannot be changed. The pull request cannot be reopened.")
			return false
		}
		st.State = v
	}
	if v, ok := body["title"].(string); ok {
		st.Title = v
	}
	if v, ok := body["body"].(string); ok {
		st.Body = v
	}
	return true
}

// editPull closes or reopens a pull request, or changes its title or
// body.
func (s *Server) editPull(w http.ResponseWriter, repo *repoState, st *issueState, body map[string]any) {
	if edit(w, "PullRequest", st, body) {
		writeJSON(w, http.StatusOK, s.pullJSON(repo, st))
	}
}

// deleteComment deletes an issue (or pull request conversation) comment,
// or with review an inline review comment, by id: 204, or 404 when the
// repository holds none with that id.
func (s *Server) deleteComment(w http.ResponseWriter, repo *repoState, idText string, review bool) {
	id, err := strconv.ParseInt(idText, 10, 64)
	if err == nil {
		for _, st := range repo.issues {
			var found bool
			if review {
				st.reviewComments = slices.DeleteFunc(st.reviewComments, func(c reviewComment) bool { found = found || c.id == id; return c.id == id })
			} else {
				st.comments = slices.DeleteFunc(st.comments, func(c comment) bool { found = found || c.id == id; return c.id == id })
			}
			if found {
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
	}
	writeError(w, http.StatusNotFound, "Not Found")
}

// removeReviewers takes back review requests: the users and teams named.
func (s *Server) removeReviewers(w http.ResponseWriter, repo *repoState, st *issueState, body map[string]any) {
	var names []string
	for _, key := range []string{"reviewers", "team_reviewers"} {
		list, _ := body[key].([]any)
		for _, v := range list {
			name, _ := v.(string)
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		validationFailed(w, "PullRequest", "reviewers", "missing_field")
		return
	}
	st.requestedReviewers = slices.DeleteFunc(st.requestedReviewers, func(r string) bool { return slices.Contains(names, r) })
	writeJSON(w, http.StatusOK, s.pullJSON(repo, st))
}

func (s *Server) createPull(w http.ResponseWriter, repo *repoState, body map[string]any) {
	title, head, base := str(body, "title"), str(body, "head"), str(body, "base")
	switch {
	case title == "":
		validationFailed(w, "PullRequest", "title", "missing_field")
		return
	case head == "":
		validationFailed(w, "PullRequest", "head", "missing_field")
		return
	case base == "":
		validationFailed(w, "PullRequest", "base", "missing_field")
		return
	case head == base:
		validationFailed(w, "PullRequest", "head", "invalid")
		return
	}
	headSHA := fakeSHA(repo.fullName, head)
	if repo.bare != "" {
		sha, err := revParse(repo.bare, head)
		if err != nil {
			validationFailed(w, "PullRequest", "head", "invalid")
			return
		}
		headSHA = sha
		if _, err := revParse(repo.bare, base); err != nil {
			validationFailed(w, "PullRequest", "base", "invalid")
			return
		}
	}
	pr := &PullRequest{Title: title, Body: str(body, "body"), Head: head, Base: base, HeadSHA: headSHA}
	pr.Draft, _ = body["draft"].(bool)
	st := s.addIssueLocked(repo, Issue{Title: title, Body: pr.Body}, pr)
	writeJSON(w, http.StatusCreated, s.pullJSON(repo, st))
}

func revParse(gitDir, branch string) (string, error) {
	out, err := exec.Command("git", "--git-dir", gitDir, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch).Output()
	return strings.TrimSpace(string(out)), err
}

func (s *Server) reply(w http.ResponseWriter, repo *repoState, st *issueState, idText string, body map[string]any) {
	id, _ := strconv.ParseInt(idText, 10, 64)
	var parent *reviewComment
	for i := range st.reviewComments {
		if st.reviewComments[i].id == id {
			parent = &st.reviewComments[i]
		}
	}
	if parent == nil {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	text := str(body, "body")
	if text == "" {
		validationFailed(w, "PullRequestReviewComment", "body", "missing_field")
		return
	}
	c := s.addReviewCommentLocked(st, ReviewComment{Body: text, Path: parent.Path, Line: parent.Line, InReplyTo: id})
	writeJSON(w, http.StatusCreated, s.reviewCommentJSON(repo, st, c))
}

func (s *Server) requestReviewers(w http.ResponseWriter, repo *repoState, st *issueState, body map[string]any) {
	var reviewers []string
	list, _ := body["reviewers"].([]any)
	for _, v := range list {
		name, _ := v.(string)
		if name == st.User {
			validationFailed(w, "PullRequest", "reviewers", "Review cannot be requested from pull request author.")
			return
		}
		reviewers = append(reviewers, name)
	}
	teams, _ := body["team_reviewers"].([]any)
	for _, v := range teams {
		name, _ := v.(string)
		reviewers = append(reviewers, name)
	}
	if len(reviewers) == 0 {
		validationFailed(w, "PullRequest", "reviewers", "missing_field")
		return
	}
	for _, rv := range reviewers {
		if !slices.Contains(st.requestedReviewers, rv) {
			st.requestedReviewers = append(st.requestedReviewers, rv)
		}
	}
	writeJSON(w, http.StatusCreated, s.pullJSON(repo, st))
}

func (s *Server) merge(w http.ResponseWriter, repo *repoState, st *issueState, body map[string]any) {
	method := str(body, "merge_method")
	if method == "" {
		method = "merge"
	}
	if method != "merge" && method != "squash" && method != "rebase" {
		validationFailed(w, "PullRequest", "merge_method", "invalid")
		return
	}
	if st.merged || st.State != "open" {
		writeError(w, http.StatusMethodNotAllowed, "Pull Request is not mergeable")
		return
	}
	st.merged = true
	st.State = "closed"
	st.mergeSHA = fakeSHA(repo.fullName, st.pr.HeadSHA, method)
	writeJSON(w, http.StatusOK, map[string]any{"sha": st.mergeSHA, "merged": true, "message": "Pull Request successfully merged"})
}

func (s *Server) htmlURL(repo *repoState, st *issueState) string {
	kind := "issues"
	if st.pr != nil {
		kind = "pull"
	}
	return fmt.Sprintf("%s/%s/%s/%d", s.URL, repo.fullName, kind, st.number)
}

func (s *Server) repoJSON(repo *repoState) map[string]any {
	owner, name, _ := strings.Cut(repo.fullName, "/")
	return map[string]any{"name": name, "full_name": repo.fullName, "owner": user(owner),
		"default_branch": repo.defaultBranch, "private": false,
		"html_url": s.URL + "/" + repo.fullName}
}

func (s *Server) issueJSON(repo *repoState, st *issueState) map[string]any {
	labels := make([]any, len(st.Labels))
	for i, l := range st.Labels {
		labels[i] = map[string]any{"name": l}
	}
	m := map[string]any{"number": st.number, "title": st.Title, "body": st.Body, "state": st.State,
		"user": user(st.User), "labels": labels, "comments": len(st.comments),
		"html_url":   s.htmlURL(repo, st),
		"created_at": st.createdAt.Format(time.RFC3339), "updated_at": st.createdAt.Format(time.RFC3339)}
	if st.pr != nil {
		m["pull_request"] = map[string]any{"html_url": s.htmlURL(repo, st)}
	}
	return m
}

func (s *Server) pullJSON(repo *repoState, st *issueState) map[string]any {
	pr := st.pr
	adds, dels := 0, 0
	for _, f := range pr.Files {
		adds += f.Additions
		dels += f.Deletions
	}
	reviewers := make([]any, len(st.requestedReviewers))
	for i, r := range st.requestedReviewers {
		reviewers[i] = user(r)
	}
	m := s.issueJSON(repo, st)
	delete(m, "pull_request")
	m["head"] = map[string]any{"ref": pr.Head, "sha": pr.HeadSHA}
	m["base"] = map[string]any{"ref": pr.Base}
	m["draft"] = pr.Draft
	m["merged"] = st.merged
	m["merge_commit_sha"] = nullable(st.mergeSHA)
	m["review_comments"] = len(st.reviewComments)
	m["additions"], m["deletions"], m["changed_files"] = adds, dels, len(pr.Files)
	m["requested_reviewers"] = reviewers
	return m
}

func (s *Server) commentJSON(repo *repoState, st *issueState, c comment) map[string]any {
	return map[string]any{"id": c.id, "user": user(c.user), "body": c.body,
		"html_url":   fmt.Sprintf("%s#issuecomment-%d", s.htmlURL(repo, st), c.id),
		"created_at": c.createdAt.Format(time.RFC3339)}
}

func (s *Server) reviewCommentJSON(repo *repoState, st *issueState, c reviewComment) map[string]any {
	m := map[string]any{"id": c.id, "user": user(c.User), "body": c.Body, "path": c.Path,
		"line": c.Line, "commit_id": st.pr.HeadSHA,
		"html_url":   fmt.Sprintf("%s#discussion_r%d", s.htmlURL(repo, st), c.id),
		"created_at": c.createdAt.Format(time.RFC3339)}
	if c.InReplyTo != 0 {
		m["in_reply_to_id"] = c.InReplyTo
	}
	return m
}

func diffOf(pr *PullRequest) string {
	if pr.Diff != "" {
		return pr.Diff
	}
	var b strings.Builder
	for _, f := range pr.Files {
		fmt.Fprintf(&b, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n%s\n", f.Filename, f.Filename, f.Filename, f.Filename, f.Patch)
	}
	return b.String()
}

func user(login string) map[string]any { return map[string]any{"login": login} }

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func str(body map[string]any, key string) string {
	v, _ := body[key].(string)
	return v
}
