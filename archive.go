package helm

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/zeebo/blake3"

	"github.com/helmlog/helm/artifact"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/segment"
)

// A voyage's archive: one file of JSON lines that carries the whole
// voyage — every event and the stored bytes of every artifact it still
// holds — from which Home.Import makes the voyage again in another home.
//
//	line 1          {"helm_export":2,"voyage_id":ID,"events":N,"stubs":K,"artifacts":M,"head":{"seq":S,"hash":H}}
//	N lines         every event in the order it was recorded, as Voyage.Events
//	                yields it, with "voyage_id" added (the transcript's line)
//	                and "record": the base64 of the event's bytes exactly as
//	                the log stores them: the artifacts' events (stowed,
//	                reduced, jettisoned) too
//	K lines         {"stub":{"seq":Q,"size":L,"digest":D}}: every blob record
//	                whose bytes the archive leaves out (a jettisoned
//	                artifact's, a reduced one's payload), by its length
//	                and BLAKE3 digest
//	M lines         {"artifact":{"hash":H,"size":S,"encoding":"zstd","data":B}}
//	                every artifact the voyage holds the bytes of, in the
//	                order it was stored: B is the base64 of its stored,
//	                zstd-compressed bytes, H the BLAKE3 of the uncompressed
//	                bytes and S their size
//	last line       {"helm_export_end":2,"digest":D}: D is the BLAKE3 (hex)
//	                of every byte before this line
//
// The head is the voyage's chain (package chain) after its last event, as
// Voyage.Head gives it: every record of the log, by seq — the events'
// records, the blob records an artifact line holds the bytes of (a blob
// record is one byte, then the stored bytes) and the stubs' digests —
// links into it, so Import recomputes the chain from the archive alone
// and refuses one whose head is not the one it claims: an edit anywhere
// in the voyage's records changes the head, and a head held elsewhere (a
// witness) tells an edited archive whose head was recomputed too. A blob
// record compacted away is a stub by the length and digest its log kept:
// the weak digest a format-3 stub stands for (package segment) where a
// helm of that format reclaimed it, as Voyage.Head counts it. Helm before
// this one wrote archives of format 2 without a head (and without stubs)
// for such a voyage: Import reads them as carrying no chain.
//
// A jettisoned artifact's bytes are left out: its events say that it was
// jettisoned, and why; so is a reduced one's payload, which its summary
// stands in for (archives written before Compact reclaimed such payloads
// carry them, and still import). The keys are written in this order and the artifact
// lines exactly in this form, so that a reader can stream an artifact's
// data of any size; the digest makes an accidental change to the file,
// anywhere, detectable.
//
// Format 1 (helm before the chain) has no "stubs" or "head" in its header
// and no "record" in its event lines; Import still reads it, and says the
// archive carries no chain.

// archiveVersion is the archive format's version: the header's
// "helm_export" and the trailer's "helm_export_end".
const archiveVersion = 2

// archiveEvent is an event as an archive holds it: as Events yields it,
// with its voyage's id (the transcript's line form).
type archiveEvent struct {
	VoyageID string `json:"voyage_id"`
	projection.Event
	// Record is the event's bytes as the log stores them (format 2).
	Record []byte `json:"record,omitempty"`
}

// archiveHeader is an archive's first line.
type archiveHeader struct {
	Export    int    `json:"helm_export"`
	VoyageID  string `json:"voyage_id"`
	Events    int    `json:"events"`
	Stubs     int    `json:"stubs,omitempty"`
	Artifacts int    `json:"artifacts"`
	// Head is the voyage's chain head after its last event (format 2;
	// nil: the archive carries no chain).
	Head *chain.Head `json:"head,omitempty"`
}

// archiveStub is a blob record whose bytes an archive leaves out: its
// place in the chain.
type archiveStub struct {
	Seq    uint64 `json:"seq"`
	Size   int    `json:"size"`
	Digest string `json:"digest"`
}

// archiveStubLine is a stub's line.
type archiveStubLine struct {
	Stub archiveStub `json:"stub"`
}

// linked is a record's place in the chain: its length and digest.
type linked struct {
	n      int
	digest chain.Hash
}

// recordLink returns r's length and digest, the chain's link material:
// a reclaimed record's are those its stub keeps (Record.Link).
func recordLink(r segment.Record) linked {
	if r.Reclaimed {
		return linked{r.Len, r.Digest}
	}
	return linked{len(r.Data), chain.Digest(r.Data)}
}

// archiveTrailer is an archive's last line.
type archiveTrailer struct {
	End    int    `json:"helm_export_end"`
	Digest string `json:"digest"`
}

// archiveArtifactHead is an artifact line up to its data: what a reader
// checks before it streams the data.
type archiveArtifactHead struct {
	Hash     string `json:"hash"`
	Size     int64  `json:"size"`
	Encoding string `json:"encoding"`
}

// prefix is the artifact line up to the first byte of its data.
func (a archiveArtifactHead) prefix() []byte {
	b := make([]byte, 0, 160)
	b = append(b, `{"artifact":{"hash":`...)
	b = strconv.AppendQuote(b, a.Hash)
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, a.Size, 10)
	b = append(b, `,"encoding":`...)
	b = strconv.AppendQuote(b, a.Encoding)
	return append(b, `,"data":"`...)
}

// artifactLineEnd ends an artifact line after its data.
const artifactLineEnd = `"}}`

// archiveEncoding is how an archive's artifact data is compressed: as
// the voyage stores it.
const archiveEncoding = "zstd"

// storedCopy is an artifact event that stored bytes of its own (a blob
// record or a pack frame), rather than pointing to bytes stored before:
// every artifact-stowed event, and an artifact-reduced event whose
// summary the voyage did not hold yet. Copies are told apart by where
// their bytes are.
type storedCopy struct {
	seq uint64 // the event's
	ref projection.ArtifactRef
}

// place is where a copy's bytes are: its blob record, or its pack frame.
type place struct {
	blob   uint64
	offset int64
}

func placeOf(r *projection.ArtifactRef) place {
	if r.Blob != 0 {
		return place{blob: r.Blob}
	}
	return place{offset: r.Offset}
}

// copies tracks a voyage's stored copies as its events go by, and tells
// which of them hold the bytes of the artifacts it still has.
type copies struct {
	list []storedCopy
	at   map[place]int // index in list
}

// add notes e's copy, if e stored one: the first event naming a place
// stored the bytes there.
func (c *copies) add(seq uint64, e *projection.Event) {
	if e.Artifact == nil || (e.Type != projection.ArtifactStowed && e.Type != projection.ArtifactReduced) {
		return
	}
	if c.at == nil {
		c.at = map[place]int{}
	}
	p := placeOf(e.Artifact)
	if _, ok := c.at[p]; ok {
		return
	}
	c.at[p] = len(c.list)
	c.list = append(c.list, storedCopy{seq: seq, ref: *e.Artifact})
}

// live returns, in the order they were stored, the copies that hold the
// bytes of an artifact the voyage has (stowed; reduced too if
// withReduced; never jettisoned), by the views in st. An archive leaves
// out a reduced artifact's payload, as Compact reclaims it: its summary
// stands in for it; archives written before Compact did carry it
// (withReduced). An artifact whose place no copy stored, or one whose
// copy stored another artifact, is an error.
func (c *copies) live(st *projection.State, withReduced bool) ([]int, error) {
	var out []int
	for hash, a := range st.Artifacts {
		if a.Status == projection.Jettisoned {
			continue
		}
		i, ok := c.at[placeOf(&a.ArtifactRef)]
		if !ok {
			return nil, fmt.Errorf("artifact %s is %s, but no event stored its bytes (%s)", hash, a.Status, describePlace(placeOf(&a.ArtifactRef)))
		}
		if c.list[i].ref.Hash != hash {
			return nil, fmt.Errorf("artifact %s points to the bytes of artifact %s (%s)", hash, c.list[i].ref.Hash, describePlace(placeOf(&a.ArtifactRef)))
		}
		if a.Status == projection.Reduced && !withReduced {
			continue
		}
		out = append(out, i)
	}
	slices.Sort(out)
	return out, nil
}

func describePlace(p place) string {
	if p.blob != 0 {
		return fmt.Sprintf("record %d of the event log", p.blob)
	}
	return fmt.Sprintf("offset %d of the pack", p.offset)
}

// Export writes the voyage with this id or unambiguous id prefix to w as
// an archive, the form Import reads: a header, every event in the order
// it was recorded (as Voyage.Events yields it, with "voyage_id"), the
// stored bytes of every artifact it holds (base64 of the compressed
// bytes, with their BLAKE3 address), and a trailer holding the BLAKE3
// digest of all that: the file alone carries the voyage, and Import makes
// it again in another home. A jettisoned artifact's bytes are left out,
// and so is a reduced one's payload (its events say so).
//
// Export opens the voyage itself and closes it after; like every read it
// writes nothing. The archive holds the voyage as it stands when the
// export begins: events appended meanwhile are left for the next one.
// Artifacts are streamed, never held whole, and checked against their
// address on the way: a damaged one fails the export, as it would fail a
// reader.
func (h *Home) Export(ctx context.Context, idOrPrefix string, w io.Writer) error {
	v, err := h.Voyage(ctx, idOrPrefix)
	if err != nil {
		return err
	}
	defer v.Close()
	return v.exportArchive(ctx, w)
}

// exportArchive writes v as an archive (Export, Copy).
func (v *Voyage) exportArchive(ctx context.Context, w io.Writer) error {
	const op = "export archive"
	dir := v.rec.Dir()
	// The first pass folds the events afresh: how many there are, which
	// stored copies hold the bytes of the artifacts the voyage has, and
	// the chain up to the last event (with the links of the blob records,
	// should the archive leave some out).
	var st projection.State
	var cs copies
	var last uint64
	events := 0
	link := chain.Genesis(v.id)
	var head chain.Head
	blobs := map[uint64]linked{}
	var hidden stubs // a hidden record refuses the export
	fold := hidden.events(v.id, dir, func(seq uint64, e *projection.Event) error {
		if err := st.Apply(seq, e); err != nil {
			return fmt.Errorf("voyage %s, %s, record %d: %w", v.id, dir, seq, err)
		}
		cs.add(seq, e)
		last = seq
		events++
		return nil
	})
	err := v.rec.Scan(ctx, 1, func(r segment.Record) error {
		l := recordLink(r)
		link = chain.Next(link, r.Seq, l.n, l.digest)
		if r.Reclaimed || artifact.IsBlob(r.Data) {
			blobs[r.Seq] = l
		}
		if err := fold(r); err != nil {
			return err
		}
		if last == r.Seq {
			head = chain.Head{Seq: r.Seq, Hash: link}
		}
		return nil
	})
	if err == nil {
		err = hidden.err(v.id, dir)
	}
	if err != nil {
		return v.fail(op, err, hint.Hint{})
	}
	if events == 0 {
		return v.fail(op, fmt.Errorf("%w: the event log holds no events", ErrDamaged), hint.Hint{})
	}
	live, err := cs.live(&st, false)
	if err != nil {
		return v.fail(op, fmt.Errorf("%w: %v", ErrDamaged, err), hint.Hint{})
	}
	// The stubs: the blob records of the copies whose bytes the archive
	// leaves out.
	var stubs []archiveStub
	isLive := map[int]bool{}
	for _, i := range live {
		isLive[i] = true
	}
	for i, c := range cs.list {
		if b := c.ref.Blob; b != 0 && !isLive[i] {
			l, ok := blobs[b]
			if !ok {
				return v.fail(op, fmt.Errorf("%w: the event at seq %d names record %d as its blob record, which the log does not hold as one", ErrDamaged, c.seq, b), hint.Hint{})
			}
			stubs = append(stubs, archiveStub{Seq: b, Size: l.n, Digest: l.digest.String()})
		}
	}
	slices.SortFunc(stubs, func(a, b archiveStub) int { return cmp.Compare(a.Seq, b.Seq) })

	bw := bufio.NewWriterSize(w, 64<<10)
	sum := blake3.New()
	out := io.MultiWriter(bw, sum)
	hdr := archiveHeader{Export: archiveVersion, VoyageID: v.id, Events: events, Stubs: len(stubs), Artifacts: len(live), Head: &head}
	line, err := json.Marshal(hdr)
	if err == nil {
		_, err = out.Write(append(line, '\n'))
	}
	if err == nil {
		err = v.rec.Scan(ctx, 1, func(r segment.Record) error {
			if r.Seq > last {
				return errFound
			}
			return eventsOf(v.id, dir, func(seq uint64, e *projection.Event) error {
				e.Seq = seq
				data, err := json.Marshal(archiveEvent{VoyageID: v.id, Event: *e, Record: r.Data})
				if err != nil {
					return err
				}
				_, err = out.Write(append(data, '\n'))
				return err
			})(r)
		})
		if errors.Is(err, errFound) {
			err = nil
		}
	}
	for _, s := range stubs {
		if err != nil {
			break
		}
		line, _ := json.Marshal(archiveStubLine{s})
		_, err = out.Write(append(line, '\n'))
	}
	if err == nil {
		err = v.exportArtifacts(ctx, out, &cs, live)
	}
	if err == nil {
		tail, _ := json.Marshal(archiveTrailer{End: archiveVersion, Digest: hex.EncodeToString(sum.Sum(nil))})
		_, err = bw.Write(append(tail, '\n'))
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return v.fail(op, err, hint.Hint{})
	}
	return nil
}

// exportArtifacts writes the artifact lines of the live copies (indexes
// into cs.list, in the order they were stored): those in blob records as
// one pass over the log meets them, those in the pack in between, in the
// order they were stored.
func (v *Voyage) exportArtifacts(ctx context.Context, out io.Writer, cs *copies, live []int) error {
	var packed []*storedCopy
	blobs := map[uint64]*storedCopy{}
	var first uint64
	for _, i := range live {
		c := &cs.list[i]
		if c.ref.Blob == 0 {
			packed = append(packed, c)
			continue
		}
		blobs[c.ref.Blob] = c
		if first == 0 || c.ref.Blob < first {
			first = c.ref.Blob
		}
	}
	writePacked := func(before uint64) error {
		for len(packed) > 0 && packed[0].seq < before {
			c := packed[0]
			r, err := v.rec.openStored(ctx, artifactRef(&c.ref))
			if err == nil {
				err = writeArtifactLine(out, &c.ref, r)
				r.Close()
			}
			if err != nil {
				return err
			}
			packed = packed[1:]
		}
		return nil
	}
	if len(blobs) > 0 {
		dir := v.rec.Dir()
		err := v.rec.Scan(ctx, first, func(r segment.Record) error {
			c := blobs[r.Seq]
			if c == nil {
				return nil
			}
			if err := writePacked(c.seq); err != nil {
				return err
			}
			if r.Reclaimed || !artifact.IsBlob(r.Data) {
				_, err := artifact.ReadBlob(artifactRef(&c.ref), r.Data, dir)
				return err
			}
			if err := writeArtifactLine(out, &c.ref, bytes.NewReader(r.Data[1:])); err != nil {
				return fmt.Errorf("%s, record %d: %w", dir, r.Seq, err)
			}
			delete(blobs, r.Seq)
			if len(blobs) == 0 {
				return errFound
			}
			return nil
		})
		if err != nil && !errors.Is(err, errFound) {
			return err
		}
		for _, c := range blobs { // named, but the log does not hold them
			_, err := artifact.ReadBlob(artifactRef(&c.ref), nil, dir)
			return err
		}
	}
	return writePacked(^uint64(0))
}

// writeArtifactLine writes the artifact line of the copy ref names, its
// stored bytes read from stored and checked on the way.
func writeArtifactLine(out io.Writer, ref *projection.ArtifactRef, stored io.Reader) error {
	if _, err := out.Write(archiveArtifactHead{Hash: ref.Hash, Size: ref.Size, Encoding: archiveEncoding}.prefix()); err != nil {
		return err
	}
	enc := base64.NewEncoder(base64.StdEncoding, out)
	if err := artifact.CopyStored(enc, artifactRef(ref), stored); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err := io.WriteString(out, artifactLineEnd+"\n")
	return err
}
