// Package otlp turns a voyage into an OpenTelemetry trace, so that a
// trace viewer (Jaeger, Grafana Tempo, Langfuse, Honeycomb) can show it
// while helm stays the durable record.
//
// A voyage and its sub-voyages (the home's voyages whose Parent is it,
// recursively) are one trace. The voyage is the root span; each logbook
// entry is a span under its voyage's span; a sub-voyage's span is a child
// of the subagent step that opened it when one names it, else of its
// parent voyage's span. Tool steps follow the OpenTelemetry semantic
// conventions for generative AI (SemconvVersion): an execute_tool span
// with the tool's name and call id, and the model's usage where the host
// reported it.
//
// Ids are derived, never drawn: the trace id is the root voyage's UUID,
// and a span id the first 8 bytes of SHA-256 over (voyage id, entry
// number), the voyage's own span being entry 0. Exporting a voyage twice
// gives the same ids, so a viewer that receives both keeps one.
//
// An entry has a duration where the log knows one: an action from its
// intent to its outcome, a tool call from its call to its result (the
// result's duration). Every other entry is a span from its time to its
// time: helm does not invent how long a note took by stretching it to the
// next entry. The voyage's span runs from its start to its completion
// (or, while it is open, its last event), and covers its children.
//
// The package reads through the root package's public API only
// (Home.List, Home.Voyage, Voyage.Info, Voyage.Entries, Voyage.Head) and
// writes nothing. Texts come from the log, which redacted them before
// storing them; each string attribute is cut to MaxAttrBytes.
package otlp

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

// SemconvVersion is the version of the OpenTelemetry semantic conventions
// whose attribute names the spans use (the gen_ai.* ones are still marked
// Development there): gen_ai.provider.name, not the gen_ai.system it
// replaced, and gen_ai.usage.cache_read.input_tokens and
// gen_ai.usage.cache_creation.input_tokens for the prompt cache.
const SemconvVersion = "1.41.0"

// SchemaURL is the schema of SemconvVersion, recorded on the resource and
// the scope.
const SchemaURL = "https://opentelemetry.io/schemas/" + SemconvVersion

// MaxAttrBytes bounds every string attribute: a prompt, a Bash command,
// a tool's output or a reading longer than that is cut at a UTF-8
// boundary and ends in "…". Collectors and viewers refuse or truncate
// large attributes on their own (Jaeger and Tempo keep a few KiB by
// default); the whole text stays in the voyage.
const MaxAttrBytes = 4096

// ScopeName is the instrumentation scope of helm's spans.
const ScopeName = "github.com/helmlog/helm/cmd/helm/internal/otlp"

// Options say what a trace is labelled with.
type Options struct {
	// ServiceVersion is service.version on the resource (helm's version).
	ServiceVersion string
}

// Trace builds the trace of voyage v, with its sub-voyages found in h.
// It reads the events other processes appended first (Voyage.Refresh).
// Sub-voyages that cannot be opened make it fail, naming them: a trace
// with a hole in it would look whole.
func Trace(ctx context.Context, h *helm.Home, v *helm.Voyage, opts *Options) (*Traces, error) {
	if err := v.Refresh(ctx); err != nil {
		return nil, err
	}
	if _, err := uuid.Parse(v.ID()); err != nil {
		return nil, fmt.Errorf("voyage %s: its id is not a UUID: %w", v.ID(), err)
	}
	all, err := h.List(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("voyage %s: list the home's voyages for its sub-voyages: %w", v.ID(), err)
	}
	children := map[string][]string{}
	for _, info := range all {
		if info.Parent != "" {
			children[info.Parent] = append(children[info.Parent], info.ID)
		}
	}
	l := &loader{ctx: ctx, h: h, children: children, seen: map[string]bool{}}
	c, err := l.load(v)
	if err != nil {
		return nil, err
	}
	return build(c, opts), nil
}

// crew is what a trace is built from: a voyage as read (its description,
// head and entries) and its sub-voyages, read alike.
type crew struct {
	info    helm.VoyageInfo
	head    string
	entries []logbook.Entry
	subs    []*crew
}

// loader reads a voyage and its sub-voyages through the public API.
type loader struct {
	ctx      context.Context
	h        *helm.Home
	children map[string][]string
	seen     map[string]bool
}

func (l *loader) load(v *helm.Voyage) (*crew, error) {
	c := &crew{info: v.Info()}
	l.seen[c.info.ID] = true
	if head, err := v.Head(l.ctx); err == nil {
		c.head = head.String()
	}
	for e, err := range v.Entries(l.ctx, nil) {
		if err != nil {
			return nil, err
		}
		c.entries = append(c.entries, e)
	}
	for _, id := range l.children[c.info.ID] {
		if l.seen[id] {
			continue
		}
		sv, err := l.h.Voyage(l.ctx, id)
		if err != nil {
			return nil, fmt.Errorf("voyage %s: open its sub-voyage %s: %w", c.info.ID, id, err)
		}
		sub, err := l.load(sv)
		if cerr := sv.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		c.subs = append(c.subs, sub)
	}
	return c, nil
}

// build makes the trace of c: it reads nothing.
func build(c *crew, opts *Options) *Traces {
	var o Options
	if opts != nil {
		o = *opts
	}
	td := &Traces{SchemaURL: SchemaURL, ScopeName: ScopeName, ScopeVersion: o.ServiceVersion}
	td.Resource.PutStr("service.name", "helm")
	if o.ServiceVersion != "" {
		td.Resource.PutStr("service.version", o.ServiceVersion)
	}
	var trace TraceID
	if id, err := uuid.Parse(c.info.ID); err == nil {
		trace = TraceID(id)
	}
	b := &builder{trace: trace, td: td}
	b.voyage(c, SpanID{})
	return td
}

// SpanOf is the span id of entry n of voyage id (0: the voyage's own
// span): the first 8 bytes of SHA-256 over a label, the id and n.
func SpanOf(id string, n int) SpanID {
	sum := sha256.Sum256([]byte("helm otlp span\x00" + id + "\x00" + strconv.Itoa(n)))
	var s SpanID
	copy(s[:], sum[:8])
	if s == (SpanID{}) {
		s[7] = 1 // an all-zero span id is invalid; SHA-256 gives one 2^-64 of the time
	}
	return s
}

type builder struct {
	trace TraceID
	td    *Traces
}

// span appends a new span.
func (b *builder) span() *Span {
	sp := &Span{}
	b.td.Spans = append(b.td.Spans, sp)
	return sp
}

// voyage appends the spans of voyage c under parent (empty: c is the
// root) and those of its sub-voyages, and returns the end of its span.
func (b *builder) voyage(c *crew, parent SpanID) time.Time {
	info, entries := c.info, c.entries
	own := SpanOf(info.ID, 0)
	sp := b.span()
	b.base(sp, own, parent, "voyage "+info.Intent)
	at := &sp.Attributes
	put(at, "helm.voyage.id", info.ID)
	put(at, "helm.voyage.intent", info.Intent)
	put(at, "helm.voyage.kind", string(info.Kind))
	put(at, "helm.voyage.status", string(info.Status))
	put(at, "helm.voyage.outcome", string(info.Outcome))
	put(at, "helm.voyage.summary", info.Summary)
	put(at, "helm.voyage.parent", info.Parent)
	put(at, "helm.voyage.identity", info.Identity)
	put(at, "helm.voyage.session", info.Session)
	if len(info.Lifecycle) > 0 {
		who(at, info.Lifecycle[0].Who)
	}
	put(at, "helm.voyage.head", c.head)
	put(at, "vcs.repository.name", info.Repo)
	put(at, "vcs.ref.head.name", info.Branch)
	put(at, "vcs.ref.base.revision", info.Base)
	for i, t := range info.Lifecycle {
		ev := &Event{Time: ts(t.At)}
		sp.Events = append(sp.Events, ev)
		switch {
		case i == 0:
			ev.Name = "voyage started"
		case t.Status == logbook.StatusActive:
			ev.Name = "voyage resumed"
		default:
			ev.Name = "voyage " + string(t.Status)
		}
		put(&ev.Attributes, "helm.voyage.status", string(t.Status))
		put(&ev.Attributes, "helm.reason", t.Reason)
		who(&ev.Attributes, t.Who)
	}
	if info.Status != logbook.StatusActive {
		switch info.Outcome {
		case logbook.OutcomeCompleted:
			sp.Status.Code = StatusCodeOk
		case logbook.OutcomeFailed:
			sp.Status.Code = StatusCodeError
			sp.Status.Message = bound(info.Summary)
		}
	}

	start := info.Created
	end := info.LastAt
	if info.Status != logbook.StatusActive && !info.CompletedAt.IsZero() {
		end = info.CompletedAt
	}
	// The entry that opened each sub-voyage: the first subagent step
	// naming it.
	opened := map[string]int{}
	for _, e := range entries {
		if s := e.Step; s != nil && s.Kind == logbook.StepSubagent && s.Voyage != "" {
			if _, ok := opened[s.Voyage]; !ok {
				opened[s.Voyage] = e.N
			}
		}
	}
	for _, e := range entries {
		end = later(end, b.entry(info.ID, own, e))
	}
	for _, sub := range c.subs {
		under := own
		if n, ok := opened[sub.info.ID]; ok {
			under = SpanOf(info.ID, n)
		}
		end = later(end, b.voyage(sub, under))
	}
	end = later(end, start)
	sp.Start, sp.End = ts(start), ts(end)
	return end
}

func (b *builder) base(sp *Span, id, parent SpanID, name string) {
	sp.TraceID = b.trace
	sp.SpanID = id
	sp.ParentSpanID = parent
	sp.Name = bound(name)
	sp.Kind = SpanKindInternal
}

// entry appends the span of entry e of voyage id under parent and returns
// its end.
func (b *builder) entry(id string, parent SpanID, e logbook.Entry) time.Time {
	sp := b.span()
	b.base(sp, SpanOf(id, e.N), parent, string(e.Kind))
	at := &sp.Attributes
	at.PutInt("helm.entry.n", int64(e.N))
	put(at, "helm.entry.kind", string(e.Kind))
	at.PutInt("helm.entry.seq", int64(min(e.Seq, 1<<63-1)))
	who(at, e.Who)
	end := e.At
	link := func(n int) {
		l := &Link{TraceID: b.trace, SpanID: SpanOf(id, n)}
		l.Attributes.PutInt("helm.entry.n", int64(n))
		sp.Links = append(sp.Links, l)
	}
	switch {
	case e.Bearing != nil:
		put(at, "helm.bearing.reading", e.Bearing.Reading.Text)
		at.PutInt("helm.bearing.observations", int64(len(e.Bearing.Observations)))
		if len(e.Bearing.Observations) > 0 {
			var marks []string
			for _, o := range e.Bearing.Observations {
				marks = append(marks, bound(o.Label))
			}
			at.PutStrs("helm.bearing.marks", marks)
		}
		for _, h := range e.Bearing.Reading.History {
			ev := &Event{Name: "reading challenged", Time: ts(h.ChallengedAt)}
			sp.Events = append(sp.Events, ev)
			put(&ev.Attributes, "helm.bearing.reading", h.Text)
			put(&ev.Attributes, "helm.challenge.feedback", h.ChallengedWith)
			who(&ev.Attributes, h.ChallengedBy)
		}
	case e.Action != nil:
		a := e.Action
		sp.Name = bound("action " + a.Kind)
		put(at, "helm.action.id", a.ID)
		put(at, "helm.action.kind", a.Kind)
		put(at, "helm.action.status", string(a.Status))
		put(at, "helm.action.why", a.Why)
		if len(a.Params) > 0 {
			put(at, "helm.action.params", string(a.Params))
		}
		if r := a.Result; r != nil {
			put(at, "helm.action.result.sha", r.SHA)
			put(at, "helm.action.result.branch", r.Branch)
			if r.Number != 0 {
				at.PutInt("helm.action.result.number", int64(r.Number))
			}
			put(at, "helm.action.result.url", r.URL)
			put(at, "helm.action.result.witness", r.Witness)
		}
		switch a.Status {
		case logbook.ActionFailed:
			sp.Status.Code = StatusCodeError
			sp.Status.Message = bound(a.Error)
			put(at, "error.type", "action_failed")
		case logbook.ActionRefused:
			put(at, "helm.guard.verdict", "deny")
			put(at, "helm.guard.rule", a.Rule)
		case logbook.ActionPerformed:
			sp.Status.Code = StatusCodeOk
		}
		if !a.DoneAt.IsZero() {
			end = later(end, a.DoneAt)
		}
		if a.Undoes > 0 {
			at.PutInt("helm.action.undoes", int64(a.Undoes))
			link(a.Undoes)
		}
	case e.Note != nil:
		put(at, "helm.note.text", e.Note.Text)
	case e.Judgement != nil:
		j := e.Judgement
		at.PutInt("helm.judgement.score", int64(j.Score))
		put(at, "helm.judgement.dimension", j.Dimension)
		put(at, "helm.judgement.text", j.Text)
		for _, n := range j.Evidence {
			link(n)
		}
	case e.Policy != nil:
		put(at, "helm.policy.digest", e.Policy.Digest)
		if len(e.Policy.Sources) > 0 {
			var src []string
			for _, s := range e.Policy.Sources {
				src = append(src, bound(s))
			}
			at.PutStrs("helm.policy.sources", src)
		}
	case e.Rechain != nil:
		put(at, "helm.rechain.crc32c", e.Rechain.CRC32C)
		put(at, "helm.rechain.why", e.Rechain.Why)
	case e.Handoff != nil:
		put(at, "helm.handoff.from", e.Handoff.From)
		put(at, "helm.handoff.to", e.Handoff.To)
		put(at, "helm.handoff.why", e.Handoff.Why)
	case e.Step != nil:
		end = later(end, step(sp, e))
	}
	sp.Start, sp.End = ts(e.At), ts(end)
	return end
}

// step fills the span of a step entry and returns its end.
func step(sp *Span, e logbook.Entry) time.Time {
	s := e.Step
	at := &sp.Attributes
	put(at, "helm.step.kind", string(s.Kind))
	put(at, "helm.step.agent", s.Agent)
	put(at, "gen_ai.conversation.id", s.Session)
	put(at, "helm.step.id", s.ID)
	put(at, "helm.step.text", s.Text)
	put(at, "helm.step.voyage", s.Voyage)
	end := e.At
	switch s.Kind {
	case logbook.StepTool:
		sp.Name = bound("execute_tool " + s.Tool)
		put(at, "gen_ai.operation.name", "execute_tool")
		put(at, "gen_ai.tool.name", s.Tool)
		put(at, "gen_ai.tool.call.id", s.ID)
		if len(s.Input) > 0 {
			put(at, "gen_ai.tool.call.arguments", string(s.Input))
		}
	case logbook.StepPermission:
		sp.Name = bound("permission " + s.Tool)
		put(at, "gen_ai.tool.name", s.Tool)
		put(at, "gen_ai.tool.call.id", s.ID)
	case logbook.StepSubagent:
		sp.Name = bound(strings.TrimSpace("subagent " + s.Text))
	default:
		sp.Name = string(s.Kind)
	}
	if d := s.Decision; d != nil {
		put(at, "helm.guard.verdict", d.Verdict)
		put(at, "helm.guard.rule", d.Rule)
		put(at, "helm.guard.reason", d.Reason)
	}
	if r := s.Result; r != nil {
		put(at, "gen_ai.tool.call.result", r.Output)
		put(at, "helm.step.artifact", r.Artifact)
		if r.Duration > 0 {
			end = e.At.Add(r.Duration)
		}
		if r.Failed {
			sp.Status.Code = StatusCodeError
			sp.Status.Message = "the tool call failed"
			put(at, "error.type", "tool_failed")
		}
	}
	if u := s.Usage; u != nil {
		usage(at, s.Agent, *u)
	}
	return end
}

// usage puts the GenAI model-usage attributes of u. gen_ai.usage.input_tokens
// counts every input token, the cache's included, as the conventions ask
// (Anthropic's input_tokens leave the cache's out: helm stores them so).
func usage(at *Attributes, agent string, u logbook.Usage) {
	if u.Model != "" {
		put(at, "gen_ai.request.model", u.Model)
		put(at, "gen_ai.response.model", u.Model)
	}
	put(at, "gen_ai.provider.name", provider(agent, u.Model))
	at.PutInt("gen_ai.usage.input_tokens", u.InputTokens+u.CacheReadTokens+u.CacheWriteTokens)
	at.PutInt("gen_ai.usage.output_tokens", u.OutputTokens)
	if u.CacheReadTokens != 0 {
		at.PutInt("gen_ai.usage.cache_read.input_tokens", u.CacheReadTokens)
	}
	if u.CacheWriteTokens != 0 {
		at.PutInt("gen_ai.usage.cache_creation.input_tokens", u.CacheWriteTokens)
	}
	if u.CostUSD != 0 {
		at.PutDouble("helm.usage.cost_usd", u.CostUSD)
	}
	if u.Duration > 0 {
		at.PutInt("helm.usage.duration_ms", u.Duration.Milliseconds())
	}
}

// provider is gen_ai.provider.name for a model an agent host used, as far
// as the pair tells: empty when it does not.
func provider(agent, model string) string {
	m := strings.ToLower(model)
	switch {
	case agent == "claude-code" && strings.Contains(m, "claude"):
		return "anthropic"
	case agent == "gemini" && strings.Contains(m, "gemini"):
		return "gcp.gemini"
	}
	return ""
}

// who puts who recorded something.
func who(at *Attributes, w logbook.Who) {
	put(at, "helm.identity", w.Identity)
	put(at, "helm.role", w.Role)
	put(at, "helm.method", w.Method)
}

// put sets a string attribute, bounded, unless it is empty.
func put(at *Attributes, k, v string) {
	if v != "" {
		at.PutStr(k, bound(v))
	}
}

// bound cuts s to MaxAttrBytes at a UTF-8 boundary, ending it in "…".
func bound(s string) string {
	if len(s) <= MaxAttrBytes {
		return s
	}
	const ellipsis = "…"
	cut := MaxAttrBytes - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}

func ts(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano())
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// JSON is td as one line of OTLP/JSON (an ExportTraceServiceRequest, as
// the collector's file exporter writes it), newline included.
func JSON(td *Traces) ([]byte, error) {
	return append(td.appendJSON(nil), '\n'), nil
}

// Proto is td as the protobuf body of an OTLP/HTTP export: TracesData and
// ExportTraceServiceRequest are the same message on the wire (field 1,
// the resource spans).
func Proto(td *Traces) ([]byte, error) {
	return td.appendProto(nil), nil
}
