package natsstore

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The configurations of a home's bucket and object store as nats.go
// creates them for Open (prepareKeyValueConfig, prepareObjectStoreConfig)
// and the server completes them. integration/jetstream_limits_test.go
// checks the real ones on a server.
func bucketConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name: "KV_HELM_h_voyages", Subjects: []string{"$KV.HELM_h_voyages.>"},
		Storage: jetstream.FileStorage, Replicas: 1, Retention: jetstream.LimitsPolicy,
		Discard: jetstream.DiscardNew, MaxMsgs: -1, MaxBytes: -1, MaxMsgsPerSubject: 1, MaxMsgSize: -1,
		AllowRollup: true, DenyDelete: true, AllowDirect: true, Duplicates: 2 * time.Minute,
	}
}

func objectConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name: "OBJ_HELM_h_artifacts", Subjects: []string{"$O.HELM_h_artifacts.C.>", "$O.HELM_h_artifacts.M.>"},
		Storage: jetstream.FileStorage, Replicas: 1, Retention: jetstream.LimitsPolicy,
		Discard: jetstream.DiscardNew, MaxMsgs: -1, MaxBytes: -1, MaxMsgsPerSubject: -1,
		AllowRollup: true, AllowDirect: true, Duplicates: 2 * time.Minute,
	}
}

func settingsOf(problems []Problem) []string {
	var out []string
	for _, p := range problems {
		out = append(out, p.Stream+" "+p.Setting)
	}
	return out
}

// What Open creates passes its own check, and so does each setting that
// removes nothing; each setting that could remove a unit helm
// acknowledged is refused by name, on the stream it is on.
func TestCheckRefusesEverySettingThatCouldRemoveAUnit(t *testing.T) {
	subjects := namesOf("h").subjects
	for _, tc := range []struct {
		name     string
		kind     streamKind
		change   func(c *jetstream.StreamConfig)
		replicas int
		want     []string // "" : accepted
	}{
		{name: "the units' stream helm makes", kind: logStream},
		{name: "the bucket nats.go makes", kind: bucketStream},
		{name: "the object store nats.go makes", kind: objectStream},

		{"memory storage", logStream, func(c *jetstream.StreamConfig) { c.Storage = jetstream.MemoryStorage }, 1, []string{"storage"}},
		{"async persistence", logStream, func(c *jetstream.StreamConfig) { c.PersistMode = jetstream.AsyncPersistMode }, 1, []string{"persist_mode"}},
		{"interest retention", logStream, func(c *jetstream.StreamConfig) { c.Retention = jetstream.InterestPolicy }, 1, []string{"retention"}},
		{"work-queue retention", objectStream, func(c *jetstream.StreamConfig) { c.Retention = jetstream.WorkQueuePolicy }, 1, []string{"retention"}},
		{"an age limit", logStream, func(c *jetstream.StreamConfig) { c.MaxAge = time.Hour }, 1, []string{"max_age"}},
		{"an age limit on the bucket (a TTL)", bucketStream, func(c *jetstream.StreamConfig) { c.MaxAge = time.Hour }, 1, []string{"max_age"}},
		{"max msgs with discard old", logStream, func(c *jetstream.StreamConfig) { c.MaxMsgs, c.Discard = 10, jetstream.DiscardOld }, 1, []string{"max_msgs"}},
		{"max bytes with discard old", objectStream, func(c *jetstream.StreamConfig) { c.MaxBytes, c.Discard = 1<<20, jetstream.DiscardOld }, 1, []string{"max_bytes"}},
		{"max msgs with discard old on the bucket", bucketStream, func(c *jetstream.StreamConfig) { c.MaxMsgs, c.Discard = 10, jetstream.DiscardOld }, 1, []string{"max_msgs"}},
		{"max msgs and bytes with discard new refuse, not drop", logStream, func(c *jetstream.StreamConfig) { c.MaxMsgs, c.MaxBytes = 10, 1<<20 }, 1, nil},
		{"discard old without a limit drops nothing", logStream, func(c *jetstream.StreamConfig) { c.Discard = jetstream.DiscardOld }, 1, nil},
		{"a per-subject limit", logStream, func(c *jetstream.StreamConfig) { c.MaxMsgsPerSubject = 3 }, 1, []string{"max_msgs_per_subject"}},
		{"a per-subject limit with discard old", logStream, func(c *jetstream.StreamConfig) { c.MaxMsgsPerSubject, c.Discard = 3, jetstream.DiscardOld }, 1, []string{"max_msgs_per_subject"}},
		{"a per-subject limit with discard new per subject refuses, not drops", logStream, func(c *jetstream.StreamConfig) { c.MaxMsgsPerSubject, c.DiscardNewPerSubject = 3, true }, 1, nil},
		{"a per-subject limit on the object store", objectStream, func(c *jetstream.StreamConfig) { c.MaxMsgsPerSubject = 2 }, 1, []string{"max_msgs_per_subject"}},
		{"a bucket of no history", bucketStream, func(c *jetstream.StreamConfig) { c.MaxMsgsPerSubject = -1 }, 1, []string{"max_msgs_per_subject"}},
		{"a bucket of more history", bucketStream, func(c *jetstream.StreamConfig) { c.MaxMsgsPerSubject = 5 }, 1, nil},
		{"no acknowledgements", logStream, func(c *jetstream.StreamConfig) { c.NoAck = true }, 1, []string{"no_ack"}},
		{"a mirror", logStream, func(c *jetstream.StreamConfig) {
			c.Mirror, c.Subjects = &jetstream.StreamSource{Name: "ELSEWHERE"}, nil
		}, 1, []string{"mirror", "subjects"}},
		{"sources", bucketStream, func(c *jetstream.StreamConfig) { c.Sources = []*jetstream.StreamSource{{Name: "A"}, {Name: "B"}} }, 1, []string{"sources"}},
		{"a subject transform", logStream, func(c *jetstream.StreamConfig) {
			c.SubjectTransform = &jetstream.SubjectTransformConfig{Source: "helm.h.v.*", Destination: "elsewhere.{{wildcard(1)}}"}
		}, 1, []string{"subject_transform"}},
		{"a counter stream", logStream, func(c *jetstream.StreamConfig) { c.AllowMsgCounter = true }, 1, []string{"allow_msg_counter"}},
		{"fewer replicas than asked", logStream, nil, 3, []string{"num_replicas"}},
		{"fewer replicas than asked, on the object store", objectStream, nil, 3, []string{"num_replicas"}},
		{"more replicas than asked", logStream, func(c *jetstream.StreamConfig) { c.Replicas = 3 }, 1, nil},
		{"other subjects", logStream, func(c *jetstream.StreamConfig) { c.Subjects = []string{"helm.other.v.*"} }, 1, []string{"subjects"}},
		{"subjects that cover helm's", logStream, func(c *jetstream.StreamConfig) { c.Subjects = []string{"elsewhere", "helm.>"} }, 1, nil},
		{"deletes allowed", logStream, func(c *jetstream.StreamConfig) { c.DenyDelete = false }, 1, []string{"deny_delete"}},
		{"deletes allowed on the bucket", bucketStream, func(c *jetstream.StreamConfig) { c.DenyDelete = false }, 1, []string{"deny_delete"}},
		{"purges allowed", logStream, func(c *jetstream.StreamConfig) { c.DenyPurge = false }, 1, []string{"deny_purge"}},
		{"roll-ups", logStream, func(c *jetstream.StreamConfig) { c.DenyPurge, c.AllowRollup = false, true }, 1, []string{"deny_purge", "allow_rollup_hdrs"}},
		{"subject delete markers", logStream, func(c *jetstream.StreamConfig) {
			c.DenyPurge, c.AllowRollup, c.AllowMsgTTL, c.SubjectDeleteMarkerTTL = false, true, true, time.Minute
		}, 1, []string{"deny_purge", "allow_rollup_hdrs", "subject_delete_marker_ttl", "allow_msg_ttl"}},
		{"message schedules", logStream, func(c *jetstream.StreamConfig) { c.DenyPurge, c.AllowRollup, c.AllowMsgSchedules = false, true, true }, 1, []string{"deny_purge", "allow_rollup_hdrs", "allow_msg_schedules"}},
		{"direct gets on a replicated stream", logStream, func(c *jetstream.StreamConfig) { c.AllowDirect, c.Replicas = true, 3 }, 1, []string{"allow_direct"}},
		{"direct gets on one replica", logStream, func(c *jetstream.StreamConfig) { c.AllowDirect = true }, 1, nil},
		{"sealed", logStream, func(c *jetstream.StreamConfig) { c.Sealed = true }, 1, nil},
		{"per-message TTLs allowed", logStream, func(c *jetstream.StreamConfig) { c.AllowMsgTTL = true }, 1, []string{"allow_msg_ttl"}},
		{"per-message TTLs allowed on the bucket", bucketStream, func(c *jetstream.StreamConfig) { c.AllowMsgTTL = true }, 1, nil},
		{"limits that refuse", logStream, func(c *jetstream.StreamConfig) { c.MaxMsgSize, c.MaxConsumers = 1024, 2 }, 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := map[streamKind]func() jetstream.StreamConfig{
				logStream:    func() jetstream.StreamConfig { return logConfig("h", 1) },
				bucketStream: bucketConfig,
				objectStream: objectConfig,
			}[tc.kind]()
			if tc.change != nil {
				tc.change(&cfg)
			}
			got := check(cfg, tc.kind, subjects, max(tc.replicas, 1))
			var want []string
			for _, s := range tc.want {
				want = append(want, cfg.Name+" "+s)
			}
			assert.Equal(t, want, settingsOf(got))
			for _, p := range got {
				assert.NotEmpty(t, p.Value, p.Setting)
				assert.Contains(t, p.Want, "helm", p.Setting)
				assert.True(t, p.Flag != "" || p.Fix != "", "%s: a flag or a fix", p.Setting)
			}
		})
	}
}

// The error names each stream, setting and value; its hint gathers the
// flags of one stream into one nats stream edit, and says what to do of
// a setting no flag changes.
func TestSettingsErrorNamesTheSettingAndItsFix(t *testing.T) {
	cfg := logConfig("team", 1)
	cfg.MaxMsgsPerSubject, cfg.DenyDelete, cfg.Storage = 3, false, jetstream.MemoryStorage
	kv := bucketConfig()
	kv.Name, kv.MaxAge = "KV_HELM_team_voyages", 24*time.Hour
	problems := append(check(cfg, logStream, namesOf("team").subjects, 1), check(kv, bucketStream, "", 1)...)
	err := &SettingsError{Home: "team", Server: "nats://127.0.0.1:4222", Problems: problems}

	require.ErrorIs(t, err, ErrUnsafeSettings)
	msg := err.Error()
	for _, want := range []string{
		"home team on nats://127.0.0.1:4222",
		"stream HELM_team: max_msgs_per_subject is 3: helm requires -1",
		"stream HELM_team: deny_delete is false: helm requires true",
		"stream HELM_team: storage is memory: helm requires file",
		"stream KV_HELM_team_voyages: max_age is 24h0m0s: helm requires 0",
		"nothing was written",
	} {
		assert.Contains(t, msg, want)
	}
	hint := err.Hint()
	assert.Contains(t, hint, "nats stream edit HELM_team --max-msgs-per-subject=-1 --deny-delete")
	assert.Contains(t, hint, "nats stream edit KV_HELM_team_voyages --max-age=0")
	assert.Contains(t, hint, "nats stream rm HELM_team", "memory storage cannot be changed: the stream is made again")
	assert.Equal(t, 1, strings.Count(hint, "nats stream rm HELM_team"))
}

func TestCoversMatchesSubjectsAsTheServerDoes(t *testing.T) {
	for _, tc := range []struct {
		patterns []string
		want     bool
	}{
		{[]string{"helm.h.v.*"}, true},
		{[]string{"helm.h.v.>"}, true},
		{[]string{"helm.>"}, true},
		{[]string{">"}, true},
		{[]string{"helm.*.v.*"}, true},
		{[]string{"helm.h.v"}, false},
		{[]string{"helm.h.v.x"}, false},
		{[]string{"helm.h.v.*.>"}, false},
		{[]string{"helm.h.v.*.*"}, false},
		{[]string{"helm.g.v.*"}, false},
		{nil, false},
	} {
		assert.Equal(t, tc.want, covers(tc.patterns, "helm.h.v.*"), "%q", tc.patterns)
	}
}

// The keys stream (keys.go) is the one stream of a home that must allow
// deletes: what Open makes passes; a setting that would lose a key early,
// keep helm from erasing one, or erase keys without overwriting them is
// refused by name, with a fix that never loses the keys (a backup, not a
// bare rm).
func TestCheckOfTheKeysStream(t *testing.T) {
	subjects := namesOf("h").keySubjects
	for _, tc := range []struct {
		name     string
		change   func(c *jetstream.StreamConfig)
		replicas int
		want     []string
	}{
		{name: "the keys stream helm makes"},
		{"deletes denied", func(c *jetstream.StreamConfig) { c.DenyDelete = true }, 1, []string{"deny_delete"}},
		{"purges allowed", func(c *jetstream.StreamConfig) { c.DenyPurge = false }, 1, []string{"deny_purge"}},
		{"roll-ups", func(c *jetstream.StreamConfig) { c.DenyPurge, c.AllowRollup = false, true }, 1, []string{"deny_purge", "allow_rollup_hdrs"}},
		{"an age limit", func(c *jetstream.StreamConfig) { c.MaxAge = time.Hour }, 1, []string{"max_age"}},
		{"per-message TTLs", func(c *jetstream.StreamConfig) { c.AllowMsgTTL = true }, 1, []string{"allow_msg_ttl"}},
		{"memory storage", func(c *jetstream.StreamConfig) { c.Storage = jetstream.MemoryStorage }, 1, []string{"storage"}},
		{"a limit with discard old", func(c *jetstream.StreamConfig) { c.MaxBytes, c.Discard = 1<<20, jetstream.DiscardOld }, 1, []string{"max_bytes"}},
		{"a per-subject limit that drops", func(c *jetstream.StreamConfig) { c.MaxMsgsPerSubject = 1 }, 1, []string{"max_msgs_per_subject"}},
		{"fewer replicas than asked", nil, 3, []string{"num_replicas"}},
		{"direct gets on a replicated stream", func(c *jetstream.StreamConfig) { c.AllowDirect, c.Replicas = true, 3 }, 1, []string{"allow_direct"}},
		{"keys republished elsewhere", func(c *jetstream.StreamConfig) {
			c.RePublish = &jetstream.RePublish{Source: "helm.h.k.>", Destination: "kept.>"}
		}, 1, []string{"republish"}},
		{"another home's subjects", func(c *jetstream.StreamConfig) { c.Subjects = []string{"helm.g.k.>"} }, 1, []string{"subjects"}},
		{"the units' subjects only", func(c *jetstream.StreamConfig) { c.Subjects = []string{"helm.h.v.*"} }, 1, []string{"subjects"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := keysConfig("h", 1)
			if tc.change != nil {
				tc.change(&cfg)
			}
			got := check(cfg, keysStream, subjects, max(tc.replicas, 1))
			var want []string
			for _, s := range tc.want {
				want = append(want, "KEYS_HELM_h "+s)
			}
			assert.Equal(t, want, settingsOf(got))
			for _, p := range got {
				assert.Contains(t, p.Want, "helm", p.Setting)
				assert.True(t, p.Flag != "" || p.Fix != "", "%s: a flag or a fix", p.Setting)
				assert.NotContains(t, p.Fix, "let helm make it again", "%s: making the keys stream again loses every key", p.Setting)
			}
		})
	}
}
