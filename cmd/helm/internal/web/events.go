package web

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/projection"
	"github.com/helmlog/helm/transcript"
)

// Following a voyage live: /voyages/{id}/events is a stream of
// server-sent events, one "update" per event appended to the voyage's
// log (Voyage.Follow), each holding the parts of the page it changes
// rendered as the page renders them: the entry it records or changes,
// the slate, the voyage's header and lifecycle. live.js puts each part in
// place of the element with its id, or at the end of its container.

// update is one server-sent event's data.
type update struct {
	Seq   uint64 `json:"seq"`
	Type  string `json:"type"`
	Text  string `json:"text"` // what happened, as a transcript line says it
	Parts []part `json:"parts"`
	// Step is, for an agent's step or a call's result, the step as its
	// entry now holds it (the call with its result attached).
	Step *logbook.Step `json:"step,omitempty"`
}

// part is a piece of the page: the element whose id is ID, replaced, or
// appended to the element whose id is Into when there is none yet.
type part struct {
	ID   string `json:"id"`
	Into string `json:"into,omitempty"`
	HTML string `json:"html"`
}

// DefaultKeepAlive is how often an idle stream sends a comment, so that
// a client or proxy gone away is noticed and an idle one keeps it open.
const DefaultKeepAlive = 15 * time.Second

// DefaultWriteTimeout is how long one write to an event stream may block
// before its client is taken for gone.
const DefaultWriteTimeout = 30 * time.Second

// DefaultMaxStreams is how many event streams a Server follows at once
// unless Options.MaxStreams says otherwise. Each one holds the voyage open
// and polls its log, so the cap bounds what a page left open in many tabs,
// or a client opening streams in a loop, can take; 256 is far more than
// one person's browser opens (a browser keeps at most 6 connections to a
// host over HTTP/1.1).
const DefaultMaxStreams = 256

// streamsFull is the error a stream over the cap is refused with.
func (s *Server) streamsFull() error {
	return &httpError{
		status: http.StatusServiceUnavailable,
		err:    fmt.Errorf("too many live pages: this server follows at most %d event streams at once, and all are in use", cap(s.streams)),
		hint:   "close other pages (tabs) following a voyage and reload this one, or " + cmp.Or(s.opts.MoreStreams, "serve with a larger MaxStreams"),
	}
}

func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	select {
	case s.streams <- struct{}{}:
		defer func() { <-s.streams }()
	default:
		w.Header().Set("Retry-After", "5")
		s.fail(w, r, 0, s.streamsFull())
		return
	}
	v, err := s.openVoyage(r)
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	defer v.Close()
	from, err := eventsFrom(r)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err)
		return
	}
	if from == 0 {
		from = v.Info().Seq + 1 // what comes next
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return // the headers say what a GET streams
	}

	// Two goroutines write the response: this one (what Follow sends) and
	// the keep-alive. The response may be written only until this handler
	// returns (net/http recycles its buffers then), so the keep-alive is
	// joined before it returns: the deferred calls below run in reverse,
	// cancel first, then wait.
	ctx, cancel := context.WithCancel(r.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	var mu sync.Mutex // one writer at a time: the follower and the keep-alive
	send := func(text string) error {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() != nil {
			return ctx.Err() // the client went away, or the stream is ending
		}
		// A client that stops reading but keeps the connection open
		// would block the write for good, and hold its stream.
		if err := rc.SetWriteDeadline(time.Now().Add(s.writeTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		if _, err := fmt.Fprint(w, text); err != nil {
			return err
		}
		return rc.Flush()
	}
	if send(": following voyage "+v.ID()+" from event "+strconv.FormatUint(from, 10)+"\nretry: 2000\n\n") != nil {
		return
	}
	wg.Go(func() {
		t := time.NewTicker(s.keepAlive)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if send(": still here\n\n") != nil {
					cancel()
					return
				}
			}
		}
	})
	err = func() error {
		for l, err := range transcript.Follow(ctx, v, from) {
			if err == nil {
				err = v.Refresh(ctx)
			}
			if err != nil {
				return err
			}
			u := update{Seq: l.Seq, Type: string(l.Type), Text: l.Describe()}
			u.Parts, u.Step = s.partsFor(ctx, v, &l)
			data, err := json.Marshal(u)
			if err != nil {
				return err
			}
			if err := send(fmt.Sprintf("id: %d\nevent: update\ndata: %s\n\n", l.Seq, data)); err != nil {
				return err
			}
		}
		return nil
	}()
	if err != nil && ctx.Err() == nil {
		// The voyage could not be followed further (damage found on the
		// way): say so, and let the page show it.
		msg, _ := json.Marshal(map[string]string{"error": err.Error()})
		_ = send("event: failure\ndata: " + string(msg) + "\n\n")
	}
}

// eventsFrom is the first sequence number a stream sends: the page's
// ?from=, or after the Last-Event-ID a reconnecting EventSource sends;
// 0 when neither is given.
func eventsFrom(r *http.Request) (uint64, error) {
	var from uint64
	if s := r.URL.Query().Get("from"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("from=%q is not a sequence number", s)
		}
		from = n
	}
	if s := strings.TrimSpace(r.Header.Get("Last-Event-ID")); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("Last-Event-ID %q is not a sequence number", s)
		}
		from = max(from, n+1)
	}
	return from, nil
}

// partsFor renders the parts of the voyage page that the event of line l
// changes, from the voyage as it is now (refreshed): its header always;
// the entry it records, or whose outcome or reading it records; the slate
// when the slate changed; the lifecycle when the status did. For an
// agent's step, or a call's result, it also returns the step as its entry
// holds it.
func (s *Server) partsFor(ctx context.Context, v *helm.Voyage, l *transcript.Line) (parts []part, step *logbook.Step) {
	info := v.Info()
	t := s.pages["voyage"]
	add := func(id, into, name string, data any) {
		var b strings.Builder
		if err := t.ExecuteTemplate(&b, name, data); err != nil {
			b.Reset()
			fmt.Fprintf(&b, `<p id="%s" class="error">%s</p>`, template.HTMLEscapeString(id), template.HTMLEscapeString("cannot render: "+err.Error()))
		}
		parts = append(parts, part{ID: id, Into: into, HTML: b.String()})
	}
	head := voyagePage{Info: info, Counts: v.Info().Counts}
	if agents, err := agentStats(ctx, v); err == nil {
		head.Agents = agentFigures(agents)
	}
	add("voyage-head", "", "head", head)
	entry := 0
	switch l.Type {
	case projection.BearingTaken, projection.ActionIntended, projection.ActionRefused, projection.NoteAdded, projection.Judged, projection.StepRecorded:
		entry = l.N
	case projection.ActionPerformed, projection.ActionFailed, projection.ReadingChallenged:
		if len(l.Links) > 0 {
			entry = l.Links[0].Entry
		}
	case projection.StepFinished:
		entry = callEntry(ctx, v, l.Step)
	}
	b := &budget{left: inlineMax * 4}
	if entry > 0 {
		for e, err := range v.Entries(ctx, &helm.EntriesOptions{From: entry}) {
			if err != nil {
				id := "entry-" + itoa(entry)
				parts = append(parts, part{ID: id, Into: "timeline", HTML: fmt.Sprintf(`<p id="%s" class="error">%s</p>`, id, template.HTMLEscapeString("cannot read the entry: "+err.Error()))})
				break
			}
			it := s.entryItem(ctx, v, e, b)
			add(it.DOM, "timeline", "item", it)
			step = e.Step
			break
		}
	}
	switch l.Type {
	case projection.Observed, projection.MarkErased, projection.SlateWiped, projection.BearingTaken:
		add("slate", "", "slate", s.slate(ctx, v, b))
	case projection.VoyageCompleted, projection.VoyageResumed:
		for _, it := range lifecycleItems(info) {
			add(it.DOM, "timeline", "item", it)
		}
	}
	return parts, step
}

// callEntry is the number of the entry of the tool call that step (a
// step-finished event's) finishes: the latest call of its agent, session
// and id; 0 when none is found.
func callEntry(ctx context.Context, v *helm.Voyage, step *logbook.Step) int {
	if step == nil {
		return 0
	}
	n := 0
	for e, err := range v.Entries(ctx, nil) {
		if err != nil {
			return n
		}
		if c := e.Step; c != nil && c.Kind == step.Kind && c.Agent == step.Agent && c.Session == step.Session && c.ID == step.ID {
			n = e.N
		}
	}
	return n
}
