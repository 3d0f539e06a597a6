package helm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/policy"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/redact"
)

// Options tune a Home. The zero value is what production uses.
type Options struct {
	// Clock returns the time recorded on events; nil means time.Now.
	// Tests inject a fixed clock to make voyages replay byte for byte.
	// A change reads it once for its events' time, and Observe once more
	// for the observation's time.
	Clock func() time.Time
	// NewID returns voyage and action ids; nil means uuid.New.
	NewID func() uuid.UUID
	// SegmentSize is the event log's rotation size; zero means the
	// segment package's default (64 MiB).
	SegmentSize int64
	// NoSync skips fsync. For tests of logic only: a crash loses data.
	NoSync bool
	// Redaction adds to what is hidden before anything is stored (see
	// Redaction); the zero value hides what helm's own rules find.
	Redaction Redaction
	// Policy holds the guard rules every action, and every command mark,
	// is checked against before it is recorded or run. nil means the
	// home's own, PolicyFile in its directory, when there is one.
	// Jettison and Reduce are checked against it with helm's built-in
	// rules under it (policy.WithDefaults): only the rules of a policy
	// marked policy.System (one the recorded agent cannot change) may
	// loosen those.
	Policy *policy.Policy

	// Settings no user needs, which tests change (zero: the default).
	// snapshotEvery is how many events past a voyage's last snapshot make
	// a closing writer write a new one (snapshot.go).
	snapshotEvery uint64
	// conflictBudget bounds how long a change goes on deciding again
	// because other writers of a shared store keep coming first
	// (commit.go).
	conflictBudget time.Duration
}

// Defaults of the Options tests change.
const (
	defaultSnapshotEvery  = 4096
	defaultConflictBudget = 30 * time.Second
)

// Home is a directory of voyages.
type Home struct {
	dir  string
	opts Options
	// back keeps the voyages: under dir (disk.go), or in a shared store
	// (OpenStore, shared.go), which storeName names.
	back      backend
	storeName string

	redOnce sync.Once
	red     *redact.Redactor
	redErr  error

	// rules names the guard rules (Options.Policy) as voyages record
	// them: a change is recorded when a voyage's last record differs.
	rules logbook.PolicyRecord
}

// Open opens the home at dir; opts may be nil (the zero Options). Opening
// reads (the home's guard rules, PolicyFile, unless opts.Policy is set):
// the home and its voyages are created (mode 0700) by the first Start, so
// an absent or read-only home can be listed.
func Open(dir string, opts *Options) (*Home, error) {
	h := &Home{dir: dir}
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.Clock == nil {
		h.opts.Clock = time.Now
	}
	if h.opts.NewID == nil {
		h.opts.NewID = uuid.New
	}
	if h.opts.snapshotEvery == 0 {
		h.opts.snapshotEvery = defaultSnapshotEvery
	}
	if h.opts.conflictBudget == 0 {
		h.opts.conflictBudget = defaultConflictBudget
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, &VoyageError{Op: "open home " + dir, Err: fmt.Errorf("%w: not a directory", ErrInvalid)}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, &VoyageError{Op: "open home " + dir, Err: err}
	}
	if h.opts.Policy == nil {
		// The home's rules bind every caller of it, not the CLI alone.
		p, err := policy.Load(filepath.Join(dir, PolicyFile))
		switch {
		case err == nil:
			h.opts.Policy = p
		case !errors.Is(err, fs.ErrNotExist):
			return nil, &VoyageError{Op: "open home " + dir, Err: fmt.Errorf("%w: guard rules: %w", ErrInvalid, err),
				Hint: hint.Hint{Kind: hint.Policy, Text: "fix the rule the error names in " + filepath.Join(dir, PolicyFile)}}
		}
	}
	h.rules = logbook.PolicyRecord{Digest: h.opts.Policy.Digest(), Sources: policy.Sources(h.opts.Policy)}
	h.back = &disk{h: h}
	return h, nil
}

// PolicyFile is the name of a home's guard rules, in its directory.
const PolicyFile = "policy.toml"

// Dir returns the home's directory.
func (h *Home) Dir() string { return h.dir }

func (h *Home) now() time.Time { return h.opts.Clock().UTC() }

// Start starts a voyage of kind (empty: OpenWaters; another is an error
// matching ErrInvalid) and returns it open. who.Identity is required: it
// becomes the voyage's identity, the default for every later entry. opts
// (nil: none) names the voyage's parent and the git repository it starts
// in.
func (h *Home) Start(ctx context.Context, intent string, kind Kind, who logbook.Who, opts *StartOptions) (*Voyage, error) {
	if opts == nil {
		opts = &StartOptions{}
	}
	const op = "start voyage"
	if err := errors.Join(checkText("intent", intent), checkWho(who), checkText("repository", opts.Repo),
		checkText("directory", opts.Dir), checkText("base commit", opts.Base), checkText("branch", opts.Branch),
		checkText("worktree", opts.Worktree), checkText("session", opts.Session)); err != nil {
		return nil, &VoyageError{Op: op, Err: err}
	}
	if opts.Parent != "" {
		parent, err := h.Resolve(ctx, opts.Parent)
		if err != nil {
			return nil, &VoyageError{Op: op, Err: fmt.Errorf("parent voyage: %w", err)}
		}
		opts.Parent = parent
	}
	if opts.ForkOf != "" {
		origin, err := h.Resolve(ctx, opts.ForkOf)
		if err != nil {
			return nil, &VoyageError{Op: op, Err: fmt.Errorf("voyage to fork: %w", err)}
		}
		opts.ForkOf = origin
		if opts.ForkAt < 1 {
			return nil, &VoyageError{Op: op, Voyage: origin, Err: fmt.Errorf("%w: fork at entry %d: say which entry of the story the fork is taken at (1 or more)", ErrInvalid, opts.ForkAt),
				Hint: hint.Hint{Kind: hint.ReadLogbook, Text: "read the voyage's logbook for the entry's number"}}
		}
	}
	intent = strings.TrimSpace(intent)
	if intent == "" {
		return nil, &VoyageError{Op: op, Err: fmt.Errorf("%w: the intent is empty; say what the voyage is for", ErrInvalid)}
	}
	if kind == "" {
		kind = OpenWaters
	}
	if !slices.Contains(kinds, kind) {
		return nil, &VoyageError{Op: op, Err: fmt.Errorf("%w: kind %q is not one of %v", ErrInvalid, kind, kinds)}
	}
	if who.Identity == "" {
		return nil, &VoyageError{Op: op, Err: fmt.Errorf("%w: no identity: the voyage's identity (Who.Identity) is the default for every entry", ErrMissingWho)}
	}
	if err := logbook.ValidateIdentity(who.Identity); err != nil {
		return nil, &VoyageError{Op: op, Err: fmt.Errorf("%w: %v", ErrInvalid, err)}
	}
	id := h.opts.NewID().String()
	if opts.Prepare != nil {
		prepared, err := opts.Prepare(id)
		if err != nil {
			return nil, &VoyageError{Op: op, Voyage: id, Err: err}
		}
		prepared.Parent, prepared.Session, prepared.Prepare = opts.Parent, opts.Session, nil
		prepared.ForkOf, prepared.ForkAt = opts.ForkOf, opts.ForkAt
		if err := errors.Join(checkText("repository", prepared.Repo), checkText("directory", prepared.Dir),
			checkText("base commit", prepared.Base), checkText("branch", prepared.Branch), checkText("worktree", prepared.Worktree)); err != nil {
			return nil, &VoyageError{Op: op, Voyage: id, Err: err}
		}
		opts = &prepared
	}
	if opts.ForkOf != "" {
		return h.fork(ctx, id, intent, kind, who, opts)
	}
	if err := h.back.create(ctx, id, func(v *Voyage) error {
		_, err := v.commit(ctx, op, func(st *projection.State, _ stower) ([]*projection.Event, error) {
			if st.Voyage.Seq != 0 {
				return nil, fmt.Errorf("voyage %s already has events", id)
			}
			return []*projection.Event{{
				Type: projection.VoyageStarted, Who: who,
				Voyage: &projection.VoyageInfo{ID: id, Intent: intent, Kind: string(kind), Parent: opts.Parent,
					Repo: opts.Repo, Dir: opts.Dir, Base: opts.Base, Branch: opts.Branch, Worktree: opts.Worktree,
					Session: strings.TrimSpace(opts.Session)},
			}}, nil
		})
		return err
	}); err != nil {
		return nil, err
	}
	return h.open(ctx, id)
}

// StartOptions are the optional parts of a voyage's start.
type StartOptions struct {
	// Parent is the id, or an unambiguous prefix, of the voyage this one
	// is a sub-voyage of: a crew member's part of a larger voyage.
	Parent string
	// Repo, Dir, Base and Branch describe the git repository the voyage
	// starts in, as found there (runner.Runner.Workspace): OWNER/NAME of
	// its origin, its top directory, HEAD's commit and branch. Each may
	// be empty.
	Repo, Dir, Base, Branch string
	// Worktree is a working tree made for the voyage alone.
	Worktree string
	// Session is the agent host's session the voyage records, keyed by
	// its host: "claude-code:<session id>", and
	// "claude-code:<session id>/<agent id>" for a subagent's sub-voyage.
	// It is stored with the start (VoyageInfo.Session), so that a hook
	// that finds a voyage again by its own index can check it is the
	// session's.
	Session string
	// ForkOf, when set, is the id (or an unambiguous prefix) of the voyage
	// this one is a fork of, and ForkAt the number of that voyage's story
	// entry it is forked at (1 or more): the new voyage's history is the
	// origin's as it stood once entry ForkAt was recorded — every record
	// up to that entry's, carried and linked (VoyageInfo.Fork names the
	// origin, the entry and the origin's head there) — and it goes on
	// independently of the origin. See "Fork and salvage" in
	// docs/design.md.
	ForkOf string
	ForkAt int
	// Prepare, when set, runs once the voyage's id is known and before
	// anything is recorded, to make what is named from it (a working
	// tree); the options it returns replace these, but for Parent,
	// Session and Prepare. An error stops the start: nothing is recorded.
	Prepare func(id string) (StartOptions, error)
}

// Resolve turns a full voyage id or an unambiguous prefix of one into the
// full id. A prefix matching several voyages is an *AmbiguousError listing
// them.
func (h *Home) Resolve(ctx context.Context, idOrPrefix string) (string, error) {
	p := strings.ToLower(strings.TrimSpace(idOrPrefix))
	if p == "" {
		return "", fmt.Errorf("%w: empty voyage id", ErrNoVoyage)
	}
	if strings.ContainsAny(p, `/\.`) {
		return "", fmt.Errorf("%w: %q is not a voyage id or prefix", ErrNoVoyage, idOrPrefix)
	}
	if u, err := uuid.Parse(p); err == nil {
		p = u.String() // braces, urn:uuid: or no dashes: the voyage's own spelling, not a directory named so
		ok, err := h.back.started(ctx, p)
		switch {
		case err != nil:
			return "", err
		case !ok:
			return "", fmt.Errorf("%w: %s in %s", ErrNoVoyage, p, h.where())
		}
		return p, nil
	}
	found, err := h.back.ids(ctx, p)
	if err != nil {
		return "", err
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%w: no voyage id starts with %q in %s", ErrNoVoyage, p, h.where())
	case 1:
		return found[0], nil
	}
	slices.Sort(found)
	return "", &AmbiguousError{Prefix: p, Candidates: found}
}

// holds reports whether the home holds voyage id with its events: a
// shared store may hold one whose start failed before its first event,
// which Resolve leaves out and a new start (an import) takes over.
func (h *Home) holds(ctx context.Context, id string) bool {
	got, err := h.Resolve(ctx, id)
	return err == nil && got == id
}

// open opens the voyage id, folding its events into fresh views (after
// its snapshot, when it has one to trust). Opening reads: it writes
// nothing (see segment.Open).
func (h *Home) open(ctx context.Context, id string) (*Voyage, error) {
	return h.back.open(ctx, id, true)
}

// Voyage opens the voyage with this id or unambiguous id prefix, folding
// its events into fresh views. Opening reads: it writes nothing. The
// caller closes it.
func (h *Home) Voyage(ctx context.Context, idOrPrefix string) (*Voyage, error) {
	id, err := h.Resolve(ctx, idOrPrefix)
	if err != nil {
		return nil, err
	}
	return h.open(ctx, id)
}

// StatusFilter selects voyages for List.
type StatusFilter string

// Status filters: a status (active, blocked, ...), or one of these.
const (
	ListActive                 = StatusFilter(logbook.StatusActive)
	ListCompleted              = StatusFilter(logbook.StatusCompleted)
	ListAll       StatusFilter = "all"
	// ListOpen selects the voyages not ended for good: active, blocked
	// and partial.
	ListOpen StatusFilter = "open"
	// ListClosed selects the voyages ended for good: completed, failed
	// and cancelled.
	ListClosed StatusFilter = "closed"
)

// StatusFilters returns every filter List takes, in the order they are
// documented.
func StatusFilters() []StatusFilter {
	return []StatusFilter{ListActive, StatusFilter(logbook.StatusBlocked), StatusFilter(logbook.StatusPartial), ListCompleted,
		StatusFilter(logbook.StatusFailed), StatusFilter(logbook.StatusCancelled), ListOpen, ListClosed, ListAll}
}

// matches reports whether a voyage in status st passes filter f.
func (f StatusFilter) matches(st logbook.Status) bool {
	switch f {
	case "", ListAll:
		return true
	case ListOpen:
		return !st.Final()
	case ListClosed:
		return st.Final()
	}
	return string(f) == string(st)
}

// ListOptions narrow List.
type ListOptions struct {
	// Status selects by status (StatusFilters); empty means all.
	Status StatusFilter
	// IdleFor, when positive, selects the active voyages whose last
	// event is older than that (by the home's clock): those nobody has
	// touched for a while.
	IdleFor time.Duration
}

// List returns the voyages opts selects (nil: all of them), oldest
// first. It reads each voyage's cached summary, not its events, so its
// cost does not grow with the size of voyages; a stale or missing summary
// is rebuilt from the events. A voyage that cannot be read (a damaged
// log) does not hide the others: List returns every voyage it could read
// together with a *ListError naming the ones it could not.
func (h *Home) List(ctx context.Context, opts *ListOptions) ([]VoyageInfo, error) {
	var o ListOptions
	if opts != nil {
		o = *opts
	}
	if o.Status != "" && !slices.Contains(StatusFilters(), o.Status) {
		return nil, &VoyageError{Op: "list voyages", Err: fmt.Errorf("%w: status %q is not one of %v", ErrInvalid, o.Status, StatusFilters())}
	}
	if o.IdleFor <= 0 {
		return h.back.list(ctx, o.Status)
	}
	if o.Status != "" && !o.Status.matches(logbook.StatusActive) {
		return nil, &VoyageError{Op: "list voyages", Err: fmt.Errorf("%w: idle voyages are active ones; status %q selects none", ErrInvalid, o.Status)}
	}
	list, err := h.back.list(ctx, ListActive)
	cut := h.now().Add(-o.IdleFor)
	return slices.DeleteFunc(list, func(i VoyageInfo) bool { return !i.LastAt.Before(cut) }), err
}

// listed is List's answer: out with the voyages of read that filter
// matches, the oldest first (ids break ties, as the order voyages were
// read in did), and the *ListError of those that could not be read.
func listed(out []VoyageInfo, read []*VoyageInfo, unreadable *ListError, filter StatusFilter) ([]VoyageInfo, error) {
	for _, info := range read {
		if info != nil && filter.matches(info.Status) {
			out = append(out, *info)
		}
	}
	if len(out) == 0 {
		out = nil // none: nil, however the listing was read
	}
	sortListed(out)
	if unreadable != nil {
		return out, unreadable
	}
	return out, nil
}

// sortListed sorts a listing, the oldest first (ids break ties). A
// VoyageInfo is large: sorting keys and moving each voyage once is a
// fraction of sorting the voyages themselves.
func sortListed(out []VoyageInfo) {
	type key struct {
		sec  int64
		nsec int32
		at   int32
		id   string
	}
	keys := make([]key, len(out))
	for i := range out {
		c := &out[i].Created
		keys[i] = key{sec: c.Unix(), nsec: int32(c.Nanosecond()), at: int32(i), id: out[i].ID}
	}
	slices.SortFunc(keys, func(a, b key) int {
		// Not cmp.Or: it would compare the ids every time.
		if a.sec != b.sec {
			return cmp.Compare(a.sec, b.sec)
		}
		if a.nsec != b.nsec {
			return cmp.Compare(a.nsec, b.nsec)
		}
		return strings.Compare(a.id, b.id)
	})
	// Move each voyage to its place, following the cycles of the
	// permutation: no second slice of every voyage.
	for i := range keys {
		if keys[i].at < 0 {
			continue
		}
		held := out[i]
		j := i
		for {
			k := int(keys[j].at)
			keys[j].at = -1
			if k == i {
				out[j] = held
				break
			}
			out[j] = out[k]
			j = k
		}
	}
}

// where names where the home keeps its voyages, in messages.
func (h *Home) where() string { return h.back.where() }

// Redact returns text with what helm would hide before storing it
// replaced by markers, and how many: the same redactor every change to a
// voyage passes through (see Redaction).
func (h *Home) Redact(text string) (string, int, error) {
	r, err := h.redactor()
	if err != nil {
		return "", 0, err
	}
	s, n := r.String(text)
	return s, n, nil
}
