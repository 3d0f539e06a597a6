package helm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
	"github.com/helmlog/helm/sighting"
)

// Artifacts: the sightings' bytes, read back and checked against their
// address, jettisoned, or reduced to a summary.

// OpenArtifact returns a reader of the sighting JSON stored under hash (a
// full BLAKE3 hex hash or an unambiguous prefix of at least 4 digits),
// decompressed as it is read, so that a sighting of gigabytes costs a few
// buffers. The bytes are checked against their address as they go by: a
// reader of damaged bytes returns an error wrapping ErrDamaged at their
// end, where an intact one returns io.EOF, so read to the end before
// trusting them (io.ReadAll; sighting.Read decodes them). The caller
// closes it.
func (v *Voyage) OpenArtifact(ctx context.Context, hash string) (io.ReadCloser, error) {
	a, op, err := v.stowed(ctx, hash)
	if err != nil {
		return nil, err
	}
	r, err := v.open(ctx, &a.ArtifactRef)
	if err != nil {
		return nil, v.fail(op, err, hint.Hint{})
	}
	return &artifactReader{ReadCloser: r, fail: func(err error) error { return v.fail(op, err, hint.Hint{}) }}, nil
}

// artifactReader fails as OpenArtifact does: damage found as the bytes go
// by names the voyage, as a *VoyageError.
type artifactReader struct {
	io.ReadCloser
	fail func(error) error
}

func (r *artifactReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = r.fail(err)
	}
	return n, err
}

// stowed finds the artifact hash names, which must be stowed, and the
// operation's name for errors.
func (v *Voyage) stowed(ctx context.Context, hash string) (projection.Artifact, string, error) {
	op := "read artifact " + hash
	if err := v.refresh(ctx); err != nil {
		return projection.Artifact{}, op, v.fail(op, err, hint.Hint{})
	}
	v.mu.Lock()
	a, err := v.findArtifact(hash, v.logScan(ctx))
	v.mu.Unlock()
	if err != nil {
		return a, op, v.fail(op, err, hint.Hint{})
	}
	op = "read artifact " + a.Hash
	if a.Status != projection.Stowed {
		by, berr := v.curatedBy(ctx, a.Hash)
		if berr != nil {
			return a, op, v.fail(op, berr, hint.Hint{})
		}
		err := fmt.Errorf("%w: %s", ErrArtifactGone, goneText(&a, by))
		if a.ReducedTo != "" {
			return a, op, v.fail(op, err, hint.Hint{Kind: hint.ReadSummary, Text: "read its summary, artifact " + a.ReducedTo})
		}
		return a, op, v.fail(op, fmt.Errorf("%w; its bytes are no longer read, and the logbook still names its mark", err), hint.Hint{})
	}
	return a, op, nil
}

// open returns a reader of an artifact's bytes, checked against its
// address: a copy the journal holds is decompressed as it is read, a blob
// record (small) is read whole and checked first.
func (v *Voyage) open(ctx context.Context, ref *projection.ArtifactRef) (io.ReadCloser, error) {
	if ref.Blob == 0 {
		return v.rec.open(ctx, artifactRef(ref))
	}
	var blob []byte
	err := v.rec.Scan(ctx, ref.Blob, func(r segment.Record) error {
		blob = r.Data
		return errFound
	})
	if err != nil && !errors.Is(err, errFound) {
		return nil, err
	}
	data, err := artifact.ReadBlob(artifactRef(ref), blob, v.rec.Dir())
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

// artifactRef is where the artifact an event names is stored.
func artifactRef(r *projection.ArtifactRef) artifact.Ref {
	return artifact.Ref{Hash: r.Hash, Size: r.Size, StoredSize: r.StoredSize, Offset: r.Offset, Blob: r.Blob}
}

// artifact returns the index entry of the artifact stored under hash (in
// full), nil when the voyage holds none. While the snapshot the views were
// opened from still holds the index, it reads the one block of it that can
// hold hash (projection.State.Artifact). Should that block not check out,
// the views are folded anew from the first event with scan, as when a
// section does not (loadSections); should that fail too, the handle takes
// no more changes. The caller holds v.mu.
func (v *Voyage) artifact(hash string, scan scanFunc) (*projection.Artifact, error) {
	a, err := v.st.Artifact(hash)
	if !errors.Is(err, projection.ErrSnapshotSection) {
		return a, err
	}
	if err := v.fold(scan); err != nil {
		if v.broken == nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			v.broken = fmt.Errorf("a block of the snapshot's artifact index did not check out, and folding the log instead failed: %w", err)
		}
		return nil, err
	}
	return v.st.Artifact(hash)
}

// errFound ends a scan that found what it was looking for.
var errFound = errors.New("found")

// hashDigits is how long an artifact's hash is in hex (BLAKE3-256): a
// hash that long is the prefix of no other.
const hashDigits = 64

// findArtifact resolves a hash or unique hash prefix: a full hash is
// looked up (artifact), a prefix searched for in the whole index, read
// first if the snapshot still holds it. scan folds the views anew should
// the snapshot not check out. The caller holds v.mu.
func (v *Voyage) findArtifact(hash string, scan scanFunc) (projection.Artifact, error) {
	a, err := v.artifact(hash, scan)
	if err != nil {
		return projection.Artifact{}, err
	}
	if a != nil {
		return *a, nil
	}
	var found []*projection.Artifact
	if len(hash) >= 4 && len(hash) < hashDigits {
		if err := v.loadSections(projection.SectionArtifacts, scan); err != nil {
			return projection.Artifact{}, err
		}
		for h, a := range v.st.Artifacts {
			if strings.HasPrefix(h, hash) {
				found = append(found, a)
			}
		}
	}
	switch len(found) {
	case 1:
		return *found[0], nil
	case 0:
		if len(hash) < 4 {
			return projection.Artifact{}, fmt.Errorf("%w: %q: a prefix names one with at least 4 digits of its hash", ErrNoArtifact, hash)
		}
		return projection.Artifact{}, fmt.Errorf("%w: %q", ErrNoArtifact, hash)
	}
	return projection.Artifact{}, fmt.Errorf("%w: prefix %q matches %d artifacts; give more of the hash", ErrNoArtifact, hash, len(found))
}

// Jettison marks an artifact's bytes as discarded, for reason (why: it
// holds a customer's data, it is stale), recorded with who and when. The
// logbook keeps the marks and readings that referred to it; reading the
// artifact fails with ErrArtifactGone, until the same bytes are observed
// again and stowed anew. The bytes stay where they are (the log, the
// pack) until Compact reclaims them.
//
// A voyage of any status may be curated (Jettison, Reduce), a closed one
// included, which stays closed with its outcome; the change is guarded
// as an action is (see curate.go): by default an agent (a method other
// than human) may not curate a closed voyage, and a refusal is recorded
// and returned as an error matching ErrRefused.
func (v *Voyage) Jettison(ctx context.Context, hash, reason string, who logbook.Who) error {
	op := "jettison artifact " + hash
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return v.fail(op, fmt.Errorf("%w: say why the artifact is jettisoned (the reason is recorded)", ErrInvalid), hint.Hint{})
	}
	if err := errors.Join(checkText("reason", reason), checkWho(who)); err != nil {
		return v.fail(op, err, hint.Hint{})
	}
	if err := v.foldFromLog(ctx, op); err != nil {
		return err
	}
	// The whole index is read first: hash may be a prefix.
	var refused curationRefused
	_, err := v.commitReading(ctx, op, projection.SectionArtifacts, func(st *projection.State, _ stower) ([]*projection.Event, error) {
		a, err := v.findArtifact(hash, v.logScan(ctx)) // never scans: the index is read
		if err != nil {
			return nil, err
		}
		if a.Status == projection.Jettisoned {
			return nil, fmt.Errorf("%w: artifact %s is jettisoned already", ErrArtifactGone, a.Hash)
		}
		params := map[string]string{"artifact": a.Hash, "reason": reason}
		if refusal, err := v.checkCuration(st, curateJettison, a.Hash, params, who, reason, &refused); refusal != nil || err != nil {
			return refusal, err
		}
		w, err := resolveWho(st, who, false)
		if err != nil {
			return nil, err
		}
		return []*projection.Event{{Type: projection.ArtifactJettisoned, Who: w, Artifact: &projection.ArtifactRef{Hash: a.Hash, Reason: reason}}}, nil
	})
	if err == nil && refused.verdict.Decision != "" {
		return v.refusedError(op, &refused)
	}
	return err
}

// Reduction is a summary that stands in for an artifact.
type Reduction struct {
	// Summary is the derived sighting.
	Summary sighting.Sighting
	// Method says how the summary was made: "human", a model name.
	Method string
}

// Reduce stores r.Summary as a derived artifact of the artifact at hash,
// stowed as every sighting is (a blob record when small, the pack
// otherwise), and marks the original reduced: readers are pointed to the
// summary. It returns the summary's hash. It is guarded as Jettison is.
func (v *Voyage) Reduce(ctx context.Context, hash string, r Reduction, who logbook.Who) (string, error) {
	op := "reduce artifact " + hash
	if err := errors.Join(checkText("method", r.Method), checkWho(who)); err != nil {
		return "", v.fail(op, err, hint.Hint{})
	}
	if r.Summary == nil {
		return "", v.fail(op, fmt.Errorf("%w: no summary", ErrInvalid), hint.Hint{})
	}
	data, err := sighting.Marshal(r.Summary)
	if err != nil {
		return "", v.fail(op, fmt.Errorf("%w: %v", ErrInvalid, err), hint.Hint{})
	}
	red, err := v.home.redactor()
	if err != nil {
		return "", v.fail(op, err, hint.Hint{})
	}
	data, _ = redactSighting(red, data)
	method := strings.TrimSpace(r.Method)
	if method == "" {
		return "", v.fail(op, fmt.Errorf("%w: say how the summary was made (Reduction.Method)", ErrInvalid), hint.Hint{})
	}
	if err := v.foldFromLog(ctx, op); err != nil {
		return "", err
	}
	enc := v.prepare(ctx, data)
	// The whole index is read first: hash may be a prefix.
	var refused curationRefused
	_, err = v.commitReading(ctx, op, projection.SectionArtifacts, func(st *projection.State, stow stower) ([]*projection.Event, error) {
		a, err := v.findArtifact(hash, v.logScan(ctx)) // never scans: the index is read
		if err != nil {
			return nil, err
		}
		if a.Status != projection.Stowed {
			return nil, fmt.Errorf("%w: artifact %s is %s already", ErrArtifactGone, a.Hash, a.Status)
		}
		if enc.Hash == a.Hash {
			return nil, fmt.Errorf("%w: the summary is identical to the artifact", ErrInvalid)
		}
		params := map[string]string{"artifact": a.Hash, "method": method, "summary": enc.Hash}
		if refusal, err := v.checkCuration(st, curateReduce, a.Hash, params, who, "", &refused); refusal != nil || err != nil {
			return refusal, err
		}
		w, err := resolveWho(st, who, false)
		if err != nil {
			return nil, err
		}
		// The summary's stow event, if it needs one, becomes the
		// reduction: one event stores it and points the original to it.
		ev, err := stow(enc)
		if err != nil {
			return nil, err
		}
		if ev == nil { // the voyage holds the summary's bytes already
			ref := st.Artifacts[enc.Hash].ArtifactRef
			ev = &projection.Event{Artifact: &ref}
		}
		ev.Type, ev.Who = projection.ArtifactReduced, w
		ev.Artifact.DerivedFrom, ev.Artifact.Method = a.Hash, method
		return []*projection.Event{ev}, nil
	})
	if err != nil {
		return "", err
	}
	if refused.verdict.Decision != "" {
		return "", v.refusedError(op, &refused)
	}
	return enc.Hash, nil
}
