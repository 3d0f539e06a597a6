package natsstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/store"
)

// artifacts are a voyage's large artifacts in the home's object store,
// each the object <voyage>/<hash>, holding its stored (zstd) form
// encrypted under a key of its own (keys.go); those an earlier helm
// stored are the object <hash>, unencrypted, which the home's voyages
// share.
type artifacts struct {
	s      *Store
	voyage string
}

func (a *artifacts) where(object string) string {
	return fmt.Sprintf("object %s of object store %s on %s", object, a.s.names.artifacts, a.s.url)
}

// Put stores e's compressed bytes, encrypted under the artifact's key
// (made if it has none), as the voyage's copy. A copy there already is
// replaced whole: the object store replaces an object only once the new
// one is complete.
func (a *artifacts) Put(ctx context.Context, e *artifact.Encoded) (artifact.Ref, error) {
	if err := checkName("voyage id", a.voyage); err != nil {
		return artifact.Ref{}, err
	}
	if e.Streamed() {
		return artifact.Ref{}, fmt.Errorf("jetstream: voyage %s: a streamed artifact cannot be stored in %s yet: encode it first", a.voyage, a.s.names.artifacts)
	}
	e.Compress()
	ref := artifact.Ref{Hash: e.Hash, Size: e.Size, StoredSize: int64(len(e.Compressed))}
	ctx, cancel := a.s.ctx(ctx)
	defer cancel()
	key, err := a.makeKey(ctx, e.Hash)
	if err != nil {
		return artifact.Ref{}, err
	}
	sealed, err := a.seal(key, e.Hash, e.Compressed)
	if err != nil {
		return artifact.Ref{}, fmt.Errorf("jetstream: voyage %s: encrypt artifact %s: %w", a.voyage, e.Hash, err)
	}
	name := sealedName(a.voyage, e.Hash)
	if _, err := a.s.obs.PutBytes(ctx, name, sealed); err != nil {
		return artifact.Ref{}, fmt.Errorf("jetstream: voyage %s: store artifact, %s: %w", a.voyage, a.where(name), hint(err))
	}
	return ref, nil
}

// Get reads the artifact's copy and checks it against ref's address.
func (a *artifacts) Get(ctx context.Context, ref artifact.Ref) ([]byte, error) {
	ctx, cancel := a.s.ctx(ctx)
	defer cancel()
	stored, err := a.stored(ctx, ref.Hash)
	if err != nil {
		return nil, err
	}
	data, err := artifact.Expand(ref, stored, a.where(ref.Hash))
	if err != nil {
		return nil, fmt.Errorf("%w: voyage %s: %w", store.ErrDamaged, a.voyage, err)
	}
	return data, nil
}

func (a *artifacts) readError(object string, err error) error {
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return fmt.Errorf("%w: voyage %s: %s", store.ErrNoArtifact, a.voyage, a.where(object))
	}
	if errors.Is(err, jetstream.ErrDigestMismatch) {
		return fmt.Errorf("%w: voyage %s: %s: %w", store.ErrDamaged, a.voyage, a.where(object), err)
	}
	return fmt.Errorf("jetstream: voyage %s: read artifact, %s: %w", a.voyage, a.where(object), hint(err))
}

// Open streams the copy's stored bytes (decrypted, as Get reads them)
// through artifact.CopyStored, so that bytes that do not answer ref's
// address end the stream with an error matching store.ErrDamaged, at its
// end at the latest.
func (a *artifacts) Open(ctx context.Context, ref artifact.Ref) (io.ReadCloser, error) {
	stored, err := a.stored(ctx, ref.Hash)
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	go func() {
		err := artifact.CopyStored(pw, ref, bytes.NewReader(stored))
		if errors.Is(err, artifact.ErrDamaged) {
			err = fmt.Errorf("%w: voyage %s: %s: %w", store.ErrDamaged, a.voyage, a.where(ref.Hash), err)
		} else if err != nil {
			err = a.readError(ref.Hash, err)
		}
		pw.CloseWithError(err)
	}()
	return &storedReader{PipeReader: pr}, nil
}

// storedReader is the reading end of Open's pipe; closing it stops the
// copy.
type storedReader struct{ *io.PipeReader }

func (r *storedReader) Close() error {
	return r.PipeReader.CloseWithError(errors.New("jetstream: artifact reader closed"))
}
