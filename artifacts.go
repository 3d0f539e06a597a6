package helm

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
	"github.com/helmlog/helm/sighting"
)

// Artifact returns the sighting JSON stored under hash (a full BLAKE3 hex
// hash or an unambiguous prefix), after checking it against its address.
func (v *Voyage) Artifact(ctx context.Context, hash string) ([]byte, error) {
	if err := v.Refresh(ctx); err != nil {
		return nil, v.fail("read artifact", err, "")
	}
	v.mu.Lock()
	a, err := v.findArtifact(hash)
	v.mu.Unlock()
	if err != nil {
		return nil, v.fail("read artifact "+hash, err, "")
	}
	if a.Status != projection.Stowed {
		hint := "it was jettisoned: helm no longer reads it; the logbook still names the mark"
		if a.ReducedTo != "" {
			hint = "read its summary " + a.ReducedTo
		}
		return nil, v.fail("read artifact "+a.Hash, fmt.Errorf("%w: it is %s", ErrArtifactGone, a.Status), hint)
	}
	data, err := v.load(ctx, &a.ArtifactRef)
	if err != nil {
		return nil, v.fail("read artifact "+a.Hash, err, "")
	}
	return data, nil
}

// load reads an artifact's bytes from its blob record or the pack file,
// and checks them against its address.
func (v *Voyage) load(ctx context.Context, ref *projection.ArtifactRef) ([]byte, error) {
	if ref.Blob == 0 {
		return v.pack.Load(artifactRef(ref))
	}
	var blob []byte
	err := v.log.Scan(ctx, ref.Blob, func(r segment.Record) error {
		blob = r.Data
		return errFound
	})
	if err != nil && !errors.Is(err, errFound) {
		return nil, err
	}
	return artifact.ReadBlob(artifactRef(ref), blob, v.log.Dir())
}

// artifactRef is where the artifact an event names is stored.
func artifactRef(r *projection.ArtifactRef) artifact.Ref {
	return artifact.Ref{Hash: r.Hash, Size: r.Size, StoredSize: r.StoredSize, Offset: r.Offset, Blob: r.Blob}
}

// errFound ends a scan that found what it was looking for.
var errFound = errors.New("found")

// Sighting returns the decoded sighting stored under hash.
func (v *Voyage) Sighting(ctx context.Context, hash string) (sighting.Sighting, error) {
	data, err := v.Artifact(ctx, hash)
	if err != nil {
		return nil, err
	}
	return sighting.Unmarshal(data)
}

// findArtifact resolves a hash or unique hash prefix. The caller holds v.mu.
func (v *Voyage) findArtifact(hash string) (projection.Artifact, error) {
	if a := v.st.Artifacts[hash]; a != nil {
		return *a, nil
	}
	var found []*projection.Artifact
	if len(hash) >= 4 {
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
		return projection.Artifact{}, fmt.Errorf("%w: %q (see `helm voyage show`)", ErrNoArtifact, hash)
	}
	return projection.Artifact{}, fmt.Errorf("%w: prefix %q matches %d artifacts; give more of the hash", ErrNoArtifact, hash, len(found))
}

// Jettison marks an artifact's bytes as discarded. The logbook keeps the
// marks and readings that referred to it; reading the artifact fails with
// ErrArtifactGone, until the same bytes are observed again and stowed
// anew. The bytes stay where they are (the log, the pack) until a
// compaction, which helm does not do yet.
func (v *Voyage) Jettison(ctx context.Context, hash string, who logbook.Who) error {
	_, err := v.commit(ctx, "jettison artifact "+hash, func(st *projection.State, _ stower) ([]*projection.Event, error) {
		a, err := v.findArtifact(hash)
		if err != nil {
			return nil, err
		}
		if a.Status == projection.Jettisoned {
			return nil, fmt.Errorf("%w: artifact %s is jettisoned already", ErrArtifactGone, a.Hash)
		}
		w, err := resolveWho(st, who, false)
		if err != nil {
			return nil, err
		}
		return []*projection.Event{{Type: projection.ArtifactJettisoned, Who: w, Artifact: &projection.ArtifactRef{Hash: a.Hash}}}, nil
	})
	return err
}

// Reduce stores summary as a derived artifact of the artifact at hash and
// marks the original reduced: readers are pointed to the summary. method
// says how the summary was made ("human", a model name).
func (v *Voyage) Reduce(ctx context.Context, hash string, summary sighting.Sighting, method string, who logbook.Who) (string, error) {
	data, err := sighting.Marshal(summary)
	if err != nil {
		return "", v.fail("reduce artifact "+hash, fmt.Errorf("%w: %v", ErrInvalid, err), "")
	}
	if strings.TrimSpace(method) == "" {
		return "", v.fail("reduce artifact "+hash, fmt.Errorf("%w: say how the summary was made (method)", ErrInvalid), "")
	}
	var derived string
	_, err = v.commit(ctx, "reduce artifact "+hash, func(st *projection.State, _ stower) ([]*projection.Event, error) {
		a, err := v.findArtifact(hash)
		if err != nil {
			return nil, err
		}
		if a.Status != projection.Stowed {
			return nil, fmt.Errorf("%w: artifact %s is %s already", ErrArtifactGone, a.Hash, a.Status)
		}
		w, err := resolveWho(st, who, false)
		if err != nil {
			return nil, err
		}
		enc := artifact.Encode(data)
		derived = enc.Hash
		if derived == a.Hash {
			return nil, fmt.Errorf("%w: the summary is identical to the artifact", ErrInvalid)
		}
		ref := &projection.ArtifactRef{Hash: derived}
		if held := st.Artifacts[derived]; held != nil {
			*ref = held.ArtifactRef
		} else {
			r, err := v.pack.Stow(enc)
			if err != nil {
				return nil, err
			}
			ref.Size, ref.StoredSize, ref.Offset = r.Size, r.StoredSize, r.Offset
		}
		ref.DerivedFrom, ref.Method = a.Hash, method
		return []*projection.Event{{Type: projection.ArtifactReduced, Who: w, Artifact: ref}}, nil
	})
	return derived, err
}
