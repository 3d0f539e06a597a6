package natsstore

import (
	"bytes"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/chain"
)

// link is a link for a unit of the tests.
var link = chain.Link(chain.Genesis("v"), 1, []byte("a record"))

// encodeCRCUnit encodes records as helm wrote units before the BLAKE3
// chain: payload version 1, with no link.
func encodeCRCUnit(records [][]byte) []byte {
	b := encodeUnit(records, chain.Hash{})
	b[0] = payloadCRC
	return b[:len(b)-chain.Size]
}

func TestUnitRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		name    string
		records [][]byte
	}{
		{"one record", [][]byte{[]byte("an event")}},
		{"empty records", [][]byte{{}, {}, []byte("x")}},
		{"binary and long", [][]byte{bytes.Repeat([]byte{0, 0xff, 0x80}, 70000), []byte("after")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := encodeUnit(tc.records, link)
			assert.Len(t, b, payloadSize(tc.records))
			got, err := decodeUnit(b)
			require.NoError(t, err)
			assert.True(t, got.linked)
			assert.Equal(t, link, got.link)
			require.Len(t, got.records, len(tc.records))
			for i := range got.records {
				assert.True(t, bytes.Equal(tc.records[i], got.records[i]), "record %d", i)
			}
		})
	}
}

// A unit written before the BLAKE3 chain (payload version 1) still
// decodes: its records, and no link.
func TestDecodeUnitReadsUnitsWithoutALink(t *testing.T) {
	records := [][]byte{[]byte("abc"), {}, []byte("de")}
	b := encodeCRCUnit(records)
	assert.Equal(t, []byte{1, 3, 3, 'a', 'b', 'c', 0, 2, 'd', 'e'}, b, "the format of helm before the BLAKE3 chain")
	got, err := decodeUnit(b)
	require.NoError(t, err)
	assert.False(t, got.linked)
	assert.Equal(t, records, got.records)
}

func TestDecodeUnitRefusesDamage(t *testing.T) {
	good := encodeUnit([][]byte{[]byte("abc"), []byte("de")}, link)
	old := encodeCRCUnit([][]byte{[]byte("abc"), []byte("de")})
	for _, tc := range []struct {
		name    string
		payload []byte
		want    string
	}{
		{"empty", nil, "empty payload"},
		{"newer version", append([]byte{3}, good[1:]...), "newer helm"},
		{"version zero", append([]byte{0}, good[1:]...), "not a helm unit"},
		{"shorter than its link", good[:chain.Size], "shorter than its chain link"},
		{"link cut", good[:len(good)-1], "exceeds the payload"},
		{"cut in a record", old[:len(old)-1], "exceeds the payload"},
		{"bytes after", append(bytes.Clone(old), 0), "after the unit's last record"},
		{"a version 1 unit read as version 2", append([]byte{2}, old[1:]...), "shorter than its chain link"},
		{"count beyond the payload", []byte{1, 0xff, 0xff, 0x03, 0}, "exceeds the payload"},
		{"bad count", []byte{1, 0xff}, "bad record count"},
		{"bad length", []byte{1, 1, 0xff}, "bad length of record 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeUnit(tc.payload)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestHeaderRoundTripsAndRefusesDamage(t *testing.T) {
	hdr := nats.Header{}
	want := unitHeader{first: 7, count: 3, chain: 0x0badf00d, unit: 4}
	want.set(hdr)
	got, err := parseHeader(hdr)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, uint64(9), got.last())

	// A unit written before Helm-Unit existed has none: its number is 0.
	old := nats.Header{}
	unitHeader{first: 7, count: 3, chain: 0x0badf00d}.set(old)
	assert.NotContains(t, old, hdrUnit)
	got, err = parseHeader(old)
	require.NoError(t, err)
	assert.Equal(t, uint64(0), got.unit)
	for _, tc := range []struct{ name, key, value string }{
		{"no seq", hdrSeq, ""},
		{"seq zero", hdrSeq, "0"},
		{"count zero", hdrCount, "0"},
		{"count overflows", hdrCount, "18446744073709551615"},
		{"short chain", hdrChain, "badf00d"},
		{"chain not hex", hdrChain, "0badf00g"},
		{"unit zero", hdrUnit, "0"},
		{"unit not a number", hdrUnit, "x"},
		{"unit empty", hdrUnit, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := nats.Header{}
			want.set(h)
			h.Set(tc.key, tc.value)
			_, err := parseHeader(h)
			assert.ErrorContains(t, err, tc.key)
		})
	}
}

// The payload's size is what the store checks against the server's
// max_payload: 900 KiB of records, the size every store takes, fits in
// the default 1 MiB with the headers' room.
func TestNineHundredKiBFitsTheDefaultMaxPayload(t *testing.T) {
	records := make([][]byte, 9)
	for i := range records {
		records[i] = make([]byte, 100<<10)
	}
	assert.LessOrEqual(t, payloadSize(records)+headerRoom, 1<<20)
}

func TestCheckNameRefusesWhatIsNoSubjectToken(t *testing.T) {
	require.NoError(t, checkName("voyage id", "0b9d7e4c-6a1f-4a52-9c1e-3c2b1a0f9e8d"))
	for _, bad := range []string{"", "a.b", "a*", ">", "a b", "a/b", "é"} {
		assert.Error(t, checkName("voyage id", bad), "%q", bad)
	}
}

func FuzzDecodeUnit(f *testing.F) {
	f.Add(encodeUnit([][]byte{[]byte("a"), {}, []byte("bcd")}, link))
	f.Add(encodeUnit(nil, link))
	f.Add(encodeCRCUnit([][]byte{[]byte("a"), {}, []byte("bcd")}))
	f.Add(encodeCRCUnit(nil))
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{2})
	f.Add([]byte{3})
	f.Fuzz(func(t *testing.T, b []byte) {
		u, err := decodeUnit(b)
		if err != nil {
			return
		}
		// What decodes encodes back to the same bytes, in its version.
		want := encodeUnit(u.records, u.link)
		if !u.linked {
			want = encodeCRCUnit(u.records)
		}
		assert.Equal(t, b, want)
	})
}

func TestRedactHidesPasswordsAndTokens(t *testing.T) {
	for in, want := range map[string]string{
		"nats://127.0.0.1:4222":                          "nats://127.0.0.1:4222",
		"nats://ana:s3cret@127.0.0.1:4222":               "nats://ana:xxxxx@127.0.0.1:4222",
		"tls://s3cret@nats.example.com:4222":             "tls://xxxxx@nats.example.com:4222",
		"nats://a:s3cret@h1:4222, nats://a:s3cret@h2:42": "nats://a:xxxxx@h1:4222,nats://a:xxxxx@h2:42",
		"ana:s3cret@127.0.0.1:4222":                      "xxxxx@127.0.0.1:4222",
		"nats://a:s3%cret@h:4222":                        "nats://xxxxx@h:4222",
		"127.0.0.1:4222":                                 "127.0.0.1:4222",
	} {
		got := redact(in)
		assert.Equal(t, want, got, in)
		assert.NotContains(t, got, "s3", in)
	}
}
