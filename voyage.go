package helm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
	"github.com/helmlog/helm/sighting"
)

// Voyage is an open voyage: its event log and the views folded from it.
// A Voyage is safe for concurrent use by several goroutines, and several
// processes may have the same voyage open: each change first folds in the
// events others appended, then checks its rules, under the log's lock.
type Voyage struct {
	home *Home
	id   string
	dir  string
	log  *segment.Log
	pack *artifact.Pack

	mu         sync.Mutex
	st         projection.State
	broken     error  // set when a write failed: the views may be ahead of the disk
	wrote      bool   // this Voyage appended events: it may write caches
	summarySeq uint64 // the Seq the summary file was last written at
}

// stower stores an artifact unless the voyage holds it already; it returns
// the event to append (nil when already held).
type stower func(a *artifact.Encoded) (*projection.Event, error)

// encodedObservation is an observation in the forms the log stores.
type encodedObservation struct {
	obs  Observation
	mark []byte
	art  *artifact.Encoded
}

func encodeObservation(obs Observation) (*encodedObservation, error) {
	mark, err := marks.Marshal(obs.Mark)
	if err != nil {
		return nil, err
	}
	sight, err := sighting.Marshal(obs.Sighting)
	if err != nil {
		return nil, err
	}
	return &encodedObservation{obs: obs, mark: mark, art: artifact.Encode(sight)}, nil
}

// open opens the voyage id, folding its events into fresh views. Opening
// reads: it writes nothing (see segment.Open).
func (h *Home) open(id string) (*Voyage, error) {
	dir := filepath.Join(h.voyagesDir(), id)
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNoVoyage, id, err)
	}
	v, err := h.openDir(dir, id)
	if err != nil {
		return nil, err
	}
	if v.st.Voyage.Seq == 0 {
		v.Close()
		return nil, &VoyageError{Op: "open", Voyage: id,
			Err:  fmt.Errorf("%w: %s holds no events, not even the voyage's start", ErrDamaged, filepath.Join(dir, "events")),
			Hint: "its event log was emptied or removed; restore the voyage's directory from a backup, or remove it"}
	}
	return v, nil
}

// openDir opens the voyage id whose directory is dir.
func (h *Home) openDir(dir, id string) (*Voyage, error) {
	// Opening the log folds its events into fresh views as it reads them:
	// the check of the log and the replay are one pass.
	v := &Voyage{home: h, id: id, dir: dir, pack: artifact.NewPack(dir, &artifact.PackOptions{NoSync: h.opts.NoSync})}
	log, err := segment.OpenScan(filepath.Join(dir, "events"), &segment.Options{
		SegmentSize: h.opts.SegmentSize, NoSync: h.opts.NoSync, Identity: id,
	}, v.applyRecord)
	if err != nil {
		return nil, &VoyageError{Op: "open", Voyage: id, Err: err}
	}
	v.log = log
	return v, nil
}

// applyRecord decodes one record and folds it into the views. The caller
// holds v.mu or owns v exclusively.
func (v *Voyage) applyRecord(r segment.Record) error {
	if artifact.IsBlob(r.Data) {
		return nil // an artifact's bytes: read only when the artifact is
	}
	e, err := projection.Decode(r.Data)
	if err != nil {
		return fmt.Errorf("voyage %s, %s, record %d: %w", v.id, filepath.Join(v.dir, "events"), r.Seq, err)
	}
	if e.Type == projection.VoyageStarted && e.Voyage != nil && e.Voyage.ID != v.id {
		return &segment.CorruptionError{Dir: filepath.Join(v.dir, "events"), Seq: r.Seq,
			Reason: fmt.Sprintf("the log starts voyage %s, but this is voyage %s: it holds another voyage's events", e.Voyage.ID, v.id)}
	}
	return v.st.Apply(r.Seq, e)
}

// ID returns the voyage's id.
func (v *Voyage) ID() string { return v.id }

// Dir returns the voyage's directory.
func (v *Voyage) Dir() string { return v.dir }

// Cuts reports the torn tails that this voyage's first change cut off
// the end of its log (a crashed writer's unacknowledged final write); the
// cut bytes are saved beside the segment.
func (v *Voyage) Cuts() []segment.Cut { return v.log.Cuts() }

// Torn reports a torn final write found when the voyage was opened, which
// its next change will cut (nil if none).
func (v *Voyage) Torn() *segment.Cut { return v.log.Torn() }

// Close brings the voyage's listing summary up to date, if this Voyage
// changed the voyage (only writers write caches), and releases its files.
func (v *Voyage) Close() error {
	v.mu.Lock()
	stale := v.wrote && v.broken == nil && v.st.Voyage.Seq != 0 && v.st.Voyage.Seq != v.summarySeq
	v.mu.Unlock()
	if stale && v.summaryStale() {
		v.writeSummary()
	}
	err := v.log.Close()
	if perr := v.pack.Close(); err == nil {
		err = perr
	}
	return err
}

// Refresh folds in the events other processes appended since the views
// were last brought up to date. Changes do this by themselves.
func (v *Voyage) Refresh(ctx context.Context) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.log.Scan(ctx, v.st.Voyage.Seq+1, v.applyRecord)
}

// Info returns the voyage view.
func (v *Voyage) Info() projection.Voyage {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.st.Voyage
}

// Slate returns the observations gathered since the last bearing, ordered
// by mark key.
func (v *Voyage) Slate() []logbook.Observation {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.st.SlateList()
}

// Logbook returns the story's entries in order. Failed actions are not
// part of it (see FailedActions); intended actions with no outcome are,
// with status logbook.OutcomeUnknown.
func (v *Voyage) Logbook() []logbook.Entry {
	v.mu.Lock()
	defer v.mu.Unlock()
	return cloneEntries(v.st.Entries)
}

// FailedActions returns the actions that were attempted and failed.
func (v *Voyage) FailedActions() []logbook.Entry {
	v.mu.Lock()
	defer v.mu.Unlock()
	return cloneEntries(v.st.FailedActions)
}

// Artifacts returns the artifact index, ordered by hash.
func (v *Voyage) Artifacts() []projection.Artifact {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make([]projection.Artifact, 0, len(v.st.Artifacts))
	for _, a := range v.st.Artifacts {
		out = append(out, *a)
	}
	slices.SortFunc(out, func(a, b projection.Artifact) int { return strings.Compare(a.Hash, b.Hash) })
	return out
}

// WriteStory renders the logbook as the story `helm log` prints.
func (v *Voyage) WriteStory(w io.Writer) error {
	v.mu.Lock()
	info, entries := v.st.Voyage, cloneEntries(v.st.Entries)
	v.mu.Unlock()
	return logbook.WriteStory(w, logbook.Header{
		Intent: info.Intent, Identity: info.Identity, Created: info.Created,
		Status: string(info.Status), CompletedAt: info.CompletedAt,
		Outcome: string(info.Outcome), Summary: info.Summary,
	}, entries)
}

func cloneEntries(in []logbook.Entry) []logbook.Entry {
	out := slices.Clone(in)
	for i := range out {
		if b := out[i].Bearing; b != nil {
			c := *b
			c.Observations = slices.Clone(b.Observations)
			c.Reading.History = slices.Clone(b.Reading.History)
			out[i].Bearing = &c
		}
		if a := out[i].Action; a != nil {
			c := *a
			out[i].Action = &c
		}
	}
	return out
}

// commit runs decide under the log's lock, after folding in every event
// appended so far, and appends the events it returns — with the blob
// records of the small artifacts they stow — as one atomic batch. It
// returns the sequence number of the last appended event.
func (v *Voyage) commit(ctx context.Context, op string, decide func(*projection.State, stower) ([]*projection.Event, error)) (uint64, error) {
	v.mu.Lock()
	broken := v.broken
	v.mu.Unlock()
	if broken != nil {
		return 0, v.fail(op, broken, "a write failed earlier; reopen the voyage")
	}
	var decideErr error
	var last uint64
	_, err := v.log.Commit(ctx, func(tx *segment.Tx) ([][]byte, error) {
		v.mu.Lock()
		defer v.mu.Unlock()
		if err := tx.Scan(v.st.Voyage.Seq+1, v.applyRecord); err != nil {
			return nil, err
		}
		blobs := map[*projection.Event][]byte{} // stowed event -> its blob record
		stow := func(a *artifact.Encoded) (*projection.Event, error) {
			if held := v.st.Artifacts[a.Hash]; held != nil && held.Status == projection.Stowed {
				return nil, nil // stored once per voyage; a jettisoned one is stowed again
			}
			for e := range blobs {
				if e.Artifact.Hash == a.Hash {
					return nil, nil
				}
			}
			ref := &projection.ArtifactRef{Hash: a.Hash, Size: a.Size, StoredSize: int64(len(a.Compressed))}
			var blob []byte
			if a.Inline() {
				blob = artifact.BlobRecord(a)
			} else {
				r, err := v.pack.Stow(a)
				if err != nil {
					return nil, err
				}
				ref.Offset = r.Offset
			}
			ev := &projection.Event{Type: projection.ArtifactStowed, Artifact: ref}
			blobs[ev] = blob
			return ev, nil
		}
		events, err := decide(&v.st, stow)
		if err != nil {
			decideErr = err
			return nil, err
		}
		// Number the records as the log will: a blob just before the event
		// that names it. Encode and check them all before folding any.
		now := v.home.now()
		seq := tx.Last()
		records := make([][]byte, 0, len(events)+len(blobs))
		seqs := make([]uint64, len(events))
		for i, e := range events {
			if blob := blobs[e]; blob != nil {
				seq++
				records = append(records, blob)
				e.Artifact.Blob = seq
			}
			e.At = now
			rec, err := projection.Encode(e)
			if err == nil && len(rec) > segment.DefaultMaxRecordSize {
				err = fmt.Errorf("%w: a %s event of %d bytes exceeds the log's record limit of %d bytes", ErrInvalid, e.Type, len(rec), segment.DefaultMaxRecordSize)
			}
			if err != nil {
				decideErr = err
				return nil, err
			}
			seq++
			seqs[i] = seq
			records = append(records, rec)
		}
		// Fold our own events now, so the next decide of this group sees
		// them; if the write fails, v.broken keeps these views from being
		// used again.
		for i, e := range events {
			if err := v.st.Apply(seqs[i], e); err != nil {
				decideErr = err
				v.broken = err
				return nil, err
			}
		}
		last = seq
		return records, nil
	})
	if err != nil {
		if decideErr == nil && errors.Is(err, segment.ErrPoisoned) {
			// The write or its fdatasync failed after the views took the
			// change in.
			v.mu.Lock()
			if v.broken == nil {
				v.broken = err
			}
			v.mu.Unlock()
			return 0, v.fail(op, err, "the disk reported a failure, so the change may or may not be recorded; reopen the voyage and check `helm log` before retrying")
		}
		if decideErr == nil && !errors.Is(err, segment.ErrCorrupt) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			// The log failed before anything was written (its directory,
			// lock or watermark could not be made, or opened).
			return 0, v.fail(op, err, "nothing was recorded")
		}
		return 0, v.fail(op, err, "")
	}
	v.mu.Lock()
	v.wrote = true
	v.mu.Unlock()
	return last, nil
}

func (v *Voyage) fail(op string, err error, hint string) error {
	var ve *VoyageError
	if errors.As(err, &ve) {
		return err
	}
	if hint == "" {
		switch {
		case errors.Is(err, ErrVoyageCompleted):
			hint = "start a new voyage with `helm voyage new`"
		case errors.Is(err, segment.ErrCorrupt):
			hint = "run `helm voyage verify`"
		}
	}
	return &VoyageError{Op: op, Voyage: v.id, Err: err, Hint: hint}
}

// resolveWho fills who.Identity from the voyage and checks that an entry
// has all three of identity, role and method.
func resolveWho(st *projection.State, who logbook.Who, entry bool) (logbook.Who, error) {
	if who.Identity == "" {
		who.Identity = st.Voyage.Identity
	}
	if err := logbook.ValidateIdentity(who.Identity); err != nil {
		return who, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if !entry {
		return who, nil
	}
	var missing []string
	if who.Role == "" {
		missing = append(missing, "role (--role, HELM_ROLE, or role in $HELM_HOME/config.toml; library: logbook.Who.Role)")
	}
	if who.Method == "" {
		missing = append(missing, "method (--method, HELM_METHOD, or method in $HELM_HOME/config.toml; library: logbook.Who.Method)")
	}
	if len(missing) > 0 {
		return who, fmt.Errorf("%w: every logbook entry records who took it; set %s", ErrMissingWho, strings.Join(missing, " and "))
	}
	return who, nil
}

func checkActive(st *projection.State) error {
	if st.Voyage.Status == projection.Completed {
		return fmt.Errorf("%w (%s at %s)", ErrVoyageCompleted, st.Voyage.Outcome, st.Voyage.CompletedAt.Format("2006-01-02T15:04:05Z07:00"))
	}
	return nil
}

// Observe looks at mark m and puts the observation on the slate, replacing
// any earlier observation of the same mark. The sighting is stored as an
// artifact unless the voyage holds the same bytes already.
func (v *Voyage) Observe(ctx context.Context, m marks.Mark, who logbook.Who) (Observation, error) {
	if err := marks.Validate(m); err != nil { // before the world is looked at
		return Observation{}, v.fail("observe", &invalidError{err}, "")
	}
	if err := checkWho(who); err != nil {
		return Observation{}, v.fail("observe "+m.String(), err, "")
	}
	if err := v.Refresh(ctx); err != nil {
		return Observation{}, v.fail("observe", err, "")
	}
	v.mu.Lock()
	err := checkActive(&v.st)
	v.mu.Unlock()
	if err != nil { // fail before touching the world; checked again under the lock
		return Observation{}, v.fail("observe "+m.String(), err, "")
	}
	env := v.home.opts.MarkEnv
	if env == nil {
		env = &marks.Env{}
	}
	s, err := m.Observe(ctx, env)
	if err != nil {
		return Observation{}, v.fail("observe "+m.String(), err, "")
	}
	obs := Observation{Mark: m, Sighting: s, ObservedAt: v.home.now()}
	if _, err := v.Record(ctx, obs, who); err != nil {
		return Observation{}, err
	}
	return obs, nil
}

// Record puts an observation made elsewhere (read from `helm observe
// --out`, or built by the caller) on the slate.
func (v *Voyage) Record(ctx context.Context, obs Observation, who logbook.Who) (logbook.Observation, error) {
	op := "record observation"
	if err := checkObservation("the observation", obs); err != nil {
		return logbook.Observation{}, v.fail(op, err, "") // not named by its label: a bad mark's may hold credentials
	}
	op = "observe " + obs.Mark.String()
	if err := checkWho(who); err != nil {
		return logbook.Observation{}, v.fail(op, err, "")
	}
	enc, err := encodeObservation(obs)
	if err != nil {
		return logbook.Observation{}, v.fail(op, fmt.Errorf("%w: %v", ErrInvalid, err), "")
	}
	var out logbook.Observation
	_, err = v.commit(ctx, op, func(st *projection.State, stow stower) ([]*projection.Event, error) {
		if err := checkActive(st); err != nil {
			return nil, err
		}
		w, err := resolveWho(st, who, false)
		if err != nil {
			return nil, err
		}
		var events []*projection.Event
		lo, err := v.sealObservation(enc, stow, &events)
		if err != nil {
			return nil, err
		}
		lo.ObservedBy = w
		out = lo
		events = append(events, &projection.Event{Type: projection.Observed, Who: w, Obs: &lo})
		return withWho(events, w), nil
	})
	return out, err
}

// sealObservation stows the sighting (appending the stow event, if any, to
// events) and returns the logbook form of the observation.
func (v *Voyage) sealObservation(enc *encodedObservation, stow stower, events *[]*projection.Event) (logbook.Observation, error) {
	obs := enc.obs
	ev, err := stow(enc.art)
	if err != nil {
		return logbook.Observation{}, err
	}
	if ev != nil {
		*events = append(*events, ev)
	}
	at := obs.ObservedAt
	if at.IsZero() {
		at = v.home.now()
	}
	return logbook.Observation{
		Key: obs.Mark.Key(), Mark: enc.mark, Label: obs.Mark.String(), Artifact: enc.art.Hash, ObservedAt: at.UTC(),
	}, nil
}

func withWho(events []*projection.Event, who logbook.Who) []*projection.Event {
	for _, e := range events {
		e.Who = who
	}
	return events
}

// Erase takes the mark with this key (see marks.Mark.Key) off the slate.
func (v *Voyage) Erase(ctx context.Context, key string, who logbook.Who) error {
	if err := checkWho(who); err != nil {
		return v.fail("erase "+key, err, "")
	}
	_, err := v.commit(ctx, "erase "+key, func(st *projection.State, _ stower) ([]*projection.Event, error) {
		if err := checkActive(st); err != nil {
			return nil, err
		}
		if _, ok := st.Slate[key]; !ok {
			keys := make([]string, 0, len(st.Slate))
			for k := range st.Slate {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			return nil, fmt.Errorf("%w: %s (the slate holds: %s)", ErrNotOnSlate, key, orNone(keys))
		}
		w, err := resolveWho(st, who, false)
		if err != nil {
			return nil, err
		}
		return []*projection.Event{{Type: projection.MarkErased, Who: w, Key: key}}, nil
	})
	return err
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "nothing"
	}
	return strings.Join(s, ", ")
}

// Wipe empties the slate without taking a bearing.
func (v *Voyage) Wipe(ctx context.Context, who logbook.Who) error {
	if err := checkWho(who); err != nil {
		return v.fail("wipe slate", err, "")
	}
	_, err := v.commit(ctx, "wipe slate", func(st *projection.State, _ stower) ([]*projection.Event, error) {
		if err := checkActive(st); err != nil {
			return nil, err
		}
		w, err := resolveWho(st, who, false)
		if err != nil {
			return nil, err
		}
		return []*projection.Event{{Type: projection.SlateWiped, Who: w}}, nil
	})
	return err
}

// BearingOptions are the optional parts of a bearing.
type BearingOptions struct {
	// Observations are sealed with the slate's, for observations made
	// elsewhere (`helm bearing --observation FILE`). One with the same
	// mark key as a slate entry replaces it.
	Observations []Observation
	// Source says who wrote the reading; empty means agent.
	Source logbook.Source
}

// TakeBearing records a reading over the slate's observations: the
// logbook entry and the wiping of the slate are one atomic event.
func (v *Voyage) TakeBearing(ctx context.Context, reading string, who logbook.Who, opts *BearingOptions) (logbook.Entry, error) {
	if opts == nil {
		opts = &BearingOptions{}
	}
	if err := errors.Join(checkText("reading", reading), checkWho(who)); err != nil {
		return logbook.Entry{}, v.fail("take bearing", err, "")
	}
	reading = strings.TrimSpace(reading)
	if reading == "" {
		return logbook.Entry{}, v.fail("take bearing", fmt.Errorf("%w: the reading is empty; say what the observations mean", ErrInvalid), "")
	}
	source := opts.Source
	if source == "" {
		source = logbook.SourceAgent
	}
	extra := make([]*encodedObservation, len(opts.Observations))
	for i, o := range opts.Observations {
		if err := checkObservation(fmt.Sprintf("observation %d", i+1), o); err != nil {
			return logbook.Entry{}, v.fail("take bearing", err, "")
		}
		enc, err := encodeObservation(o)
		if err != nil {
			return logbook.Entry{}, v.fail("take bearing", fmt.Errorf("%w: observation %d: %v", ErrInvalid, i+1, err), "")
		}
		extra[i] = enc
	}
	seq, err := v.commit(ctx, "take bearing", func(st *projection.State, stow stower) ([]*projection.Event, error) {
		if err := checkActive(st); err != nil {
			return nil, err
		}
		w, err := resolveWho(st, who, true)
		if err != nil {
			return nil, err
		}
		var events []*projection.Event
		for _, e := range extra {
			lo, err := v.sealObservation(e, stow, &events)
			if err != nil {
				return nil, err
			}
			lo.ObservedBy = w
			events = append(events, &projection.Event{Type: projection.Observed, Obs: &lo})
		}
		if len(st.Slate) == 0 && len(extra) == 0 {
			return nil, fmt.Errorf("%w: a bearing needs at least one observation; observe a mark first (`helm observe ...`) or pass --observation FILE", ErrEmptySlate)
		}
		// The bearing seals the slate as these events leave it: its
		// observations are not stored again (projection.Event.Bearing).
		events = append(events, &projection.Event{Type: projection.BearingTaken, Bearing: &logbook.Bearing{
			Reading: logbook.Reading{Text: reading, Source: source},
		}})
		return withWho(events, w), nil
	})
	if err != nil {
		return logbook.Entry{}, err
	}
	return v.entryAt(seq)
}

// entryAt returns a copy of the entry recorded by the event at seq.
func (v *Voyage) entryAt(seq uint64) (logbook.Entry, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e, ok := v.st.EntryBySeq(seq)
	if !ok {
		return logbook.Entry{}, fmt.Errorf("voyage %s: entry just recorded is not in the logbook view", v.id)
	}
	return cloneEntries([]logbook.Entry{e})[0], nil
}

// Challenge replaces the reading of bearing n (its number in the story)
// with text, keeping the challenged reading and the feedback in its
// history.
func (v *Voyage) Challenge(ctx context.Context, n int, feedback, text string, source logbook.Source, who logbook.Who) (logbook.Entry, error) {
	op := fmt.Sprintf("challenge bearing %d", n)
	if err := errors.Join(checkText("feedback", feedback), checkText("reading", text), checkWho(who)); err != nil {
		return logbook.Entry{}, v.fail(op, err, "")
	}
	feedback, text = strings.TrimSpace(feedback), strings.TrimSpace(text)
	if feedback == "" || text == "" {
		return logbook.Entry{}, v.fail(op, fmt.Errorf("%w: a challenge needs feedback (--with) and the new reading (--reading)", ErrInvalid), "")
	}
	if source == "" {
		source = logbook.SourceUser
	}
	var bseq uint64
	_, err := v.commit(ctx, op, func(st *projection.State, _ stower) ([]*projection.Event, error) {
		if err := checkActive(st); err != nil {
			return nil, err
		}
		var ok bool
		if bseq, ok = st.BearingSeq(n); !ok {
			return nil, fmt.Errorf("%w: entry %d of %d is not a bearing (see `helm log`)", ErrNoSuchBearing, n, len(st.Entries))
		}
		w, err := resolveWho(st, who, true)
		if err != nil {
			return nil, err
		}
		return []*projection.Event{{Type: projection.ReadingChallenged, Who: w, Challenge: &projection.Challenge{
			Bearing: bseq, Feedback: feedback, Text: text, Source: source,
		}}}, nil
	})
	if err != nil {
		return logbook.Entry{}, err
	}
	return v.entryAt(bseq)
}

// Action is an operation in the world that a voyage performs and records.
// The actions package implements the git and GitHub ones.
type Action interface {
	// Kind names the action, such as "commit" or "create-pull-request".
	Kind() string
	// Perform does it and reports what it left in the world.
	Perform(ctx context.Context) (logbook.ActionResult, error)
}

// ActionError is a failed action: the world (git, gh) refused it. The
// failure is recorded in the event log, not in the story.
type ActionError struct {
	Kind string
	Err  error
}

func (e *ActionError) Error() string { return e.Kind + ": " + e.Err.Error() }
func (e *ActionError) Unwrap() error { return e.Err }

// Perform records the intent to perform a (durably, before the world is
// touched), performs it, and records the outcome. A crash in between
// leaves the entry with status logbook.OutcomeUnknown. A failed action
// returns an *ActionError; the failure is recorded but is not part of the
// story.
func (v *Voyage) Perform(ctx context.Context, a Action, who logbook.Who) (logbook.Entry, error) {
	op := "perform " + a.Kind()
	if err := checkWho(who); err != nil {
		return logbook.Entry{}, v.fail(op, err, "")
	}
	params, err := json.Marshal(a)
	if err != nil {
		return logbook.Entry{}, v.fail(op, fmt.Errorf("%w: encode parameters: %v", ErrInvalid, err), "")
	}
	id := v.home.opts.NewID().String()
	var w logbook.Who
	intent, err := v.commit(ctx, op, func(st *projection.State, _ stower) ([]*projection.Event, error) {
		if err := checkActive(st); err != nil {
			return nil, err
		}
		if w, err = resolveWho(st, who, true); err != nil {
			return nil, err
		}
		return []*projection.Event{{Type: projection.ActionIntended, Who: w, Action: &logbook.Action{
			ID: id, Kind: a.Kind(), Params: params,
		}}}, nil
	})
	if err != nil {
		return logbook.Entry{}, err
	}
	result, perr := a.Perform(ctx)
	outcome := &projection.Event{Type: projection.ActionPerformed, Who: w, Action: &logbook.Action{ID: id, Kind: a.Kind(), Result: &result}}
	if perr != nil {
		failed := &logbook.Action{ID: id, Kind: a.Kind(), Error: perr.Error()}
		if !reflect.DeepEqual(result, logbook.ActionResult{}) {
			failed.Result = &result // partly done: a PR created, its review request refused
		}
		outcome = &projection.Event{Type: projection.ActionFailed, Who: w, Action: failed}
	}
	// Record the outcome even if ctx was cancelled meanwhile: the world
	// has been touched.
	_, err = v.commit(context.WithoutCancel(ctx), op, func(st *projection.State, _ stower) ([]*projection.Event, error) {
		if !st.HasAction(id) {
			return nil, fmt.Errorf("action %s has no recorded intent", id)
		}
		return []*projection.Event{outcome}, nil
	})
	if err != nil {
		// The world was touched: say so, with what it left, so nobody
		// performs the action a second time on the strength of this error.
		what := "performed: " + logbook.DescribeAction(&logbook.Action{Kind: a.Kind(), Status: logbook.Performed, Result: &result})
		if perr != nil {
			what = "attempted and failed (" + perr.Error() + ")"
		}
		return logbook.Entry{}, &VoyageError{
			Op: op, Voyage: v.id,
			Err:  fmt.Errorf("the action was %s, but its outcome could not be recorded: %w", what, err),
			Hint: "the logbook shows it as outcome unknown; check the world (git log, the pull request) before performing it again",
		}
	}
	if perr != nil {
		return logbook.Entry{}, v.fail(op, &ActionError{Kind: a.Kind(), Err: perr}, "the failure is in the event log; nothing was added to the story")
	}
	return v.entryAt(intent)
}

// Complete ends the voyage with an outcome and an optional summary. After
// it, nothing more is observed, sealed or performed on the voyage.
func (v *Voyage) Complete(ctx context.Context, outcome projection.Outcome, summary string, who logbook.Who) error {
	if err := errors.Join(checkText("summary", summary), checkWho(who)); err != nil {
		return v.fail("complete", err, "")
	}
	if outcome == "" {
		outcome = projection.OutcomeCompleted
	}
	if !slices.Contains(projection.Outcomes, outcome) {
		return v.fail("complete", fmt.Errorf("%w: outcome %q is not one of %v", ErrInvalid, outcome, projection.Outcomes), "")
	}
	_, err := v.commit(ctx, "complete", func(st *projection.State, _ stower) ([]*projection.Event, error) {
		if err := checkActive(st); err != nil {
			return nil, err
		}
		w, err := resolveWho(st, who, false)
		if err != nil {
			return nil, err
		}
		return []*projection.Event{{Type: projection.VoyageCompleted, Who: w, Completion: &projection.Completion{
			Outcome: outcome, Summary: strings.TrimSpace(summary),
		}}}, nil
	})
	if err == nil {
		v.writeSummary()
	}
	return err
}
