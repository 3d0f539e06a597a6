package natsstore

// The settings of a home's streams.
//
// A JetStream stream removes messages by itself when its settings say so
// (limits with the discard policy old, an age limit, a per-subject limit,
// interest or work-queue retention), and lets a client remove them when
// they allow it (message deletes, purges, roll-ups). helm promises that
// no unit it acknowledged is ever removed, so every Open reads the
// settings of the home's three streams and refuses any that could remove
// one, naming the stream, the setting, its value, what helm requires and
// how to put it right (*SettingsError). It checks them on every Open, not
// only the one that creates them, so that a stream changed after helm
// made it is refused by the next Open. doc.go has the table.
//
// A limit that makes a full stream refuse a new message (discard new) is
// safe: the write is refused and nothing acknowledged is lost. A limit
// that makes it drop an old one is not. The exception is the limit of
// messages per subject, which drops the subject's oldest message even
// under discard new, unless discard_new_per_subject is set too.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrUnsafeSettings is matched by every *SettingsError.
var ErrUnsafeSettings = errors.New("jetstream: a stream of the home could remove what helm acknowledged")

// SettingsError is Open's refusal of a home whose streams could remove, or
// lose, units helm acknowledged: it names each setting. Open wrote
// nothing: it creates none of the home's streams while one of them is
// refused.
type SettingsError struct {
	Home     string
	Server   string
	Problems []Problem
}

// Problem is one setting of one stream that helm refuses.
type Problem struct {
	// Stream is the stream's name: HELM_<home>, KV_HELM_<home>_voyages
	// (the voyages bucket), OBJ_HELM_<home>_artifacts (the object
	// store) or KEYS_HELM_<home> (the artifacts' keys).
	Stream string
	// Setting is the setting's name as the stream's JSON configuration
	// has it (nats stream info --json): max_msgs_per_subject, discard, ...
	Setting string
	// Value is what the stream has; Want what helm requires, and why.
	Value, Want string
	// Flag, when the setting can be changed on the stream, is the flag of
	// nats stream edit that changes it (--max-msgs-per-subject=-1). Empty
	// when it cannot be: the stream must be made again.
	Flag string
	// Fix says what to do when no flag does it.
	Fix string
}

func (e *SettingsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "jetstream: home %s on %s: helm does not use a stream that could remove what it acknowledged, and nothing was written:", e.Home, e.Server)
	for _, p := range e.Problems {
		fmt.Fprintf(&b, "\n  stream %s: %s is %s: %s", p.Stream, p.Setting, p.Value, p.Want)
	}
	return b.String()
}

// Is reports whether target is ErrUnsafeSettings.
func (e *SettingsError) Is(target error) bool { return target == ErrUnsafeSettings }

// Hint says how to put the settings right: a nats stream edit command per
// stream with a flag for each setting it can change, then what to do of
// the others.
func (e *SettingsError) Hint() string {
	var fixes []string
	var streams []string
	flags := map[string][]string{}
	for _, p := range e.Problems {
		if _, ok := flags[p.Stream]; !ok {
			streams = append(streams, p.Stream)
			flags[p.Stream] = nil
		}
		if p.Flag != "" && !contains(flags[p.Stream], p.Flag) {
			flags[p.Stream] = append(flags[p.Stream], p.Flag)
		}
	}
	for _, st := range streams {
		if len(flags[st]) > 0 {
			fixes = append(fixes, "nats stream edit "+st+" "+strings.Join(flags[st], " "))
		}
	}
	for _, p := range e.Problems {
		if p.Fix != "" && !contains(fixes, p.Fix) {
			fixes = append(fixes, p.Fix)
		}
	}
	return strings.Join(fixes, "; ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// streamKind is what a stream of a home holds, which decides what helm
// requires of it.
type streamKind int

const (
	// logStream is HELM_<home>: the voyages' units, one subject each.
	logStream streamKind = iota
	// bucketStream is KV_HELM_<home>_voyages: a key per voyage, its
	// value the voyage's summary (a cache: a key keeps its last value).
	bucketStream
	// objectStream is OBJ_HELM_<home>_artifacts: the large artifacts.
	// The object store replaces an object's chunks with a purge and
	// writes its metadata with a roll-up, so it must allow both.
	objectStream
	// keysStream is KEYS_HELM_<home>: the artifacts' keys, a subject
	// each (keys.go). It is the one stream of a home that must allow
	// deletes: erasing an artifact deletes its key.
	keysStream
)

// recreate is the fix of a setting a stream cannot change.
func recreate(stream string) string {
	if strings.HasPrefix(stream, "KEYS_") {
		return restore(stream)
	}
	return "the setting cannot be changed on an existing stream: copy the home's voyages to another home, remove " + stream + " (nats stream rm " + stream + ") and let helm make it again"
}

// check returns the settings of cfg, a stream of kind, that helm refuses;
// replicas is the replication factor the home asks for.
func check(cfg jetstream.StreamConfig, kind streamKind, subjects string, replicas int) []Problem {
	var out []Problem
	bad := func(setting string, value any, want, flag string) {
		p := Problem{Stream: cfg.Name, Setting: setting, Value: show(value), Want: want, Flag: flag}
		if flag == "" {
			p.Fix = recreate(cfg.Name)
		}
		out = append(out, p)
	}
	name := cfg.Name

	if cfg.Storage != jetstream.FileStorage {
		bad("storage", cfg.Storage, "helm requires file: a server's restart loses what a memory stream holds", "")
	}
	if cfg.PersistMode != jetstream.DefaultPersistMode {
		bad("persist_mode", cfg.PersistMode, "helm requires default: in async mode the server acknowledges a message before it is written, and a crash of the server loses it", "")
	}
	switch cfg.Retention {
	case jetstream.LimitsPolicy:
	case jetstream.InterestPolicy:
		bad("retention", cfg.Retention, "helm requires limits: interest retention removes a message once every consumer has acknowledged it, or at once when there is none", "")
		out[len(out)-1].Fix = "set the retention of " + name + " to limits (nats stream edit -i " + name + ")"
	default:
		bad("retention", cfg.Retention, "helm requires limits: work-queue retention removes a message once it is read", "")
	}
	if cfg.MaxAge > 0 {
		bad("max_age", cfg.MaxAge, "helm requires 0 (no limit): the server removes a message once it is older, whatever the discard policy", "--max-age=0")
	}
	limit := func(setting string, v int64, flag string) {
		if v > 0 && cfg.Discard != jetstream.DiscardNew {
			bad(setting, v, "helm requires -1 (no limit), or the discard policy new: with discard old a full stream drops its oldest messages to take new ones", flag)
		}
	}
	limit("max_msgs", cfg.MaxMsgs, "--max-msgs=-1")
	limit("max_bytes", cfg.MaxBytes, "--max-bytes=-1")
	switch {
	case kind == bucketStream:
		// A key keeps its last value, whatever the limit: the summary is
		// a cache, and the key's existence what helm relies on.
		if cfg.MaxMsgsPerSubject < 1 {
			bad("max_msgs_per_subject", cfg.MaxMsgsPerSubject, "a key-value bucket keeps 1 value per key or more (its history); helm makes it with 1", "--max-msgs-per-subject=1")
		}
	case cfg.MaxMsgsPerSubject > 0 && !(cfg.Discard == jetstream.DiscardNew && cfg.DiscardNewPerSubject):
		want := "helm requires -1 (no limit), or discard new with discard_new_per_subject: otherwise a subject past the limit drops its oldest message, even under discard new"
		if kind == logStream {
			want = "helm requires -1 (no limit), or discard new with discard_new_per_subject: otherwise a voyage past the limit drops its oldest units, even under discard new"
		}
		bad("max_msgs_per_subject", cfg.MaxMsgsPerSubject, want, "--max-msgs-per-subject=-1")
	}
	if cfg.NoAck {
		bad("no_ack", true, "helm requires false: a stream that does not acknowledge what it stores cannot tell helm that a unit is stored", "--ack")
	}
	if cfg.Mirror != nil {
		bad("mirror", cfg.Mirror.Name, "helm requires none: a mirror takes no writes of its own, and holds what its origin holds, which may drop it", "")
		out[len(out)-1].Fix = "remove the mirror (nats stream edit -i " + name + "), or let helm make a stream of its own"
	}
	if len(cfg.Sources) > 0 {
		var from []string
		for _, s := range cfg.Sources {
			from = append(from, s.Name)
		}
		bad("sources", strings.Join(from, ","), "helm requires none: a source puts messages helm did not write among the ones it did", "")
		out[len(out)-1].Fix = "remove the sources (nats stream edit -i " + name + ")"
	}
	if cfg.SubjectTransform != nil {
		bad("subject_transform", cfg.SubjectTransform.Source+" > "+cfg.SubjectTransform.Destination, "helm requires none: a transform stores a unit on another subject than the one helm reads it from", "--no-transform")
	}
	if cfg.AllowMsgCounter {
		bad("allow_msg_counter", true, "helm requires false: a counter stream keeps counters, not messages", "")
	}
	if replicas > cfg.Replicas {
		bad("num_replicas", cfg.Replicas, fmt.Sprintf("helm requires %d or more, as the home asks (Options.Replicas): a stream of fewer replicas keeps fewer copies of each acknowledged unit than asked", replicas), fmt.Sprintf("--replicas=%d", replicas))
		out[len(out)-1].Fix = fmt.Sprintf("else ask the home for %d (Options.Replicas)", cfg.Replicas)
	}

	if kind == keysStream {
		out = append(out, checkKeys(cfg, subjects)...)
	}
	if kind == logStream {
		if !covers(cfg.Subjects, subjects) {
			bad("subjects", strings.Join(cfg.Subjects, ","), "helm requires "+subjects+" among them: the voyages' units are published there", "--subjects="+subjects)
		}
		// A message delete or a purge removes acknowledged units; so do a
		// roll-up (a purge by a message's header), subject delete markers
		// and message schedules, which the server allows only where
		// purges are (it refuses deny_purge with any of them).
		if !cfg.DenyDelete {
			bad("deny_delete", false, "helm requires true: a client with the credentials could delete a unit", "--deny-delete")
		}
		if !cfg.DenyPurge {
			bad("deny_purge", false, "helm requires true: a client with the credentials could purge a voyage's units", "--deny-purge")
		}
		if cfg.AllowRollup {
			bad("allow_rollup_hdrs", true, "helm requires false: a message with a Nats-Rollup header purges the units before it", "--no-allow-rollup")
		}
		if cfg.SubjectDeleteMarkerTTL > 0 {
			bad("subject_delete_marker_ttl", cfg.SubjectDeleteMarkerTTL, "helm requires 0: it needs purges allowed, and puts the server's markers on a voyage's subject", "--subject-del-markers-ttl=0")
		}
		if cfg.AllowDirect && cfg.Replicas > 1 {
			bad("allow_direct", true, "helm requires false on a replicated stream: a direct get may be answered by a replica behind the leader, and a listing would take its lag for lost units", "--no-allow-direct")
		}
		if cfg.AllowMsgTTL {
			bad("allow_msg_ttl", true, "helm requires false: a message published with a Nats-TTL header is removed by the server when it expires, deny_delete or not; helm's units never carry one, but a unit-shaped message that does is read as the voyage's next unit, and helm's units after it become unreadable once it goes", "")
		}
		if cfg.AllowMsgSchedules {
			bad("allow_msg_schedules", true, "helm requires false: it needs roll-ups and purges allowed", "")
		}
	}
	if kind == bucketStream && !cfg.DenyDelete {
		bad("deny_delete", false, "helm requires true: a client with the credentials could delete the message that holds a voyage's key", "--deny-delete")
	}
	return out
}

// restore is the fix of a setting the keys stream cannot change: the
// stream cannot be made again empty, as the others can be once the
// voyages are copied, for its keys are the only way to read the
// artifacts.
func restore(stream string) string {
	return "the setting cannot be changed on an existing stream: back " + stream + " up (nats stream backup " + stream + " DIR), remove it (nats stream rm " + stream + ") and restore the backup with the setting as helm requires (nats stream restore); removing it without a backup makes every artifact of the home unreadable"
}

// checkKeys returns what helm refuses of the keys stream beyond what it
// refuses of every stream (check): it must keep every key until helm
// erases it, and let helm erase it. A key lost early makes its artifact
// unreadable while the voyage still holds it; a key that cannot be
// deleted makes a jettison unable to erase.
func checkKeys(cfg jetstream.StreamConfig, subjects string) []Problem {
	var out []Problem
	add := func(setting string, value any, want, flag, fix string) {
		p := Problem{Stream: cfg.Name, Setting: setting, Value: show(value), Want: want, Flag: flag, Fix: fix}
		if flag == "" && fix == "" {
			p.Fix = restore(cfg.Name)
		}
		out = append(out, p)
	}
	if !covers(cfg.Subjects, subjects) {
		add("subjects", strings.Join(cfg.Subjects, ","), "helm requires "+subjects+" among them: the artifacts' keys are published there", "--subjects="+subjects, "")
	}
	if cfg.DenyDelete {
		add("deny_delete", true, "helm requires false on the keys stream: a jettison erases the artifact's key by deleting its message (a secure delete, which overwrites it), and a stream that denies deletes keeps every key, so no artifact could be erased", "", "")
	}
	if !cfg.DenyPurge {
		add("deny_purge", false, "helm requires true on the keys stream: a purge removes keys without overwriting them, and every key at once, making the home's artifacts unreadable", "--deny-purge", "")
	}
	if cfg.AllowRollup {
		add("allow_rollup_hdrs", true, "helm requires false: a message with a Nats-Rollup header purges the keys before it", "--no-allow-rollup", "")
	}
	if cfg.SubjectDeleteMarkerTTL > 0 {
		add("subject_delete_marker_ttl", cfg.SubjectDeleteMarkerTTL, "helm requires 0: it needs purges allowed", "--subject-del-markers-ttl=0", "")
	}
	if cfg.AllowMsgTTL {
		add("allow_msg_ttl", true, "helm requires false: a key published with a Nats-TTL header is removed by the server when it expires, without the overwrite of a secure delete, and its artifact cannot be read from then on", "", "")
	}
	if cfg.AllowMsgSchedules {
		add("allow_msg_schedules", true, "helm requires false: it needs roll-ups and purges allowed", "", "")
	}
	if cfg.AllowDirect && cfg.Replicas > 1 {
		add("allow_direct", true, "helm requires false on a replicated stream: a direct get may be answered by a replica behind the leader, which may still hold a key helm erased, or not yet hold one it made", "--no-allow-direct", "")
	}
	if r := cfg.RePublish; r != nil {
		add("republish", r.Source+" > "+r.Destination, "helm requires none on the keys stream: the server republishes every key it stores to another subject, where a stream may keep a copy that erasing the key never reaches", "",
			"remove the republish (nats stream edit -i "+cfg.Name+"), then erase the copies of the keys it made wherever "+r.Destination+" is kept")
	}
	return out
}

// covers reports whether one of patterns matches every subject that
// subject (a pattern itself) matches.
func covers(patterns []string, subject string) bool {
	want := strings.Split(subject, ".")
	for _, p := range patterns {
		if matches(strings.Split(p, "."), want) {
			return true
		}
	}
	return false
}

func matches(pattern, subject []string) bool {
	for i, t := range pattern {
		if t == ">" {
			return len(subject) > i
		}
		if i >= len(subject) || subject[i] == ">" || t != "*" && t != subject[i] {
			return false
		}
	}
	return len(pattern) == len(subject)
}

// show renders a setting's value as the stream's JSON configuration has
// it: "old" for the discard policy old, "1m0s" for a duration.
func show(v any) string {
	switch v := v.(type) {
	case time.Duration:
		return v.String()
	case string:
		if v == "" {
			return `""`
		}
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return strings.Trim(string(b), `"`)
}
