// Package natsstore is a helm store (package store) on a NATS JetStream
// server or cluster, so that a crew on several machines shares one home.
//
// A home is one stream, HELM_<home>, with a subject per voyage,
// helm.<home>.v.<voyage>. Each commit unit (the records of one
// Log.AppendIf: a change's events and the blob records of its small
// artifacts) is one message, published with the stream sequence of the
// voyage's last message as its expected last subject sequence: the server
// takes it only if no other writer appended since, so two writers on two
// machines cannot both act on a stale tail, and the loser gets a
// *store.ConflictError. A random message id, the same on every retry of
// one AppendIf, makes a retried publish idempotent (the server's duplicate
// window, two minutes by default, bounds how late a retry may come).
// format.go draws the message.
//
// Artifacts live in the object store HELM_<home>_artifacts, one object
// per voyage and artifact, <voyage>/<hash>, holding its stored (zstd)
// form encrypted under a key of its own, which is the one message of a
// subject of the keys stream KEYS_HELM_<home>; they are checked against
// their BLAKE3 address when read. Erasing an artifact (store.Eraser, when
// a voyage jettisons it) deletes its key with the server's secure delete:
// keys.go says how, and docs/design.md what is gone and what remains.
// Those an earlier helm stored unencrypted, as the object <hash>, keep
// reading. A voyage's snapshot (store.Snapshots, a cache a writer puts at
// Close) is the object <voyage>/snapshot there, zstd-compressed, with the
// point of the log it was taken at, which Snapshot checks against the
// unit's message before it gives it (snapshots.go); a home written
// before snapshots has none, and its voyages fold from their first
// event, as they always did. The
// voyages and their summaries are the keys and values of the key-value
// bucket HELM_<home>_voyages: creating a voyage creates its key, so two
// clients cannot both create one voyage.
//
// Streams and buckets are created with the replication factor of
// Options.Replicas (1 by default; 3 for a cluster) when missing. Nothing
// here relies on a server newer than 2.9.
//
// # The settings helm requires
//
// No unit helm acknowledged may be removed, and a stream removes messages
// by itself when its settings say so, or lets a client remove them. So
// every Open reads the settings of the home's four streams — HELM_<home>
// (the units), KV_HELM_<home>_voyages (the bucket),
// OBJ_HELM_<home>_artifacts (the object store) and KEYS_HELM_<home> (the
// artifacts' keys) — before it creates any
// that is missing, and refuses the home, creating and writing nothing, if
// one of them could remove what helm acknowledged. Its *SettingsError
// names the stream, the setting (as nats stream info --json names it),
// its value, what helm requires and why; its Hint says how to put it
// right (nats stream edit HELM_team --max-msgs-per-subject=-1, or, for a
// setting a stream cannot change, to make the stream again). A stream
// someone changed after helm made it is refused by the next Open.
//
//	setting                    HELM_<home>           the bucket          the object store    the keys
//	storage                    file                  file                file                file
//	persist_mode               default               default             default             default
//	retention                  limits                limits              limits              limits
//	max_age                    0                     0                   0                   0
//	max_msgs, max_bytes        -1, or discard new    -1, or discard new  -1, or discard new  -1, or discard new
//	max_msgs_per_subject       -1, or discard new    1 or more           -1, or discard new  -1, or discard new
//	                           and discard_new_per_subject               and discard_new_per_subject (both)
//	no_ack                     false                 false               false               false
//	mirror, sources            none                  none                none                none
//	subject_transform          none                  none                none                none
//	allow_msg_counter          false                 false               false               false
//	num_replicas               Options.Replicas or more, on all four
//	subjects                   helm.<home>.v.* among them                                    helm.<home>.k.>
//	deny_delete                true                  true                any                 false
//	deny_purge                 true                  any                 any                 true
//	allow_rollup_hdrs          false                 any                 any                 false
//	subject_delete_marker_ttl  0                     any                 any                 0
//	allow_msg_schedules        false                 any                 any                 false
//	allow_msg_ttl              false                 any                 any                 false
//	allow_direct               false, if replicated  any                 any                 false, if replicated
//
// Why: memory storage loses everything on a restart, and async
// persistence acknowledges a message before it is written. Interest and
// work-queue retention remove a message once it is consumed; an age
// limit removes it once it is old. A limit of messages or bytes drops the
// oldest messages under the discard policy old, and only refuses new ones
// under new, which is safe: a full stream refuses a unit, and helm says
// so. The limit of messages per subject is different: it drops a
// subject's oldest message even under discard new, unless
// discard_new_per_subject makes it refuse the new one. A stream that does
// not acknowledge (no_ack) cannot tell helm a unit is stored; a mirror
// takes no writes and holds what its origin holds; a source or a subject
// transform puts messages where helm does not write or read them; a
// counter stream keeps counters. A stream of fewer replicas than the
// home asks for keeps fewer copies than asked. On the units' stream, a
// client with the credentials must not be able to delete or purge a
// unit, nor purge with a roll-up header; subject delete markers and
// message schedules need purges allowed (the server refuses them with
// deny_purge). A message published with a Nats-TTL header, which
// allow_msg_ttl lets any client do, is removed when it expires, whatever
// deny_delete says: helm's units never carry one, but a unit-shaped
// message that does is read as the voyage's next unit, helm appends
// after it, and once it goes the units after it cannot be read (or,
// at the tail, it goes without a trace). A direct get may be answered by a replica behind the
// leader, which a listing would take for lost units.
//
// The bucket keeps one value per key: a voyage's summary replaces the
// last one, which is a cache, and the key's existence is what helm relies
// on; deny_delete keeps a client from deleting the message that holds it.
// The object store replaces an object's chunks with a purge and writes
// its metadata with a roll-up, so it must allow both: a client with the
// credentials can remove an artifact there whatever helm asks, and helm
// finds a missing or damaged artifact when it reads it (verify reads
// them all). A key deleted from the bucket hides a voyage whose units are
// still there: List reports it as damage, and so does opening it.
//
// The keys stream is the one that must allow deletes: erasing an
// artifact deletes its key's message, with the server's secure delete.
// Everything else that removes a message is refused there: a purge or a
// roll-up drops keys without the overwrite, and every key of a voyage at
// once; an age limit or a message TTL drops a key early, and its artifact
// cannot be read from then on; a direct get on a replicated stream may
// be answered by a replica that still holds a key helm erased. Its fix
// never makes it again empty, which would make every artifact of the
// home unreadable: it is backed up and restored with the setting as helm
// requires. A client with the credentials can delete a key: reading the
// artifact, and Verify, report the damage.
//
// Accepted, as they remove nothing: sealed (nothing can be written or
// removed; helm's writes are refused by the server), max_msg_size, max_consumers (a limit refuses
// rather than drops), duplicate_window, compression, placement,
// republish, metadata, first_seq, discard old without a limit, and the
// rest of the configuration.
//
// Settings cannot tell what happened before they were read: a limit set
// and lifted again, or a unit deleted before deny_delete was set, leaves
// a stream that passes. List finds what such changes removed: a voyage
// whose subject holds fewer messages than its last unit's number
// (Helm-Unit, format.go) lost units at its front or between others, and
// a voyage whose summary describes a record after its log's last (the
// facade checks) lost its tail. Verify, which reads every unit, finds
// the rest.
//
// Durability: a JetStream server acknowledges a message once it is
// written, not once it is synced, unless it runs with sync_interval:
// always (2.10 and later). On a stream of three replicas an acknowledged
// message is on a quorum of them. On one replica without sync_interval:
// always, acknowledged writes survive a crash of the server but not a
// power cut: the Open that creates such a home warns of it (Options.Warn).
// A client cannot read the server's sync_interval, so helm cannot tell
// the two apart, and warns of every stream of one replica it creates.
package natsstore
