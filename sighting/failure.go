package sighting

import (
	"fmt"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
)

// FailureKind says how a look at a mark failed while the observation was
// still made: a file that was not there, a program that exited non-zero,
// an HTTP error status, ...
type FailureKind string

// The kinds of failure a sighting can record.
const (
	// FailureMissing: a file or directory that is not there.
	FailureMissing FailureKind = "missing"
	// FailureUnreadable: a file or directory that is there but could not
	// be read (permission denied, a directory where a file was expected,
	// a FIFO or device refused).
	FailureUnreadable FailureKind = "unreadable"
	// FailureNotStarted: a program that could not be started (not found,
	// a working directory that is not there).
	FailureNotStarted FailureKind = "not-started"
	// FailureExitStatus: a program that exited with a non-zero status.
	FailureExitStatus FailureKind = "exit-status"
	// FailureTimeout: a program killed for exceeding its timeout.
	FailureTimeout FailureKind = "timeout"
	// FailureSignal: a program ended by a signal it did not expect from
	// the observer (killed by another process, a crash).
	FailureSignal FailureKind = "signal"
	// FailureHTTPStatus: a response with an error status (400 and up).
	FailureHTTPStatus FailureKind = "http-status"
	// FailureFetch: a request that got no usable response (connection
	// refused, too many redirects, a body cut short), or a GitHub focus
	// that could not be fetched.
	FailureFetch FailureKind = "fetch"
	// FailureNotProject: a project mark's directory holds no project of
	// its kind (no Cargo.toml for rust-project, no go.mod for
	// go-project); Error names what the directory's top holds instead.
	FailureNotProject FailureKind = "not-a-project"
)

// Failure is one thing a sighting records as failed. It is derived from
// the sighting (see Failures), never stored: the sighting itself is the
// evidence. Which fields are set depends on the kind.
type Failure struct {
	Kind FailureKind `json:"kind"`
	// Path is the file or directory concerned, as the sighting spells it
	// (missing, unreadable).
	Path string `json:"path,omitempty"`
	// URL is the URL concerned (http-status, fetch of a web mark).
	URL string `json:"url,omitempty"`
	// Focus is the GitHub focus that could not be fetched (fetch).
	Focus string `json:"focus,omitempty"`
	// ExitCode is the status a program exited with (exit-status).
	ExitCode int `json:"exit_code,omitempty"`
	// Status is the HTTP status code (http-status).
	Status int `json:"status,omitempty"`
	// Signal names the signal that ended a program, such as "killed"
	// (signal).
	Signal string `json:"signal,omitempty"`
	// TimeoutMS is the timeout a program exceeded, in milliseconds
	// (timeout); 0 when the sighting predates its recording.
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
	// Error is the reason in the words of whatever refused, such as "no
	// such file or directory" or gh's message.
	Error string `json:"error,omitempty"`
	// Message says it all in one sentence for people, such as "src/x.rs
	// could not be read: no such file or directory".
	Message string `json:"message"`
}

// String returns the failure's Message.
func (f Failure) String() string { return f.Message }

// Failures lists what sighting s records as failed, in the order the
// sighting holds it; nil when nothing failed (or s is of a kind that
// records no failures). A sighting kind registered from outside this
// package takes part by having a method Failures() []Failure.
func Failures(s Sighting) []Failure {
	if f, ok := s.(interface{ Failures() []Failure }); ok {
		return f.Failures()
	}
	return nil
}

// Failures lists the files that could not be read.
func (s *Files) Failures() []Failure { return contentFailures(s.Contents) }

// Failures lists the directories that could not be listed and the entries
// that could not be examined.
func (s *DirectoryTree) Failures() []Failure { return listingFailures(s.Listings) }

// Failures lists the directories and files that could not be read, and
// a tree that holds no Cargo.toml: not a Rust project. A Cargo.toml that
// is a symbolic link is no manifest of the tree (it may lead out of it),
// as go-project does not follow a go.mod link.
func (s *RustProject) Failures() []Failure {
	out := append(listingFailures(s.Listings), contentFailures(s.Contents)...)
	links := map[string]bool{}
	for _, l := range s.Listings {
		for _, e := range l.Entries {
			if e.Symlink != "" {
				links[path.Join(l.Path, e.Name)] = true
			}
		}
	}
	for _, c := range s.Contents {
		if path.Base(c.Path) == "Cargo.toml" && !links[path.Clean(c.Path)] {
			return out
		}
	}
	return append(out, notProject("Rust", "Cargo.toml", s.Listings))
}

// Failures lists the directories and files that could not be read, and
// a tree that holds no go.mod: not a Go project. A go.mod or a package
// clause that does not parse is what the project holds, not a failure to
// look at it, and is not listed.
func (s *GoProject) Failures() []Failure {
	out := append(listingFailures(s.Listings), contentFailures(s.Contents)...)
	if len(s.Modules) > 0 {
		return out
	}
	return append(out, notProject("Go", "go.mod", s.Listings))
}

// projectFiles are the files at the top of a directory that say what
// project it is, and the mark that looks at it (or its language).
var projectFiles = []struct{ file, what string }{
	{"go.mod", "go-project"},
	{"Cargo.toml", "rust-project"},
	{"package.json", "JavaScript"},
	{"pyproject.toml", "Python"},
	{"setup.py", "Python"},
	{"pom.xml", "Java"},
	{"build.gradle", "Java"},
	{"Gemfile", "Ruby"},
	{"composer.json", "PHP"},
	{"mix.exs", "Elixir"},
	{"CMakeLists.txt", "C or C++"},
}

// notProject is the failure of a project mark whose tree holds no
// manifest of its kind; it names what the top of the tree holds instead.
func notProject(lang, manifest string, listings []DirectoryListing) Failure {
	var found []string
	for _, l := range listings {
		if l.Path != "." {
			continue
		}
		for _, e := range l.Entries {
			for _, p := range projectFiles {
				if !e.IsDir && e.Name == p.file && p.file != manifest {
					found = append(found, p.file+" ("+p.what+")")
				}
			}
		}
	}
	f := Failure{Kind: FailureNotProject, Path: ".", Error: "no " + manifest + " in the tree"}
	f.Message = "not a " + lang + " project: no " + manifest + " in the tree"
	if len(found) > 0 {
		f.Error += "; it holds " + strings.Join(found, ", ")
		f.Message += "; its top holds " + strings.Join(found, ", ")
	}
	return f
}

// Failures lists how the program failed: its directory could not be
// entered, it could not be started, it exited non-zero, it was killed at
// the timeout or by a signal.
func (s *Command) Failures() []Failure {
	switch {
	case s.DirError != "":
		return []Failure{{Kind: pathFailure(s.DirError), Path: s.Dir, Error: s.DirError,
			Message: "the directory " + s.Dir + " to run the command in could not be entered: " + s.DirError}}
	case s.TimedOut:
		f := Failure{Kind: FailureTimeout, TimeoutMS: s.TimeoutMS, Error: s.Error}
		if s.TimeoutMS > 0 {
			f.Message = fmt.Sprintf("the command was killed after the %s timeout", time.Duration(s.TimeoutMS)*time.Millisecond)
		} else {
			f.Message = "the command timed out"
		}
		return []Failure{f}
	case s.ExitCode != nil:
		if *s.ExitCode == 0 {
			return nil
		}
		return []Failure{{Kind: FailureExitStatus, ExitCode: *s.ExitCode, Error: s.Error,
			Message: fmt.Sprintf("the command exited with status %d", *s.ExitCode)}}
	case s.Signal != "" || strings.HasPrefix(s.Error, "signal: "):
		sig := s.Signal
		if sig == "" {
			sig = strings.TrimPrefix(s.Error, "signal: ") // recorded before Signal was
		}
		return []Failure{{Kind: FailureSignal, Signal: sig, Error: s.Error,
			Message: "the command was ended by a signal: " + sig}}
	case s.Error != "":
		return []Failure{{Kind: FailureNotStarted, Error: s.Error,
			Message: "the command could not be started: " + s.Error}}
	}
	return nil
}

// Failures lists a request that got no response, an error status, and a
// body that could not be read.
func (s *Web) Failures() []Failure {
	var out []Failure
	if s.Error != "" {
		out = append(out, Failure{Kind: FailureFetch, URL: s.URL, Error: s.Error,
			Message: "the URL could not be fetched: " + s.Error})
	}
	if s.Status >= 400 {
		status := strconv.Itoa(s.Status)
		if text := http.StatusText(s.Status); text != "" {
			status += " " + text
		}
		out = append(out, Failure{Kind: FailureHTTPStatus, URL: s.URL, Status: s.Status,
			Message: "GET " + s.URL + " answered " + status})
	}
	if s.Body.Type == ContentError {
		out = append(out, Failure{Kind: FailureFetch, URL: s.URL, Error: s.Body.Error,
			Message: "the body of " + s.URL + " could not be read: " + s.Body.Error})
	}
	return out
}

// Failures lists the focuses that could not be fetched.
func (s *GitHubPullRequest) Failures() []Failure {
	return focusFailures(s.Repo+"#"+strconv.Itoa(s.Number), s.Errors)
}

// Failures lists the focuses that could not be fetched.
func (s *GitHubIssue) Failures() []Failure {
	return focusFailures(s.Repo+"#"+strconv.Itoa(s.Number), s.Errors)
}

// Failures lists the focuses that could not be fetched.
func (s *GitHubRepository) Failures() []Failure { return focusFailures(s.Repo, s.Errors) }

func focusFailures(what string, errs []FocusError) []Failure {
	var out []Failure
	for _, e := range errs {
		out = append(out, Failure{Kind: FailureFetch, Focus: e.Focus, Error: e.Error,
			Message: fmt.Sprintf("the %s of %s could not be fetched: %s", e.Focus, what, e.Error)})
	}
	return out
}

func contentFailures(contents []FileContents) []Failure {
	var out []Failure
	for _, c := range contents {
		if c.Content.Type == ContentError {
			out = append(out, Failure{Kind: pathFailure(c.Content.Error), Path: c.Path, Error: c.Content.Error,
				Message: c.Path + " could not be read: " + c.Content.Error})
		}
	}
	return out
}

func listingFailures(listings []DirectoryListing) []Failure {
	var out []Failure
	for _, l := range listings {
		if l.Error != "" {
			out = append(out, Failure{Kind: pathFailure(l.Error), Path: l.Path, Error: l.Error,
				Message: "the directory " + l.Path + " could not be listed: " + l.Error})
		}
		for _, e := range l.Entries {
			if e.Error != "" {
				p := e.Name
				if l.Path != "." {
					p = l.Path + "/" + e.Name
				}
				out = append(out, Failure{Kind: pathFailure(e.Error), Path: p, Error: e.Error,
					Message: p + " could not be examined: " + e.Error})
			}
		}
	}
	return out
}

// pathFailure tells a file that is not there from one that could not be
// read, by the reason the observer recorded ("no such file or directory",
// as marks spell fs.ErrNotExist on every system).
func pathFailure(reason string) FailureKind {
	if reason == "no such file or directory" {
		return FailureMissing
	}
	return FailureUnreadable
}
