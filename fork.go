package helm

import (
	"context"
	"fmt"
	"strings"

	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
)

// fork starts voyage id as a fork of voyage opts.ForkOf at entry
// opts.ForkAt (Start): the origin must open (a DAMAGED voyage is
// salvaged, not forked), entry ForkAt must be in its story, and every
// record up to that entry's is carried (carry).
func (h *Home) fork(ctx context.Context, id, intent string, kind Kind, who logbook.Who, opts *StartOptions) (*Voyage, error) {
	const op = "fork voyage"
	originID := opts.ForkOf
	origin, err := h.Voyage(ctx, originID)
	if err != nil {
		return nil, err
	}
	var at uint64
	count := 0
	for e, err := range origin.Entries(ctx, nil) {
		if err != nil {
			origin.Close()
			return nil, err
		}
		count++
		if e.N == opts.ForkAt {
			at = e.Seq
			break
		}
	}
	// An artifact the origin jettisoned, before the entry or after it,
	// stays jettisoned: the fork never carries its bytes. One the origin
	// held as jettisoned at the entry and stowed again later is one too:
	// the fork holds it as jettisoned (its final status, stowed, would
	// carry the bytes of the copy stowed before the jettison).
	skip := map[string]string{}
	jettisonedAt := map[string]string{} // the status at the entry: hash -> reason
	if at != 0 {
		for e, err := range origin.Events(ctx, 1) {
			if err != nil {
				origin.Close()
				return nil, err
			}
			if e.Seq > at {
				break
			}
			if a := e.Artifact; a != nil {
				switch e.Type {
				case projection.ArtifactJettisoned:
					jettisonedAt[a.Hash] = a.Reason
				case projection.ArtifactStowed:
					delete(jettisonedAt, a.Hash)
				}
			}
		}
	}
	for hash, reason := range jettisonedAt {
		why := "jettisoned in voyage " + originID
		if reason != "" {
			why += ": " + reason
		}
		skip[hash] = why
	}
	for a, err := range origin.Artifacts(ctx, nil) {
		if err != nil {
			origin.Close()
			return nil, err
		}
		if a.Status == logbook.ArtifactJettisoned {
			why := "jettisoned in voyage " + originID
			if a.Reason != "" {
				why += ": " + a.Reason
			}
			skip[a.Hash] = why
		}
	}
	origin.Close()
	if at == 0 {
		return nil, &VoyageError{Op: op, Voyage: originID, Err: fmt.Errorf("%w: voyage %s has no entry %d (its story holds %d)", ErrInvalid, originID, opts.ForkAt, count),
			Hint: hint.Hint{Kind: hint.ReadLogbook, Text: "read the voyage's logbook for the entry's number"}}
	}
	head, err := h.prefixHead(ctx, originID, at)
	if err != nil {
		return nil, &VoyageError{Op: op, Voyage: originID, Err: err}
	}
	start := &projection.Event{Type: projection.VoyageStarted, Who: who,
		Voyage: &projection.VoyageInfo{ID: id, Intent: intent, Kind: string(kind), Parent: opts.Parent,
			Repo: opts.Repo, Dir: opts.Dir, Base: opts.Base, Branch: opts.Branch, Worktree: opts.Worktree,
			Session: strings.TrimSpace(opts.Session),
			Fork:    &projection.Origin{Voyage: originID, Entry: opts.ForkAt, Seq: head.Seq, Head: head.Hash.String()}}}
	if _, err := h.carry(ctx, op, start, originID, at, skip, who); err != nil {
		return nil, err
	}
	return h.open(ctx, id)
}
