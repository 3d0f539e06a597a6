package natsstore

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/segment"
	"github.com/helmlog/helm/store"
)

// A conflict gives the records of the unit that came first only when they
// continue both chains from the tail the writer decided on to the tail
// the store holds, as a read from there would check them.
func TestAConflictGivesTheRecordsThatCameFirstOnlyWhenTheyChain(t *testing.T) {
	tail := point{first: 3, stream: 7, prev: 0x1234, units: 2, link: chain.Genesis("v"), linked: true, stores: true}
	records := [][]byte{[]byte("theirs"), []byte("and more")}
	after := func(recs [][]byte) point {
		sum, link := tail.prev, tail.link
		for i, r := range recs {
			sum = segment.ChainNext(sum, r)
			link = chain.Link(link, tail.first+uint64(i), r)
		}
		return point{first: tail.first + uint64(len(recs)), stream: 9, prev: sum, units: 3, link: link, linked: true, stores: true}
	}
	now := after(records)
	for _, tc := range []struct {
		name    string
		tail    point
		now     func() point
		records [][]byte
		want    []store.Record
	}{
		{name: "the one unit after the tail", tail: tail, now: func() point { return now }, records: records,
			want: []store.Record{{Seq: 3, Data: records[0]}, {Seq: 4, Data: records[1]}}},
		{name: "another record in its place", tail: tail, now: func() point { return now }, records: [][]byte{[]byte("forged"), records[1]}},
		{name: "another link stored", tail: tail, now: func() point { p := now; p.link[0] ^= 1; return p }, records: records},
		{name: "another CRC32C chain value", tail: tail, now: func() point { p := now; p.prev++; return p }, records: records},
		{name: "units between", tail: tail, now: func() point { p := now; p.units = 4; return p }, records: records},
		{name: "records between", tail: tail, now: func() point { p := now; p.first++; return p }, records: records},
		{name: "a tail with no link known", tail: func() point { p := tail; p.linked = false; return p }(), now: func() point { return now }, records: records},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, followOn(tc.tail, tc.now(), tc.records))
		})
	}
}
