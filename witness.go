package helm

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/internal/witnessline"
	"github.com/helmlog/helm/runner"
	"github.com/helmlog/helm/segment"
)

// VerifyOptions give Verify witnesses: heads of the voyage's chain held
// outside the home, which the recorded party cannot rewrite. Verify checks
// that each is still a prefix of the log: any edit, truncation or
// rollback of a record at or below a witnessed head is damage naming the
// witness. A zero VerifyOptions (or nil) checks the home alone.
type VerifyOptions struct {
	// Heads are heads as Voyage.Head returns them (chain.Parse reads
	// them as chain.Head prints them).
	Heads []chain.Head
	// Repositories are local git repositories: every commit reachable
	// from any of their refs whose message holds a Helm-Voyage line
	// naming the voyage is a witness. Nothing is fetched.
	Repositories []string
}

// WitnessReport is one witness Verify checked: the head it holds, and
// where it was found (a commit of a repository, or given). Problem is
// what the log says against it ("" when the log agrees); Malformed is a
// Helm-Voyage line that does not parse, which is listed and not checked.
type WitnessReport struct {
	Head       chain.Head `json:"head"`
	Repository string     `json:"repository,omitempty"`
	Commit     string     `json:"commit,omitempty"`
	Problem    string     `json:"problem,omitempty"`
	Malformed  string     `json:"malformed,omitempty"`
}

// name names the witness in messages: "commit SHA in REPO" or "the given
// head SEQ:HEX".
func (w WitnessReport) name() string {
	if w.Commit != "" {
		return "commit " + w.Commit + " in " + w.Repository
	}
	return "the given head " + w.Head.String()
}

// refuseWitnessLine refuses a Witnessed action whose parameters (params,
// as recorded) hold, in any text (a commit message, a title, a body), a
// Helm-Voyage line (witnessline's rule, which verify reads by) that
// names voyage id or does not parse. The line naming the voyage is
// helm's to write: one the caller wrote would stand beside helm's, and
// with a head the log never had it makes an honest log verify as
// tampered; one that does not parse is listed by verify as a witness it
// cannot read. A well-formed line naming another voyage is that voyage's
// witness (a squashed message may carry one): verify of this voyage
// ignores it. The error wraps ErrInvalid; it comes before anything is
// recorded or run.
func refuseWitnessLine(a Action, params []byte, id string) error {
	if _, ok := a.(Witnessed); !ok {
		return nil
	}
	why, err := witnessline.Refusal(params, id)
	if err != nil {
		return fmt.Errorf("%w: read parameters: %v", ErrInvalid, err)
	}
	if why != "" {
		return fmt.Errorf("%w: %s", ErrInvalid, why)
	}
	return nil
}

// RepositoryReport is a witness repository Verify read (VerifyOptions):
// its path, and how many Helm-Voyage lines naming the voyage its commits
// hold (Witnesses, each in VerifyReport.Witnesses; lines that do not
// parse are listed there, not counted). A repository holding
// none witnesses nothing: Verify returns the report with an error.
type RepositoryReport struct {
	Repository string `json:"repository"`
	Witnesses  int    `json:"witnesses"`
}

// witnesses gathers the witnesses opts names for voyage id into rep: the
// given heads, then each repository's commits. A repository git cannot
// read, or that is shallow, is an error: the check could not run.
func witnesses(ctx context.Context, id string, opts *VerifyOptions, rep *VerifyReport) error {
	if opts == nil {
		return nil
	}
	for _, h := range opts.Heads {
		rep.Witnesses = append(rep.Witnesses, WitnessReport{Head: h})
	}
	for _, repo := range opts.Repositories {
		abs, found, err := repositoryWitnesses(ctx, id, repo)
		if err != nil {
			return err
		}
		n := 0
		for _, w := range found {
			if w.Malformed == "" {
				n++
			}
		}
		rep.Repositories = append(rep.Repositories, RepositoryReport{Repository: abs, Witnesses: n})
		rep.Witnesses = append(rep.Witnesses, found...)
	}
	return nil
}

// unwitnessed is the error for the repositories of rep that hold no
// Helm-Voyage line naming the voyage (nil: none): the check they were
// given for did not happen. It is no damage.
func unwitnessed(rep *VerifyReport) error {
	var errs []error
	for _, r := range rep.Repositories {
		if r.Witnesses == 0 {
			errs = append(errs, fmt.Errorf("repository %s holds no %s line naming voyage %s: nothing there witnesses it", r.Repository, chain.TrailerKey, rep.Voyage))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return &VoyageError{Op: "verify against witnesses", Voyage: rep.Voyage, Err: errors.Join(errs...),
		Hint: hint.Hint{Kind: hint.Witness, Text: "give the repository helm's commits for the voyage were made or pushed in (fetch it first), or verify without it"}}
}

// witnessEnv is the environment of every git command Verify runs in a
// witness repository: no replacement objects (`git replace` could show
// another commit in a witness's place), no grafts (.git/info/grafts could
// cut a witness out of the history), no fetching of missing objects.
var witnessEnv = []string{"GIT_NO_REPLACE_OBJECTS=1", "GIT_GRAFT_FILE=" + os.DevNull, "GIT_NO_LAZY_FETCH=1"}

// witnessConfig are the options before every such command: no
// commit-graph (a forged one could drop a parent, and a witness with it).
var witnessConfig = []string{"--no-replace-objects", "-c", "core.commitGraph=false"}

// repositoryWitnesses reads every commit reachable from repo's refs (`git
// rev-list --all`) as git stores it (`git cat-file --batch`: the raw
// object, which no i18n setting of the repository transcodes) and returns
// repo's absolute path, the lines of their messages that witnessline
// finds naming voyage id, and those whose Helm-Voyage line does not
// parse. A shallow repository is refused: the commits it cuts off cannot
// be read, and a witness among them would go unseen.
func repositoryWitnesses(ctx context.Context, id, repo string) (string, []WitnessReport, error) {
	abs, err := filepath.Abs(repo)
	if err != nil {
		return "", nil, fmt.Errorf("witness repository %s: %w", repo, err)
	}
	r := &runner.Runner{Dir: abs, Env: witnessEnv}
	out, err := r.Git(ctx, append(slices.Clone(witnessConfig), "rev-parse", "--is-shallow-repository")...)
	if err != nil {
		return "", nil, fmt.Errorf("witness repository %s: %w", abs, err)
	}
	if strings.TrimSpace(string(out)) == "true" {
		return "", nil, &VoyageError{Op: "verify against witnesses", Voyage: id,
			Err:  fmt.Errorf("witness repository %s is shallow: some commits cannot be read, and a witness among them would go unseen", abs),
			Hint: hint.Hint{Kind: hint.Witness, Text: "unshallow " + abs + " (git fetch, unshallowing it), then verify again"}}
	}
	shas, err := r.Git(ctx, append(slices.Clone(witnessConfig), "rev-list", "--all")...)
	if err != nil {
		return "", nil, fmt.Errorf("witness repository %s: list its commits: %w", abs, err)
	}
	var ws []WitnessReport
	err = catCommits(ctx, r, shas, func(sha string, object []byte) {
		_, msg, _ := bytes.Cut(object, []byte("\n\n"))
		for _, value := range witnessline.Lines(string(msg)) {
			w := WitnessReport{Repository: abs, Commit: sha}
			voyage, head, err := chain.ParseTrailerValue(value)
			switch {
			case err != nil:
				w.Malformed = err.Error()
			case voyage != id:
				continue // another voyage's witness
			default:
				w.Head = head
			}
			ws = append(ws, w)
		}
	})
	if err != nil {
		return "", nil, fmt.Errorf("witness repository %s: read its commits: %w", abs, err)
	}
	return abs, ws, nil
}

// catCommits runs `git cat-file --batch` in r's repository on shas (one a
// line, as rev-list prints them) and calls each with a commit's sha and
// raw object, one object at a time: memory holds the largest commit, not
// the history.
func catCommits(ctx context.Context, r *runner.Runner, shas []byte, each func(sha string, object []byte)) error {
	c := r.GitCommand(append(slices.Clone(witnessConfig), "cat-file", "--batch")...)
	path, err := exec.LookPath(c.Path)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Path, runner.ErrProgramNotFound)
	}
	cmd := exec.CommandContext(ctx, path, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = append(runner.AmbientEnv(os.Environ(), nil), c.Env...)
	cmd.Stdin = bytes.NewReader(shas)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	rerr := readBatch(bufio.NewReader(stdout), each)
	if rerr != nil {
		_ = cmd.Process.Kill()
	}
	werr := cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case rerr != nil:
		return rerr
	case werr != nil:
		return fmt.Errorf("%s: %w: %s", c.Line(), werr, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// readBatch reads cat-file --batch's output: "SHA TYPE SIZE\n", the
// object, "\n", for each; anything but a commit is an error (rev-list
// lists commits only).
func readBatch(br *bufio.Reader, each func(sha string, object []byte)) error {
	for {
		header, err := br.ReadString('\n')
		if err == io.EOF && header == "" {
			return nil
		}
		if err != nil {
			return fmt.Errorf("git cat-file: %w", err)
		}
		f := strings.Fields(header)
		if len(f) != 3 || f[1] != "commit" {
			return fmt.Errorf("git cat-file: not a commit: %q", strings.TrimSpace(header))
		}
		size, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || size < 0 {
			return fmt.Errorf("git cat-file: bad size in %q", strings.TrimSpace(header))
		}
		object := make([]byte, size+1) // and the newline after it
		if _, err := io.ReadFull(br, object); err != nil {
			return fmt.Errorf("git cat-file: commit %s: %w", f[0], err)
		}
		each(f[0], object[:size])
	}
}

// checkWitnesses recomputes the voyage's chain from its first record,
// sets rep.Head to the head after its last, and checks each witness in
// rep.Witnesses against the link at its seq: a seq beyond the log's end
// or a link that differs is damage naming the witness. It runs without
// witnesses too, for the head. A reclaimed record links by the digest its
// stub keeps (a weak one for a format-3 stub: package segment). A log
// that cannot be read is an error when there are witnesses to check, and
// leaves the head unset otherwise.
func (h *Home) checkWitnesses(ctx context.Context, id, dir string, rep *VerifyReport) error {
	want := map[uint64]bool{}
	for _, w := range rep.Witnesses {
		if w.Malformed == "" {
			want[w.Head.Seq] = true
		}
	}
	links := map[uint64]chain.Hash{}
	head := chain.Head{Hash: chain.Genesis(id)}
	if want[0] {
		links[0] = head.Hash
	}
	err := h.back.records(ctx, id, func(r segment.Record) error {
		// A reclaimed record by the digest its stub keeps (a format-3
		// stub's weak one), as the journal's head and segment.Verify do.
		head = chain.Head{Seq: r.Seq, Hash: r.Link(head.Hash)}
		if want[r.Seq] {
			links[r.Seq] = head.Hash
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil || len(want) > 0 {
			return fmt.Errorf("verify voyage %s against its witnesses: %w", id, err)
		}
		return nil
	}
	rep.Head = head
	for i := range rep.Witnesses {
		w := &rep.Witnesses[i]
		if w.Malformed != "" {
			continue
		}
		link, ok := links[w.Head.Seq]
		switch {
		case !ok:
			w.Problem = fmt.Sprintf("witness %s holds seq %d; the log ends at %d: truncated or rolled back", w.name(), w.Head.Seq, head.Seq)
		case link != w.Head.Hash:
			w.Problem = fmt.Sprintf("witness %s: the log's link at seq %d differs: edited, truncated or rolled back below it", w.name(), w.Head.Seq)
		default:
			continue
		}
		rep.Problems = append(rep.Problems, &DamageError{Voyage: id, File: dir, Seq: w.Head.Seq, Reason: w.Problem})
	}
	return nil
}
