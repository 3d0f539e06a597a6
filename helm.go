package helm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/helmlog/helm/internal/durable"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/policy"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/redact"
	"github.com/helmlog/helm/store"
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
	// shared holds the voyages of a shared home (OpenStore, shared.go),
	// sharedAt names it; nil for a home whose voyages are under dir.
	shared   store.Store
	sharedAt string

	redOnce sync.Once
	red     *redact.Redactor
	redErr  error

	sweepOnce sync.Once // the first Start removes what crashed starts left

	// rules names the guard rules (Options.Policy) as voyages record
	// them: a change is recorded when a voyage's last record differs.
	rules logbook.PolicyRecord
}

// Open opens the home at dir. Opening reads: the home and its voyages
// are created (mode 0700) by the first Start, so an absent or read-only
// home can be listed.
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
				Hint: Hint{HintPolicy, "fix the rule the error names in " + filepath.Join(dir, PolicyFile)}}
		}
	}
	h.rules = logbook.PolicyRecord{Digest: h.opts.Policy.Digest(), Sources: policy.Sources(h.opts.Policy)}
	return h, nil
}

// PolicyFile is the name of a home's guard rules, in its directory.
const PolicyFile = "policy.toml"

// Dir returns the home's directory.
func (h *Home) Dir() string { return h.dir }

func (h *Home) voyagesDir() string { return filepath.Join(h.dir, "voyages") }

func (h *Home) now() time.Time { return h.opts.Clock().UTC() }

// Start starts a voyage and returns it open. who.Identity is required: it
// becomes the voyage's identity, the default for every later entry.
func (h *Home) Start(ctx context.Context, intent string, kind Kind, who Who) (*Voyage, error) {
	return h.StartWith(ctx, intent, kind, who, StartOptions{})
}

// StartWith is Start with options: the voyage's parent, and the git
// repository it starts in.
func (h *Home) StartWith(ctx context.Context, intent string, kind Kind, who Who, opts StartOptions) (*Voyage, error) {
	const op = "start voyage"
	if err := errors.Join(checkText("intent", intent), checkWho(who), checkText("repository", opts.Repo),
		checkText("directory", opts.Dir), checkText("base commit", opts.Base), checkText("branch", opts.Branch),
		checkText("worktree", opts.Worktree)); err != nil {
		return nil, &VoyageError{Op: op, Err: err}
	}
	if opts.Parent != "" {
		parent, err := h.Resolve(opts.Parent)
		if err != nil {
			return nil, &VoyageError{Op: op, Err: fmt.Errorf("parent voyage: %w", err)}
		}
		opts.Parent = parent
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
		prepared.Parent, prepared.Prepare = opts.Parent, nil
		if err := errors.Join(checkText("repository", prepared.Repo), checkText("directory", prepared.Dir),
			checkText("base commit", prepared.Base), checkText("branch", prepared.Branch), checkText("worktree", prepared.Worktree)); err != nil {
			return nil, &VoyageError{Op: op, Voyage: id, Err: err}
		}
		opts = prepared
	}
	if err := h.create(ctx, id, func(v *Voyage) error {
		_, err := v.commit(ctx, op, func(st *projection.State, _ stower) ([]*projection.Event, error) {
			if st.Voyage.Seq != 0 {
				return nil, fmt.Errorf("voyage %s already has events", id)
			}
			return []*projection.Event{{
				Type: projection.VoyageStarted, Who: who,
				Voyage: &projection.VoyageInfo{ID: id, Intent: intent, Kind: string(kind), Parent: opts.Parent,
					Repo: opts.Repo, Dir: opts.Dir, Base: opts.Base, Branch: opts.Branch, Worktree: opts.Worktree},
			}}, nil
		})
		return err
	}); err != nil {
		return nil, err
	}
	return h.open(id)
}

// newPrefix names the directory a voyage is built in before it appears
// under its id: a crash while starting leaves such a directory, which
// listing ignores and a later Start removes.
const newPrefix = ".new-"

// create makes the voyage id: its first events are written by first into
// a directory of its own, which is then renamed into place, so that a
// voyage directory always holds its start and a failed start leaves
// nothing behind.
func (h *Home) create(ctx context.Context, id string, first func(*Voyage) error) error {
	if h.shared != nil {
		return h.createShared(ctx, id, first)
	}
	vdir := h.voyagesDir()
	mkdir := func(dir string, perm os.FileMode) error { return durable.MkdirAll(durable.OSFS{}, dir, perm) }
	if h.opts.NoSync {
		mkdir = os.MkdirAll
	}
	if err := mkdir(vdir, 0o700); err != nil {
		return fmt.Errorf("start voyage: create %s: %w", vdir, err)
	}
	h.sweepOnce.Do(h.removeAbandonedStarts)
	tmp := filepath.Join(vdir, newPrefix+id)
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return fmt.Errorf("start voyage: create %s: %w", tmp, err)
	}
	v, err := h.openDir(tmp, id, false)
	if err == nil {
		err = first(v)
		if cerr := v.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil && !h.opts.NoSync {
		err = durable.SyncDir(durable.OSFS{}, tmp)
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(vdir, id))
	}
	if err == nil && !h.opts.NoSync {
		err = durable.SyncDir(durable.OSFS{}, vdir)
	}
	if err != nil {
		os.RemoveAll(tmp)
		var ve *VoyageError
		if errors.As(err, &ve) {
			return err
		}
		return &VoyageError{Op: "start voyage", Voyage: id, Err: err}
	}
	return nil
}

// abandonedAfter is how old a directory of a start must be before a later
// Start takes it for one that crashed and removes it.
const abandonedAfter = 10 * time.Minute

// removeAbandonedStarts removes what crashed starts left (best effort).
// It reads the voyages directory unsorted, once per Home: reading a home
// of many voyages on every Start made starting O(voyages).
func (h *Home) removeAbandonedStarts() {
	d, err := os.Open(h.voyagesDir())
	if err != nil {
		return
	}
	entries, _ := d.ReadDir(-1)
	d.Close()
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), newPrefix) {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > abandonedAfter {
			os.RemoveAll(filepath.Join(h.voyagesDir(), e.Name()))
		}
	}
}

// Resolve turns a full voyage id or an unambiguous prefix of one into the
// full id. A prefix matching several voyages is an *AmbiguousError listing
// them.
func (h *Home) Resolve(idOrPrefix string) (string, error) {
	p := strings.ToLower(strings.TrimSpace(idOrPrefix))
	if p == "" {
		return "", fmt.Errorf("%w: empty voyage id", ErrNoVoyage)
	}
	if strings.ContainsAny(p, `/\.`) {
		return "", fmt.Errorf("%w: %q is not a voyage id or prefix", ErrNoVoyage, idOrPrefix)
	}
	if _, err := uuid.Parse(p); err == nil && h.shared != nil {
		// One voyage's tail, not the store's whole list; a voyage whose
		// start wrote no event is not there (startedShared).
		last, err := h.sharedLast(context.Background(), p)
		switch {
		case err == nil && last > 0:
			return p, nil
		case err == nil || errors.Is(err, store.ErrNotFound):
			return "", fmt.Errorf("%w: %s in %s", ErrNoVoyage, p, h.sharedAt)
		}
		if d := damageOf(p, err); d != nil {
			err = d // a voyage the store holds, damaged
		}
		return "", &VoyageError{Op: "find voyage", Voyage: p, Err: err}
	} else if err == nil {
		if _, err := os.Stat(filepath.Join(h.voyagesDir(), p)); err == nil {
			return p, nil
		}
		return "", fmt.Errorf("%w: %s in %s", ErrNoVoyage, p, h.voyagesDir())
	}
	ids, sums, err := h.idsSummaries()
	if err != nil {
		return "", err
	}
	var found []string
	for _, id := range ids {
		if strings.HasPrefix(id, p) {
			found = append(found, id)
		}
	}
	if h.shared != nil {
		if found, err = h.startedShared(context.Background(), found, sums); err != nil {
			return "", err
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%w: no voyage id starts with %q in %s", ErrNoVoyage, p, h.where())
	case 1:
		return found[0], nil
	}
	return "", &AmbiguousError{Prefix: p, Candidates: found}
}

// idsSummaries is ids, with the summaries a shared store keeps (nil for
// a home on disk).
func (h *Home) idsSummaries() ([]string, map[string]store.Summary, error) {
	if h.shared != nil {
		return h.sharedIDs(context.Background())
	}
	ids, err := h.ids()
	return ids, nil, err
}

// ids lists the voyage ids in the home, sorted.
func (h *Home) ids() ([]string, error) {
	if h.shared != nil {
		ids, _, err := h.sharedIDs(context.Background())
		return ids, err
	}
	entries, err := os.ReadDir(h.voyagesDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // no voyage started yet
	}
	if err != nil {
		return nil, fmt.Errorf("list voyages in %s: %w", h.voyagesDir(), err)
	}
	ids := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.IsDir() {
			if _, err := uuid.Parse(e.Name()); err == nil {
				ids = append(ids, e.Name())
			}
		}
	}
	return ids, nil
}

// Voyage opens the voyage with this id or unambiguous id prefix, folding
// its events into fresh views. Opening reads: it writes nothing. The
// caller closes it.
func (h *Home) Voyage(ctx context.Context, idOrPrefix string) (*Voyage, error) {
	id, err := h.Resolve(idOrPrefix)
	if err != nil {
		return nil, err
	}
	return h.openVoyage(ctx, id, true)
}

// StatusFilter selects voyages for List.
type StatusFilter string

// Status filters: a status (active, blocked, ...), or one of these.
const (
	ListActive    StatusFilter = "active"
	ListCompleted StatusFilter = "completed"
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
	return []StatusFilter{ListActive, "blocked", "partial", ListCompleted, "failed", "cancelled", ListOpen, ListClosed, ListAll}
}

// matches reports whether a voyage in status st passes filter f.
func (f StatusFilter) matches(st Status) bool {
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

// ListOptions narrow ListWith.
type ListOptions struct {
	// Status selects by status; empty means all.
	Status StatusFilter
	// IdleFor, when positive, selects the active voyages whose last
	// event is older than that (by the home's clock): those nobody has
	// touched for a while.
	IdleFor time.Duration
}

// ListWith is List with more ways to select the voyages.
func (h *Home) ListWith(ctx context.Context, opts ListOptions) ([]VoyageInfo, error) {
	if opts.IdleFor <= 0 {
		return h.List(ctx, opts.Status)
	}
	if opts.Status != "" && !opts.Status.matches(StatusActive) {
		return nil, &VoyageError{Op: "list voyages", Err: fmt.Errorf("%w: idle voyages are active ones; status %q selects none", ErrInvalid, opts.Status)}
	}
	list, err := h.List(ctx, ListActive)
	cut := h.now().Add(-opts.IdleFor)
	return slices.DeleteFunc(list, func(i VoyageInfo) bool { return !i.LastAt.Before(cut) }), err
}

// List returns the voyages whose status matches filter (empty means all),
// oldest first. It reads each voyage's cached summary, not its events, so
// its cost does not grow with the size of voyages; a stale or missing
// summary is rebuilt from the events. A voyage that cannot be read (a
// damaged log) does not hide the others: List returns every voyage it
// could read together with a *ListError naming the ones it could not.
func (h *Home) List(ctx context.Context, filter StatusFilter) ([]VoyageInfo, error) {
	if filter != "" && !slices.Contains(StatusFilters(), filter) {
		return nil, &VoyageError{Op: "list voyages", Err: fmt.Errorf("%w: status %q is not one of %v", ErrInvalid, filter, StatusFilters())}
	}
	if h.shared != nil {
		return h.listShared(ctx, filter)
	}
	ids, err := h.ids()
	if err != nil {
		return nil, err
	}
	// The home index vouches for the voyages whose writers all closed
	// them. Each of the others costs a few small reads (its summary, its
	// directory, its log's tail); they are independent, so a few run at
	// once.
	indexed := h.indexedViews()
	var rest []string
	for _, id := range ids {
		if _, ok := indexed[id]; !ok {
			rest = append(rest, id)
		}
	}
	read, unreadable, err := readEach(ctx, rest, 4*runtime.GOMAXPROCS(0), func(id string) (VoyageInfo, error) {
		return h.summary(ctx, id)
	})
	if err != nil {
		return nil, err
	}
	out := make([]VoyageInfo, 0, len(ids))
	for _, info := range indexed {
		if filter.matches(info.Status) {
			out = append(out, info)
		}
	}
	return listed(out, read, unreadable, filter)
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
	slices.SortFunc(out, func(a, b VoyageInfo) int { return cmp.Or(a.Created.Compare(b.Created), strings.Compare(a.ID, b.ID)) })
	if unreadable != nil {
		return out, unreadable
	}
	return out, nil
}

// where names where the home keeps its voyages, in messages.
func (h *Home) where() string {
	if h.shared != nil {
		return h.sharedAt
	}
	return h.voyagesDir()
}

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
