package helm_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/policy"
)

var agentWho = logbook.Who{Identity: "john-agent", Role: "coder", Method: "claude-opus"}

// closedVoyage returns a voyage that observed two payloads (a small one,
// in a blob record, and a large one, in the pack) and was then closed
// with outcome.
func closedVoyage(t *testing.T, opts *helm.Options, outcome logbook.Outcome) (*helm.Home, *helm.Voyage, []string, [][]byte) {
	t.Helper()
	h, v := newVoyage(t, opts)
	var hashes []string
	var datas [][]byte
	for _, tc := range payloadSizes {
		hash, data := observeRandom(t, v, tc.name, tc.size)
		hashes, datas = append(hashes, hash), append(datas, data)
	}
	require.NoError(t, v.Complete(context.Background(), outcome, "fixed it", who))
	return h, v, hashes, datas
}

func mustParse(t *testing.T, text, source string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(text), source)
	require.NoError(t, err)
	return p
}

func TestJettisonByAPersonOnAClosedVoyageKeepsItClosedAndCompactionReclaimsTheBytes(t *testing.T) {
	for _, outcome := range []logbook.Outcome{logbook.OutcomeCompleted, logbook.OutcomeFailed, logbook.OutcomeCancelled} {
		t.Run(string(outcome), func(t *testing.T) {
			ctx := context.Background()
			h, v, hashes, datas := closedVoyage(t, nil, outcome)
			before := v.Info()
			for _, hash := range hashes {
				require.NoError(t, v.Jettison(ctx, hash, "holds a customer's data", who))
			}
			after := v.Info()
			assert.Equal(t, before.Status, after.Status, "the voyage stays closed")
			assert.Equal(t, before.CompletedAt, after.CompletedAt)
			assert.Equal(t, before.Summary, after.Summary)

			rep, err := v.Compact(ctx)
			require.NoError(t, err)
			assert.Equal(t, 2, rep.Artifacts)
			for i, data := range datas {
				assert.Empty(t, filesHolding(t, h.Dir(), storedMark(data)), "payload %d is gone from every file of the home", i)
			}
			verifyOK(t, h, v.ID())

			for _, hash := range hashes {
				_, err := readArtifact(ctx, v, hash)
				require.ErrorIs(t, err, helm.ErrArtifactGone)
				assert.Contains(t, err.Error(), "jettisoned by john-agent (role coder, method human) at ")
				assert.Contains(t, err.Error(), "because: holds a customer's data")
				info, err := v.ArtifactInfo(ctx, hash)
				require.NoError(t, err)
				require.NotNil(t, info.CuratedBy)
				assert.Equal(t, who, *info.CuratedBy)
				assert.False(t, info.CuratedAt.IsZero())
				assert.Equal(t, "holds a customer's data", info.Reason)
			}
			// Reopened, the voyage still says so.
			again, err := h.Voyage(ctx, v.ID())
			require.NoError(t, err)
			defer again.Close()
			assert.Equal(t, before.Status, again.Info().Status)
		})
	}
}

func TestReduceByAPersonOnACompletedVoyageSaysWhoReducedTheOriginal(t *testing.T) {
	ctx := context.Background()
	h, v, hashes, datas := closedVoyage(t, nil, logbook.OutcomeCompleted)
	summary, err := v.Reduce(ctx, hashes[1], helm.Reduction{Summary: &noteSighting{Text: "a summary"}, Method: "human"}, who)
	require.NoError(t, err)
	assert.Equal(t, logbook.StatusCompleted, v.Info().Status)
	_, err = v.Compact(ctx)
	require.NoError(t, err)
	assert.Empty(t, filesHolding(t, h.Dir(), storedMark(datas[1])))
	verifyOK(t, h, v.ID())

	_, err = readArtifact(ctx, v, hashes[1])
	require.ErrorIs(t, err, helm.ErrArtifactGone)
	assert.Contains(t, err.Error(), "reduced to artifact "+summary+" by john-agent (role coder, method human)")
	s, err := readSighting(ctx, v, summary)
	require.NoError(t, err)
	assert.Equal(t, "a summary", s.(*noteSighting).Text)
}

func TestAnAgentMayNotCurateAClosedVoyageByDefaultAndTheRefusalIsRecorded(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy *policy.Policy
	}{
		{"no policy", nil},
		{"a home policy that allows everything", mustParse(t, "[[rule]]\nname = \"anything goes\"\ndecision = \"allow\"\n", "policy.toml")},
		{"a home policy that allows curation", mustParse(t, "[[rule]]\nname = \"agents curate\"\naction = \"jettison\"\nstatus = \"closed\"\ndecision = \"allow\"\n[[rule]]\naction = \"reduce\"\ndecision = \"allow\"\n", "policy.toml")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			_, v, hashes, _ := closedVoyage(t, &helm.Options{Policy: tc.policy}, logbook.OutcomeCompleted)
			n := len(entriesOf(t, v))
			err := v.Jettison(ctx, hashes[0], "tidy up", agentWho)
			require.ErrorIs(t, err, helm.ErrRefused)
			assert.Contains(t, err.Error(), "a person jettisons a closed voyage's evidence")
			assert.Contains(t, err.Error(), DefaultsSourceForTest)
			_, err = v.Reduce(ctx, hashes[1], helm.Reduction{Summary: &noteSighting{Text: "nothing to see"}, Method: "claude-opus"}, agentWho)
			require.ErrorIs(t, err, helm.ErrRefused)

			entries := entriesOf(t, v)
			require.Len(t, entries, n+2, "each refusal is an entry of the story")
			for i, kind := range []string{"jettison", "reduce"} {
				e := entries[n+i]
				require.NotNil(t, e.Action)
				assert.Equal(t, logbook.ActionRefused, e.Action.Status)
				assert.Equal(t, kind, e.Action.Kind)
				assert.Equal(t, agentWho, e.Who)
				assert.Contains(t, e.Action.Rule, "helm's built-in rules")
			}
			for _, hash := range hashes {
				_, err := readArtifact(ctx, v, hash)
				assert.NoError(t, err, "the artifact is kept")
			}
			assert.Equal(t, logbook.StatusCompleted, v.Info().Status)
		})
	}
}

// DefaultsSourceForTest is how refusals name the built-in rules.
const DefaultsSourceForTest = policy.DefaultsSource

func TestASystemPolicyRuleLetsAnAgentCurateAClosedVoyage(t *testing.T) {
	ctx := context.Background()
	sys := policy.System(mustParse(t, "[[rule]]\nname = \"agents may prune\"\naction = \"jettison\"\nactor = \"agent\"\ndecision = \"allow\"\n", "/etc/helm/policy.toml"))
	home := mustParse(t, "", "policy.toml")
	h, v, hashes, datas := closedVoyage(t, &helm.Options{Policy: policy.Stack(sys, home)}, logbook.OutcomeCompleted)
	require.NoError(t, v.Jettison(ctx, hashes[0], "stale", agentWho))
	_, err := v.Reduce(ctx, hashes[1], helm.Reduction{Summary: &noteSighting{Text: "s"}, Method: "claude-opus"}, agentWho)
	require.ErrorIs(t, err, helm.ErrRefused, "the system rule allows jettison only")
	_, err = v.Compact(ctx)
	require.NoError(t, err)
	assert.Empty(t, filesHolding(t, h.Dir(), storedMark(datas[0])))
	verifyOK(t, h, v.ID())
}

func TestAHomeRuleMayTightenCurationOfAnActiveVoyage(t *testing.T) {
	for _, tc := range []struct {
		name, decision string
		want           error
	}{
		{"deny", "deny", helm.ErrRefused},
		{"confirm", "confirm", helm.ErrNeedsConfirmation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			home := mustParse(t, "[[rule]]\nname = \"keep everything\"\naction = \"jettison\"\nstatus = \"open\"\ndecision = \""+tc.decision+"\"\n", "policy.toml")
			_, v := newVoyage(t, &helm.Options{Policy: home})
			hash, _ := observeRandom(t, v, "x", 100)
			n := len(entriesOf(t, v))
			err := v.Jettison(ctx, hash, "why not", who)
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), "keep everything")
			assert.Len(t, entriesOf(t, v), n+1, "the refusal is recorded")
			_, err = readArtifact(ctx, v, hash)
			assert.NoError(t, err)
		})
	}
}

// TestAClaimOfBeingHumanIsRecordedAsMade: the limit of the default. A
// caller that names method human passes it (nothing local can tell a
// person from an agent that says it is one), and the curation is
// recorded under that claim, with its identity: the claim is on the
// record.
func TestAClaimOfBeingHumanIsRecordedAsMade(t *testing.T) {
	ctx := context.Background()
	_, v, hashes, _ := closedVoyage(t, nil, logbook.OutcomeCompleted)
	claim := logbook.Who{Identity: "john-agent", Role: "coder", Method: "human"}
	require.NoError(t, v.Jettison(ctx, hashes[0], "says it is a person", claim))
	info, err := v.ArtifactInfo(ctx, hashes[0])
	require.NoError(t, err)
	require.NotNil(t, info.CuratedBy)
	assert.Equal(t, claim, *info.CuratedBy)
	var jettisons int
	for e, err := range v.Events(ctx, 1) {
		require.NoError(t, err)
		if e.Type == "artifact-jettisoned" {
			jettisons++
			assert.Equal(t, claim, e.Who)
			assert.Equal(t, "says it is a person", e.Artifact.Reason)
		}
	}
	assert.Equal(t, 1, jettisons)
}

func TestOtherWritesOnAClosedVoyageAreStillRefused(t *testing.T) {
	ctx := context.Background()
	_, v, _, _ := closedVoyage(t, nil, logbook.OutcomeCompleted)
	_, err := v.Record(ctx, helm.Observation{Mark: &note{Topic: "late"}, Sighting: &noteSighting{Text: "x"}}, who)
	assert.ErrorIs(t, err, helm.ErrVoyageCompleted)
	_, err = v.Note(ctx, "late note", who)
	assert.ErrorIs(t, err, helm.ErrVoyageCompleted)
	err = v.Resume(ctx, "again", who)
	assert.ErrorIs(t, err, helm.ErrNotResumable)
}

// TestAttackAgentCannotPruneItsOwnClosedVoyage: the recorded agent, with
// the library in hand and the home writable, tries to prune the evidence
// of its own completed voyage: with every method but human, with a home
// policy that allows everything it planted, with a policy it marks as a
// system one in the home's stack... Only a person's method passes; the
// limit (a caller that claims method human) is documented.
func TestAttackAgentCannotPruneItsOwnClosedVoyage(t *testing.T) {
	planted := mustParse(t, "[[rule]]\nname = \"planted\"\ndecision = \"allow\"\n", "policy.toml")
	for _, tc := range []struct {
		name   string
		policy *policy.Policy
		who    logbook.Who
	}{
		{"a model's method", nil, agentWho},
		{"Human, capitalised", nil, logbook.Who{Identity: "john-agent", Role: "coder", Method: "Human"}},
		{"human with spaces", nil, logbook.Who{Identity: "john-agent", Role: "coder", Method: " human "}},
		{"another identity", nil, logbook.Who{Identity: "alice", Role: "coder", Method: "claude"}},
		{"a planted home policy", planted, agentWho},
		{"a planted policy stacked over nothing", policy.Stack(nil, planted), agentWho},
		{"a planted rule in a stack of two home files", policy.Stack(planted, planted), agentWho},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			h, v, hashes, datas := closedVoyage(t, &helm.Options{Policy: tc.policy}, logbook.OutcomeCompleted)
			err := v.Jettison(ctx, hashes[0], "cover tracks", tc.who)
			if err == nil {
				t.Fatalf("jettison by %+v was allowed", tc.who)
			}
			_, err = v.Compact(ctx)
			require.NoError(t, err)
			assert.NotEmpty(t, filesHolding(t, h.Dir(), storedMark(datas[0])), "the evidence is kept")
			_, err = readArtifact(ctx, v, hashes[0])
			assert.NoError(t, err)
		})
	}
}
