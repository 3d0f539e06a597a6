package helm

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/redact"
	"github.com/helmlog/helm/sighting"
)

// The slate: the observations gathered since the last bearing, a set keyed
// by mark (the newest observation of a mark wins).

// ObserveOptions are the optional parts of an observation.
type ObserveOptions struct {
	// Env is the environment the mark is observed in: the directory its
	// relative paths resolve against, the GitHub runner, the timeouts.
	// nil means the zero Env: the process's working directory, no GitHub.
	// Its StreamAbove, when zero, is 4 MiB: a larger file's text is read
	// as the sighting is stored, never held in memory whole (a negative
	// StreamAbove reads every file whole).
	Env *marks.Env
	// Confirmed says a person agreed to run the command of a command
	// mark that a guard rule lets run only when confirmed.
	Confirmed bool
}

// Observed is what an observation gave: the look itself, and how the
// voyage recorded it.
type Observed struct {
	// Observation is the mark, the sighting that came back and when: what
	// an observation file holds (it encodes to JSON), to be sealed by a
	// bearing elsewhere (BearingOptions.Observations).
	Observation Observation
	// Record is the observation as the slate holds it: its key, label,
	// and the artifact holding its sighting.
	Record logbook.ObservationRecord
	// Artifact is that artifact: its address, sizes and where it lies.
	Artifact ArtifactInfo
}

// Failures lists what the observation's sighting records as failed: a
// file that was not there, a program's non-zero exit or timeout, an HTTP
// error status, a request refused. The observation is on the slate all
// the same, but what was looked at reported a failure, which a caller
// should not retry blindly. nil when nothing failed.
func (o Observed) Failures() []sighting.Failure { return sighting.Failures(o.Observation.Sighting) }

// ObservationError is what Observe returns, with the Observed, when the
// look was recorded but what was looked at reported failures (a file
// that could not be read, a program that exited non-zero, an HTTP error
// status): the observation is on the slate all the same, as evidence of
// what was seen. A caller that checks err != nil cannot miss it; one that
// wants the observation regardless takes it with errors.As. To take it
// off the slate: Voyage.Erase with Key.
type ObservationError struct {
	Voyage   string             // the voyage's id
	Mark     marks.Mark         // what was looked at
	Key      string             // the observation's key on the slate
	Failures []sighting.Failure // what the sighting reports as failed, at least one
}

func (e *ObservationError) Error() string {
	msgs := make([]string, len(e.Failures))
	for i, f := range e.Failures {
		msgs[i] = f.Message
	}
	return fmt.Sprintf("observe %s on voyage %s: recorded, but %s", e.Mark, e.Voyage, strings.Join(msgs, "; "))
}

// Observe looks at mark m and puts the observation on the slate, replacing
// any earlier observation of the same mark. The sighting is stored as an
// artifact unless the voyage holds the same bytes already. Nothing is
// looked at for a completed voyage or an invalid mark. A look that failed
// (a file that could not be read, a program that exited non-zero, an HTTP
// error) is an observation all the same: it is recorded and returned,
// with an *ObservationError listing what failed (as Observed.Failures
// does).
func (v *Voyage) Observe(ctx context.Context, m marks.Mark, who logbook.Who, opts *ObserveOptions) (Observed, error) {
	if err := marks.Validate(m); err != nil { // before the world is looked at
		return Observed{}, v.fail("observe", &invalidError{err}, hint.Hint{})
	}
	op := "observe " + m.String()
	if err := checkWho(who); err != nil {
		return Observed{}, v.fail(op, err, hint.Hint{})
	}
	if err := v.refresh(ctx); err != nil {
		return Observed{}, v.fail(op, err, hint.Hint{})
	}
	v.mu.Lock()
	err := checkActive(&v.st)
	v.mu.Unlock()
	if err != nil { // fail before touching the world; checked again under the lock
		return Observed{}, v.fail(op, err, hint.Hint{})
	}
	if err := v.guardCommand(ctx, op, m, who, opts != nil && opts.Confirmed); err != nil {
		return Observed{}, err
	}
	var env marks.Env
	if opts != nil && opts.Env != nil {
		env = *opts.Env
	}
	if env.StreamAbove == 0 {
		env.StreamAbove = streamAbove
	}
	s, err := m.Observe(ctx, &env)
	if err != nil {
		return Observed{}, v.fail(op, err, hint.Hint{})
	}
	o, err := v.Record(ctx, Observation{Mark: m, Sighting: s, ObservedAt: v.home.now()}, who)
	if err != nil {
		return o, err
	}
	if f := o.Failures(); len(f) > 0 {
		return o, &ObservationError{Voyage: v.ID(), Mark: m, Key: o.Record.Key, Failures: f}
	}
	return o, nil
}

// Record puts an observation made elsewhere (read from an observation
// file, or built by the caller) on the slate. An observation without a
// time is recorded at the current one.
func (v *Voyage) Record(ctx context.Context, obs Observation, who logbook.Who) (Observed, error) {
	op := "record observation"
	if err := checkObservation("the observation", obs); err != nil {
		return Observed{}, v.fail(op, err, hint.Hint{}) // not named by its label: a bad mark's may hold credentials
	}
	op = "observe " + obs.Mark.String()
	if err := checkWho(who); err != nil {
		return Observed{}, v.fail(op, err, hint.Hint{})
	}
	red, err := v.home.redactor()
	if err != nil {
		return Observed{}, v.fail(op, err, hint.Hint{})
	}
	enc, err := v.encodeObservation(ctx, red, obs)
	if err != nil {
		return Observed{}, v.fail(op, fmt.Errorf("%w: %v", ErrInvalid, err), hint.Hint{})
	}
	var out Observed
	_, err = v.commit(ctx, op, func(st *projection.State, stow stower) ([]*projection.Event, error) {
		if err := checkActive(st); err != nil {
			return nil, err
		}
		w, err := resolveWho(st, who, false)
		if err != nil {
			return nil, err
		}
		var events []*projection.Event
		rec, err := v.sealObservation(enc, stow, &events)
		if err != nil {
			return nil, err
		}
		rec.ObservedBy = w
		out.Record = rec
		events = append(events, &projection.Event{Type: projection.Observed, Who: w, Obs: &rec})
		return withWho(events, w), nil
	})
	if err != nil {
		return Observed{}, err
	}
	out.Observation = obs
	out.Observation.ObservedAt = out.Record.ObservedAt
	v.mu.Lock()
	a, err := v.artifact(out.Record.Artifact, v.logScan(ctx))
	v.mu.Unlock()
	if err != nil {
		// Recorded all the same; the index could not be read to describe it.
		return Observed{}, v.fail(op, fmt.Errorf("the observation was recorded, but its artifact's index entry could not be read: %w", err), hint.Hint{})
	}
	if a != nil {
		out.Artifact = artifactInfo(a)
	}
	if enc.stream != nil {
		out.Observation.Sighting = enc.stream.stored(v.storedOpener(ctx, out.Artifact))
	}
	return out, nil
}

// encodedObservation is an observation in the forms the log stores. It is
// made before the log's lock is taken: hashing and compressing the
// sighting run in parallel across goroutines, not one after another under
// the lock.
type encodedObservation struct {
	obs  Observation
	mark []byte
	art  *artifact.Encoded
	// stream is set for a sighting stored as a stream (its large texts
	// read as it is stored): obs then holds it before it was stored.
	stream *streamedSighting
}

// encodeObservation redacts the sighting (the returned observation holds
// the redacted sighting, as stored) and hashes it, and compresses it
// unless the voyage holds it already.
func (v *Voyage) encodeObservation(ctx context.Context, r *redact.Redactor, obs Observation) (*encodedObservation, error) {
	mark, err := marks.Marshal(obs.Mark)
	if err != nil {
		return nil, err
	}
	if f, ok := obs.Sighting.(*sighting.Files); ok && sighting.HasSources(f) {
		st := newStreamedSighting(ctx, r, f)
		return &encodedObservation{obs: obs, mark: mark, art: artifact.Stream(st.encode), stream: st}, nil
	}
	sight, err := sighting.Marshal(obs.Sighting)
	if err != nil {
		return nil, err
	}
	if red, n := redactSighting(r, sight); n > 0 {
		s, err := sighting.Unmarshal(red)
		if err != nil {
			return nil, fmt.Errorf("redacted sighting: %w", err)
		}
		obs.Sighting, sight = s, red
	}
	return &encodedObservation{obs: obs, mark: mark, art: v.prepare(ctx, sight)}, nil
}

// prepare hashes an artifact's bytes and compresses them, outside the
// log's lock, unless the voyage as last read holds them: a repeated
// sighting costs a hash, not a compression. Should the voyage have
// jettisoned it since, the stower compresses it under the lock.
func (v *Voyage) prepare(ctx context.Context, data []byte) *artifact.Encoded {
	e := artifact.Prepare(data)
	v.mu.Lock()
	held, err := v.artifact(e.Hash, v.logScan(ctx))
	v.mu.Unlock()
	if err != nil || held == nil || held.Status != projection.Stowed { // the stower looks again
		e.Compress()
	}
	return e
}

// sealObservation stows the sighting (appending the stow event, if any, to
// events) and returns the observation as the slate records it.
func (v *Voyage) sealObservation(enc *encodedObservation, stow stower, events *[]*projection.Event) (logbook.ObservationRecord, error) {
	obs := enc.obs
	ev, err := stow(enc.art)
	if err != nil {
		return logbook.ObservationRecord{}, err
	}
	if ev != nil {
		*events = append(*events, ev)
	}
	at := obs.ObservedAt
	if at.IsZero() {
		at = v.home.now()
	}
	return logbook.ObservationRecord{
		Key: obs.Mark.Key(), Mark: enc.mark, Label: obs.Mark.String(), Artifact: enc.art.Hash, ObservedAt: at.UTC(),
	}, nil
}

// Erase takes the mark with this key (see marks.Mark.Key) off the slate.
func (v *Voyage) Erase(ctx context.Context, key string, who logbook.Who) error {
	op := "erase " + key
	if err := checkWho(who); err != nil {
		return v.fail(op, err, hint.Hint{})
	}
	_, err := v.commit(ctx, op, func(st *projection.State, _ stower) ([]*projection.Event, error) {
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
		return v.fail("wipe slate", err, hint.Hint{})
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
