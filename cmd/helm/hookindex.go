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
	"regexp"
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

// safeName is a session or agent id that can be a file name as it is.
var safeName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)

// fileName is id as a file name: itself when safe, else a digest of it
// (the id comes from the agent's payload: never a path).
func fileName(id string) string {
	if safeName.MatchString(id) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256-" + hex.EncodeToString(sum[:16])
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

// sub returns the track of the subagent id, made when new.
func (ix *lockedIndex) sub(id string) *track {
	if ix.Subagents == nil {
		ix.Subagents = map[string]*track{}
	}
	t := ix.Subagents[id]
	if t == nil {
		t = &track{}
		ix.Subagents[id] = t
	}
	return t
}

// seen says whether the message id was counted, and remembers it.
func (t *track) seen(id string) bool {
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
	t.Turn.Add(u)
}

// addPending adds u to what call id waits for; beyond maxPending calls,
// to the turn.
func (t *track) addPending(id string, u logbook.Usage) {
	if t.Pending == nil {
		t.Pending = map[string]logbook.Usage{}
	}
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
	p, ok := t.Pending[id]
	if !ok {
		return nil
	}
	delete(t.Pending, id)
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
	if len(t.Open[tool]) < maxPending {
		t.Open[tool] = append(t.Open[tool], id)
	}
	return id
}

// closeCall returns the oldest open call of tool ("" when none).
func (t *track) closeCall(tool string) string {
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
