package helm_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/marks"
)

// TestVerbsRefuseInvalidUTF8 gives every verb text that is not UTF-8. The
// event log is JSON, which would store U+FFFD instead: each verb refuses it
// with ErrInvalid, naming the field and the offset, and records nothing.
func TestVerbsRefuseInvalidUTF8(t *testing.T) {
	ctx := context.Background()
	badRole := logbook.Who{Identity: "john-agent", Role: "cod\xe9r", Method: "human"}
	tests := []struct {
		name string
		call func(h *helm.Home, v *helm.Voyage) error
		want string
	}{
		{"start intent", func(h *helm.Home, _ *helm.Voyage) error {
			_, err := h.Start(ctx, "  Fix caf\xe9 crash", helm.OpenWaters, who, nil)
			return err
		}, "intent is not valid UTF-8: byte 0xe9 at offset 9"},
		{"start identity", func(h *helm.Home, _ *helm.Voyage) error {
			_, err := h.Start(ctx, "x", helm.OpenWaters, logbook.Who{Identity: "j\xffhn"}, nil)
			return err
		}, "identity is not valid UTF-8: byte 0xff at offset 1"},
		{"start role", func(h *helm.Home, _ *helm.Voyage) error {
			_, err := h.Start(ctx, "x", helm.OpenWaters, badRole, nil)
			return err
		}, "role is not valid UTF-8: byte 0xe9 at offset 3"},
		{"reading", func(_ *helm.Home, v *helm.Voyage) error {
			_, err := v.TakeBearing(ctx, "null check \xc3", who, nil)
			return err
		}, "reading is not valid UTF-8: byte 0xc3 at offset 11"},
		{"bearing method", func(_ *helm.Home, v *helm.Voyage) error {
			_, err := v.TakeBearing(ctx, "fine", logbook.Who{Role: "coder", Method: "\x80"}, nil)
			return err
		}, "method is not valid UTF-8: byte 0x80 at offset 0"},
		{"challenge feedback", func(_ *helm.Home, v *helm.Voyage) error {
			_, err := v.Challenge(ctx, 1, helm.Challenge{Feedback: "no\xff", Reading: "better"}, who)
			return err
		}, "feedback is not valid UTF-8: byte 0xff at offset 2"},
		{"challenge text", func(_ *helm.Home, v *helm.Voyage) error {
			_, err := v.Challenge(ctx, 1, helm.Challenge{Feedback: "no", Reading: "be\xfftter"}, who)
			return err
		}, "reading is not valid UTF-8: byte 0xff at offset 2"},
		{"summary", func(_ *helm.Home, v *helm.Voyage) error {
			return v.Complete(ctx, logbook.OutcomeCompleted, "done \xed\xa0\x80", who)
		}, "summary is not valid UTF-8: byte 0xed at offset 5"},
		{"observe identity", func(_ *helm.Home, v *helm.Voyage) error {
			_, err := v.Observe(ctx, &note{Topic: "a", Text: "x"}, logbook.Who{Identity: "\xfe"}, nil)
			return err
		}, "identity is not valid UTF-8"},
		{"erase role", func(_ *helm.Home, v *helm.Voyage) error {
			return v.Erase(ctx, "test-note:seen", badRole)
		}, "role is not valid UTF-8"},
		{"wipe role", func(_ *helm.Home, v *helm.Voyage) error { return v.Wipe(ctx, badRole) }, "role is not valid UTF-8"},
		{"perform role", func(_ *helm.Home, v *helm.Voyage) error {
			_, err := v.Perform(ctx, &fakeAction{Message: "m"}, badRole, nil)
			return err
		}, "role is not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, v := newVoyage(t, fixedOptions())
			_, err := v.Observe(ctx, &note{Topic: "seen", Text: "x"}, who, nil)
			require.NoError(t, err)
			_, err = v.TakeBearing(ctx, "first", who, nil)
			require.NoError(t, err)
			_, err = v.Observe(ctx, &note{Topic: "seen", Text: "y"}, who, nil)
			require.NoError(t, err)
			before := v.Info().Seq

			err = tt.call(h, v)
			require.ErrorIs(t, err, helm.ErrInvalid)
			assert.ErrorContains(t, err, tt.want)

			require.NoError(t, v.Refresh(ctx))
			assert.Equal(t, before, v.Info().Seq, "nothing was recorded")
			list, err := h.List(ctx, nil)
			require.NoError(t, err)
			assert.Len(t, list, 1, "no voyage was started")
		})
	}
}

// hostileObservation is one file of testdata/hostile-observations: an
// observation file as `bearing --observation` reads it, whose mark its
// constructor would have refused. Its "_want" field (ignored by the
// decoder) is what the refusal must say.
type hostileObservation struct {
	name string
	data []byte
	want string
}

func hostileObservations(t testing.TB) []hostileObservation {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "hostile-observations", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var out []hostileObservation
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var meta struct {
			Want string `json:"_want"`
		}
		require.NoError(t, json.Unmarshal(data, &meta), f)
		require.NotEmpty(t, meta.Want, "%s says what its refusal must say in _want", f)
		out = append(out, hostileObservation{name: strings.TrimSuffix(filepath.Base(f), ".json"), data: data, want: meta.Want})
	}
	return out
}

// TestHostileObservationsAreRefusedEverywhere: an observation made
// elsewhere enters the log through Record or a bearing's extra
// observations; both apply the checks observe's constructors apply.
func TestHostileObservationsAreRefusedEverywhere(t *testing.T) {
	ctx := context.Background()
	for _, tt := range hostileObservations(t) {
		t.Run(tt.name, func(t *testing.T) {
			var obs helm.Observation
			if err := json.Unmarshal(tt.data, &obs); err != nil {
				assert.ErrorContains(t, err, tt.want, "refused as it is decoded")
				return
			}
			_, v := newVoyage(t, fixedOptions())
			before := v.Info().Seq

			_, err := v.Record(ctx, obs, who)
			require.ErrorIs(t, err, helm.ErrInvalid)
			assert.ErrorIs(t, err, marks.ErrInvalid)
			assert.ErrorContains(t, err, tt.want)
			assert.NotContains(t, err.Error(), "s3cret")

			_, err = v.TakeBearing(ctx, "sealed from a file", who, &helm.BearingOptions{Observations: []helm.Observation{obs}})
			require.ErrorIs(t, err, helm.ErrInvalid)
			assert.ErrorContains(t, err, "observation 1: ")
			assert.ErrorContains(t, err, tt.want)

			_, err = v.Observe(ctx, obs.Mark, who, nil)
			require.ErrorIs(t, err, helm.ErrInvalid, "refused before the world is looked at")
			assert.ErrorContains(t, err, tt.want)

			assert.Equal(t, before, v.Info().Seq, "nothing was recorded")
			assert.Empty(t, v.Slate())
		})
	}
}

// FuzzRecordObservation: whatever bytes an observation file holds, Record
// either refuses them with ErrInvalid or records a mark that passes its
// kind's checks — and never panics.
func FuzzRecordObservation(f *testing.F) {
	for _, h := range hostileObservations(f) {
		f.Add(h.data)
	}
	f.Add([]byte(`{"mark":{"kind":"context","description":"fine"},"sighting":{"kind":"context","description":"fine"},"observed_at":"2026-02-26T17:00:00Z"}`))
	home, err := helm.Open(f.TempDir(), &helm.Options{NoSync: true})
	require.NoError(f, err)
	v, err := home.Start(context.Background(), "fuzz", helm.OpenWaters, who, nil)
	require.NoError(f, err)
	f.Cleanup(func() { v.Close() })
	f.Fuzz(func(t *testing.T, data []byte) {
		var obs helm.Observation
		if json.Unmarshal(data, &obs) != nil {
			return
		}
		lo, err := v.Record(context.Background(), obs, who)
		if err != nil {
			require.ErrorIs(t, err, helm.ErrInvalid)
			return
		}
		m, err := marks.Unmarshal(lo.Record.Mark)
		require.NoError(t, err)
		require.NoError(t, marks.Validate(m), "recorded %s", lo.Record.Mark)
	})
}
