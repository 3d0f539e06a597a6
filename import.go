package helm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/zeebo/blake3"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/redact"
	"github.com/helmlog/helm/segment"
)

// Import makes the voyage an archive holds (see Export) in this
// home, and opens it: the same id, every event with its time, who
// recorded it and its entry number, and every artifact's stored bytes, so
// that its views read as the exported voyage's did. Only where an
// artifact's bytes lie (Offset, Blob) may differ.
//
// Nothing is trusted and nothing is written until it is checked: the
// archive's form, line by line; every event, folded in order as opening
// the voyage would; every artifact against its BLAKE3 address; that the
// archive holds the bytes of every artifact its events say the voyage
// has; and the digest of the whole file, in its last line. A voyage whose
// id the home holds already is refused. Any of these is an error matching
// ErrInvalid that names the archive's line, and the home is left as it
// was: the voyage is built in a directory of its own, which appears under
// its id only once all is written and durable. A failure to write the home
// is an error that does not match ErrInvalid.
//
// Text is redacted as any stored text is (the exporting helm redacted it
// already, so helm's own archives read the same). Artifacts are stored as
// the archive holds them: their address is the hash of their bytes. A
// jettisoned artifact, whose bytes an archive leaves out, is recorded as
// Compact leaves one: its bytes reclaimed.
func (h *Home) Import(ctx context.Context, r io.Reader, opts *ImportOptions) (*Voyage, error) {
	var o ImportOptions
	if opts != nil {
		o = *opts
	}
	v, _, err := h.importArchive(ctx, r, false, o.Witnesses)
	return v, err
}

// ImportOptions are Import's options.
type ImportOptions struct {
	// Witnesses are heads of the voyage held outside the home (a commit
	// trailer, a pull request's body, a head pasted elsewhere): the
	// archive's chain must pass through each, or Import refuses it as
	// tampered (ErrDamaged), naming the witness. An archive that carries
	// no chain (format 1, or a voyage whose chain could not be computed)
	// is refused when a witness is given: nothing can be checked against it.
	Witnesses []chain.Head
}

// importArchive is Import; when update, a voyage the home holds already
// is brought up to date with the archive's records after its own, if its
// events are the archive's first (else it diverged: ErrDiverged). It
// returns how many records it appended.
func (h *Home) importArchive(ctx context.Context, r io.Reader, update bool, witnesses []chain.Head) (*Voyage, uint64, error) {
	const op = "import voyage"
	ar := &archiveReader{br: bufio.NewReaderSize(r, 64<<10), sum: blake3.New()}
	im, err := ar.readHead(ctx)
	if err != nil {
		return nil, 0, &VoyageError{Op: op, Voyage: ar.id, Err: err}
	}
	defer im.close()
	im.witnesses, im.now = witnesses, h.opts.Clock()
	if len(witnesses) > 0 && im.hdr.Head == nil {
		return nil, 0, &VoyageError{Op: op, Voyage: im.hdr.VoyageID,
			Err:  fmt.Errorf("%w: archive line 1: the archive carries no chain (format %d, or a voyage whose chain could not be computed), so witness %s cannot be checked against it", ErrDamaged, im.hdr.Export, witnesses[0]),
			Hint: hint.Hint{Kind: hint.Verify, Text: "export the voyage again with this helm, or import it without a witness (then nothing checks that it is the voyage the witness saw)"}}
	}
	id := im.hdr.VoyageID
	red, err := h.redactor()
	if err != nil {
		return nil, 0, &VoyageError{Op: op, Voyage: id, Err: err}
	}
	im.red = red
	held := false
	if h.holds(ctx, id) {
		if !update {
			return nil, 0, &VoyageError{Op: op, Voyage: id,
				Err:  fmt.Errorf("%w: the home %s holds voyage %s already (imported before, or the voyage the archive was exported from)", ErrInvalid, h.where(), id),
				Hint: hint.Hint{Kind: hint.OtherHome, Text: "import it into another home, or remove the voyage from this one first"}}
		}
		held = true
	}
	if err := ar.readEvents(ctx, im); err != nil {
		return nil, 0, &VoyageError{Op: op, Voyage: id, Err: err}
	}
	if held {
		return h.updateFrom(ctx, ar, im)
	}
	err = h.back.create(ctx, id, func(v *Voyage) error {
		if err := ar.readArtifacts(ctx, im, copyStower{ctx, v.rec}); err != nil {
			return &VoyageError{Op: op, Voyage: id, Err: err}
		}
		err := im.appendTo(ctx, v, 0, func(last uint64) error {
			if last == 0 {
				return errors.New("the new voyage's log is not empty")
			}
			return fmt.Errorf("a writer appended to the copy in %s after record %d; copy again to see whether it diverged", h.where(), last)
		})
		if err != nil {
			return &VoyageError{Op: op, Voyage: id, Err: err}
		}
		return nil
	})
	if err != nil {
		if ve, ok := err.(*VoyageError); ok {
			if ve.Op == "start voyage" {
				ve.Op = op // the voyage's directory could not be made
			}
			return nil, 0, err
		}
		return nil, 0, &VoyageError{Op: op, Voyage: id, Err: err}
	}
	v, err := h.open(ctx, id)
	if err != nil {
		return nil, 0, err
	}
	return v, im.last(), nil
}

// maxArchiveLine bounds a line of an archive other than an artifact's
// (whose data is streamed), and with it what reading one costs (a few
// times the line): the log bounds an event's stored form at
// segment.DefaultMaxRecordSize, and its JSON is about as long, a little
// more for the field names. An event whose text is so full of characters
// JSON escapes that its line is longer cannot be imported; no event of
// that size is one a person or an agent writes.
const maxArchiveLine = segment.DefaultMaxRecordSize + 1<<20

// archiveReader reads an archive a line at a time, hashing every byte it
// consumes before the trailer.
type archiveReader struct {
	br   *bufio.Reader
	sum  *blake3.Hasher
	line int    // the line being read, from 1
	n    int64  // bytes hashed
	id   string // the voyage's, once the header is read
	// readErr is what reading the archive failed with (not its end):
	// not the archive's fault.
	readErr error
}

// invalid returns an error matching ErrInvalid about the line being read.
func (a *archiveReader) invalid(format string, args ...any) error {
	return fmt.Errorf("%w: archive line %d: %s", ErrInvalid, a.line, fmt.Sprintf(format, args...))
}

// consumed hashes bytes read from the archive before its trailer.
func (a *archiveReader) consumed(p []byte) {
	a.sum.Write(p)
	a.n += int64(len(p))
}

// fault turns an error of the underlying reader into the error to
// return: its end is the archive's fault (it was cut short), anything
// else is not.
func (a *archiveReader) fault(err error, what string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return a.invalid("the archive ends %s: it was cut short", what)
	}
	a.readErr = err
	return fmt.Errorf("read the archive, line %d: %w", a.line, err)
}

// readLine reads the next line, without its newline, of at most max
// bytes, hashing it (and its newline) if hash. The last line may lack
// its newline.
func (a *archiveReader) readLine(max int, hash bool) ([]byte, error) {
	a.line++
	// A long line is gathered in chunks and joined once, at its end: its
	// memory is the line and the chunks, not a slice grown over and over
	// (and the garbage each growth leaves).
	var chunks [][]byte
	n := 0
	for {
		chunk, err := a.br.ReadSlice('\n')
		if n+len(chunk) > max+1 {
			return nil, a.invalid("the line is longer than %d bytes", max)
		}
		if hash {
			a.consumed(chunk)
		}
		n += len(chunk)
		switch {
		case err == nil:
			return joinLine(chunks, chunk)[:n-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			chunks = append(chunks, bytes.Clone(chunk)) // ReadSlice's buffer is reused
		case errors.Is(err, io.EOF) && n > 0:
			return joinLine(chunks, chunk), nil
		default:
			return nil, a.fault(err, "before this line")
		}
	}
}

// joinLine returns the chunks and last as one new slice.
func joinLine(chunks [][]byte, last []byte) []byte {
	if len(chunks) == 0 {
		return bytes.Clone(last)
	}
	return bytes.Join(append(chunks, last), nil)
}

// importer is what an archive's events make of a voyage, before anything
// is written.
type importer struct {
	hdr    archiveHeader
	red    *redact.Redactor
	st     projection.State
	events []*projection.Event // redacted, as they will be stored; their Seq set
	cs     copies
	seen   map[uint64]bool // the events' sequence numbers
	// live are the copies holding the bytes of the artifacts the voyage
	// has (indexes into cs.list), and want those not read yet, by hash.
	live []int
	want map[string]int
	// blobs are where the blob records to write are in spill, by
	// sequence number: they wait there, not in memory, until the archive
	// is read to its trailer and the log is written. offsets are the pack
	// frames written, by the offset the archive's events give them.
	blobs   map[uint64]spilled
	spill   *os.File
	offsets map[int64]int64
	// reclaim lists, in the order they were stored, the copies in the
	// pack whose bytes the archive leaves out (jettisoned), yet to be
	// written as reclaimed frames.
	reclaim []int
	// after is the last record of the voyage the home holds already, when
	// an update brings it up to date: the copies stored up to it are
	// checked, not stored again, and an event after it that names one
	// names it where the home holds it: held gives that place (the Offset
	// the home's own event records), by the sequence number of the event
	// that stored the copy.
	after uint64
	held  map[uint64]int64
	// records are the events' bytes as the archive holds them (format
	// 2; nil otherwise), in the order of events, and asStored says the
	// record can be written as it is (redacting it changed nothing).
	records  [][]byte
	asStored []bool
	// links are every record's place in the chain, by seq: the events'
	// and the blob records' (read, or the stubs').
	links map[uint64]linked
	stubs map[uint64]bool
	// stubbed are the blob records to append as stubs, by seq (blob).
	stubbed   map[uint64]segment.Record
	witnesses []chain.Head
	now       time.Time
	// checkOnly: the archive is read and checked, nothing is stored
	// (ReadArchive); read are its events as it holds them.
	checkOnly bool
	read      []*projection.Event
}

// last returns the sequence number of the archive's last record.
func (im *importer) last() uint64 { return im.events[len(im.events)-1].Seq }

// readHead reads the archive's header.
func (a *archiveReader) readHead(ctx context.Context) (*importer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	line, err := a.readLine(1024, true)
	if err != nil {
		return nil, err
	}
	var hdr archiveHeader
	if err := strictJSON(line, &hdr); err != nil {
		return nil, a.invalid("not a helm archive's header (%v)", err)
	}
	switch {
	case hdr.Export > archiveVersion:
		return nil, a.invalid("archive format %d is newer than this helm reads (%d): upgrade helm", hdr.Export, archiveVersion)
	case hdr.Export < 1:
		return nil, a.invalid("not a helm archive's header (helm_export %d)", hdr.Export)
	}
	if hdr.Export < 2 && (hdr.Head != nil || hdr.Stubs != 0) {
		return nil, a.invalid("an archive of format %d has no head and no stubs", hdr.Export)
	}
	if hdr.Head == nil && hdr.Stubs != 0 {
		return nil, a.invalid("an archive without a head has no stubs (it says %d)", hdr.Stubs)
	}
	if u, err := uuid.Parse(hdr.VoyageID); err != nil || u.String() != hdr.VoyageID {
		return nil, a.invalid("voyage id %q is not a lower-case UUID", hdr.VoyageID)
	}
	a.id = hdr.VoyageID
	if hdr.Events < 1 || hdr.Artifacts < 0 || hdr.Stubs < 0 {
		return nil, a.invalid("an archive holds at least one event and no negative count of stubs or artifacts (events %d, stubs %d, artifacts %d)", hdr.Events, hdr.Stubs, hdr.Artifacts)
	}
	return &importer{hdr: hdr, seen: map[uint64]bool{}, links: map[uint64]linked{}, stubs: map[uint64]bool{}}, nil
}

// strictJSON decodes line into v, refusing unknown fields and trailing
// data.
func strictJSON(line []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("data after the object")
	}
	return nil
}

// readEvents reads the archive's events, checks each and folds it.
func (a *archiveReader) readEvents(ctx context.Context, im *importer) error {
	var last uint64
	for i := range im.hdr.Events {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, err := a.readLine(maxArchiveLine, true)
		if err != nil {
			return err
		}
		var ids struct {
			VoyageID string `json:"voyage_id"`
			Seq      uint64 `json:"seq"`
			Record   []byte `json:"record"`
		}
		if err := json.Unmarshal(line, &ids); err != nil {
			return a.invalid("not an event (%v)", err)
		}
		if ids.VoyageID != im.hdr.VoyageID {
			return a.invalid("the event belongs to voyage %q, the archive to voyage %s", ids.VoyageID, im.hdr.VoyageID)
		}
		e, err := a.decodeEvent(im, line, ids.Seq, ids.Record)
		if err != nil {
			return err
		}
		switch {
		case e.Seq == 0:
			return a.invalid("the %s event has no sequence number (seq)", e.Type)
		case e.Seq <= last:
			return a.invalid("the %s event's sequence number %d does not follow %d", e.Type, e.Seq, last)
		case i == 0 && (e.Seq != 1 || e.Type != projection.VoyageStarted || e.Voyage == nil || e.Voyage.ID != im.hdr.VoyageID):
			return a.invalid("the first event does not start voyage %s", im.hdr.VoyageID)
		case i > 0 && e.Type == projection.VoyageStarted:
			return a.invalid("a second voyage-started event")
		}
		last = e.Seq
		if err := im.checkAttribution(e); err != nil {
			return a.invalid("%v", err)
		}
		stored, err := importEvent(im.red, e, &im.st)
		if err != nil {
			return a.invalid("the %s event %d does not fold: %v", e.Type, e.Seq, err)
		}
		if ids.Record != nil {
			im.records = append(im.records, ids.Record)
			im.asStored = append(im.asStored, sameEvent(e, stored))
			im.links[e.Seq] = linked{len(ids.Record), chain.Digest(ids.Record)}
		}
		im.events = append(im.events, stored)
		if im.checkOnly {
			im.read = append(im.read, e)
		}
		im.seen[stored.Seq] = true
		im.cs.add(stored.Seq, stored)
	}
	// The records between the events are the blob records of the copies
	// they stored, one each: the log is numbered without a gap.
	blobs := uint64(0)
	for _, c := range im.cs.list {
		if b := c.ref.Blob; b != 0 {
			if b >= c.seq || im.seen[b] {
				return a.invalid("the artifact event %d names record %d as its blob, which is not a record before it", c.seq, b)
			}
			blobs++
		}
	}
	if n := uint64(len(im.events)); last-n != blobs {
		return a.invalid("the events are numbered up to %d, but they and the %d blob records they name make %d records", last, blobs, n+blobs)
	}
	live, err := im.cs.live(&im.st, false)
	if err != nil {
		return a.invalid("%v", err)
	}
	if len(live) != im.hdr.Artifacts {
		// Written before archives left out reduced artifacts' payloads?
		if old, _ := im.cs.live(&im.st, true); len(old) == im.hdr.Artifacts {
			live = old
		}
	}
	if len(live) != im.hdr.Artifacts {
		return a.invalid("the events say the voyage holds the bytes of %d artifacts, the header says the archive holds %d", len(live), im.hdr.Artifacts)
	}
	im.live, im.want = live, map[string]int{}
	isLive := map[int]bool{}
	for _, i := range live {
		im.want[im.cs.list[i].ref.Hash] = i
		isLive[i] = true
	}
	left := map[uint64]bool{} // the blob records whose bytes the archive leaves out
	for i, c := range im.cs.list {
		if !isLive[i] && c.ref.Blob == 0 {
			im.reclaim = append(im.reclaim, i)
		}
		if !isLive[i] && c.ref.Blob != 0 {
			left[c.ref.Blob] = true
		}
	}
	if err := a.readStubs(ctx, im, left); err != nil {
		return err
	}
	im.blobs, im.offsets = map[uint64]spilled{}, map[int64]int64{}
	return nil
}

// decodeEvent decodes an event line: of format 1 the line itself, of
// format 2 the record it holds, which the rest of the line must be
// exactly as Export writes it from that record (the JSON says nothing
// the record does not).
func (a *archiveReader) decodeEvent(im *importer, line []byte, seq uint64, record []byte) (*projection.Event, error) {
	if im.hdr.Export < 2 {
		if record != nil {
			return nil, a.invalid("an event line of an archive of format 1 holds no record")
		}
		e, err := projection.Decode(line)
		if err != nil {
			return nil, a.invalid("%v", err)
		}
		return e, nil
	}
	if len(record) == 0 {
		return nil, a.invalid("the event line holds no record (the event's stored bytes)")
	}
	e, err := projection.Decode(record)
	if err != nil {
		return nil, a.invalid("the event's record: %v", err)
	}
	e.Seq = seq
	want, err := json.Marshal(archiveEvent{VoyageID: im.hdr.VoyageID, Event: *e, Record: record})
	if err != nil {
		return nil, a.invalid("the event's record: %v", err)
	}
	if err := im.checkAttribution(e); err != nil {
		return nil, a.invalid("%v", err) // before the JSON, which cannot hold invalid UTF-8
	}
	if !bytes.Equal(want, line) {
		return nil, a.invalid("the %s event %d reads otherwise than its record: the line was changed", e.Type, seq)
	}
	return e, nil
}

// sameEvent reports whether the stored form import makes of e (redacted)
// is e: then its record is written as the archive holds it.
func sameEvent(e, stored *projection.Event) bool {
	a, err1 := json.Marshal(e)
	c := *stored
	c.Seq, c.V = e.Seq, e.V
	b, err2 := json.Marshal(&c)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}

// maxAhead is how far in the future of the importing clock an event may
// be dated: clocks differ a little, never by a day.
const maxAhead = 24 * time.Hour

// checkAttribution checks who recorded e and when exactly as a caller's
// are checked (checkWho, logbook.ValidateIdentity for the identity: the
// rules --as, --role and --method follow), and that e is not dated more
// than a day after the importing clock. The error names the event and
// the field.
func (im *importer) checkAttribution(e *projection.Event) error {
	where := fmt.Sprintf("the %s event %d", e.Type, e.Seq)
	if err := checkWho(e.Who); err != nil {
		return fmt.Errorf("%s: who: %v", where, errors.Unwrap(err))
	}
	// helm records every event with an identity (a verb without one
	// takes the voyage's), and every entry with a role and a method
	// (ErrMissingWho): an archive of events helm never writes is refused.
	if err := logbook.ValidateIdentity(e.Who.Identity); err != nil {
		return fmt.Errorf("%s: who.identity: %v", where, err)
	}
	if projection.IsEntry(e.Type) && (e.Who.Role == "" || e.Who.Method == "") {
		return fmt.Errorf("%s: who: an entry records a role and a method (role %q, method %q)", where, e.Who.Role, e.Who.Method)
	}
	if e.At.After(im.now.Add(maxAhead)) {
		return fmt.Errorf("%s: at: %s is more than a day after this clock's %s", where, e.At.UTC().Format(time.RFC3339), im.now.UTC().Format(time.RFC3339))
	}
	return nil
}

// readStubs reads the archive's stubs (format 2): one for each blob
// record in left, whose bytes the archive leaves out, in the order of
// their seq.
func (a *archiveReader) readStubs(ctx context.Context, im *importer, left map[uint64]bool) error {
	if im.hdr.Head != nil && im.hdr.Stubs != len(left) {
		return a.invalid("the events leave out the bytes of %d blob records, the header says the archive holds %d stubs", len(left), im.hdr.Stubs)
	}
	var last uint64
	for range im.hdr.Stubs {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, err := a.readLine(1024, true)
		if err != nil {
			return err
		}
		var s archiveStubLine
		if err := strictJSON(line, &s); err != nil {
			return a.invalid("not a stub (%v)", err)
		}
		d, err := parseDigest(s.Stub.Digest)
		switch {
		case err != nil:
			return a.invalid("stub %d: %v", s.Stub.Seq, err)
		case !left[s.Stub.Seq]:
			return a.invalid("stub %d is not a blob record whose bytes the archive leaves out", s.Stub.Seq)
		case s.Stub.Seq <= last:
			return a.invalid("stub %d does not follow stub %d", s.Stub.Seq, last)
		case s.Stub.Size < 1:
			return a.invalid("stub %d: a record of %d bytes", s.Stub.Seq, s.Stub.Size)
		}
		last = s.Stub.Seq
		im.links[s.Stub.Seq] = linked{s.Stub.Size, d}
		im.stubs[s.Stub.Seq] = true
	}
	return nil
}

// parseDigest reads a BLAKE3 digest in 64 lowercase hex digits.
func parseDigest(s string) (chain.Hash, error) {
	var h chain.Hash
	if b, err := hex.DecodeString(s); err != nil || len(b) != chain.Size || hex.EncodeToString(b) != s {
		return h, fmt.Errorf("digest %q is not a BLAKE3-256 in 64 lowercase hex digits", s)
	}
	hex.Decode(h[:], []byte(s))
	return h, nil
}

// checkChain recomputes the archive's chain (format 2, with a head)
// from its records, once every one is read, and refuses an archive
// whose head is not the one it claims, or whose chain does not pass
// through a witness: an error matching ErrDamaged naming the head or the
// witness.
func (im *importer) checkChain(a *archiveReader) error {
	head := im.hdr.Head
	if head == nil {
		return nil
	}
	at := map[uint64]chain.Hash{}
	want := map[uint64]bool{}
	for _, w := range im.witnesses {
		want[w.Seq] = true
	}
	link := chain.Genesis(im.hdr.VoyageID)
	last := im.last()
	for seq := uint64(1); seq <= last; seq++ {
		l, ok := im.links[seq]
		if !ok {
			return fmt.Errorf("%w: archive: record %d of the chain is neither an event nor a blob record it holds", ErrInvalid, seq)
		}
		link = chain.Next(link, seq, l.n, l.digest)
		if want[seq] {
			at[seq] = link
		}
	}
	got := chain.Head{Seq: last, Hash: link}
	if got != *head {
		return fmt.Errorf("%w: archive line 1: the archive's records chain to head %s, its header claims %s: the archive was changed after it was written", ErrDamaged, got, head)
	}
	for _, w := range im.witnesses {
		switch h, ok := at[w.Seq]; {
		case w.Seq == 0:
			if w.Hash != chain.Genesis(im.hdr.VoyageID) {
				return fmt.Errorf("%w: witness %s is not the start of voyage %s", ErrDamaged, w, im.hdr.VoyageID)
			}
		case !ok:
			return fmt.Errorf("%w: witness %s: the archive's chain ends at seq %d, before the witnessed head: it was cut short or rolled back", ErrDamaged, w, last)
		case h != w.Hash:
			return fmt.Errorf("%w: witness %s: the archive's chain is at %s:%s there: the voyage was changed at or below seq %d since the witness saw it", ErrDamaged, w, strconv.FormatUint(w.Seq, 10), h, w.Seq)
		}
		// helm writes a blob record and the event naming it in one
		// commit: no head was ever taken between them. One between them
		// proves the "blob" was the last record of a commit — an event,
		// left out as a stub, and the naming event forged above the
		// witness (Verify checks the same).
		for _, c := range im.cs.list {
			if b := c.ref.Blob; b != 0 && b <= w.Seq && w.Seq < c.seq {
				return fmt.Errorf("%w: witness %s holds seq %d between record %d and the artifact event %d that names it as its blob record: helm writes the two in one commit, so record %d was an event, left out, and event %d forged", ErrDamaged, w, w.Seq, b, c.seq, b, c.seq)
			}
		}
	}
	return nil
}

// spilled is a blob record's place in the importer's spill file.
type spilled struct {
	off int64
	n   int
}

// spillBlob writes a blob record to the spill file (a temporary file,
// removed by close), to be read back when the log is written.
func (im *importer) spillBlob(seq uint64, rec []byte) error {
	if im.checkOnly {
		im.links[seq] = linked{len(rec), chain.Digest(rec)}
		return nil
	}
	if im.spill == nil {
		f, err := os.CreateTemp("", "helm-import-*")
		if err != nil {
			return fmt.Errorf("hold the archive's blob records: %w", err)
		}
		im.spill = f
	}
	off, err := im.spill.Seek(0, io.SeekEnd)
	if err == nil {
		_, err = im.spill.Write(rec)
	}
	if err != nil {
		return fmt.Errorf("hold the archive's blob records in %s: %w", im.spill.Name(), err)
	}
	im.blobs[seq] = spilled{off, len(rec)}
	im.links[seq] = linked{len(rec), chain.Digest(rec)}
	return nil
}

// close removes the spill file, if there is one.
func (im *importer) close() {
	if im.spill != nil {
		im.spill.Close()
		os.Remove(im.spill.Name())
		im.spill = nil
	}
}

// importEvent returns the stored form of e, redacted, once it folds into
// st at e.Seq: a deep copy, with its Seq.
func importEvent(red *redact.Redactor, e *projection.Event, st *projection.State) (*projection.Event, error) {
	c := *e
	c.Seq, c.V = 0, 0
	data, err := projection.EncodeJSON(&c)
	if err != nil {
		return nil, err
	}
	copied, err := projection.Decode(data)
	if err != nil {
		return nil, err
	}
	redactEvent(red, copied)
	if err := st.Apply(e.Seq, copied); err != nil {
		return nil, err
	}
	copied.Seq = e.Seq
	return copied, nil
}

// copyStower stores the copies of an archive's artifacts in a voyage's
// journal, each with the sequence number of the event that stored it:
// a copy the journal gives no place for is named by it (sharedOffset).
type copyStower struct {
	ctx context.Context
	rec journal
}

// stow stores a copy's stored bytes, read from r; r nil keeps the place
// of a copy whose bytes the archive leaves out (jettisoned).
func (c copyStower) stow(seq uint64, ref artifact.Ref, r io.Reader) (artifact.Ref, error) {
	got, err := c.rec.stowStored(c.ctx, ref, r)
	if err == nil && got.Offset == 0 {
		got.Offset = sharedOffset(seq)
	}
	return got, err
}

// readArtifacts reads the archive's artifacts, checking each as it is
// stored — small ones kept for their blob records, large ones stored in
// the voyage's journal — then its trailer.
func (a *archiveReader) readArtifacts(ctx context.Context, im *importer, pack copyStower) error {
	for range im.hdr.Artifacts {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := a.readArtifact(im, pack); err != nil {
			return err
		}
	}
	if err := a.readTrailer(im.hdr.Export); err != nil {
		return err
	}
	if err := im.checkChain(a); err != nil {
		return err
	}
	for hash := range im.want { // cannot be: the header counts them
		return a.invalid("the archive lacks the bytes of artifact %s", hash)
	}
	return im.reclaimUpTo(pack, ^uint64(0))
}

// reclaimUpTo writes the reclaimed frames of the jettisoned copies in the
// pack stored before seq.
func (im *importer) reclaimUpTo(pack copyStower, seq uint64) error {
	for len(im.reclaim) > 0 && im.cs.list[im.reclaim[0]].seq < seq {
		c := &im.cs.list[im.reclaim[0]]
		r := artifactRef(&c.ref)
		if c.seq > im.after {
			var err error
			if r, err = pack.stow(c.seq, r, nil); err != nil {
				return err
			}
		} else {
			r.Offset = im.held[c.seq]
		}
		im.offsets[c.ref.Offset] = r.Offset
		im.reclaim = im.reclaim[1:]
	}
	return nil
}

// readArtifact reads one artifact line and stores its bytes.
func (a *archiveReader) readArtifact(im *importer, pack copyStower) error {
	a.line++
	head, err := a.readArtifactHead()
	if err != nil {
		return err
	}
	i, ok := im.want[head.Hash]
	if !ok {
		if slices.ContainsFunc(im.live, func(i int) bool { return im.cs.list[i].ref.Hash == head.Hash }) {
			return a.invalid("artifact %s is in the archive twice", head.Hash)
		}
		return a.invalid("artifact %s is not one whose bytes the voyage holds, by its events", head.Hash)
	}
	delete(im.want, head.Hash)
	c := &im.cs.list[i]
	if head.Size != c.ref.Size {
		return a.invalid("artifact %s is of %d bytes, its event says %d", head.Hash, head.Size, c.ref.Size)
	}
	if head.Encoding != archiveEncoding {
		return a.invalid("artifact %s is encoded %q, not %q", head.Hash, head.Encoding, archiveEncoding)
	}
	data := &quoteReader{a: a}
	stored := base64.NewDecoder(base64.StdEncoding, data)
	ref := artifactRef(&c.ref)
	if c.ref.Blob != 0 {
		// Blobs are held until the log is written: helm stores none
		// larger than InlineMax, so an archive may hold none either.
		if c.ref.StoredSize > artifact.InlineMax {
			return a.invalid("artifact %s: %d stored bytes in a blob record, where helm stores at most %d", head.Hash, c.ref.StoredSize, artifact.InlineMax)
		}
		var buf bytes.Buffer
		err = artifact.CopyStored(&buf, ref, stored)
		if err == nil {
			err = im.spillBlob(c.ref.Blob, artifact.BlobRecord(&artifact.Encoded{Hash: ref.Hash, Size: ref.Size, Compressed: buf.Bytes()}))
		}
	} else if err = im.reclaimUpTo(pack, c.seq); err == nil && c.seq <= im.after {
		err = artifact.CopyStored(io.Discard, ref, stored) // held already: checked only
		im.offsets[c.ref.Offset] = im.held[c.seq]
	} else if err == nil {
		var r artifact.Ref
		r, err = pack.stow(c.seq, ref, stored)
		im.offsets[c.ref.Offset] = r.Offset
	}
	if err != nil {
		switch {
		case a.readErr != nil:
			return fmt.Errorf("read the archive, line %d: %w", a.line, a.readErr)
		case errors.Is(err, ErrInvalid):
			return err
		case errors.Is(err, artifact.ErrDamaged) || errors.As(err, new(base64.CorruptInputError)) || errors.Is(err, io.ErrUnexpectedEOF):
			return a.invalid("%v", err)
		}
		return err // writing the pack failed
	}
	if !data.done {
		return a.invalid("artifact %s: its data does not end where its bytes do", head.Hash)
	}
	end := make([]byte, len(artifactLineEnd)-1) // the quote is read
	if _, err := io.ReadFull(a.br, end); err != nil {
		return a.fault(err, "inside this artifact's line")
	}
	a.consumed(end)
	if string(end) != artifactLineEnd[1:] {
		return a.invalid("artifact %s: its line does not end as an artifact's does", head.Hash)
	}
	nl, err := a.br.ReadByte()
	if err != nil {
		return a.fault(err, "inside this artifact's line")
	}
	a.consumed([]byte{nl})
	if nl != '\n' {
		return a.invalid("artifact %s: its line does not end as an artifact's does", head.Hash)
	}
	return nil
}

// readArtifactHead reads an artifact line up to its data, and checks that
// it is written as Export writes it.
func (a *archiveReader) readArtifactHead() (archiveArtifactHead, error) {
	const max = 256
	var b []byte
	for !bytes.HasSuffix(b, []byte(`"data":"`)) {
		if len(b) >= max {
			return archiveArtifactHead{}, a.invalid("not an artifact (%.40q...)", b)
		}
		c, err := a.br.ReadByte()
		if err != nil {
			return archiveArtifactHead{}, a.fault(err, "before this artifact's data")
		}
		a.consumed([]byte{c})
		if c == '\n' {
			return archiveArtifactHead{}, a.invalid("not an artifact (%.40q...)", b)
		}
		b = append(b, c)
	}
	var line struct {
		Artifact archiveArtifactHead `json:"artifact"`
	}
	err := json.Unmarshal(append(slices.Clip(b), artifactLineEnd...), &line)
	head := line.Artifact
	if err != nil || !bytes.Equal(b, head.prefix()) {
		return head, a.invalid("not an artifact line as helm writes one (%.60q...)", b)
	}
	if sum, err := hex.DecodeString(head.Hash); err != nil || len(sum) != 32 || hex.EncodeToString(sum) != head.Hash {
		return head, a.invalid("artifact hash %q is not a BLAKE3-256 in lower-case hex", head.Hash)
	}
	return head, nil
}

// quoteReader reads an artifact's base64 data, up to the quote that ends
// it, hashing what it reads.
type quoteReader struct {
	a    *archiveReader
	done bool // the quote was read
}

func (q *quoteReader) Read(p []byte) (int, error) {
	if q.done {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	br := q.a.br
	if br.Buffered() == 0 {
		if _, err := br.Peek(1); err != nil {
			return 0, q.a.fault(err, "inside an artifact's data")
		}
	}
	buf, _ := br.Peek(min(len(p), br.Buffered()))
	n := 0
	for ; n < len(buf); n++ {
		c := buf[n]
		if c == '"' {
			q.done = true
			break
		}
		if !isBase64(c) {
			return 0, q.a.invalid("byte %q in an artifact's base64 data", c)
		}
	}
	copy(p, buf[:n])
	q.a.consumed(buf[:n])
	br.Discard(n)
	if q.done {
		q.a.consumed([]byte{'"'})
		br.Discard(1)
		if n == 0 {
			return 0, io.EOF
		}
	}
	return n, nil
}

func isBase64(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '='
}

// readTrailer reads the archive's last line and checks its digest of
// every byte before it; nothing may follow it.
func (a *archiveReader) readTrailer(version int) error {
	hashed := a.n
	got := hex.EncodeToString(a.sum.Sum(nil))
	line, err := a.readLine(256, false)
	if err != nil {
		return err
	}
	var tr archiveTrailer
	if err := strictJSON(line, &tr); err != nil || tr.End != version {
		return a.invalid("not the archive's trailer (%.60q)", line)
	}
	if tr.Digest != got {
		return a.invalid("the digest of the %d bytes before the trailer is %s, the trailer says %q: the archive was changed or damaged after it was written", hashed, got, tr.Digest)
	}
	if _, err := a.br.ReadByte(); err == nil {
		return a.invalid("the archive goes on after its trailer")
	} else if !errors.Is(err, io.EOF) {
		return a.fault(err, "after its trailer")
	}
	return nil
}

// importBatch is about how many bytes of records appendTo appends at a
// time: the log is written in batches, each ending with an event, so that
// an archive's records are never all in memory at once.
const importBatch = 8 << 20

// appendTo appends the archive's records after record after to v's log,
// in batches of about importBatch bytes (moved as appendImported takes
// it): its events in their stored form, their artifacts' copies where this
// home stored them, the blob records read back from the spill file. Call
// it once the archive was read to its trailer, so that nothing of an
// archive that turns out damaged is written. It closes the spill file.
func (im *importer) appendTo(ctx context.Context, v *Voyage, after uint64, moved func(last uint64) error) error {
	defer im.close()
	byBlob := map[uint64]bool{}
	for _, c := range im.cs.list {
		if c.ref.Blob != 0 {
			byBlob[c.ref.Blob] = true
		}
	}
	var batch [][]byte
	size, base := 0, after // the batch's bytes; the record it follows
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := v.appendImported(ctx, batch, base, im.seen, im.stubbed, moved)
		base += uint64(len(batch))
		batch, size = batch[:0], 0
		return err
	}
	seq := uint64(0)
	for i, e := range im.events {
		for seq+1 < e.Seq {
			seq++
			if !byBlob[seq] {
				return fmt.Errorf("%w: record %d is neither an event nor a blob", ErrInvalid, seq)
			}
			if seq <= after {
				continue
			}
			blob, err := im.blob(seq)
			if err != nil {
				return err
			}
			batch, size = append(batch, blob), size+len(blob)
		}
		seq = e.Seq
		if seq <= after {
			continue
		}
		stored := *e
		stored.Seq = 0
		// The archive's record is written as it is, so that the chain is
		// the archive's, unless this home stores the event otherwise: its
		// text redacted by rules the exporting home lacked, or its copy's
		// bytes at another place.
		asStored := im.records != nil && im.asStored[i]
		if a := e.Artifact; a != nil && a.Blob == 0 && (e.Type == projection.ArtifactStowed || e.Type == projection.ArtifactReduced) {
			off, ok := im.offsets[a.Offset]
			if !ok {
				return fmt.Errorf("%w: event %d names the pack frame at offset %d, which no artifact stored", ErrInvalid, e.Seq, a.Offset)
			}
			ref := *a
			ref.Offset = off
			stored.Artifact = &ref
			asStored = asStored && off == a.Offset
		}
		var rec []byte
		var err error
		if asStored {
			rec = im.records[i]
		} else {
			rec, err = projection.Encode(&stored)
		}
		if err == nil && len(rec) > segment.DefaultMaxRecordSize {
			err = fmt.Errorf("a %s event of %d bytes exceeds the log's record limit of %d bytes", e.Type, len(rec), segment.DefaultMaxRecordSize)
		}
		if err != nil {
			return fmt.Errorf("%w: event %d: %v", ErrInvalid, e.Seq, err)
		}
		batch, size = append(batch, rec), size+len(rec)
		if size >= importBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// blob returns the blob record seq, read back from the spill file. A
// jettisoned artifact's, which the archive leaves out, is an empty blob
// record that keeps its place; when the archive gives its stub (its
// length and digest), it is noted in im.stubbed too, for a journal that
// appends it as a stub, keeping the archive's chain (appendImported).
func (im *importer) blob(seq uint64) ([]byte, error) {
	at, ok := im.blobs[seq]
	if !ok {
		if l, ok := im.links[seq]; ok && im.stubs[seq] {
			if im.stubbed == nil {
				im.stubbed = map[uint64]segment.Record{}
			}
			im.stubbed[seq] = segment.Record{Seq: seq, Reclaimed: true, Len: l.n, Digest: l.digest}
		}
		return artifact.BlobRecord(&artifact.Encoded{Compressed: []byte{}}), nil
	}
	rec := make([]byte, at.n)
	if _, err := im.spill.ReadAt(rec, at.off); err != nil {
		return nil, fmt.Errorf("read the archive's blob record %d back from %s: %w", seq, im.spill.Name(), err)
	}
	return rec, nil
}
