// Package helm records the work of people and coding agents as voyages:
// what was observed, what it meant, what was done.
//
// It is the facade: everything a caller needs for a voyage is here, plus
// package marks to build the marks to observe, and an Action to perform
// (package actions has git's and GitHub's). The packages underneath do one
// job each: segment stores a voyage's events in an fsync'd, checksummed,
// append-only log; projection folds the events into the views; artifact
// stores the evidence, compressed and content-addressed; logbook renders
// the story.
//
// A Home is a directory ($HELM_HOME, ~/.helm by default, for the helm
// program) holding voyages. Start begins one; Home.Voyage opens one by id
// or unambiguous prefix; List describes them. On an open *Voyage:
//
//   - Observe looks at a mark and puts the observation on the slate (a
//     set keyed by mark: the newest look wins); Record puts one made
//     elsewhere there; Erase and Wipe take marks off it.
//   - TakeBearing records what the slate's observations meant, sealing
//     them into a logbook entry and emptying the slate in one event;
//     Challenge replaces a bearing's reading, keeping the one it replaces.
//   - Perform records an Action's intent durably, performs it, and
//     records its outcome.
//   - Step records what an agent host (Claude Code, ...) reported at its
//     own tool boundary: a prompt, a tool call with the guard's decision
//     and its result, a notification; a call's result is attached to
//     the call's entry.
//   - Complete ends the voyage with an Outcome and a summary.
//   - Info (with the logbook's counts) and Slate read the views, which
//     are in memory;
//     Entries and Artifacts yield the logbook and the artifact index from
//     any point on, at the cost of what they yield, and OpenArtifact and
//     ArtifactInfo read one artifact: these may read the disk, so they
//     take a ctx and return an error, never a story cut short. Events and
//     Follow read its events, the read path the packages beside this one
//     are built on.
//
// OpenStore opens a home whose voyages are in a store a crew shares
// across machines (package store; store/natsstore keeps them on a NATS
// JetStream server): every verb works the same there, each change
// deciding on the store's tail. Home.Copy copies a voyage, checked on
// arrival, between any two homes.
//
// Every call that changes a voyage returns only after its events are on
// stable storage, checks its rules against the real tail of the log under
// the log's lock (so several processes and goroutines may work one
// voyage), and appends all of its events atomically. Reading never
// writes.
//
// Errors say what failed and where (*VoyageError, *DamageError) and wrap
// a sentinel to match with errors.Is; what to do about one is data
// (HintOf), never part of its message.
//
// What reads voyages afterwards is built on this package's read path, in
// packages beside it: package story tells a voyage's whole story,
// report summarises it for a pull request, transcript merges voyages
// into one timeline, search finds entries across a home, and replay
// folds recorded events into fresh views (helmtest builds tests on it).
package helm
