package natsstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/store"
)

// artifacts are a voyage's large artifacts in the home's object store,
// one object per artifact named by its address and holding its stored
// (zstd) form. The home's voyages share them: an artifact two voyages
// hold is stored once.
type artifacts struct {
	s      *Store
	voyage string
}

func (a *artifacts) where(hash string) string {
	return fmt.Sprintf("object %s of object store %s on %s", hash, a.s.names.artifacts, a.s.url)
}

// Put stores e's compressed bytes under its address, unless an object of
// that name is there already.
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
	info, err := a.s.obs.GetInfo(ctx, e.Hash)
	if err == nil && info.Size == uint64(ref.StoredSize) && info.Digest == jetstream.GetObjectDigestValue(digestOf(e.Compressed)) {
		return ref, nil // content-addressed, and the same bytes
	}
	if err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return artifact.Ref{}, fmt.Errorf("jetstream: voyage %s: store artifact, %s: %w", a.voyage, a.where(e.Hash), hint(err))
	}
	// Missing, or there with other bytes (damaged, or cut short by a
	// writer that failed): put it whole; the object store replaces an
	// object only once the new one is complete.
	if _, err := a.s.obs.PutBytes(ctx, e.Hash, e.Compressed); err != nil {
		return artifact.Ref{}, fmt.Errorf("jetstream: voyage %s: store artifact, %s: %w", a.voyage, a.where(e.Hash), hint(err))
	}
	return ref, nil
}

// Get reads the object and checks it against ref's address.
func (a *artifacts) Get(ctx context.Context, ref artifact.Ref) ([]byte, error) {
	ctx, cancel := a.s.ctx(ctx)
	defer cancel()
	stored, err := a.s.obs.GetBytes(ctx, ref.Hash)
	if err != nil {
		return nil, a.readError(ref, err)
	}
	data, err := artifact.Expand(ref, stored, a.where(ref.Hash))
	if err != nil {
		return nil, fmt.Errorf("%w: voyage %s: %w", store.ErrDamaged, a.voyage, err)
	}
	return data, nil
}

func (a *artifacts) readError(ref artifact.Ref, err error) error {
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return fmt.Errorf("%w: voyage %s: %s", store.ErrNoArtifact, a.voyage, a.where(ref.Hash))
	}
	if errors.Is(err, jetstream.ErrDigestMismatch) {
		return fmt.Errorf("%w: voyage %s: %s: %w", store.ErrDamaged, a.voyage, a.where(ref.Hash), err)
	}
	return fmt.Errorf("jetstream: voyage %s: read artifact, %s: %w", a.voyage, a.where(ref.Hash), hint(err))
}

// Open streams the object's bytes through artifact.CopyStored, so that
// bytes that do not answer ref's address end the stream with an error
// matching store.ErrDamaged, at its end at the latest.
func (a *artifacts) Open(ctx context.Context, ref artifact.Ref) (io.ReadCloser, error) {
	obj, err := a.s.obs.Get(ctx, ref.Hash)
	if err != nil {
		return nil, a.readError(ref, err)
	}
	pr, pw := io.Pipe()
	go func() {
		err := artifact.CopyStored(pw, ref, obj)
		if errors.Is(err, artifact.ErrDamaged) {
			err = fmt.Errorf("%w: voyage %s: %s: %w", store.ErrDamaged, a.voyage, a.where(ref.Hash), err)
		} else if err != nil {
			err = a.readError(ref, err)
		}
		obj.Close()
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

// digestOf is the SHA-256 of stored bytes, as the object store keeps it
// in an object's info (its digest of what was put).
func digestOf(stored []byte) hash.Hash {
	h := sha256.New()
	h.Write(stored)
	return h
}
