// Package webtest builds the home the web UI's tests look at: a lead's
// voyage with two agents' sub-voyages, every kind of logbook entry
// (bearings sealing file contents, a directory tree, a command's output
// and a context; a challenged reading; a performed, a failed and a
// refused action; a note; a judgement), observations left on the slate,
// and a voyage whose stored text is an XSS payload. The page tests of
// package web and the browser tests of the integration module share it.
package webtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/policy"
	"github.com/helmlog/helm/replay"
	"github.com/helmlog/helm/sighting"
)

// XSS is the payload stored as a reading, an intent and a note: every page
// must show it as text.
const XSS = `<script>alert(1)</script>`

// Identities of the seeded crew.
var (
	Ann   = logbook.Who{Identity: "ann", Role: "lead", Method: "human"}
	Bob   = logbook.Who{Identity: "bob", Role: "coder", Method: "claude"}
	Carol = logbook.Who{Identity: "carol", Role: "tester", Method: "gpt"}
	Dave  = logbook.Who{Identity: "dave", Role: "judge", Method: "human"}
	Bot   = logbook.Who{Identity: "merge-bot", Role: "release", Method: "claude"}
)

// Seeded names what Seed recorded.
type Seeded struct {
	// Dir is the helm home.
	Dir string
	// Main is the lead's voyage, still active; Bob and Carol its
	// sub-voyages; Hostile the voyage whose intent is XSS.
	Main, Bob, Carol, Hostile string
	// Work is the directory the observations looked at.
	Work string
	// Reading is the first reading of the main voyage's bearing 1, and
	// Challenged the reading that replaced it.
	Reading, Challenged string
	// Entries is how many logbook entries the main voyage holds.
	Entries int
}

// The guard rule that refuses the bot's merge.
const rules = `[[rule]]
name = "agents may not merge"
action = "merge-pull-request"
actor = "agent"
decision = "deny"
`

// Seed records the voyages into a new home in dir (which must not hold
// one), with a deterministic clock and ids, and a work directory beside
// it for the observations.
func Seed(ctx context.Context, dir string) (*Seeded, error) {
	work := filepath.Join(dir, "work")
	files := map[string]string{
		"widget/init.go":      "package widget\n\n// Init sets the widget up from its config.\nfunc Init(c *Config) *Widget {\n\treturn &Widget{name: c.Name} // crashes on a nil config\n}\n",
		"widget/init_test.go": "package widget\n\nimport \"testing\"\n\nfunc TestInitNil(t *testing.T) { Init(nil) }\n",
		"README.md":           "# widgets\n\n" + XSS + " is not run here.\n",
		"go.mod":              "module example.com/widgets\n\ngo 1.26\n",
	}
	for name, text := range files {
		p := filepath.Join(work, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	pol, err := policy.Parse([]byte(rules), "policy.toml")
	if err != nil {
		return nil, err
	}
	opts := replay.Deterministic(time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC), 7*time.Second, "5e7e0000")
	opts.Policy = pol
	opts.NoSync = true
	var ids atomic.Int64 // ids whose first 8 digits differ, as random ones do
	opts.NewID = func() uuid.UUID {
		n := ids.Add(1)
		return uuid.MustParse(fmt.Sprintf("%08x-0000-4000-8000-%012d", 0x5e7e0000+n*0x1111, n))
	}
	home := filepath.Join(dir, "home")
	// The rules are the home's own too, so that another handle on it
	// (helm.Open(home, nil)) works under the same rules.
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(home, helm.PolicyFile), []byte(rules), 0o600); err != nil {
		return nil, err
	}
	h, err := helm.Open(home, opts)
	if err != nil {
		return nil, err
	}
	s := &Seeded{Dir: home, Work: work,
		Reading:    "Init dereferences a nil widget.",
		Challenged: "Init dereferences the config without checking it for nil."}
	env := &helm.ObserveOptions{Env: &marks.Env{Dir: work}}
	r := &recorder{ctx: ctx}

	main := r.start(h, "Resolve #42: widget crashes on a nil config", helm.ResolveIssue, Ann, "")
	if r.err != nil {
		return nil, r.err
	}
	defer main.Close()
	s.Main = main.ID()
	r.observe(main, must(marks.NewContext("crash report: nil pointer dereference in widget.Init")), Ann, env)
	r.observe(main, must(marks.NewFileContents("widget/init.go", "go.mod")), Ann, env)
	r.observe(main, must(marks.NewDirectoryTree(".", nil)), Ann, env)
	exit := 1
	r.record(main, helm.Observation{
		Mark: must(marks.NewCommand("", "go", "test", "./widget")),
		Sighting: &sighting.Command{ExitCode: &exit, DurationMS: 1834,
			Stdout: "--- FAIL: TestInitNil (0.00s)\npanic: runtime error: invalid memory address or nil pointer dereference\nFAIL\texample.com/widgets/widget\t0.012s\n",
			Stderr: "exit status 1\n"},
	}, Ann)
	r.bearing(main, s.Reading, Ann)
	r.challenge(main, 1, helm.Challenge{Feedback: "the widget is fine; the config is what is nil", Reading: s.Challenged}, Ann)

	bob := r.start(h, "Fix the nil dereference in widget.Init", helm.OpenWaters, Bob, s.Main)
	carol := r.start(h, "Regression test for #42", helm.OpenWaters, Carol, s.Main)
	if r.err != nil {
		return nil, r.err
	}
	defer bob.Close()
	defer carol.Close()
	s.Bob, s.Carol = bob.ID(), carol.ID()
	r.observe(bob, must(marks.NewFileContents("widget/init.go")), Bob, env)
	r.bearing(bob, XSS+" A nil check in Init fixes it.", Bob)
	r.perform(bob, &Act{Name: "commit", Message: "Check for a nil config in Init", Result: logbook.ActionResult{SHA: "a92aad3f0c1e5b7d"}}, Bob)
	r.perform(bob, &Act{Name: "create-pull-request", Title: "Fix widget crash on a nil config",
		Result: logbook.ActionResult{Number: 45, URL: "https://github.com/octo/widgets/pull/45"}}, Bob)
	r.note(carol, "Writing TestInitNil; it fails without bob's fix.", Carol)
	r.observe(carol, must(marks.NewFileContents("widget/init_test.go")), Carol, env)
	r.bearing(carol, "TestInitNil reproduces the crash.", Carol)
	r.complete(bob, logbook.OutcomeCompleted, "Init checks its config for nil.", Bob)
	r.complete(carol, logbook.OutcomeCompleted, "TestInitNil passes with the fix.", Carol)
	if r.err == nil {
		_, err := bob.Judge(ctx, logbook.Judgement{Score: 8, Dimension: "correctness", Evidence: []int{1, 2}, Text: "Minimal fix, tested."}, Dave)
		r.keep(err)
	}

	r.perform(main, &Act{Name: "push", Branch: "fix-widget", Fail: "remote rejected: non-fast-forward (fetch first)\nhint: Updates were rejected"}, Ann)
	r.perform(main, &Act{Name: "merge-pull-request", Number: 45}, Bot) // refused by the guard
	r.note(main, "Waiting for a review of fix-widget.", Ann)
	r.observe(main, must(marks.NewContext("the crash happens on ARM builds only")), Ann, env)
	r.observe(main, must(marks.NewFileContents("README.md")), Ann, env)

	hostile := r.start(h, XSS, helm.OpenWaters, logbook.Who{Identity: "mallory", Role: "intruder", Method: "human"}, "")
	if r.err != nil {
		return nil, r.err
	}
	defer hostile.Close()
	s.Hostile = hostile.ID()
	r.note(hostile, `<img src=x onerror=alert(2)> and `+XSS, logbook.Who{Identity: "mallory", Role: "intruder", Method: "human"})
	r.complete(hostile, logbook.OutcomeFailed, XSS, logbook.Who{Identity: "mallory", Role: "intruder", Method: "human"})
	if r.err != nil {
		return nil, r.err
	}
	s.Entries = main.Info().Counts.Entries
	return s, nil
}

// Damage flips a byte near the end of the voyage id's event log in home,
// inside its last acknowledged unit: opening and listing the voyage then
// report damage.
func Damage(home, id string) error {
	segs, err := filepath.Glob(filepath.Join(home, "voyages", id, "events", "*.seg"))
	if err != nil || len(segs) == 0 {
		return fmt.Errorf("damage voyage %s: no segment (%v)", id, err)
	}
	p := segs[len(segs)-1]
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	data[len(data)-20] ^= 0x40
	return os.WriteFile(p, data, 0o600)
}

// Act is an action that records what it is given: a result, or a
// failure. The seeded voyages perform it instead of git and gh.
type Act struct {
	Name    string               `json:"-"`
	Message string               `json:"message,omitempty"`
	Title   string               `json:"title,omitempty"`
	Branch  string               `json:"branch,omitempty"`
	Number  int                  `json:"number,omitempty"`
	Result  logbook.ActionResult `json:"-"`
	Fail    string               `json:"-"`
}

// Kind names the action.
func (a *Act) Kind() string { return a.Name }

// Perform returns the result or the failure it was given.
func (a *Act) Perform(context.Context) (logbook.ActionResult, error) {
	if a.Fail != "" {
		return logbook.ActionResult{}, errors.New(a.Fail)
	}
	return a.Result, nil
}

// recorder records the seeded changes, keeping the first unexpected error.
type recorder struct {
	ctx context.Context
	err error
}

func (r *recorder) keep(err error) {
	if r.err == nil && err != nil {
		r.err = err
	}
}

func (r *recorder) start(h *helm.Home, intent string, kind helm.Kind, who logbook.Who, parent string) *helm.Voyage {
	if r.err != nil {
		return nil
	}
	v, err := h.Start(r.ctx, intent, kind, who, &helm.StartOptions{Parent: parent})
	r.keep(err)
	return v
}

func (r *recorder) observe(v *helm.Voyage, m marks.Mark, who logbook.Who, opts *helm.ObserveOptions) {
	if r.err == nil {
		_, err := v.Observe(r.ctx, m, who, opts)
		r.keep(err)
	}
}

func (r *recorder) record(v *helm.Voyage, o helm.Observation, who logbook.Who) {
	if r.err == nil {
		_, err := v.Record(r.ctx, o, who)
		r.keep(err)
	}
}

func (r *recorder) bearing(v *helm.Voyage, reading string, who logbook.Who) {
	if r.err == nil {
		_, err := v.TakeBearing(r.ctx, reading, who, nil)
		r.keep(err)
	}
}

func (r *recorder) challenge(v *helm.Voyage, n int, c helm.Challenge, who logbook.Who) {
	if r.err == nil {
		_, err := v.Challenge(r.ctx, n, c, who)
		r.keep(err)
	}
}

// perform performs a; a failure or a refusal is what the seed wants,
// recorded in the logbook.
func (r *recorder) perform(v *helm.Voyage, a *Act, who logbook.Who) {
	if r.err != nil {
		return
	}
	_, err := v.Perform(r.ctx, a, who, nil)
	var ae *helm.ActionError
	if errors.As(err, &ae) || errors.Is(err, helm.ErrRefused) {
		err = nil
	}
	r.keep(err)
}

func (r *recorder) note(v *helm.Voyage, text string, who logbook.Who) {
	if r.err == nil {
		_, err := v.Note(r.ctx, text, who)
		r.keep(err)
	}
}

func (r *recorder) complete(v *helm.Voyage, o logbook.Outcome, summary string, who logbook.Who) {
	if r.err == nil {
		r.keep(v.Complete(r.ctx, o, summary, who))
	}
}

func must[M marks.Mark](m M, err error) M {
	if err != nil {
		panic(err)
	}
	return m
}
