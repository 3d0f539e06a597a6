package helm

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/helmlog/helm/chain"
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

// witnesses gathers the witnesses opts names for voyage id: the given
// heads, then each repository's commits. A repository git cannot read is
// an error: the check could not run.
func witnesses(ctx context.Context, id string, opts *VerifyOptions) ([]WitnessReport, error) {
	if opts == nil {
		return nil, nil
	}
	var ws []WitnessReport
	for _, h := range opts.Heads {
		ws = append(ws, WitnessReport{Head: h})
	}
	for _, repo := range opts.Repositories {
		found, err := repositoryWitnesses(ctx, id, repo)
		if err != nil {
			return nil, err
		}
		ws = append(ws, found...)
	}
	return ws, nil
}

// repositoryWitnesses reads every commit reachable from repo's refs
// (`git log --all`) and returns those whose message holds a line
// "Helm-Voyage: <id> <SEQ>:<HEX>" naming voyage id, and those whose
// Helm-Voyage line does not parse.
//
// Every line of the message that begins with the key counts, not only
// what git's trailer parser calls a trailer: the repository's
// configuration (trailer.separators, key aliases) decides what git
// parses as one, and the repository is the recorded party's to
// configure. For the same reason git runs with replacement refs off
// (`git replace` could show another commit in a witness's place) and
// signatures not shown.
func repositoryWitnesses(ctx context.Context, id, repo string) ([]WitnessReport, error) {
	abs, err := filepath.Abs(repo)
	if err != nil {
		return nil, fmt.Errorf("witness repository %s: %w", repo, err)
	}
	r := &runner.Runner{Dir: abs, Env: []string{"GIT_NO_REPLACE_OBJECTS=1", "GIT_NO_LAZY_FETCH=1"}}
	out, err := r.Git(ctx, "--no-replace-objects", "-c", "log.showSignature=false", "log", "--all", "--no-color", "--format=%H%x00%B%x00")
	if err != nil {
		return nil, fmt.Errorf("witness repository %s: read its commits: %w", repo, err)
	}
	var ws []WitnessReport
	fields := bytes.Split(out, []byte{0})
	for i := 0; i+1 < len(fields); i += 2 {
		sha := strings.TrimSpace(string(fields[i]))
		for line := range strings.Lines(string(fields[i+1])) {
			key, value, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok || !strings.EqualFold(strings.TrimSpace(key), chain.TrailerKey) {
				continue
			}
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
	}
	return ws, nil
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
		// stub's weak one), as scanHead and segment.Verify do.
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
