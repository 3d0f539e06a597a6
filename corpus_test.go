package helm_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/internal/ghtest"
	"github.com/helmlog/helm/internal/hometest"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/policy"
	"github.com/helmlog/helm/redact"
	"github.com/helmlog/helm/segment"
	"github.com/helmlog/helm/sighting"
)

// The corpus: homes written by landed versions of helm, kept under
// testdata/voyages/<version>/ with the views they must open to
// (views.golden.json) and, from v0.3 on, each voyage's JSONL export
// (exports/ID.jsonl). Every later version must open them, show the same
// views, verify them, and keep writing to them, and replay the exports
// to the same views. The corpus only grows: entries are never rewritten.
// A format change adds an entry written by the version before it, with
//
//	HELM_WRITE_CORPUS=testdata/voyages/NAME go test -run TestWriteCorpus .
//
// run on that version (the script below only uses public API and real mark
// kinds, so any version can run it; it needs gh, for the GitHub stand-in).
// A version that records something new appends a part to corpusScript.

// corpusAction is a recorded action that touches nothing.
type corpusAction struct {
	Message string `json:"message"`
	Fail    bool   `json:"fail,omitempty"` // the world refuses it
}

func (a *corpusAction) Kind() string { return "commit" }
func (a *corpusAction) Perform(ctx context.Context) (logbook.ActionResult, error) {
	if a.Fail {
		return logbook.ActionResult{}, fmt.Errorf("nothing to commit, working tree clean")
	}
	return logbook.ActionResult{SHA: "abc1234def5678"}, nil
}

func TestWriteCorpus(t *testing.T) {
	out := os.Getenv("HELM_WRITE_CORPUS")
	if out == "" {
		t.Skip("set HELM_WRITE_CORPUS=testdata/voyages/NAME to write a corpus entry")
	}
	_, err := os.Stat(out)
	require.True(t, os.IsNotExist(err), "%s exists: corpus entries are never rewritten", out)
	w := newCorpusWriter(t)
	for _, part := range corpusScript {
		part.write(w)
	}
	w.save(out)
}

// corpusScript is the corpus script, in parts: each writes the voyages
// that the version named by since added, with what that version could
// record. A version that records something new appends a part; the parts
// before it are left as they are, so that the voyages they write keep
// their ids and times (the deterministic clock and ids run through the
// whole script).
var corpusScript = []struct {
	since string
	write func(w *corpusWriter)
}{
	{"v0", corpusV0},
	{"v0.1.0", corpusV010},
	{"v0.2", corpusV02},
	{"v0.3", corpusV03},
	{"v0.4", corpusV04},
	{"v0.6", corpusV06},
	{"v0.8", corpusV08},
}

// corpusWriter is what the parts of the script share: the home, the
// files they observe, and the loopback stand-ins for GitHub and the web.
type corpusWriter struct {
	t    *testing.T
	ctx  context.Context
	home string
	h    *helm.Home
	// opts are h's options: another Home on the same directory, with
	// other rules, shares its clock and ids.
	opts *helm.Options
	// env observes files: marks name paths relative to its Env.Dir, so
	// no temporary directory is stored.
	env *helm.ObserveOptions
	// ghSrv is the GitHub stand-in (internal/ghtest); ghRepo its
	// repository, holding issue #1 and pull request #2.
	ghSrv  *ghtest.Server
	ghRepo string
	// remote is env with the stand-ins: the GitHub runner talking to
	// ghSrv, and an HTTP client whose every connection goes to the web
	// stand-in, whatever the URL's host.
	remote *helm.ObserveOptions
}

// corpusPolicy refuses some of what the script tries: a push to main, a
// command with rm -rf, a merge nobody confirmed.
const corpusPolicy = `
[[rule]]
name = "nobody pushes to main"
action = "push"
branch = "main"
decision = "deny"

[[rule]]
name = "no rm -rf"
action = "observe-command"
args = "*rm -rf*"
decision = "deny"

[[rule]]
name = "merges need a person's yes"
action = "merge-pull-request"
decision = "confirm"
`

func newCorpusWriter(t *testing.T) *corpusWriter {
	t.Helper()
	work := t.TempDir()
	files := filepath.Join(work, "files")
	require.NoError(t, os.MkdirAll(files, 0o700))
	write := func(name, content string) {
		p := filepath.Join(files, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	}
	write("small.txt", "package widget\n\nfunc Init() {}\n")
	rng := rand.New(rand.NewPCG(1, 2))
	big := make([]byte, 96<<10) // compresses to more than the inline limit: goes to the pack
	for i := range big {
		big[i] = 'a' + byte(rng.IntN(26))
	}
	write("big.txt", string(big))
	// A Go project and a Rust one, for the project marks (v0.3).
	write("widgets/go.mod", "module example.com/widgets\n\ngo 1.26\n\nrequire golang.org/x/mod v0.30.0 // indirect\n")
	write("widgets/README.md", "# widgets\n\nWidgets that start.\n")
	write("widgets/widget.go", "// Package widget makes widgets.\npackage widget\n\n// Init starts a widget.\nfunc Init(c *Config) error {\n\tif c == nil {\n\t\treturn errNoConfig\n\t}\n\treturn c.start()\n}\n")
	write("widgets/internal/config/config.go", "// Package config reads a widget's configuration.\npackage config\n")
	write("bindings/Cargo.toml", "[package]\nname = \"widgets\"\nversion = \"0.1.0\"\nedition = \"2021\"\n")
	write("bindings/README.md", "# widgets (Rust)\n\nBindings to the Go widgets.\n")
	write("bindings/src/lib.rs", "pub fn init() {}\n")

	opts := deterministic(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC), time.Minute, "c0a9b5e1")
	opts.SegmentSize = 4 << 10 // several segments in the long voyage
	pol, err := policy.Parse([]byte(corpusPolicy), "policy.toml")
	require.NoError(t, err)
	opts.Policy = pol
	// The stand-ins answer on loopback ports that change from run to
	// run, and GitHub's answers name them (html_url): a rule hides them
	// before anything is stored, so that the script writes the same
	// bytes on every run. The process's environment is left out of the
	// redaction for the same reason.
	opts.Redaction = helm.Redaction{
		Environ:  []string{},
		Patterns: []redact.Pattern{{Name: "loopback-stand-in", Regexp: `https?://127\.0\.0\.1:[0-9]+`}},
	}
	home := filepath.Join(work, "home")
	h, err := helm.Open(home, opts)
	require.NoError(t, err)

	w := &corpusWriter{t: t, ctx: context.Background(), home: home, h: h, opts: opts,
		env: &helm.ObserveOptions{Env: &marks.Env{Dir: files}}, ghRepo: "octo/widgets"}

	srv := ghtest.NewServer(t)
	srv.AddRepo(w.ghRepo, "main")
	issue := srv.AddIssue(w.ghRepo, ghtest.Issue{Title: "Widget crashes at start", Body: "Init() panics with a nil config.", User: "dyreby", Labels: []string{"bug"}})
	srv.AddIssueComment(w.ghRepo, issue, "john-agent", "Reproduced on main.")
	pr := srv.AddPull(w.ghRepo, ghtest.PullRequest{
		Title: "Fix widget crash", Body: "Fixes #1: Init checks its config.", User: "ana-agent",
		Head: "fix-widget", HeadSHA: "abc1234def5678",
		Files: []ghtest.File{{Filename: "widget.go", Status: "modified", Additions: 3, Deletions: 0, Patch: "@@ -4,2 +4,5 @@\n func Init(c *Config) error {\n+\tif c == nil {\n+\t\treturn errNoConfig\n+\t}\n"}},
	})
	srv.AddCheckRun(w.ghRepo, "abc1234def5678", ghtest.CheckRun{Name: "test", Status: "completed", Conclusion: "success"})
	srv.AddIssueComment(w.ghRepo, pr, "dyreby", "Looks close.")
	srv.AddReviewComment(w.ghRepo, pr, ghtest.ReviewComment{User: "dyreby", Body: "errNoConfig is new?", Path: "widget.go", Line: 6})
	srv.AddReview(w.ghRepo, pr, ghtest.Review{User: "dyreby", State: "APPROVED", Body: "Thanks."})
	w.ghSrv = srv

	web := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		// A fixed Date: the server would stamp the time of the request.
		rw.Header().Set("Date", "Wed, 25 Nov 2026 12:00:00 GMT")
		if r.URL.Path != "/guide" {
			http.NotFound(rw, r)
			return
		}
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(rw, "Call widget.Init with a config; a nil one is refused.\n")
	}))
	t.Cleanup(web.Close)
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, web.Listener.Addr().String())
	}
	w.remote = &helm.ObserveOptions{Env: &marks.Env{
		Dir:        files,
		GitHub:     srv.Runner(t, ""),
		HTTPClient: &http.Client{Transport: &http.Transport{DialContext: dial}, Timeout: 30 * time.Second},
	}}
	return w
}

func (w *corpusWriter) must(err error) {
	w.t.Helper()
	require.NoError(w.t, err)
}

// mark returns m, failing the script on err.
func (w *corpusWriter) mark(m marks.Mark, err error) marks.Mark {
	w.t.Helper()
	w.must(err)
	return m
}

// observe observes m, failing the script on an error.
func (w *corpusWriter) observe(v *helm.Voyage, m marks.Mark, by logbook.Who, opts *helm.ObserveOptions) helm.Observed {
	w.t.Helper()
	o, err := v.Observe(w.ctx, m, by, opts)
	w.must(err)
	return o
}

// command runs a command mark as Observe would, and returns the
// observation with its wall-clock duration set to 0: the one part of a
// command's sighting that changes from run to run. The script records it
// (Record, BearingOptions.Observations) instead of observing it.
func (w *corpusWriter) command(dir string, argv ...string) helm.Observation {
	w.t.Helper()
	m, err := marks.NewCommand(dir, argv...)
	w.must(err)
	s, err := m.Observe(w.ctx, w.env.Env)
	w.must(err)
	s.(*sighting.Command).DurationMS = 0
	return helm.Observation{Mark: m, Sighting: s}
}

// save copies the home to out, with each voyage's export under
// out/exports/ID.jsonl and the views it must open to in
// out/views.golden.json.
func (w *corpusWriter) save(out string) {
	t, ctx := w.t, w.ctx
	require.NoError(t, os.MkdirAll(filepath.Dir(out), 0o755))
	require.NoError(t, os.CopyFS(out, os.DirFS(w.home)))
	list, err := w.h.List(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(out, "exports"), 0o755))
	for _, info := range list {
		v, err := w.h.Voyage(ctx, info.ID)
		require.NoError(t, err)
		var b strings.Builder
		require.NoError(t, exportEvents(ctx, &b, v))
		require.NoError(t, v.Close())
		require.NoError(t, os.WriteFile(filepath.Join(out, "exports", info.ID+".jsonl"), []byte(b.String()), 0o644))
	}
	golden := corpusViews(t, w.h)
	data, err := json.MarshalIndent(golden, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(out, "views.golden.json"), append(data, '\n'), 0o644))
}

// corpusV0: a completed voyage with a bearing, a challenge, an action
// and a large sighting; an active one, long enough for several segments,
// with a slate left open.
func corpusV0(w *corpusWriter) {
	ctx, h, env := w.ctx, w.h, w.env
	v, err := h.Start(ctx, "Resolve #42: fix widget crash", helm.ResolveIssue, who, nil)
	w.must(err)
	w.observe(v, w.mark(marks.NewFileContents("small.txt", "big.txt")), who, env)
	w.observe(v, w.mark(marks.NewContext("the widget crashes at start")), who, nil)
	_, err = v.TakeBearing(ctx, "Widget module has a null check missing in init().", who, nil)
	w.must(err)
	_, err = v.Challenge(ctx, 1, helm.Challenge{Feedback: "look again", Reading: "Init() dereferences a nil config.", Source: logbook.SourceUser}, who)
	w.must(err)
	_, err = v.Perform(ctx, &corpusAction{Message: "Fix null check"}, who, nil)
	w.must(err)
	w.must(v.Complete(ctx, logbook.OutcomeCompleted, "Fixed null check in widget init.", who))
	w.must(v.Close())

	v, err = h.Start(ctx, "Explore the widget module", helm.OpenWaters, who, nil)
	w.must(err)
	for i := range 40 {
		w.observe(v, w.mark(marks.NewContext(fmt.Sprintf("observation %d: %s", i, strings.Repeat("widget ", i%7+1)))), who, nil)
		if i%10 == 9 {
			_, err = v.TakeBearing(ctx, fmt.Sprintf("reading %d", i/10+1), who, nil)
			w.must(err)
		}
	}
	w.observe(v, w.mark(marks.NewContext("left on the slate")), who, nil)
	w.must(v.Close())
}

// corpusV010: evidence. A secret redacted before storing, a small and a
// large sighting jettisoned with a reason, and the log compacted: stub
// records in the chain, a hole in the pack.
func corpusV010(w *corpusWriter) {
	ctx, env := w.ctx, w.env
	v, err := w.h.Start(ctx, "Prune the evidence", helm.OpenWaters, who, nil)
	w.must(err)
	w.observe(v, w.mark(marks.NewContext("the token is ghp_0123456789abcdefghijABCDEFGHIJ012345")), who, nil)
	m5 := w.mark(marks.NewFileContents("small.txt"))
	w.observe(v, m5, who, env)
	m6 := w.mark(marks.NewFileContents("big.txt"))
	w.observe(v, m6, who, env)
	for _, rec := range v.Slate() {
		if rec.Key == m5.Key() || rec.Key == m6.Key() {
			w.must(v.Jettison(ctx, rec.Artifact, "holds a customer's data", who))
		}
	}
	rep, err := v.Compact(ctx)
	w.must(err)
	require.Equal(w.t, 2, rep.Artifacts)
	w.must(v.Close())
}

// corpusV02: a failed action between entries, and a voyage completed as
// blocked.
func corpusV02(w *corpusWriter) {
	ctx := w.ctx
	v, err := w.h.Start(ctx, "Land the widget fix", helm.ResolveIssue, who, nil)
	w.must(err)
	for i, step := range []string{"bearing", "fail", "bearing", "act", "bearing"} {
		switch step {
		case "bearing":
			w.observe(v, w.mark(marks.NewContext(fmt.Sprintf("step %d", i+1))), who, nil)
			_, err = v.TakeBearing(ctx, fmt.Sprintf("reading after step %d", i+1), who, nil)
			w.must(err)
		case "fail", "act":
			_, err = v.Perform(ctx, &corpusAction{Message: "step " + step, Fail: step == "fail"}, who, nil)
			if step == "fail" {
				require.Error(w.t, err)
			} else {
				w.must(err)
			}
		}
	}
	w.must(v.Complete(ctx, logbook.OutcomeBlocked, "Waiting for a review of the fix.", who))
	w.must(v.Close())
}

// The crew of the v0.3 part: a lead, an agent, and a reviewer who only
// judges.
var (
	corpusLead  = logbook.Who{Identity: "maya", Role: "lead", Method: "human"}
	corpusAgent = logbook.Who{Identity: "ana-agent", Role: "coder", Method: "claude-code"}
	corpusJudge = logbook.Who{Identity: "rita-reviewer", Role: "reviewer", Method: "gpt-5"}
)

// corpusV03: every event type, every mark kind and every lifecycle path
// of the crew record. A lead voyage started in a repository (left
// active) with two sub-voyages: one blocked, resumed and completed, then
// judged; one completed as partial. Besides them a failed voyage and a
// cancelled one. The guard refuses a push to main, a command with rm -rf
// and a merge until it is confirmed. GitHub marks are observed through
// the GitHub stand-in, web marks through the web stand-in, both on
// loopback.
func corpusV03(w *corpusWriter) {
	ctx, t, remote := w.ctx, w.t, w.remote
	lead, err := w.h.Start(ctx, "Resolve octo/widgets#1: the widget crashes at start", helm.ResolveIssue, corpusLead, &helm.StartOptions{Repo: w.ghRepo, Dir: "/src/widgets", Base: "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c", Branch: "main"})

	w.must(err)
	w.observe(lead, w.mark(marks.NewGitHubIssue(w.ghRepo, 1, "summary", "comments")), corpusLead, remote)
	w.observe(lead, w.mark(marks.NewGitHubRepo(w.ghRepo)), corpusLead, remote)
	stale := w.mark(marks.NewContext("CI was red on main yesterday"))
	w.observe(lead, stale, corpusLead, nil)
	w.must(lead.Erase(ctx, stale.Key(), corpusLead)) // mark-erased
	_, err = lead.TakeBearing(ctx, "Issue #1 is the crash; pull request #2 is the candidate fix.", corpusLead, nil)
	w.must(err)
	_, err = lead.Note(ctx, "ana-agent takes the fix, in a sub-voyage; the Rust bindings in another.", corpusLead)
	w.must(err)

	// The guard: a push to main and a command with rm -rf refused, a
	// merge refused until a person confirms it.
	_, err = lead.Perform(ctx, &corpusPush{Branch: "main"}, corpusAgent, nil)
	require.ErrorIs(t, err, helm.ErrRefused)
	_, err = lead.Observe(ctx, w.mark(marks.NewCommand("widgets", "sh", "-c", "rm -rf build")), corpusAgent, w.env)
	require.ErrorIs(t, err, helm.ErrRefused)
	merge := &corpusMerge{Number: 2}
	_, err = lead.Perform(ctx, merge, corpusAgent, &helm.PerformOptions{Why: "the review approved it"})
	require.ErrorIs(t, err, helm.ErrNeedsConfirmation)

	// Sub-voyage 1: blocked, resumed, completed, judged.
	fix, err := w.h.Start(ctx, "Fix the widget crash", helm.ResolveIssue, corpusAgent, &helm.StartOptions{Parent: lead.Info().ID, Repo: w.ghRepo, Base: "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c", Branch: "fix-widget"})

	w.must(err)
	project := w.observe(fix, w.mark(marks.NewGoProject("widgets")), corpusAgent, w.env)
	// big.txt takes the sighting to the pack; widget.go's stays inline.
	both := w.observe(fix, w.mark(marks.NewFileContents("small.txt", "big.txt")), corpusAgent, w.env)
	w.observe(fix, w.mark(marks.NewWeb("http://docs.widgets.test/guide")), corpusAgent, remote)
	w.must(fix.Wipe(ctx, corpusAgent)) // slate-wiped: a false start
	w.observe(fix, w.mark(marks.NewFileContents("widgets/widget.go")), corpusAgent, w.env)
	w.observe(fix, w.mark(marks.NewGitHubPR(w.ghRepo, 2, "summary", "files", "checks", "diff", "comments", "reviews")), corpusAgent, remote)
	_, err = fix.TakeBearing(ctx, "Init() dereferences a nil config; pull request #2 adds the check.", corpusAgent,
		&helm.BearingOptions{Observations: []helm.Observation{w.command("widgets", "cat", "widget.go")}, Source: logbook.SourceAgent})
	w.must(err)
	_, err = fix.Challenge(ctx, 1, helm.Challenge{Feedback: "the check returns an error now; say so",
		Reading: "Init() dereferences a nil config; pull request #2 returns errNoConfig instead."}, corpusLead)
	w.must(err)
	_, err = fix.Perform(ctx, &corpusAction{Message: "Check the config for nil in Init"}, corpusAgent, &helm.PerformOptions{Why: "the bearing found the nil dereference"})

	w.must(err)
	_, err = fix.Perform(ctx, &corpusPush{Branch: "fix-widget", Fail: true}, corpusAgent, nil)
	var aerr *helm.ActionError
	require.ErrorAs(t, err, &aerr)
	w.must(fix.Complete(ctx, logbook.OutcomeBlocked, "The push was rejected; waiting for the lead.", corpusAgent))
	w.must(fix.Resume(ctx, "the lead rebased the branch", corpusLead))
	_, err = fix.Perform(ctx, &corpusPush{Branch: "fix-widget"}, corpusAgent, nil)
	w.must(err)
	// Evidence: the large sighting reduced to a summary, the project's
	// jettisoned; the others stay.
	_, err = fix.Reduce(ctx, both.Record.Artifact, helm.Reduction{
		Summary: &sighting.Context{Description: "small.txt declares Init; big.txt is noise"}, Method: "human"}, corpusAgent)
	w.must(err)
	w.must(fix.Jettison(ctx, project.Record.Artifact, "stale: the tree changed since", corpusAgent))
	w.must(fix.Complete(ctx, logbook.OutcomeCompleted, "Init checks its config; pushed to fix-widget.", corpusAgent))
	_, err = fix.Judge(ctx, logbook.Judgement{Dimension: "correctness", Score: 8, Evidence: []int{1, 2, 4},
		Text: "The fix is right; the first push should have been rebased."}, corpusJudge)
	w.must(err)
	w.must(fix.Close())

	// The lead merges, confirmed, and leaves a tree on the slate: active.
	_, err = lead.Perform(ctx, merge, corpusLead, &helm.PerformOptions{Why: "maya agreed", Confirmed: true})
	w.must(err)

	// Sub-voyage 2: partial.
	port, err := w.h.Start(ctx, "Port the nil check to the Rust bindings", helm.OpenWaters, corpusAgent, &helm.StartOptions{Parent: lead.Info().ID})

	w.must(err)
	w.observe(port, w.mark(marks.NewRustProject("bindings")), corpusAgent, w.env)
	_, err = port.Record(ctx, w.command("bindings", "sh", "-c", "echo 'error[E0425]: cannot find value `config`' >&2; exit 101"), corpusAgent)
	w.must(err)
	_, err = port.TakeBearing(ctx, "The bindings do not build: config is not passed through.", corpusAgent, nil)
	w.must(err)
	w.must(port.Complete(ctx, logbook.OutcomePartial, "The Go fix landed; the bindings still need the config.", corpusAgent))
	w.must(port.Close())

	w.observe(lead, w.mark(marks.NewDirectoryTree("widgets", &marks.DirectoryTreeOptions{Skip: []string{"internal"}})), corpusLead, w.env)
	w.must(lead.Close())

	// Failed.
	v, err := w.h.Start(ctx, "Backport the fix to v1", helm.ResolveIssue, who, nil)
	w.must(err)
	w.observe(v, w.mark(marks.NewContext("v1 has no Config type")), who, nil)
	_, err = v.TakeBearing(ctx, "The fix does not apply to v1.", who, nil)
	w.must(err)
	_, err = v.Perform(ctx, &corpusAction{Message: "Backport the nil check", Fail: true}, who, nil)
	require.ErrorAs(t, err, &aerr)
	w.must(v.Complete(ctx, logbook.OutcomeFailed, "v1 cannot take the fix.", who))
	w.must(v.Close())

	// Cancelled.
	v, err = w.h.Start(ctx, "Rewrite the widgets in Rust", helm.OpenWaters, who, nil)
	w.must(err)
	w.observe(v, w.mark(marks.NewWeb("http://docs.widgets.test/rust")), who, remote) // 404
	_, err = v.Note(ctx, "No one asked for it.", who)
	w.must(err)
	w.must(v.Complete(ctx, logbook.OutcomeCancelled, "Not worth it.", who))
	w.must(v.Close())
}

// corpusV04: voyages with working trees of their own. A lead in a
// repository and a sub-voyage in its own working tree on its own branch,
// completed, whose working tree is then removed with its changes
// (forced); the lead's, clean, removed after it completes.
func corpusV04(w *corpusWriter) {
	ctx := w.ctx
	lead, err := w.h.Start(ctx, "Split the widget config loader", helm.ResolveIssue, corpusLead, &helm.StartOptions{Repo: w.ghRepo, Dir: "/src/widgets", Base: "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d", Branch: "helm/lead",
		Worktree: "/src/widgets-lead"})

	w.must(err)
	sub, err := w.h.Start(ctx, "Move the loader to its own file", helm.ResolveIssue, corpusAgent, &helm.StartOptions{Parent: lead.Info().ID, Repo: w.ghRepo, Dir: "/src/widgets", Base: "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d",
		Branch: "helm/loader", Worktree: "/src/widgets-loader"})

	w.must(err)
	w.observe(sub, w.mark(marks.NewContext("the loader is 400 lines of widget.go")), corpusAgent, nil)
	_, err = sub.Perform(ctx, &corpusAction{Message: "Move the loader to loader.go"}, corpusAgent, &helm.PerformOptions{Why: "widget.go is too long to review"})

	w.must(err)
	w.must(sub.Complete(ctx, logbook.OutcomeCompleted, "loader.go holds the loader.", corpusAgent))
	w.must(sub.RemoveWorktree(ctx, corpusAgent, &helm.RemoveWorktreeOptions{Force: true}))
	w.must(sub.Close())
	_, err = lead.Note(ctx, "The loader moved; nothing else to split.", corpusLead)
	w.must(err)
	w.must(lead.Complete(ctx, logbook.OutcomeCompleted, "Split done.", corpusLead))
	w.must(lead.RemoveWorktree(ctx, corpusLead, &helm.RemoveWorktreeOptions{}))
	w.must(lead.Close())
}

// corpusV06: the guard rules a voyage ran under (v0.6): recorded with
// its start, and a change of rules mid-voyage (a policy-changed entry),
// then no rules at all.
func corpusV06(w *corpusWriter) {
	ctx := w.ctx
	v, err := w.h.Start(ctx, "Work while the rules change", helm.OpenWaters, corpusLead, nil)
	w.must(err)
	_, err = v.Note(ctx, "Started under the home's rules.", corpusLead)
	w.must(err)
	id := v.Info().ID
	w.must(v.Close())

	tighter, err := policy.Parse([]byte(corpusPolicy+"\n[[rule]]\nname = \"no tags\"\naction = \"push\"\nref = \"refs/tags/*\"\ndecision = \"deny\"\n"), "/etc/helm/policy.toml")
	w.must(err)
	for _, pol := range []*policy.Policy{policy.Stack(tighter, w.opts.Policy), nil} {
		opts := *w.opts
		opts.Policy = pol // nil: the home's policy.toml, and it has none
		h, err := helm.Open(w.home, &opts)
		w.must(err)
		v, err := h.Voyage(ctx, id)
		w.must(err)
		_, err = v.Note(ctx, "Written under other rules.", corpusAgent)
		w.must(err)
		w.must(v.Close())
	}
}

// corpusV08: a Claude Code session's voyage (its session key stored with
// the start) and a subagent's sub-voyage: a prompt, tool calls with their
// decisions and results (one long enough to be stowed), a denied call,
// usage, and the session's end.
func corpusV08(w *corpusWriter) {
	ctx := w.ctx
	v, err := w.h.Start(ctx, "claude-code session 5c1e", helm.OpenWaters, corpusAgent, &helm.StartOptions{Session: "claude-code:5c1e"})
	w.must(err)
	sub, err := w.h.Start(ctx, "claude-code subagent a-1 (Explore)", helm.OpenWaters, corpusAgent,
		&helm.StartOptions{Parent: v.Info().ID, Session: "claude-code:5c1e/a-1"})
	w.must(err)
	step := func(v *helm.Voyage, s logbook.Step) {
		s.Agent = "claude-code"
		if s.Session == "" {
			s.Session = "5c1e"
		}
		_, err := v.Step(ctx, s, corpusAgent)
		w.must(err)
	}
	step(v, logbook.Step{Kind: logbook.StepSession, Text: "startup"})
	step(v, logbook.Step{Kind: logbook.StepPrompt, Text: "make the tests pass",
		Usage: &logbook.Usage{Model: "claude-sonnet-4", InputTokens: 1200, OutputTokens: 80, CacheReadTokens: 4000, CostUSD: 0.0125, Duration: 1500 * time.Millisecond}})
	call := logbook.Step{Kind: logbook.StepTool, ID: "toolu_01", Tool: "Bash", Text: "go test ./...",
		Input: json.RawMessage(`{"command":"go test ./..."}`), Decision: &logbook.StepDecision{Verdict: "allow"}}
	step(v, call)
	call.Result = &logbook.StepResult{Output: strings.Repeat("=== RUN   TestX\n--- PASS: TestX (0.00s)\n", 200), Duration: 2300 * time.Millisecond}
	step(v, call)
	step(v, logbook.Step{Kind: logbook.StepTool, ID: "toolu_02", Tool: "Bash", Text: "rm -r -f build",
		Input:    json.RawMessage(`{"command":"rm -r -f build"}`),
		Decision: &logbook.StepDecision{Verdict: "deny", Rule: `"no rm -rf" (policy.toml:3)`, Reason: "recursive deletes need a person"}})
	step(v, logbook.Step{Kind: logbook.StepSubagent, Text: "Explore", Voyage: sub.Info().ID})
	step(sub, logbook.Step{Kind: logbook.StepTool, Session: "5c1e/a-1", ID: "toolu_03", Tool: "Read", Text: "README.md",
		Input: json.RawMessage(`{"file_path":"README.md"}`), Result: &logbook.StepResult{Output: "# widgets", Duration: 3 * time.Millisecond}})
	w.must(sub.Complete(ctx, logbook.OutcomeCompleted, "explored", corpusAgent))
	w.must(sub.Close())
	step(v, logbook.Step{Kind: logbook.StepSubagent, Text: "Explore", Voyage: sub.Info().ID, Result: &logbook.StepResult{Output: "explored"}})
	step(v, logbook.Step{Kind: logbook.StepSession, Text: "logout", Result: &logbook.StepResult{}})
	w.must(v.Complete(ctx, logbook.OutcomePartial, "session ended: logout", corpusAgent))
	w.must(v.Close())
}

// corpusPush is a recorded push that touches nothing.
type corpusPush struct {
	Branch string `json:"branch"`
	Fail   bool   `json:"fail,omitempty"` // the remote rejects it
}

func (a *corpusPush) Kind() string { return "push" }
func (a *corpusPush) Target(context.Context) (logbook.ActionTarget, error) {
	return logbook.ActionTarget{Repo: "octo/widgets", Branch: a.Branch, Args: []string{"origin", a.Branch}}, nil
}
func (a *corpusPush) Perform(context.Context) (logbook.ActionResult, error) {
	if a.Fail {
		return logbook.ActionResult{}, fmt.Errorf("! [rejected] %s -> %s (non-fast-forward)", a.Branch, a.Branch)
	}
	return logbook.ActionResult{Branch: a.Branch, SHA: "abc1234def5678"}, nil
}

// corpusMerge is a recorded merge of a pull request that touches nothing.
type corpusMerge struct {
	Number int `json:"number"`
}

func (a *corpusMerge) Kind() string { return "merge-pull-request" }
func (a *corpusMerge) Target(context.Context) (logbook.ActionTarget, error) {
	return logbook.ActionTarget{Repo: "octo/widgets", Branch: "main", Args: []string{fmt.Sprint(a.Number)}}, nil
}
func (a *corpusMerge) Perform(context.Context) (logbook.ActionResult, error) {
	return logbook.ActionResult{Number: a.Number, SHA: "fedcba9876543210"}, nil
}

// corpusView is what a corpus voyage must still show.
type corpusView struct {
	Info      helm.VoyageInfo             `json:"info"`
	Story     string                      `json:"story"`
	Slate     []logbook.ObservationRecord `json:"slate"`
	Artifacts map[string]string           `json:"artifacts"` // hash -> SHA-256 of the bytes Artifact returns
}

func corpusViews(t *testing.T, h *helm.Home) map[string]corpusView {
	t.Helper()
	ctx := context.Background()
	list, err := h.List(ctx, nil)
	require.NoError(t, err)
	out := map[string]corpusView{}
	for _, info := range list {
		v, err := h.Voyage(ctx, info.ID)
		require.NoError(t, err)
		var story strings.Builder
		require.NoError(t, writeStory(ctx, v, &story))
		cv := corpusView{Info: v.Info(), Story: story.String(), Slate: v.Slate(), Artifacts: map[string]string{}}
		for _, a := range artifactsOf(t, v) {
			if a.Status != logbook.ArtifactStowed {
				cv.Artifacts[a.Hash] = string(a.Status)
				continue
			}
			data, err := readArtifact(ctx, v, a.Hash)
			require.NoError(t, err)
			sum := sha256.Sum256(data)
			cv.Artifacts[a.Hash] = hex.EncodeToString(sum[:])
		}
		require.NoError(t, v.Close())
		out[info.ID] = cv
	}
	return out
}

// copyTree copies a corpus home to a temporary directory, so that tests
// may write to it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "home")
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	return dst
}

func TestCorpusVoyagesOpenVerifyAndAcceptWrites(t *testing.T) {
	entries, err := filepath.Glob(filepath.Join("testdata", "voyages", "*", "views.golden.json"))
	require.NoError(t, err)
	require.NotEmpty(t, entries, "the corpus is empty")
	ctx := context.Background()
	for _, g := range entries {
		dir := filepath.Dir(g)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			data, err := os.ReadFile(g)
			require.NoError(t, err)
			var want map[string]corpusView
			require.NoError(t, json.Unmarshal(data, &want))
			home := copyTree(t, dir)
			h, err := helm.Open(home, nil)
			require.NoError(t, err)
			got, err := json.MarshalIndent(corpusViews(t, h), "", "  ")
			require.NoError(t, err)
			wantJSON, gotJSON := hometest.AsOf(t, data, got)
			assert.JSONEq(t, wantJSON, gotJSON, "views of the corpus voyages")
			ids := make([]string, 0, len(want))
			for id := range want {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			for _, id := range ids {
				rep, err := h.Verify(ctx, id, nil)
				require.NoError(t, err)
				assert.True(t, rep.OK(), "verify %s: %v", id, rep.Problems)
			}
			// A later version keeps writing to an old voyage.
			for _, id := range ids {
				v, err := h.Voyage(ctx, id)
				require.NoError(t, err)
				// Actions recorded before undo recorded no inverse.
				for _, e := range entriesOf(t, v) {
					if e.Action != nil && e.Action.Status == logbook.ActionPerformed {
						_, err := v.Undoable(ctx, e.N)
						assert.ErrorIs(t, err, helm.ErrNotUndoable)
						assert.ErrorContains(t, err, "records no way to take it back (it was recorded by a helm before undo")
					}
				}
				if v.Info().Status.Resumable() {
					// A voyage paused by an earlier version is resumed by this one.
					require.NoError(t, v.Resume(ctx, "resumed by a later version", who))
					require.Equal(t, logbook.StatusActive, v.Info().Status)
				}
				if v.Info().Status != logbook.StatusActive {
					require.NoError(t, v.Close())
					continue
				}
				m, err := marks.NewContext("written by a later version")
				require.NoError(t, err)
				_, err = v.Observe(ctx, m, who, nil)
				require.NoError(t, err)
				_, err = v.TakeBearing(ctx, "still readable", who, nil)
				require.NoError(t, err)
				require.NoError(t, v.Close())
				rep, err := h.Verify(ctx, id, nil)
				require.NoError(t, err)
				assert.True(t, rep.OK(), "verify %s after a write: %v", id, rep.Problems)
				v, err = h.Voyage(ctx, id)
				require.NoError(t, err)
				n := len(want[id].Slate)
				entries := entriesOf(t, v)
				require.NotEmpty(t, entries)
				last := entries[len(entries)-1]
				require.NotNil(t, last.Bearing)
				assert.Equal(t, "still readable", last.Bearing.Reading.Text)
				assert.Len(t, last.Bearing.Observations, n+1)
				require.NoError(t, v.Close())
			}
			// The corpus itself is never written by the test.
			require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				require.NoError(t, err)
				if d.Type().IsRegular() {
					assert.False(t, strings.Contains(d.Name(), ".tmp"), "stray file %s in the corpus", p)
				}
				return nil
			}))
		})
	}
}

// A voyage written in segment format 2 moves onto the stored BLAKE3 chain
// by a rechain: its head is the same chain over the same records (the
// rechain's record included), now checked from its format-4 segment.
func TestCorpusFormat2VoyageRechainsOntoTheBLAKE3Chain(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join("testdata", "voyages", "v0.5-2026-11-27")
	data, err := os.ReadFile(filepath.Join(src, "views.golden.json"))
	require.NoError(t, err)
	var want map[string]corpusView
	require.NoError(t, json.Unmarshal(data, &want))
	require.NotEmpty(t, want)
	home := copyTree(t, src)
	for id := range want {
		events := filepath.Join(home, "voyages", id, "events")
		before, err := segment.Verify(ctx, events, &segment.Options{Identity: id})
		require.NoError(t, err)
		require.Equal(t, "crc32c", before.Chain.Kind, "the corpus entry is format 2")
		l, err := segment.Open(ctx, events, &segment.Options{Identity: id})
		require.NoError(t, err)
		h, err := l.Head(ctx)
		require.NoError(t, err)
		require.Equal(t, before.Head, h)
		rec := []byte(`{"rechained":"` + h.String() + `"}`)
		first, err := l.Rechain(ctx, func(*segment.Tx, uint32) ([][]byte, error) { return [][]byte{rec}, nil })
		require.NoError(t, err)
		require.NoError(t, l.Close())

		after, err := segment.Verify(ctx, events, &segment.Options{Identity: id})
		require.NoError(t, err)
		assert.Equal(t, "blake3", after.Chain.Kind)
		assert.Equal(t, first, after.Chain.Since)
		assert.Equal(t, chain.Head{Seq: first, Hash: chain.Link(h.Hash, first, rec)}, after.Head)
	}
}
