package utf8x

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCompleteRunes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", 0},
		{"abc", 3},
		{"a\xe6\x97\xa5", 4},     // 日 whole
		{"a\xe6\x97", 1},         // 日 cut after two bytes
		{"a\xf0\x9f\x9a", 1},     // 🚢 cut after three
		{"\xff\xfe", 2},          // invalid bytes are not held back
		{"a\x97\x97\x97\x97", 5}, // continuation bytes without a start
	} {
		assert.Equal(t, tc.want, CompleteRunes([]byte(tc.in)), "%q", tc.in)
	}
}

func TestWholeCarriesACutRuneIntoTheNextChunk(t *testing.T) {
	t.Parallel()
	euro := []byte("€") // three bytes
	whole, rest := Whole(nil, append([]byte("a"), euro[:2]...))
	assert.Equal(t, "a", string(whole))
	assert.Equal(t, euro[:2], rest)
	whole, rest = Whole(rest, append(euro[2:], 'b'))
	assert.Equal(t, "€b", string(whole))
	assert.Nil(t, rest)
}
