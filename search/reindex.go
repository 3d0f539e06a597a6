package search

import (
	"context"
	"errors"
	"fmt"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/internal/searchindex"
	"github.com/helmlog/helm/logbook"
)

// ReindexOptions say what Reindex indexes.
type ReindexOptions struct {
	// All rebuilds the whole index from the voyages' logs, dropping what
	// it held (when in doubt: a damaged or suspect index). Otherwise only
	// the voyages the index does not vouch for are indexed.
	All bool
	// Voyages, when given, limits Reindex to these voyages (full ids),
	// indexed if the index does not vouch for them: what a writer calls
	// after it changed them (after completing a voyage, say).
	Voyages []string
	// OnlyCovered limits Reindex to the voyages the index already holds
	// (at whatever seq): what a writer calls after a jettison, so that
	// the index forgets the words, without indexing voyages anew.
	OnlyCovered bool
}

// ReindexReport says what Reindex did.
type ReindexReport struct {
	// Indexed counts the voyages indexed, Current those the index already
	// vouched for (left as they were).
	Indexed, Current int
	// Bytes counts the text indexed.
	Bytes int64
}

// batchBytes bounds the text one segment gathers in memory before it is
// written.
const batchBytes = 256 << 20

// Reindex brings the content index of home h up to date with the
// voyages' logs: each voyage whose log moved past what the index vouches
// for is indexed again, whole, as it is now (what it still stows: a
// jettisoned artifact's words are forgotten). It writes only the index
// (h's search directory, 0700; files 0600), never a voyage. The index
// holds the words of stored text, which redaction has already passed
// over: a secret redaction removed is not in it.
//
// A voyage that cannot be read is not indexed (searches scan it, and say
// so); Reindex returns the report with a *helm.ListError naming them.
func Reindex(ctx context.Context, h *helm.Home, opts *ReindexOptions) (ReindexReport, error) {
	var o ReindexOptions
	if opts != nil {
		o = *opts
	}
	var rep ReindexReport
	dir := indexDir(h)
	replace := o.All
	var covers func(string) (uint64, bool)
	if !replace {
		ix, err := searchindex.Open(dir)
		switch {
		case errors.Is(err, searchindex.ErrMalformed):
			replace = true // in doubt: rebuild it all
		case err != nil:
			return rep, fmt.Errorf("reindex: %w", err)
		default:
			defer ix.Close()
			covers = ix.Covers
		}
	}
	var infos []helm.VoyageInfo
	var unreadable *helm.ListError
	if len(o.Voyages) > 0 {
		// A writer's call names its voyages: no listing of the home.
		for _, id := range o.Voyages {
			seq, err := voyageSeq(ctx, h, id)
			if err != nil {
				if unreadable == nil {
					unreadable = &helm.ListError{}
				}
				unreadable.Voyages, unreadable.Errs = append(unreadable.Voyages, id), append(unreadable.Errs, err)
				continue
			}
			infos = append(infos, helm.VoyageInfo{ID: id, Seq: seq})
		}
	} else {
		var err error
		infos, err = h.List(ctx, nil)
		if err != nil && !errors.As(err, &unreadable) {
			return rep, err
		}
	}
	var todo []helm.VoyageInfo
	for _, info := range infos {
		if covers != nil {
			seq, ok := covers(info.ID)
			if ok && seq == info.Seq {
				rep.Current++
				continue
			}
			if !ok && o.OnlyCovered {
				continue
			}
		}
		todo = append(todo, info)
	}
	b := searchindex.NewBuilder()
	var failed helm.ListError
	forget := false // a voyage indexed before lost artifacts since
	flush := func() error {
		if b.Len() == 0 && !replace {
			return nil
		}
		if err := searchindex.Write(ctx, dir, b, searchindex.WriteOptions{Replace: replace, Forget: forget}); err != nil {
			return fmt.Errorf("reindex: %w", err)
		}
		rep.Bytes += b.Bytes
		replace, forget = false, false
		b = searchindex.NewBuilder()
		return nil
	}
	for _, info := range todo {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		curated, err := indexVoyage(ctx, h, info.ID, b)
		if curated && covers != nil {
			if _, ok := covers(info.ID); ok {
				forget = true
			}
		}
		switch {
		case errors.Is(err, helm.ErrNoVoyage):
			continue
		case err != nil:
			failed.Voyages, failed.Errs = append(failed.Voyages, info.ID), append(failed.Errs, err)
			continue
		}
		rep.Indexed++
		if b.Bytes >= batchBytes {
			if err := flush(); err != nil {
				return rep, err
			}
		}
	}
	if err := flush(); err != nil {
		return rep, err
	}
	if all := joinUnreadable(unreadable, &failed); len(all.Voyages) > 0 {
		return rep, all
	}
	return rep, nil
}

// indexVoyage adds voyage id of home h to b: its entries as one
// document, each stowed artifact as one, covered up to the seq it was
// read at. curated says that some of its artifacts are no longer stowed
// (jettisoned or reduced).
func indexVoyage(ctx context.Context, h *helm.Home, id string, b *searchindex.Builder) (curated bool, err error) {
	v, err := h.Voyage(ctx, id)
	if err != nil {
		return false, err
	}
	defer v.Close()
	info := v.Info()
	var entries []logbook.Entry
	for e, err := range v.Entries(ctx, nil) {
		if err != nil {
			return false, err
		}
		entries = append(entries, e)
	}
	type art struct {
		hash string
		raw  []byte
	}
	var arts []art
	for a, err := range v.Artifacts(ctx, nil) {
		if err != nil {
			return false, err
		}
		if a.Status != logbook.ArtifactStowed {
			curated = true
			continue
		}
		raw, err := readArtifact(ctx, v, a.Hash)
		if err != nil {
			return false, err
		}
		arts = append(arts, art{a.Hash, raw})
	}
	// All read: now into the builder, so that a voyage that fails half
	// way leaves nothing of it there.
	b.Cover(id, info.Seq)
	d := b.Doc(id, searchindex.KindEntries, "")
	voyageTexts(info, entries, func(s string) { b.Text(d, s) })
	for _, a := range arts {
		d := b.Doc(id, searchindex.KindArtifact, a.hash)
		_ = jsonStrings(a.raw, func(s string) bool { b.Text(d, s); return true })
	}
	return curated, nil
}

// voyageSeq returns the seq voyage id of home h is at.
func voyageSeq(ctx context.Context, h *helm.Home, id string) (uint64, error) {
	v, err := h.Voyage(ctx, id)
	if err != nil {
		return 0, err
	}
	defer v.Close()
	return v.Info().Seq, nil
}
