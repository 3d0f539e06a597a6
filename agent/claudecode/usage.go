package claudecode

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/helmlog/helm/logbook"
)

// MaxUsageRead is the most of a transcript UsageSince reads at once, in
// bytes: a hook reads what the session wrote since the last hook, which
// is far less; a transcript that grew more than this since (a hook that
// did not run for a long while) is read in later calls, from where this
// one stopped.
const MaxUsageRead = 16 << 20

// maxUsageLine is the longest transcript line UsageSince parses; a longer
// one (a tool's output of megabytes) is skipped, its message's usage
// unread.
const maxUsageLine = 4 << 20

// Message is one assistant message of a Claude Code transcript, as far
// as its cost goes: its id, the tool calls it made (tool_use ids, in
// order) and its usage (the model and its tokens, and its cost in dollars
// when the model's prices are known: Price).
type Message struct {
	ID    string
	Tools []string
	Usage logbook.Usage
}

// transcriptLine is the part of a transcript line UsageSince reads.
type transcriptLine struct {
	Type        string `json:"type"`
	IsSidechain bool   `json:"isSidechain"`
	Message     struct {
		ID      string          `json:"id"`
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"`
		Usage   *struct {
			InputTokens              int64 `json:"input_tokens"`
			OutputTokens             int64 `json:"output_tokens"`
			CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
			CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
		} `json:"usage"`
	} `json:"message"`
}

// UsageSince reads the assistant messages of the Claude Code transcript r
// holds from offset on: each message once (Claude Code writes one line
// per content block of a message, each with the message's usage: the
// lines of one message are merged, their tool calls joined, the largest
// count of each kind kept), in the order they were written. It reads
// whole lines only, at most MaxUsageRead bytes, and returns the offset
// after the last whole line it read: the offset to read from next time
// (a line longer than the bytes it may read is passed over, in as many
// calls as it takes; a negative offset is the start).
// Lines that are not JSON or not an assistant's message are passed over,
// and so are a subagent's (isSidechain) in a session's transcript, and
// the session's in a subagent's own (sidechain: Claude Code writes a
// subagent's transcript to a file of its own, its lines marked
// isSidechain). Nothing is written.
func UsageSince(r io.ReaderAt, offset int64, sidechain bool) ([]Message, int64, error) {
	offset = max(offset, 0)
	br := bufio.NewReaderSize(io.NewSectionReader(r, offset, MaxUsageRead), 64<<10)
	var (
		out   []Message
		index = map[string]int{}
		next  = offset // after the last whole line
		n     int64    // the bytes of the line being read
		long  bool     // the line being read is longer than maxUsageLine
		line  []byte
	)
	for {
		chunk, err := br.ReadSlice('\n')
		n += int64(len(chunk))
		if !long && len(line)+len(chunk) <= maxUsageLine {
			line = append(line, chunk...)
		} else {
			long, line = true, line[:0]
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF {
				err = nil // a line without its newline is still being written
				if long {
					// A line longer than maxUsageLine is passed over
					// whole: what was read of it is, so that a line
					// longer than MaxUsageRead (a sparse file, a
					// megabytes-long output) does not hold every later
					// call at its start. The next call starts inside
					// it: the rest of a JSON line is no JSON.
					next += n
				}
			}
			return out, next, err
		}
		next += n
		if !long {
			addMessage(&out, index, line, sidechain)
		}
		n, long, line = 0, false, line[:0]
	}
}

// addMessage merges the assistant message on line into out.
func addMessage(out *[]Message, index map[string]int, line []byte, sidechain bool) {
	if !bytes.Contains(line, []byte(`"assistant"`)) {
		return // most lines are not: skip the parse
	}
	var l transcriptLine
	if json.Unmarshal(line, &l) != nil || l.Type != "assistant" || l.IsSidechain != sidechain || l.Message.ID == "" || l.Message.Usage == nil {
		return
	}
	var blocks []struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	}
	_ = json.Unmarshal(l.Message.Content, &blocks) // text content has no tool calls
	u := l.Message.Usage
	got := logbook.Usage{Model: l.Message.Model, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheReadTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens}
	i, seen := index[l.Message.ID]
	if !seen {
		i = len(*out)
		index[l.Message.ID] = i
		*out = append(*out, Message{ID: l.Message.ID, Usage: got})
	}
	m := &(*out)[i]
	for _, b := range blocks {
		if b.Type == "tool_use" && b.ID != "" {
			m.Tools = append(m.Tools, b.ID)
		}
	}
	m.Usage.InputTokens = max(m.Usage.InputTokens, got.InputTokens)
	m.Usage.OutputTokens = max(m.Usage.OutputTokens, got.OutputTokens)
	m.Usage.CacheReadTokens = max(m.Usage.CacheReadTokens, got.CacheReadTokens)
	m.Usage.CacheWriteTokens = max(m.Usage.CacheWriteTokens, got.CacheWriteTokens)
	m.Usage.CostUSD, _ = Price(m.Usage)
}

// price is a model's list price in US dollars per million tokens.
type price struct{ input, output, cacheRead, cacheWrite float64 }

// prices are Anthropic's list prices (dollars per million tokens: input,
// output, prompt-cache reads, 5-minute prompt-cache writes) for the
// models Claude Code runs, by model id without its date suffix. A model
// not listed has no cost: helm does not guess one.
var prices = map[string]price{
	"claude-opus-4-5":   {5, 25, 0.50, 6.25},
	"claude-opus-4-1":   {15, 75, 1.50, 18.75},
	"claude-opus-4":     {15, 75, 1.50, 18.75},
	"claude-sonnet-4-5": {3, 15, 0.30, 3.75},
	"claude-sonnet-4":   {3, 15, 0.30, 3.75},
	"claude-3-7-sonnet": {3, 15, 0.30, 3.75},
	"claude-haiku-4-5":  {1, 5, 0.10, 1.25},
	"claude-3-5-haiku":  {0.80, 4, 0.08, 1},
}

// dateSuffix is a model id's release date: claude-opus-4-5-20251101.
var dateSuffix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`-\d{8}$`) })

// Price returns what u cost in US dollars at its model's list price
// (prices), and whether the model's price is known.
func Price(u logbook.Usage) (float64, bool) {
	p, ok := prices[dateSuffix().ReplaceAllString(strings.TrimSpace(u.Model), "")]
	if !ok {
		return 0, false
	}
	const million = 1e6
	return (float64(u.InputTokens)*p.input + float64(u.OutputTokens)*p.output +
		float64(u.CacheReadTokens)*p.cacheRead + float64(u.CacheWriteTokens)*p.cacheWrite) / million, true
}
