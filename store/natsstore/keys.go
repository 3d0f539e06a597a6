package natsstore

// Erasure: a jettisoned artifact's bytes made unreadable for good, on
// streams that remove nothing helm acknowledged.
//
// An artifact is stored encrypted (AES-256-GCM, crypto/aes and
// crypto/cipher) under a key of its own, one per voyage and artifact, in
// the object store, as the object <voyage>/<hash>. Its key is the one
// message of the subject helm.<home>.k.<voyage>.<hash> of the home's keys
// stream, KEYS_HELM_<home>. Erasing the artifact (store.Eraser) deletes
// every message of that subject with the server's secure delete, which
// overwrites the message with random bytes before it lets it go; the
// ciphertext stays in the object store, noise without its key.
//
// The keys are a plain stream, not a key-value bucket: a bucket's delete
// and purge leave the value's message to be dropped by the subject's
// limit, not overwritten, and helm wants the overwrite. The keys stream is
// the one stream of a home that must allow deletes (keysStream in
// settings.go says what else helm requires of it, and why).
//
// A key per voyage and artifact, not per artifact: an artifact two
// voyages hold is stored twice, so that one voyage's jettison never makes
// another's evidence unreadable.
//
// Artifacts stored by an earlier helm are the object <hash>, unencrypted
// (the zstd frame, shared by the voyages that hold it): they keep
// reading, and cannot be erased (Erase says so).

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/helmlog/helm/store"
)

const (
	// sealedForm is the first byte of an encrypted object: the form's
	// version, then the nonce and the sealed stored bytes.
	sealedForm byte = 0xE1
	// keyForm is the first byte of a key's message, then the key.
	keyForm byte = 1
)

// keyBytes is a key's length: AES-256.
const keyBytes = 32

// keysConfig is the configuration of the keys stream Open creates.
func keysConfig(home string, replicas int) jetstream.StreamConfig {
	n := namesOf(home)
	return jetstream.StreamConfig{
		Name:              n.keys,
		Description:       "helm: the keys of the artifacts of the home " + home + ", one subject each; a jettison erases one",
		Subjects:          []string{n.keySubjects},
		Storage:           jetstream.FileStorage,
		Replicas:          replicas,
		Retention:         jetstream.LimitsPolicy,
		Discard:           jetstream.DiscardNew,
		MaxMsgs:           -1,
		MaxBytes:          -1,
		MaxAge:            0,
		MaxMsgsPerSubject: -1,
		Duplicates:        2 * time.Minute,
		DenyDelete:        false,
		DenyPurge:         true,
	}
}

func (n names) keySubject(voyage, hash string) string { return n.keyPrefix + voyage + "." + hash }

// sealedName is the object of the voyage's encrypted copy of an artifact.
func sealedName(voyage, hash string) string { return voyage + "/" + hash }

func (a *artifacts) whereKey(hash string) string {
	return fmt.Sprintf("subject %s of stream %s on %s", a.s.names.keySubject(a.voyage, hash), a.s.names.keys, a.s.url)
}

// key returns the artifact's key, the last message of its subject; nil
// when there is none.
func (a *artifacts) key(ctx context.Context, hash string) ([]byte, error) {
	var msg *jetstream.RawStreamMsg
	err := a.s.retry(ctx, func(ctx context.Context) (err error) {
		msg, err = a.s.keys.GetLastMsgForSubject(ctx, a.s.names.keySubject(a.voyage, hash))
		return err
	})
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("jetstream: voyage %s: read the key of artifact %s, %s: %w", a.voyage, hash, a.whereKey(hash), hint(err))
	}
	if len(msg.Data) != 1+keyBytes || msg.Data[0] != keyForm {
		return nil, &store.DamageError{Voyage: a.voyage, Where: a.whereKey(hash), Reason: fmt.Sprintf("the key of artifact %s is not a key helm wrote (%d bytes, form %d)", hash, len(msg.Data), first(msg.Data))}
	}
	return msg.Data[1:], nil
}

func first(b []byte) int {
	if len(b) == 0 {
		return -1
	}
	return int(b[0])
}

// makeKey returns the artifact's key, making it if there is none: one
// writer of several makes it (the subject must have no message), the
// others read it. It publishes a new key first, and reads the key only
// when the subject has one already: a voyage stores an artifact once, so
// most often there is none, and storing it costs one request, not two.
func (a *artifacts) makeKey(ctx context.Context, hash string) ([]byte, error) {
	msg := make([]byte, 1+keyBytes)
	msg[0] = keyForm
	if _, err := rand.Read(msg[1:]); err != nil {
		return nil, err
	}
	_, err := a.s.js.Publish(ctx, a.s.names.keySubject(a.voyage, hash), msg, jetstream.WithExpectLastSequencePerSubject(0))
	if isWrongLast(err) {
		k, err := a.key(ctx, hash) // another writer made it first
		if k == nil && err == nil {
			err = fmt.Errorf("jetstream: voyage %s: the key of artifact %s, %s, was made and is gone again: retry", a.voyage, hash, a.whereKey(hash))
		}
		return k, err
	}
	if err != nil {
		return nil, fmt.Errorf("jetstream: voyage %s: store the key of artifact %s, %s: %w", a.voyage, hash, a.whereKey(hash), hint(err))
	}
	return msg[1:], nil
}

// aead is AES-256-GCM under key.
func aead(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// additional binds a sealed copy to its voyage and address: a copy moved
// to another name does not open.
func (a *artifacts) additional(hash string) []byte {
	return []byte("helm-artifact/1\x00" + a.s.home + "\x00" + a.voyage + "\x00" + hash)
}

// seal encrypts an artifact's stored bytes under key: sealedForm, a
// random nonce, and the sealed bytes.
func (a *artifacts) seal(key []byte, hash string, stored []byte) ([]byte, error) {
	g, err := aead(key)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 1+g.NonceSize(), 1+g.NonceSize()+len(stored)+g.Overhead())
	out[0] = sealedForm
	if _, err := rand.Read(out[1:]); err != nil {
		return nil, err
	}
	return g.Seal(out, out[1:], stored, a.additional(hash)), nil
}

// open decrypts a sealed copy; what does not open under key is damage.
func (a *artifacts) open(key []byte, hash string, sealed []byte) ([]byte, error) {
	damaged := func(reason string) error {
		return &store.DamageError{Voyage: a.voyage, Where: a.where(sealedName(a.voyage, hash)), Reason: reason}
	}
	if len(sealed) == 0 || sealed[0] != sealedForm {
		return nil, damaged(fmt.Sprintf("artifact %s: an encrypted copy of an unknown form (%d): written by a newer helm, or not by helm", hash, first(sealed)))
	}
	g, err := aead(key)
	if err != nil {
		return nil, err
	}
	if len(sealed) < 1+g.NonceSize()+g.Overhead() {
		return nil, damaged(fmt.Sprintf("artifact %s: an encrypted copy of %d bytes, too short to hold one", hash, len(sealed)))
	}
	plain, err := g.Open(nil, sealed[1:1+g.NonceSize()], sealed[1+g.NonceSize():], a.additional(hash))
	if err != nil {
		return nil, damaged(fmt.Sprintf("artifact %s: the encrypted copy does not open under its key (%s): one of them was changed", hash, a.whereKey(hash)))
	}
	return plain, nil
}

// stored returns the artifact's stored (zstd) bytes: the voyage's
// encrypted copy, opened with its key, or, with no key, the copy an
// earlier helm stored unencrypted under the artifact's address. An
// encrypted copy whose key is gone is damage: the caller reads only
// artifacts the voyage has not jettisoned.
func (a *artifacts) stored(ctx context.Context, hash string) ([]byte, error) {
	key, err := a.key(ctx, hash)
	if err != nil {
		return nil, err
	}
	name := sealedName(a.voyage, hash)
	if key == nil {
		_, err := a.s.obs.GetInfo(ctx, name)
		if err == nil {
			return nil, &store.DamageError{Voyage: a.voyage, Where: a.whereKey(hash),
				Reason: fmt.Sprintf("the key of artifact %s is missing, and the artifact, stored encrypted (%s), cannot be read: the key was deleted, though the voyage did not jettison the artifact", hash, a.where(name))}
		}
		if !errors.Is(err, jetstream.ErrObjectNotFound) {
			return nil, a.readError(hash, err)
		}
		stored, err := a.s.obs.GetBytes(ctx, hash) // an earlier helm's copy
		if err != nil {
			return nil, a.readError(hash, err)
		}
		return stored, nil
	}
	sealed, err := a.s.obs.GetBytes(ctx, name)
	if err != nil {
		return nil, a.readError(name, err)
	}
	return a.open(key, hash, sealed)
}

// Erase deletes every message of the artifact's key subject with the
// server's secure delete (an agent's second key message on it does not
// keep the first). It reports false, erasing nothing, for a copy an
// earlier helm stored unencrypted, or one the store does not hold.
func (a *artifacts) Erase(ctx context.Context, hash string) (bool, error) {
	if err := checkName("voyage id", a.voyage); err != nil {
		return false, err
	}
	ctx, cancel := a.s.ctx(ctx)
	defer cancel()
	subject := a.s.names.keySubject(a.voyage, hash)
	erased := false
	for seq := uint64(1); ; {
		var msg *jetstream.RawStreamMsg
		err := a.s.retry(ctx, func(ctx context.Context) (err error) {
			msg, err = a.s.keys.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
			return err
		})
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			break
		}
		if err != nil {
			return false, fmt.Errorf("jetstream: voyage %s: erase the key of artifact %s, %s: %w", a.voyage, hash, a.whereKey(hash), hint(err))
		}
		err = a.s.retry(ctx, func(ctx context.Context) error { return a.s.keys.SecureDeleteMsg(ctx, msg.Sequence) })
		if err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			return false, fmt.Errorf("jetstream: voyage %s: erase the key of artifact %s, %s, message %d: %w (helm requires deletes allowed on %s)", a.voyage, hash, a.whereKey(hash), msg.Sequence, hint(err), a.s.names.keys)
		}
		erased = true
		seq = msg.Sequence + 1
	}
	if erased {
		return true, nil
	}
	// No key: erased before, or never encrypted.
	_, err := a.s.obs.GetInfo(ctx, sealedName(a.voyage, hash))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, jetstream.ErrObjectNotFound):
		return false, nil
	}
	return false, a.readError(sealedName(a.voyage, hash), err)
}
