// Package jetstream is a helm store (package store) on a NATS JetStream
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
// Large artifacts live in the object store HELM_<home>_artifacts, one
// object per artifact named by its BLAKE3 address, holding its stored
// (zstd) form; they are checked against the address when read. The
// voyages and their summaries are the keys and values of the key-value
// bucket HELM_<home>_voyages: creating a voyage creates its key, so two
// clients cannot both create one voyage.
//
// Streams and buckets are created with the replication factor of
// Options.Replicas (1 by default; 3 for a cluster) when missing, and used
// as they are when present. Nothing here relies on a server newer than
// 2.9.
//
// Durability: a JetStream server acknowledges a message once it is
// written, not once it is synced, unless it runs with sync_interval:
// always (2.10 and later). On a stream of three replicas an acknowledged
// message is on a quorum of them. On one replica without sync_interval:
// always, acknowledged writes survive a crash of the server but not a
// power cut: the Open that creates such a home warns of it (Options.Warn).
package jetstream
