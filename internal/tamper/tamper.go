// Package tamper is the adversary of helm's tamper-evidence tests: the
// recorded agent, running as the same user, with write access to the home
// and full knowledge of the formats. It forges a voyage's log with helm's
// own segment writer, so every frame checksum, the CRC32C chain, the
// BLAKE3 chain and WATERMARK are exactly what an honest writer would have
// written for the forged records: nothing local can tell the forgery from
// a log that was always so. Only a witness (a head held outside the home)
// or a cache that proves the log went further can.
//
// It is test-only support (internal, imported by tests), never part of
// helm's library.
package tamper

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/helmlog/helm/internal/homeindex"
	"github.com/helmlog/helm/segment"
)

// Record is one record of a log as the adversary sees it.
type Record struct {
	Seq  uint64
	Data []byte
}

// Events returns the directory of voyage id's log in home.
func Events(home, id string) string { return filepath.Join(home, "voyages", id, "events") }

// Read returns every record of voyage id's log in home, in order.
func Read(ctx context.Context, home, id string) ([]Record, error) {
	var recs []Record
	err := segment.ScanDir(ctx, Events(home, id), 1, func(r segment.Record) error {
		if r.Reclaimed {
			return fmt.Errorf("tamper: record %d was reclaimed", r.Seq)
		}
		recs = append(recs, Record{Seq: r.Seq, Data: append([]byte(nil), r.Data...)})
		return nil
	})
	return recs, err
}

// Forge replaces voyage id's log in home by a log of recs (renumbered
// from 1, in order), written by helm's segment writer under the voyage's
// identity, one unit per record: checksums, chains and WATERMARK are all
// recomputed. The old events directory is removed.
func Forge(ctx context.Context, home, id string, recs []Record) error {
	return ForgeStubbed(ctx, home, id, recs, 0, 0)
}

// ForgeStubbed is Forge in segments of segmentSize bytes (0: the
// default), then with the record at seq stub (0: none) turned into a stub
// keeping its true digest, as compaction would: the chain through it is
// unchanged.
func ForgeStubbed(ctx context.Context, home, id string, recs []Record, segmentSize int64, stub uint64) error {
	dir := Events(home, id)
	tmp := dir + ".forged"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	l, err := segment.Open(ctx, tmp, &segment.Options{Identity: id, NoSync: true, SegmentSize: segmentSize})
	if err != nil {
		return fmt.Errorf("tamper: open forged log: %w", err)
	}
	for _, r := range recs {
		if _, err := l.Append(ctx, r.Data); err != nil {
			l.Close()
			return fmt.Errorf("tamper: append: %w", err)
		}
	}
	if stub != 0 {
		got, err := l.Reclaim(ctx, func(r segment.Record) bool { return r.Seq == stub })
		if err == nil && got.Records != 1 {
			err = fmt.Errorf("tamper: record %d was not stubbed (%d records reclaimed)", stub, got.Records)
		}
		if err != nil {
			l.Close()
			return err
		}
	}
	if err := l.Close(); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}

// Edit forges voyage id's log with edit applied to every record: it
// returns the record's new bytes, or nil to drop the record (the records
// after it are renumbered).
func Edit(ctx context.Context, home, id string, edit func(r Record) []byte) error {
	recs, err := Read(ctx, home, id)
	if err != nil {
		return err
	}
	var out []Record
	for _, r := range recs {
		if d := edit(r); d != nil {
			out = append(out, Record{Data: d})
		}
	}
	return Forge(ctx, home, id, out)
}

// DropCaches removes what a careful adversary removes after a forgery so
// that no cache proves the log went further: the voyage's snapshot and
// summary, and the home index.
func DropCaches(home, id string) error {
	for _, p := range []string{
		filepath.Join(home, "voyages", id, "snapshot"),
		filepath.Join(home, "voyages", id, "summary.json"),
		filepath.Join(home, homeindex.Name),
	} {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	return nil
}

// CopyDir copies the directory from to to (which must not exist): the
// adversary's backup of events/, to restore later whole (a rollback).
func CopyDir(from, to string) error {
	return filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o600)
	})
}

// Restore replaces voyage id's events directory by the copy at backup.
func Restore(home, id, backup string) error {
	dir := Events(home, id)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return CopyDir(backup, dir)
}

// Replace forges voyage id's log with old replaced by new in every record
// that holds it (same length keeps any length prefix of the encoding
// right), and returns how many records changed.
func Replace(ctx context.Context, home, id, old, new string) (int, error) {
	n := 0
	err := Edit(ctx, home, id, func(r Record) []byte {
		d := bytes.ReplaceAll(r.Data, []byte(old), []byte(new))
		if !bytes.Equal(d, r.Data) {
			n++
		}
		return d
	})
	if err == nil && n == 0 {
		err = fmt.Errorf("tamper: no record holds %q", old)
	}
	return n, err
}

// Stub turns the record at seq into a stub, as compaction does for a
// jettisoned artifact's evidence, with helm's own segment code: the
// chains still check; no event names the stub.
func Stub(ctx context.Context, home, id string, seq uint64) error {
	l, err := segment.Open(ctx, Events(home, id), &segment.Options{Identity: id, NoSync: true})
	if err != nil {
		return err
	}
	_, err = l.Reclaim(ctx, func(r segment.Record) bool { return r.Seq == seq })
	if cerr := l.Close(); err == nil {
		err = cerr
	}
	return err
}
