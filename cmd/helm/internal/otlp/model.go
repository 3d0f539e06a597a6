package otlp

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"strconv"
	"unicode/utf8"
)

// The trace is held in OTLP's model, as far as helm fills it, and encoded
// here as OTLP/JSON and as OTLP protobuf (opentelemetry-proto's
// trace/v1 and common/v1 messages). The OpenTelemetry Collector's pdata
// module did this before; its packages' initialisation (a feature-gate
// registry, json-iterator, version regexps) ran on every start of helm
// and its code was 1.4 MB of the binary, for an export few commands
// make. The tests decode both encodings with pdata and compare.

// Traces is one resource's spans under one instrumentation scope.
type Traces struct {
	SchemaURL    string
	Resource     Attributes
	ScopeName    string
	ScopeVersion string
	Spans        []*Span
}

// SpanCount is how many spans t holds.
func (t *Traces) SpanCount() int { return len(t.Spans) }

// TraceID is a trace's id; SpanID a span's. All zero is "none".
type (
	TraceID [16]byte
	SpanID  [8]byte
)

// SpanKindInternal is the span kind of every span helm makes.
const SpanKindInternal = 1

// Status codes of a span.
const (
	StatusCodeUnset = 0
	StatusCodeOk    = 1
	StatusCodeError = 2
)

// Span is one span.
type Span struct {
	TraceID      TraceID
	SpanID       SpanID
	ParentSpanID SpanID
	Name         string
	Kind         int32
	Start, End   uint64 // Unix nanoseconds
	Attributes   Attributes
	Events       []*Event
	Links        []*Link
	Status       Status
}

// Event is a span's event.
type Event struct {
	Time       uint64
	Name       string
	Attributes Attributes
}

// Link is a span's link to another span.
type Link struct {
	TraceID    TraceID
	SpanID     SpanID
	Attributes Attributes
}

// Status is a span's status.
type Status struct {
	Message string
	Code    int32
}

// Attributes are key-value pairs in order; putting a key again replaces
// its value where it is, as pdata's Map did.
type Attributes []KeyValue

// KeyValue is one attribute.
type KeyValue struct {
	Key   string
	Value Value
}

// Value is a string, an int, a double or an array of strings.
type Value struct {
	kind   byte // 's', 'i', 'd', 'a'
	str    string
	int    int64
	double float64
	array  []string
}

func (at *Attributes) put(k string, v Value) {
	for i := range *at {
		if (*at)[i].Key == k {
			(*at)[i].Value = v
			return
		}
	}
	*at = append(*at, KeyValue{k, v})
}

// PutStr sets k to the string v.
func (at *Attributes) PutStr(k, v string) { at.put(k, Value{kind: 's', str: v}) }

// PutInt sets k to the integer v.
func (at *Attributes) PutInt(k string, v int64) { at.put(k, Value{kind: 'i', int: v}) }

// PutDouble sets k to the number v.
func (at *Attributes) PutDouble(k string, v float64) { at.put(k, Value{kind: 'd', double: v}) }

// PutStrs sets k to an array of the strings v.
func (at *Attributes) PutStrs(k string, v []string) { at.put(k, Value{kind: 'a', array: v}) }

// JSON encoding: OTLP/JSON, fields in the protobuf's order, ids in hex,
// 64-bit integers as strings, defaults left out (a span's status is
// always there, as the collector writes it).

func (t *Traces) appendJSON(b []byte) []byte {
	b = append(b, `{"resourceSpans":[{"resource":{`...)
	if len(t.Resource) > 0 {
		b = append(b, `"attributes":`...)
		b = t.Resource.appendJSON(b)
	}
	b = append(b, `},"scopeSpans":[{"scope":{`...)
	sep := ""
	if t.ScopeName != "" {
		b = append(b, `"name":`...)
		b = appendJSONString(b, t.ScopeName)
		sep = ","
	}
	if t.ScopeVersion != "" {
		b = append(b, sep+`"version":`...)
		b = appendJSONString(b, t.ScopeVersion)
	}
	b = append(b, `}`...)
	if len(t.Spans) > 0 {
		b = append(b, `,"spans":[`...)
		for i, sp := range t.Spans {
			if i > 0 {
				b = append(b, ',')
			}
			b = sp.appendJSON(b)
		}
		b = append(b, ']')
	}
	if t.SchemaURL != "" {
		b = append(b, `,"schemaUrl":`...)
		b = appendJSONString(b, t.SchemaURL)
	}
	b = append(b, '}', ']')
	if t.SchemaURL != "" {
		b = append(b, `,"schemaUrl":`...)
		b = appendJSONString(b, t.SchemaURL)
	}
	return append(b, `}]}`...)
}

func (sp *Span) appendJSON(b []byte) []byte {
	b = append(b, '{')
	sep := ""
	field := func(name string) {
		b = append(b, sep+`"`+name+`":`...)
		sep = ","
	}
	if sp.TraceID != (TraceID{}) {
		field("traceId")
		b = appendJSONString(b, hex.EncodeToString(sp.TraceID[:]))
	}
	if sp.SpanID != (SpanID{}) {
		field("spanId")
		b = appendJSONString(b, hex.EncodeToString(sp.SpanID[:]))
	}
	if sp.ParentSpanID != (SpanID{}) {
		field("parentSpanId")
		b = appendJSONString(b, hex.EncodeToString(sp.ParentSpanID[:]))
	}
	if sp.Name != "" {
		field("name")
		b = appendJSONString(b, sp.Name)
	}
	if sp.Kind != 0 {
		field("kind")
		b = strconv.AppendInt(b, int64(sp.Kind), 10)
	}
	if sp.Start != 0 {
		field("startTimeUnixNano")
		b = appendJSONString(b, strconv.FormatUint(sp.Start, 10))
	}
	if sp.End != 0 {
		field("endTimeUnixNano")
		b = appendJSONString(b, strconv.FormatUint(sp.End, 10))
	}
	if len(sp.Attributes) > 0 {
		field("attributes")
		b = sp.Attributes.appendJSON(b)
	}
	if len(sp.Events) > 0 {
		field("events")
		b = append(b, '[')
		for i, ev := range sp.Events {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			s := ""
			if ev.Time != 0 {
				b = append(b, `"timeUnixNano":`...)
				b = appendJSONString(b, strconv.FormatUint(ev.Time, 10))
				s = ","
			}
			if ev.Name != "" {
				b = append(b, s+`"name":`...)
				b = appendJSONString(b, ev.Name)
				s = ","
			}
			if len(ev.Attributes) > 0 {
				b = append(b, s+`"attributes":`...)
				b = ev.Attributes.appendJSON(b)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(sp.Links) > 0 {
		field("links")
		b = append(b, '[')
		for i, l := range sp.Links {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			s := ""
			if l.TraceID != (TraceID{}) {
				b = append(b, `"traceId":`...)
				b = appendJSONString(b, hex.EncodeToString(l.TraceID[:]))
				s = ","
			}
			if l.SpanID != (SpanID{}) {
				b = append(b, s+`"spanId":`...)
				b = appendJSONString(b, hex.EncodeToString(l.SpanID[:]))
				s = ","
			}
			if len(l.Attributes) > 0 {
				b = append(b, s+`"attributes":`...)
				b = l.Attributes.appendJSON(b)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	field("status")
	b = append(b, '{')
	s := ""
	if sp.Status.Message != "" {
		b = append(b, `"message":`...)
		b = appendJSONString(b, sp.Status.Message)
		s = ","
	}
	if sp.Status.Code != 0 {
		b = append(b, s+`"code":`...)
		b = strconv.AppendInt(b, int64(sp.Status.Code), 10)
	}
	return append(b, '}', '}')
}

func (at Attributes) appendJSON(b []byte) []byte {
	b = append(b, '[')
	for i, kv := range at {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"key":`...)
		b = appendJSONString(b, kv.Key)
		b = append(b, `,"value":`...)
		b = kv.Value.appendJSON(b)
		b = append(b, '}')
	}
	return append(b, ']')
}

func (v Value) appendJSON(b []byte) []byte {
	switch v.kind {
	case 's':
		b = append(b, `{"stringValue":`...)
		b = appendJSONString(b, v.str)
	case 'i':
		b = append(b, `{"intValue":`...)
		b = appendJSONString(b, strconv.FormatInt(v.int, 10))
	case 'd':
		b = append(b, `{"doubleValue":`...)
		switch {
		case math.IsNaN(v.double):
			b = append(b, `"NaN"`...)
		case math.IsInf(v.double, 1):
			b = append(b, `"Infinity"`...)
		case math.IsInf(v.double, -1):
			b = append(b, `"-Infinity"`...)
		default:
			// As pdata writes it: plain between 1e-6 and 1e21, else
			// with an exponent of two digits at least (1e-09).
			format := byte('f')
			if a := math.Abs(v.double); a != 0 && (a < 1e-6 || a >= 1e21) {
				format = 'e'
			}
			b = strconv.AppendFloat(b, v.double, format, -1, 64)
		}
	case 'a':
		b = append(b, `{"arrayValue":{`...)
		if len(v.array) > 0 {
			b = append(b, `"values":[`...)
			for i, s := range v.array {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"stringValue":`...)
				b = appendJSONString(b, s)
				b = append(b, '}')
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	default:
		return append(b, '{', '}')
	}
	return append(b, '}')
}

// appendJSONString appends s quoted as pdata quotes it: a quote, a
// backslash and the control characters escaped, invalid UTF-8 as
// U+FFFD, and nothing else (no HTML escapes, U+2028 as it is).
func appendJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			b = append(b, c)
		}
		i++
	}
	return append(b, '"')
}

// Protobuf encoding: the wire format by hand, each message's fields in
// number order, defaults left out (a span's status is always there).

const (
	wireVarint = 0
	wireI64    = 1
	wireLen    = 2
)

func appendTag(b []byte, field, wire int) []byte {
	return binary.AppendUvarint(b, uint64(field<<3|wire))
}

func appendBytesField(b []byte, field int, v []byte) []byte {
	b = appendTag(b, field, wireLen)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendStringField(b []byte, field int, s string) []byte {
	if s == "" {
		return b
	}
	s = validUTF8(s)
	b = appendTag(b, field, wireLen)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// validUTF8 returns s with each byte that is not part of valid UTF-8 as
// U+FFFD, as appendJSONString writes it: a protobuf string must be
// UTF-8 (a decoder that checks refuses the whole export, and one that
// does not passes the bytes on into JSON that is not JSON), and the two
// encodings of one trace say the same.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}

func appendFixed64Field(b []byte, field int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return binary.LittleEndian.AppendUint64(appendTag(b, field, wireI64), v)
}

func appendVarintField(b []byte, field int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return binary.AppendUvarint(appendTag(b, field, wireVarint), v)
}

// appendMessage appends a length-delimited message that body appends.
func appendMessage(b []byte, field int, body func([]byte) []byte) []byte {
	return appendBytesField(b, field, body(nil))
}

func (t *Traces) appendProto(b []byte) []byte {
	// TracesData (= ExportTraceServiceRequest) { 1: ResourceSpans }
	return appendMessage(b, 1, func(b []byte) []byte {
		// 1: Resource, 2: ScopeSpans { 1: InstrumentationScope, 2: spans }.
		b = appendMessage(b, 1, func(b []byte) []byte { return t.Resource.appendProto(b, 1) })
		b = appendMessage(b, 2, func(b []byte) []byte {
			b = appendMessage(b, 1, func(b []byte) []byte {
				b = appendStringField(b, 1, t.ScopeName)
				return appendStringField(b, 2, t.ScopeVersion)
			})
			for _, sp := range t.Spans {
				b = appendMessage(b, 2, sp.appendProto)
			}
			return appendStringField(b, 3, t.SchemaURL)
		})
		return appendStringField(b, 3, t.SchemaURL)
	})
}

func (sp *Span) appendProto(b []byte) []byte {
	if sp.TraceID != (TraceID{}) {
		b = appendBytesField(b, 1, sp.TraceID[:])
	}
	if sp.SpanID != (SpanID{}) {
		b = appendBytesField(b, 2, sp.SpanID[:])
	}
	if sp.ParentSpanID != (SpanID{}) {
		b = appendBytesField(b, 4, sp.ParentSpanID[:])
	}
	b = appendStringField(b, 5, sp.Name)
	b = appendVarintField(b, 6, uint64(sp.Kind))
	b = appendFixed64Field(b, 7, sp.Start)
	b = appendFixed64Field(b, 8, sp.End)
	b = sp.Attributes.appendProto(b, 9)
	for _, ev := range sp.Events {
		b = appendMessage(b, 11, func(b []byte) []byte {
			b = appendFixed64Field(b, 1, ev.Time)
			b = appendStringField(b, 2, ev.Name)
			return ev.Attributes.appendProto(b, 3)
		})
	}
	for _, l := range sp.Links {
		b = appendMessage(b, 13, func(b []byte) []byte {
			if l.TraceID != (TraceID{}) {
				b = appendBytesField(b, 1, l.TraceID[:])
			}
			if l.SpanID != (SpanID{}) {
				b = appendBytesField(b, 2, l.SpanID[:])
			}
			return l.Attributes.appendProto(b, 4)
		})
	}
	return appendMessage(b, 15, func(b []byte) []byte {
		b = appendStringField(b, 2, sp.Status.Message)
		return appendVarintField(b, 3, uint64(sp.Status.Code))
	})
}

// appendProto appends each attribute as a KeyValue in field.
func (at Attributes) appendProto(b []byte, field int) []byte {
	for _, kv := range at {
		b = appendMessage(b, field, func(b []byte) []byte {
			b = appendStringField(b, 1, kv.Key)
			return appendMessage(b, 2, kv.Value.appendProto)
		})
	}
	return b
}

// appendProto appends an AnyValue's fields: the oneof's field is written
// even when it holds its default, which says which it is.
func (v Value) appendProto(b []byte) []byte {
	switch v.kind {
	case 's':
		str := validUTF8(v.str)
		b = appendTag(b, 1, wireLen)
		b = binary.AppendUvarint(b, uint64(len(str)))
		return append(b, str...)
	case 'i':
		return binary.AppendUvarint(appendTag(b, 3, wireVarint), uint64(v.int))
	case 'd':
		return binary.LittleEndian.AppendUint64(appendTag(b, 4, wireI64), math.Float64bits(v.double))
	case 'a':
		return appendMessage(b, 5, func(b []byte) []byte {
			for _, s := range v.array {
				b = appendMessage(b, 1, Value{kind: 's', str: s}.appendProto)
			}
			return b
		})
	}
	return b
}
