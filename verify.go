package helm

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
)

// VerifyReport is what Verify checked and what it found damaged.
type VerifyReport struct {
	Voyage    string    `json:"voyage"`
	Events    LogReport `json:"events"`
	Artifacts int       `json:"artifacts_checked"`
	// Skipped counts the artifacts whose bytes are gone, so not checked:
	// SkippedJettisoned of jettisoned ones, SkippedReduced the payloads of
	// reduced ones, reclaimed by Compact (or left out by the archive the
	// voyage was imported from). A jettisoned or reduced artifact whose
	// bytes are still held is checked, as a stowed one is.
	Skipped           int `json:"artifacts_skipped"`
	SkippedJettisoned int `json:"artifacts_skipped_jettisoned"`
	SkippedReduced    int `json:"artifacts_skipped_reduced"`
	// Snapshot is what Verify found of the voyage's snapshot (nil: none).
	Snapshot *SnapshotReport `json:"snapshot,omitempty"`
	// Policies are the guard rules the voyage recorded, in order: those
	// it started under (N 0), then each change (policy entries, by
	// number). Empty when it never ran under rules.
	Policies []PolicyEntry `json:"policies,omitempty"`
	// Head is the head of the voyage's chain after its last record, as
	// Verify recomputed it from the first, a reclaimed record by the
	// digest its stub keeps (zero when the log could not be read).
	Head chain.Head `json:"head"`
	// Witnesses are the witnesses checked (VerifyOptions), each with
	// what the log says against it; one that fails is also in Problems.
	Witnesses []WitnessReport `json:"witnesses,omitempty"`
	// Repositories are the witness repositories read (VerifyOptions),
	// in order, each with the number of witnesses it held.
	Repositories []RepositoryReport `json:"repositories,omitempty"`
	// Origin says, for a forked or salvaged voyage, whether its carried
	// records were checked against its origin's (VoyageInfo.Fork,
	// Salvage): "checked against voyage ID up to record N", or why they
	// could not be (the origin is not in this home). A difference is in
	// Problems. Empty for a voyage that carries none.
	Origin string `json:"origin,omitempty"`
	// Problems lists the damage found, each where it is and why.
	Problems []*DamageError `json:"problems,omitempty"`
}

// PolicyEntry is guard rules a voyage recorded: those it started under
// (N 0), or a policy entry of its story (its number).
type PolicyEntry struct {
	N int `json:"n"`
	logbook.PolicyRecord
}

// verifyPolicies lists in rep the guard rules the voyage recorded, in
// the order it recorded them: Verify reads every record anyway.
func (v *Voyage) verifyPolicies(ctx context.Context, rep *VerifyReport) {
	err := v.rec.Scan(ctx, 1, eventsOf(v.id, v.rec.Dir(), func(seq uint64, e *projection.Event) error {
		if (e.Type == projection.PolicyAdopted || e.Type == projection.PolicyChanged) && e.Policy != nil {
			rep.Policies = append(rep.Policies, PolicyEntry{N: e.N, PolicyRecord: *e.Policy})
		}
		return nil
	}))
	if err != nil {
		rep.Problems = append(rep.Problems, problem(v.id, v.rec.Dir(), err))
	}
}

// SnapshotReport is what verifying a voyage's snapshot found: the event
// it was taken at, and why opening ignores it, if it does. A snapshot is
// a cache: one that is ignored costs a slower open, not a wrong one. One
// that opening would trust but whose views are not the events' is damage
// (in Problems): remove it. One whose mark is beyond the log's end is
// never merely ignored: it is evidence that the log was rolled back, and
// Verify reports it as damage before it looks further (evidence.go).
// What is still ignored is harmless: a snapshot torn or of another
// version says nothing, and one at a seq the log holds whose chain values
// differ lags a recorded rewrite (compaction with redaction) or an edit
// that only a witness proves.
type SnapshotReport struct {
	Seq     uint64 `json:"seq"`
	Ignored string `json:"ignored,omitempty"`
}

// OK reports whether nothing was found damaged.
func (r *VerifyReport) OK() bool { return len(r.Problems) == 0 }

// LogReport is what verifying a voyage's event log read.
type LogReport struct {
	Segments int    `json:"segments"` // segment files checked
	Records  uint64 `json:"records"`  // records checked
	// Reclaimed counts the records among them whose bytes Compact
	// reclaimed (a jettisoned artifact's, a reduced one's payload): their place in the chain is
	// checked, and an artifact's stow event must name each.
	Reclaimed uint64 `json:"reclaimed,omitempty"`
	Bytes     int64  `json:"bytes"` // bytes in segment files, including preallocated zeros
	// Store names the shared store that holds the log (OpenStore); then
	// Segments and Bytes are 0.
	Store   string `json:"store,omitempty"`
	LastSeq uint64 `json:"last_seq"`
	// Watermark is the last sequence number the log records as
	// acknowledged (0: none recorded).
	Watermark uint64 `json:"watermark"`
	// Torn is a torn final write that the next change will cut: what a
	// crashed writer left, never acknowledged, so not damage.
	Torn *Cut `json:"torn,omitempty"`
	// Head is the BLAKE3 chain's head at LastSeq, recomputed from the
	// voyage's genesis over every record.
	Head chain.Head `json:"head"`
	// Chain says which chain the log stores and checks: "blake3" (segment
	// format 4: links stored and checked at open) or "crc32c" (an older
	// segment format: it detects accidents, not edits; a rechain
	// moves it on). Format is the segment format of the log's last
	// segment, and ChainSince, for a log rechained onto BLAKE3, the first
	// seq in format 4.
	Chain      string `json:"chain"`
	Format     uint32 `json:"format,omitempty"`
	ChainSince uint64 `json:"chain_since,omitempty"`
}

// Verify checks the voyage with this id or prefix: every record of its
// event log (checksums, and the chain that links records) and every stowed
// artifact against its BLAKE3 address. It works on a voyage too damaged to
// open, reporting where the damage is. Like every read it writes nothing.
// Damage is reported in the report; the error is for a check that could
// not run (an unknown voyage, a file that could not be read, a witness
// repository git cannot read).
//
// It recomputes the chain from the first record (Head), and checks it
// against the witnesses opts names (nil: none): a witness whose seq is
// beyond the log's end, or whose link differs from the log's at its seq,
// is damage naming the witness. Witnesses are checked on the records
// alone, also when the voyage does not open (a cache proves a rollback,
// the views do not fold); a log whose records are damaged is damaged
// already, and its chain stops at the damage.
//
// A witness repository that holds no Helm-Voyage line naming the voyage
// is no damage, but the check it was given for did not happen: Verify
// returns the report (Repositories counts each one's witnesses) with an
// error naming it. One that is shallow, or that git cannot read, is an
// error with no report.
func (h *Home) Verify(ctx context.Context, idOrPrefix string, opts *VerifyOptions) (*VerifyReport, error) {
	rep, err := h.verify(ctx, idOrPrefix, opts)
	if err == nil {
		err = unwitnessed(rep)
	}
	return rep, err
}

func (h *Home) verify(ctx context.Context, idOrPrefix string, opts *VerifyOptions) (*VerifyReport, error) {
	id, err := h.Resolve(ctx, idOrPrefix)
	if err != nil {
		return nil, err
	}
	rep := &VerifyReport{Voyage: id}
	if err := witnesses(ctx, id, opts, rep); err != nil {
		return nil, err
	}
	logName, ok, err := h.back.verifyLog(ctx, id, rep)
	if err != nil {
		return nil, err
	}
	// The witnesses need the records alone: they are checked when a cache
	// proves a rollback or the views do not fold, too. A log damaged below
	// the chain's checks is reported already; its chain stops there.
	if err := h.checkWitnesses(ctx, id, logName, rep); err != nil && (ok || ctx.Err() != nil) {
		return nil, err
	}
	if !ok {
		return rep, nil // the artifact index is built from the events
	}
	v, err := h.back.open(ctx, id, false) // the events, not a snapshot, are the truth
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		rep.Problems = append(rep.Problems, problem(id, logName, err))
		return rep, nil
	}
	defer v.Close()
	v.rec.verify(ctx, rep)
	v.verifyPolicies(ctx, rep)
	if err := h.checkOrigin(ctx, id, logName, v.Info(), rep); err != nil {
		return nil, err
	}
	return rep, v.verifyArtifacts(ctx, rep)
}

// problem is err, which Verify met, as damage in file.
func problem(id, file string, err error) *DamageError {
	if d := damageOf(id, err); d != nil {
		return d
	}
	return &DamageError{Voyage: id, File: file, Reason: err.Error(), Err: err}
}

// verifyArtifacts checks every artifact whose bytes the voyage holds
// (stowed ones, and jettisoned or reduced ones until Compact reclaims
// them): those in the pack one by one, those in blob records in one pass
// over the log. Only bytes that are gone are skipped, counted by why.
func (v *Voyage) verifyArtifacts(ctx context.Context, rep *VerifyReport) error {
	canceled := func(err error) bool {
		return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
	}
	skip := func(a ArtifactInfo) {
		rep.Skipped++
		if a.Status == logbook.ArtifactReduced {
			rep.SkippedReduced++
		} else {
			rep.SkippedJettisoned++
		}
	}
	blobs := map[uint64]ArtifactInfo{}
	for a, err := range v.Artifacts(ctx, nil) {
		if err == nil {
			err = ctx.Err()
		}
		if canceled(err) {
			return err
		}
		if err != nil {
			rep.Problems = append(rep.Problems, problem(v.id, v.rec.Dir(), err))
			break
		}
		if a.Blob != 0 {
			blobs[a.Blob] = a
			continue
		}
		if a.Status != logbook.ArtifactStowed {
			kept, err := v.rec.kept(ctx, refOf(a))
			if canceled(err) {
				return err
			}
			if err == nil && !kept {
				skip(a)
				continue
			}
		}
		rep.Artifacts++
		if d := v.rec.check(ctx, refOf(a)); d != nil {
			rep.Problems = append(rep.Problems, d)
		}
	}
	if len(blobs) == 0 && rep.Events.Reclaimed == 0 {
		return nil
	}
	reclaimed := false
	err := v.rec.Scan(ctx, 1, func(r segment.Record) error {
		reclaimed = reclaimed || r.Reclaimed
		a, ok := blobs[r.Seq]
		if !ok {
			return nil
		}
		delete(blobs, r.Seq)
		// Gone: reclaimed, or left out by an import (an empty blob
		// record keeps its place). The log's chain checks either.
		if a.Status != logbook.ArtifactStowed && (r.Reclaimed || len(r.Data) == 1 && artifact.IsBlob(r.Data)) {
			skip(a)
			return nil
		}
		rep.Artifacts++
		if _, err := readBlob(a, r.Data, v.rec.Dir()); err != nil {
			rep.Problems = append(rep.Problems, problem(v.id, v.rec.Dir(), err))
		}
		return nil
	})
	if err != nil {
		if canceled(err) {
			return err
		}
		rep.Problems = append(rep.Problems, problem(v.id, v.rec.Dir(), err))
	}
	if reclaimed {
		if err := v.checkReclaimed(ctx, rep); err != nil {
			return err
		}
	}
	for _, a := range blobs { // named records that the log does not hold
		rep.Artifacts++
		_, err := readBlob(a, nil, v.rec.Dir())
		rep.Problems = append(rep.Problems, problem(v.id, v.rec.Dir(), err))
	}
	return nil
}

func refOf(a ArtifactInfo) artifact.Ref {
	return artifact.Ref{Hash: a.Hash, Size: a.Size, StoredSize: a.StoredSize, Offset: a.Offset, Blob: a.Blob}
}

func readBlob(a ArtifactInfo, record []byte, dir string) ([]byte, error) {
	return artifact.ReadBlob(refOf(a), record, dir)
}

// checkReclaimed reports every reclaimed record that no artifact's stow
// names as its blob record, in its commit (the rule of stubs): bytes that
// were not a jettisoned artifact's or a reduced one's payload (an
// event's) are gone.
func (v *Voyage) checkReclaimed(ctx context.Context, rep *VerifyReport) error {
	st := stubs{names: true}
	err := v.rec.Scan(ctx, 1, st.events(v.id, v.rec.Dir(), func(uint64, *projection.Event) error { return nil }))
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		rep.Problems = append(rep.Problems, problem(v.id, v.rec.Dir(), err))
		return nil
	}
	st.end()
	slices.Sort(st.hidden)
	for _, seq := range st.hidden {
		rep.Problems = append(rep.Problems, hiddenRecord(v.id, v.rec.Dir(), seq))
	}
	// A blob record and the event naming it are written in one commit:
	// no head was ever taken between them. A witness between a stub and
	// the event that names it proves the stub was the last record of a
	// commit — an event, hidden, and the naming event forged above the
	// witness.
	stubSeqs := slices.Sorted(maps.Keys(st.named))
	for _, w := range rep.Witnesses {
		if w.Malformed != "" {
			continue
		}
		for _, seq := range stubSeqs {
			if by := st.named[seq]; seq <= w.Head.Seq && w.Head.Seq < by {
				rep.Problems = append(rep.Problems, &DamageError{Voyage: v.id, File: v.rec.Dir(), Seq: seq,
					Reason: fmt.Sprintf("record %d was reclaimed and event %d names it as an artifact's blob record, but witness %s holds seq %d between them: helm writes a blob record and its event in one commit, so record %d was an event, hidden, and event %d forged", seq, by, w.name(), w.Head.Seq, seq, by)})
			}
		}
	}
	return nil
}
