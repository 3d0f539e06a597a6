package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/helmlog/helm/internal/durable"
	"github.com/helmlog/helm/logbook"
)

// The session index: which voyage records an agent host's session, kept
// in the home's directory (Home.Dir(), on this machine also for a home
// whose voyages are in a JetStream store: a session runs on one
// machine), as <home>/agents/<host>/<session>, a JSON file written under
// an flock on <session>.lock. Hooks of one session run in parallel (the
// host starts them together); the lock makes them take turns, so two
// hooks of a new session start one voyage, and each hook's steps go in
// the order it recorded them.
//
// The index is only a pointer: the voyage it names is checked against
// the session it was started for (VoyageInfo.Session); a file the agent
// edited to name another voyage starts a new one, which is said.

// hookLockWait is how long a hook waits for its session's lock before it
// gives up recording (and answers as the guard decided, saying so). A
// hook holds the lock while it records one event's steps: milliseconds
// (BenchmarkHook); 5 s is far beyond that, and well within the hosts'
// hook timeouts (30 s).
const hookLockWait = 5 * time.Second

// maxPending bounds the tool calls whose usage waits for their result in
// an index: a session whose calls never report back (denied, crashed)
// has their usage go to the turn instead.
const maxPending = 256

// maxSubagents bounds the subagents an index keeps (a completed one is
// forgotten): Claude Code runs a few at once; an agent that starts more,
// never stopping them, has the oldest forgotten: a later event of one
// starts a new sub-voyage.
const maxSubagents = 16

// maxKey is the longest id (a message's, a call's, a tool's name, a
// subagent's) the index keeps as it is; a longer one is kept as its
// digest (the ids come from the agent: each hook reads and writes the
// index whole).
const maxKey = 128

// maxIndexBytes bounds a session index by construction: per track (the
// session's and each of maxSubagents subagents'), maxPending pending
// calls and open calls and maxSeen message ids, each key at most maxKey
// bytes and each usage's model at most maxModel; the last Agent call's
// text clipped to 200 bytes.
const maxIndexBytes = 2 << 20

// maxModel is the longest model name kept in the index's usage.
const maxModel = 128

// maxSeen is how many of the last message ids an index remembers, so a
// message whose lines straddle two reads counts once.
const maxSeen = 64

// sessionIndex is the index file's content.
type sessionIndex struct {
	// Main is the session's voyage.
	Main track `json:"main"`
	// Subagents are its subagents' sub-voyages, by agent id.
	Subagents map[string]*track `json:"subagents,omitempty"`
	// AgentCall is the text of the last Agent (Task) call, the intent of
	// the next subagent's voyage.
	AgentCall string `json:"agent_call,omitempty"`
}

// track is what the index keeps of one voyage of the session.
type track struct {
	Voyage string `json:"voyage,omitempty"`
	// Done says the sub-voyage was completed (SubagentStop).
	Done bool `json:"done,omitempty"`
	// Offset is how far the transcript's usage was read.
	Offset int64 `json:"offset,omitempty"`
	// Seen are the last message ids whose usage was counted.
	Seen []string `json:"seen,omitempty"`
	// Pending is usage read for tool calls (by tool_use id) whose result
	// has not come yet; Turn is usage of messages that made no call,
	// for the turn's message step.
	Pending map[string]logbook.Usage `json:"pending,omitempty"`
	Turn    *logbook.Usage           `json:"turn,omitempty"`
	// Open are the ids helm gave calls of a host that gives none
	// (Gemini CLI), by tool, oldest first: a result is paired with the
	// oldest open call of its tool.
	Open map[string][]string `json:"open,omitempty"`
	// Calls counts the ids given.
	Calls int `json:"calls,omitempty"`
}

// safeName is an agent id that can be part of a file name as it is.
var safeName = lazyRegexp(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)

// safeFile is a session id that can be its index's file name as it is:
// lower case (two ids that differ in case only are one file on macOS's
// and Windows' file systems).
var safeFile = lazyRegexp(`^[a-z0-9_][a-z0-9._-]{0,127}$`)

// fileName is id as a file name: itself when safe, else a digest of it
// (the id comes from the agent's payload: never a path). A name that
// could be another session's lock (x.lock) or digest (sha256-…) is a
// digest too, so no two ids share a file.
func fileName(id string) string {
	if safeFile().MatchString(id) && !strings.HasSuffix(id, ".lock") && !strings.HasPrefix(id, "sha256-") {
		return id
	}
	return digest(id)
}

// digest is id's SHA-256, shortened.
func digest(id string) string {
	sum := sha256.Sum256([]byte(id))
	return "sha256-" + hex.EncodeToString(sum[:16])
}

// key is id as the index keeps it: itself when short, else its digest.
func key(id string) string {
	if len(id) <= maxKey {
		return id
	}
	return digest(id)
}

// bounded is u with a model name the index keeps (a longer one is no
// model's).
func bounded(u logbook.Usage) logbook.Usage {
	if len(u.Model) > maxModel {
		u.Model = ""
	}
	return u
}

// lockedIndex is a session's index, read under its lock.
type lockedIndex struct {
	path string
	lock *durable.Lock
	sessionIndex
}

// openIndex locks the index of host's session in the home's directory
// and reads it (an absent or unreadable file is an empty index: the
// voyage it named, if any, is not found, and a new one starts).
func openIndex(ctx context.Context, homeDir, host, session string) (*lockedIndex, error) {
	dir := filepath.Join(homeDir, "agents", host)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("make the session index's directory: %w", err)
	}
	path := filepath.Join(dir, fileName(session))
	l, err := durable.OpenLock(path + ".lock")
	if err != nil {
		return nil, fmt.Errorf("open the session index's lock: %w", err)
	}
	deadline := time.Now().Add(hookLockWait)
	for wait := time.Millisecond; ; wait = min(2*wait, 20*time.Millisecond) {
		ok, err := l.TryLock()
		if err != nil {
			l.Close()
			return nil, err
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			l.Close()
			return nil, fmt.Errorf("lock %s: another hook of the session held it for more than %s", l.Name(), hookLockWait)
		}
		select {
		case <-ctx.Done():
			l.Close()
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
	ix := &lockedIndex{path: path, lock: l}
	if data, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(data, &ix.sessionIndex) // a damaged index names no voyage: a new one starts
	} else if !errors.Is(err, fs.ErrNotExist) {
		ix.close()
		return nil, fmt.Errorf("read the session index %s: %w", path, err)
	}
	return ix, nil
}

// save writes the index atomically (a temporary file renamed over it).
func (ix *lockedIndex) save() error {
	data, err := json.Marshal(&ix.sessionIndex)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(ix.path), ".index-*")
	if err != nil {
		return fmt.Errorf("write the session index %s: %w", ix.path, err)
	}
	defer os.Remove(tmp.Name()) // after the rename, there is none
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), ix.path)
	}
	if err != nil {
		return fmt.Errorf("write the session index %s: %w", ix.path, err)
	}
	return nil
}

// close unlocks the index.
func (ix *lockedIndex) close() {
	_ = ix.lock.Unlock()
	_ = ix.lock.Close()
}

// sub returns the track of the subagent id, made when new (forgetting
// another beyond maxSubagents: a completed one first).
func (ix *lockedIndex) sub(id string) *track {
	if ix.Subagents == nil {
		ix.Subagents = map[string]*track{}
	}
	id = key(id)
	t := ix.Subagents[id]
	if t == nil {
		for len(ix.Subagents) >= maxSubagents {
			ix.forgetOne()
		}
		t = &track{}
		ix.Subagents[id] = t
	}
	return t
}

// forgetOne forgets a subagent: a completed one, else the one whose
// voyage was started first (voyage ids sort by their start).
func (ix *lockedIndex) forgetOne() {
	oldest := ""
	for id, t := range ix.Subagents {
		if t.Done {
			delete(ix.Subagents, id)
			return
		}
		if oldest == "" || t.Voyage < ix.Subagents[oldest].Voyage {
			oldest = id
		}
	}
	delete(ix.Subagents, oldest)
}

// endSub forgets the completed subagent id: a later event of it starts a
// new sub-voyage.
func (ix *lockedIndex) endSub(id string) { delete(ix.Subagents, key(id)) }

// seen says whether the message id was counted, and remembers it.
func (t *track) seen(id string) bool {
	id = key(id)
	for _, s := range t.Seen {
		if s == id {
			return true
		}
	}
	t.Seen = append(t.Seen, id)
	if len(t.Seen) > maxSeen {
		t.Seen = t.Seen[len(t.Seen)-maxSeen:]
	}
	return false
}

// addTurn adds u to the turn's usage.
func (t *track) addTurn(u logbook.Usage) {
	if t.Turn == nil {
		t.Turn = &logbook.Usage{}
	}
	t.Turn.Add(bounded(u))
}

// addPending adds u to what call id waits for; beyond maxPending calls,
// to the turn.
func (t *track) addPending(id string, u logbook.Usage) {
	if t.Pending == nil {
		t.Pending = map[string]logbook.Usage{}
	}
	id, u = key(id), bounded(u)
	p, ok := t.Pending[id]
	if !ok && len(t.Pending) >= maxPending {
		t.addTurn(u)
		return
	}
	p.Add(u)
	t.Pending[id] = p
}

// takeCall returns and forgets the usage call id waits for (nil: none).
func (t *track) takeCall(id string) *logbook.Usage {
	p, ok := t.Pending[key(id)]
	if !ok {
		return nil
	}
	delete(t.Pending, key(id))
	return &p
}

// takeAll returns and forgets all the usage not attached yet: the
// turn's and that of calls whose result never came (denied ones).
func (t *track) takeAll() *logbook.Usage {
	var out *logbook.Usage
	add := func(u logbook.Usage) {
		if out == nil {
			out = &logbook.Usage{}
		}
		out.Add(u)
	}
	if t.Turn != nil {
		add(*t.Turn)
		t.Turn = nil
	}
	for _, p := range t.Pending {
		add(p)
	}
	t.Pending = nil
	return out
}

// openCall gives a call of a host that names none an id, and keeps it
// open until its result comes.
func (t *track) openCall(tool string) string {
	t.Calls++
	id := fmt.Sprintf("helm-call-%d", t.Calls)
	if t.Open == nil {
		t.Open = map[string][]string{}
	}
	open := 0
	for _, q := range t.Open {
		open += len(q)
	}
	if open < maxPending {
		tool = key(tool)
		t.Open[tool] = append(t.Open[tool], id)
	}
	return id
}

// closeCall returns the oldest open call of tool ("" when none).
func (t *track) closeCall(tool string) string {
	tool = key(tool)
	q := t.Open[tool]
	if len(q) == 0 {
		return ""
	}
	id := q[0]
	if len(q) == 1 {
		delete(t.Open, tool)
	} else {
		t.Open[tool] = q[1:]
	}
	return id
}

// setAgentCall keeps the text of an Agent (Task) call, clipped as the
// intent it becomes.
func (ix *sessionIndex) setAgentCall(s string) { ix.AgentCall = clip(s, 200) }
