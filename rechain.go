package helm

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
)

// Rechain moves the voyage with this id or prefix, whose event log an
// older segment format wrote, onto the stored BLAKE3 chain, and returns
// its head afterwards. An older format stores only a CRC32C chain, which
// detects accidents, not edits (anyone can recompute it); from the
// rechain on, the log stores the BLAKE3 links and open checks them.
//
// It is recorded: a chain-rechained entry of the story, by who, saying
// why, with where the CRC32C chain ended (the seq of the last record
// before it and the chain's sum there), as the first record of the log's
// first format-4 segment. The chain's definition does not change: the
// head after the rechain commits to the whole history, the old records
// included. Like compaction it changes no story, so a closed voyage may
// be rechained too.
//
// Refused (ErrInvalid, nothing written): a voyage already on the BLAKE3
// chain, and one of a shared store, whose units carry the chain already.
// A damaged voyage is refused with its damage.
func (h *Home) Rechain(ctx context.Context, idOrPrefix string, who logbook.Who, why string) (chain.Head, error) {
	const op = "rechain"
	why = strings.TrimSpace(why)
	if err := errors.Join(checkText("why", why), checkWho(who)); err != nil {
		return chain.Head{}, &VoyageError{Op: op, Voyage: idOrPrefix, Err: err}
	}
	if why == "" {
		return chain.Head{}, &VoyageError{Op: op, Voyage: idOrPrefix, Err: fmt.Errorf("%w: say why the voyage is rechained (the reason is recorded)", ErrInvalid)}
	}
	id, err := h.Resolve(ctx, idOrPrefix)
	if err != nil {
		return chain.Head{}, err
	}
	if _, ok := h.back.(*disk); !ok {
		return chain.Head{}, &VoyageError{Op: op, Voyage: id,
			Err:  fmt.Errorf("%w: the voyage is in the shared store %s, whose units carry the BLAKE3 chain already: there is nothing to rechain", ErrInvalid, h.where()),
			Hint: hint.Hint{Kind: hint.Verify, Text: "verify checks its chain"}}
	}
	v, err := h.open(ctx, id)
	if err != nil {
		return chain.Head{}, err
	}
	defer v.Close()
	v.mu.Lock()
	_, err = resolveWho(&v.st, who, true) // before anything is written, the home index included
	v.mu.Unlock()
	if err != nil {
		return chain.Head{}, v.fail(op, err, hint.Hint{})
	}
	j := v.rec.(*diskJournal)
	if c := j.log.Chain(); c.Kind == "blake3" {
		return chain.Head{}, v.fail(op, alreadyRechained(c), hint.Hint{Kind: hint.Verify, Text: "nothing to do: verify checks its chain"})
	}
	j.rechaining = true
	defer func() { j.rechaining = false }()
	_, err = v.commit(ctx, op, func(st *projection.State, _ stower) ([]*projection.Event, error) {
		w, err := resolveWho(st, who, true)
		if err != nil {
			return nil, err
		}
		return []*projection.Event{{Type: projection.ChainRechained, Who: w, Rechain: &logbook.RechainRecord{
			Seq: j.oldEnd, CRC32C: fmt.Sprintf("%08x", j.oldSum), Why: why,
		}}}, nil
	})
	if errors.Is(err, segment.ErrRechained) { // another process rechained it meanwhile
		return chain.Head{}, v.fail(op, alreadyRechained(j.log.Chain()), hint.Hint{Kind: hint.Verify, Text: "nothing to do: verify checks its chain"})
	}
	if err != nil {
		return chain.Head{}, err
	}
	head, err := v.Head(ctx)
	if err != nil {
		return chain.Head{}, v.fail(op, fmt.Errorf("rechained, but its head could not be read: %w", err), hint.Hint{})
	}
	return head, nil
}

// alreadyRechained is Rechain's refusal of a log on the BLAKE3 chain.
func alreadyRechained(c segment.ChainInfo) error {
	if c.Since > 1 {
		return fmt.Errorf("%w: the voyage is on the BLAKE3 chain already (rechained at seq %d)", ErrInvalid, c.Since)
	}
	return fmt.Errorf("%w: the voyage is on the BLAKE3 chain already (segment format %d, from its first record)", ErrInvalid, c.Format)
}
