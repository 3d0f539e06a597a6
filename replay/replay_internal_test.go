package replay

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
)

// fill sets every field of the struct v points to (and of the structs it
// embeds) to a value that is not its zero value.
func fill(t *testing.T, v reflect.Value) {
	t.Helper()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x" + v.Type().Field(i).Name)
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(i + 1))
		case reflect.Uint64:
			f.SetUint(uint64(i + 1))
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Float64:
			f.SetFloat(float64(i + 1))
		case reflect.Slice:
			s := reflect.MakeSlice(f.Type(), 1, 1)
			if e := s.Index(0); e.Kind() == reflect.Struct {
				fill(t, e)
			} else if e.Kind() == reflect.String {
				e.SetString("x")
			}
			f.Set(s)
		case reflect.Pointer:
			p := reflect.New(f.Type().Elem())
			fill(t, p.Elem())
			f.Set(p)
		case reflect.Struct:
			if f.Type() == reflect.TypeFor[time.Time]() {
				f.Set(reflect.ValueOf(time.Date(2026, 2, 26, 17, i, 0, 0, time.UTC)))
				continue
			}
			fill(t, f)
		default:
			require.Failf(t, "a field fill cannot set", "%s %s", v.Type().Field(i).Name, f.Type())
		}
	}
}

// zeroFields names the fields of the struct v that hold their zero value.
func zeroFields(v reflect.Value) []string {
	var out []string
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			out = append(out, v.Type().Field(i).Name)
		}
	}
	return out
}

// TestInfoOfSetsEveryField: the description a replay folds carries every
// field helm.VoyageInfo has, as helm.Voyage.Info gives it: a field added
// there and not here fails this test (TestFoldGivesTheViewsOfTheVoyage
// then checks the values against a voyage's).
func TestInfoOfSetsEveryField(t *testing.T) {
	var p projection.VoyageView
	fill(t, reflect.ValueOf(&p).Elem())
	p.Status, p.Outcome = projection.StatusCompleted, projection.OutcomeBlocked
	p.Lifecycle = []projection.Transition{{Status: projection.StatusActive, At: p.Created, Who: logbook.Who{Identity: "x"}, Reason: "r"}}
	info := infoOf(p, projection.LogbookCounts{Entries: 9, Bearings: 1, Actions: 2, OutcomeUnknown: 1, Failed: 1, Refused: 1, Notes: 1, Judgements: 1, Steps: 1})
	assert.Empty(t, zeroFields(reflect.ValueOf(info)), "fields of helm.VoyageInfo that infoOf leaves unset")
	assert.Equal(t, "blocked", string(info.Status), "the status a completion with another outcome reads as")
}

// TestArtifactInfoSetsEveryField: as TestInfoOfSetsEveryField, for the
// artifact index.
func TestArtifactInfoSetsEveryField(t *testing.T) {
	var a projection.Artifact
	fill(t, reflect.ValueOf(&a).Elem())
	unset := zeroFields(reflect.ValueOf(artifactInfo(&a)))
	// Who curated an artifact, and when, is read from the log by
	// Voyage.ArtifactInfo alone: the index Voyage.Artifacts gives (and a
	// replay folds) does not hold them.
	unset = slices.DeleteFunc(unset, func(f string) bool { return f == "CuratedBy" || f == "CuratedAt" })
	assert.Empty(t, unset, "fields of helm.ArtifactInfo that artifactInfo leaves unset")
}
