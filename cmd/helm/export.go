package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/cmd/helm/internal/otlp"
	"github.com/helmlog/helm/hint"
	"github.com/helmlog/helm/story"
)

// exportFormats are what voyage export writes.
var exportFormats = []string{"jsonl", "md", "html", "otlp"}

func newVoyageExportCmd(a *app) *cobra.Command {
	c := leafCmd(a, &cobra.Command{
		Use:   "export [VOYAGE] [--format jsonl|md|html|otlp] [-o FILE] [--otlp-endpoint URL]",
		Short: "write a voyage to a file: the whole of it (jsonl), its story (md, html) or its trace (otlp)",
		Long: `Write a voyage out, on standard output or, with -o FILE, to FILE (written
beside it and renamed into place, so that FILE is whole or untouched).

--format jsonl (the default) is the voyage itself: a header, every event,
the stored bytes of every artifact it holds (jettisoned ones are left
out), and a digest of it all. helm voyage import makes the voyage again
from it, in another home. Mind what it carries: every sighting kept.

--format md is the whole story in markdown, for a pull request or an
issue: every bearing with the observations it sealed and the history of
its reading, every action with its parameters, result and links, the
notes, the judgements and the lifecycle (helm report summarises).

--format html is the same story as one self-contained page with a
timeline, to open in a browser: no script, no request of its own.

--format otlp is the voyage as an OpenTelemetry trace, for Jaeger,
Grafana Tempo, Langfuse or Honeycomb: one line of OTLP/JSON (an
ExportTraceServiceRequest, as the collector's file exporter writes it).
The voyage is the root span, each entry a span under it, each sub-voyage
a child span (of the subagent step that opened it, if one did); tool
calls carry the OpenTelemetry GenAI attributes (semantic conventions
` + otlp.SemconvVersion + `): tool name, call id, model and tokens. Ids
derive from the voyage's: exported twice, the same trace. Each text
attribute is cut to ` + strconv.Itoa(otlp.MaxAttrBytes) + ` bytes; the voyage keeps the whole.

--otlp-endpoint URL sends that trace to a collector instead, by OTLP/HTTP
(protobuf, POST; a URL with no path gets /v1/traces), with each
--otlp-header NAME=VALUE (credentials for a hosted viewer) and within
--otlp-timeout. A collector that refuses it is an error naming the
endpoint, the HTTP status and what the collector said (exit 1). An export
never writes to the voyage.

VOYAGE is an id or an unambiguous prefix, as --voyage takes; without
either, the only active voyage.`,
		Example: "  helm voyage export a3b -o fix-42.jsonl\n  helm voyage export a3b --format md > story.md\n  helm --voyage a3b voyage export --format html -o fix-42.html\n  helm voyage export a3b --format otlp -o fix-42.otlp.jsonl\n  helm voyage export a3b --otlp-endpoint http://127.0.0.1:4318\n  helm voyage export a3b --otlp-endpoint https://api.honeycomb.io --otlp-header x-honeycomb-team=KEY",
	}, &voyageExportCommand{})
	fixedValues(c, "format", exportFormats...)
	return c
}

func newVoyageImportCmd(a *app) *cobra.Command {
	c := leafCmd(a, &cobra.Command{
		Use:   "import [--from HOST [--subagents DIR] [--again]] FILE",
		Short: "make a voyage exported with --format jsonl in this home, or one of an agent's session log (--from), and print its id",
		Long: `Make the voyage FILE holds (written by helm voyage export, --format jsonl;
FILE - is standard input) in this home, with its id, its events as they
were recorded and its artifacts, so that it reads as it did where it was
exported: its log, its slate, its artifacts. Prints the voyage's id.

Everything is checked before anything is written: each line, each event
(folded as opening the voyage would), each artifact against its BLAKE3
address, and the file's digest. A changed or damaged file is refused
(exit 2) naming the line, and so is a voyage the home holds already;
nothing is written then.

--from HOST reads an agent host's own session log instead, a session
recorded without helm's hooks: claude-code (the transcript a hook's
transcript_path names, ~/.claude/projects/<project>/<session id>.jsonl;
its subagents' transcripts are read from <session id>/subagents beside
it, or from --subagents DIR) or codex (a rollout,
~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl). The session becomes a
voyage (its intent the first prompt) with a sub-voyage for each
subagent: its prompts, tool calls and results, each turn's answer and
the model's tokens become steps, as helm's hook records them, under the
identity and role given (--as, --role) and the method (--method, the
host's name by default; never human). The voyages are completed
"partial", "imported from FILE". The whole log is read first: a line
that is not the host's is refused (exit 2) naming the line, and nothing
is recorded. A session the home holds already is refused, naming its
voyage; --again makes another voyage of it.`,
		Example: "  helm --home ~/review-home voyage import fix-42.jsonl\n  ssh build cat fix-42.jsonl | helm voyage import -\n  helm voyage import --from claude-code ~/.claude/projects/-work-proj/4d1e6f2a-0b7c-4c39-9a52-6f0e2d8b1c11.jsonl --as claude-1",
	}, &voyageImportCommand{})
	fixedValues(c, "from", importHostNames()...)
	return c
}

// voyageExportCommand writes a voyage out.
type voyageExportCommand struct {
	format, out string
	// endpoint, headers and timeout send the trace (--otlp-endpoint).
	endpoint string
	headers  []string
	timeout  time.Duration
}

func (c *voyageExportCommand) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.format, "format", "jsonl", "output `FORMAT`: jsonl (the whole voyage, to import), md or html (its story), otlp (its trace, OTLP/JSON)")
	fs.StringVarP(&c.out, "output", "o", "", "write to `FILE` (written beside it, then renamed into place) instead of standard output")
	fs.StringVar(&c.endpoint, "otlp-endpoint", "", "send the voyage's trace by OTLP/HTTP to `URL` (a URL with no path gets /v1/traces) instead of writing it")
	fs.StringArrayVar(&c.headers, "otlp-header", nil, "send the header `NAME=VALUE` with --otlp-endpoint (repeatable: credentials for a hosted viewer)")
	fs.DurationVar(&c.timeout, "otlp-timeout", 10*time.Second, "give up on --otlp-endpoint after `DURATION`")
}

// exportResult is the --json form of voyage export -o, and of
// --otlp-endpoint (Endpoint, the URL with any password hidden, and the
// number of spans sent).
type exportResult struct {
	Voyage   string `json:"voyage"`
	Format   string `json:"format"`
	Path     string `json:"path,omitempty"`
	Endpoint string `json:"endpoint,omitempty"`
	Spans    int    `json:"spans,omitempty"`
}

func (c *voyageExportCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 1 {
		return usageErrorf(a.cmd, "voyage export: one VOYAGE at most, got %d arguments %q", len(args), args)
	}
	write := map[string]func(context.Context, io.Writer, *helm.Voyage) error{
		"jsonl": func(ctx context.Context, w io.Writer, v *helm.Voyage) error {
			h, err := a.openHome()
			if err != nil {
				return err
			}
			return h.Export(ctx, v.ID(), w)
		},
		"md":   story.WriteMarkdown,
		"html": story.WriteHTML,
		"otlp": a.writeOTLP,
	}[c.format]
	if write == nil {
		return usageErrorf(a.cmd, "voyage export: --format %q is not one of %v", c.format, exportFormats)
	}
	var target *otlpTarget
	if c.endpoint != "" || a.cmd.Flags().Changed("otlp-header") || a.cmd.Flags().Changed("otlp-timeout") {
		if c.endpoint == "" {
			return usageErrorf(a.cmd, "voyage export: --otlp-header and --otlp-timeout go with --otlp-endpoint")
		}
		if a.cmd.Flags().Changed("format") && c.format != "otlp" {
			return usageErrorf(a.cmd, "voyage export: --otlp-endpoint sends a trace, and --format %s is not one; leave --format out", c.format)
		}
		if c.out != "" {
			return usageErrorf(a.cmd, "voyage export: --otlp-endpoint sends the trace and -o writes it; give one of them (--format otlp -o FILE writes it)")
		}
		t, err := parseOTLPTarget(c.endpoint, c.headers, c.timeout)
		if err != nil {
			return err
		}
		target = t
	} else if a.g.json && c.out == "" && c.format != "jsonl" {
		return usageErrorf(a.cmd, "voyage export: --json and --format %s disagree; give one of them", c.format)
	}
	arg := firstArg(args)
	v, err := a.openReadVoyage(ctx, arg)
	if err != nil {
		return err
	}
	if target != nil {
		n, err := a.sendOTLP(ctx, v, target)
		if err != nil {
			return err
		}
		if a.g.json {
			return writeJSON(a.stdout, exportResult{Voyage: v.ID(), Format: "otlp", Endpoint: shownEndpoint(target.url), Spans: n})
		}
		_, err = fmt.Fprintf(a.stdout, "Sent voyage %s (%d spans) to %s\n", short(v.ID()), n, shownEndpoint(target.url))
		return err
	}
	if c.out == "" || c.out == "-" {
		return write(ctx, a.stdout, v)
	}
	path := a.abs(c.out)
	if err := writeFileAtomic(path, func(w io.Writer) error { return write(ctx, w, v) }); err != nil {
		return err
	}
	if a.g.json {
		return writeJSON(a.stdout, exportResult{Voyage: v.ID(), Format: c.format, Path: path})
	}
	_, err = fmt.Fprintf(a.stdout, "Exported voyage %s (%s) to %s\n", short(v.ID()), c.format, printable(c.out))
	return err
}

// writeFileAtomic writes path with write: into a temporary file beside
// it, made durable, then renamed over it, so that path is whole or as it
// was. A new file is private (0600: an export may carry every sighting);
// one there already keeps its mode.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	mode := os.FileMode(0o600)
	if info, err := os.Stat(path); err == nil {
		if !info.Mode().IsRegular() {
			return &usageError{Err: fmt.Errorf("-o %s: not a regular file", printable(path)), Hint: "give the path of a file to write"}
		}
		mode = info.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return &usageError{Err: fmt.Errorf("-o %s: %w", printable(path), err), Hint: "give a file in a directory that exists"}
		}
		return err
	}
	err = f.Chmod(mode)
	if err == nil {
		err = write(f)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// voyageImportCommand makes an exported voyage in this home.
type voyageImportCommand struct {
	witnesses []string
	from      string
	subagents string
	again     bool
}

func (c *voyageImportCommand) Flags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&c.witnesses, "witness", nil, "refuse the archive unless its chain passes through the head `SEQ:HEX` (as helm voyage head prints it; repeatable)")
	fs.StringVar(&c.from, "from", "", "read FILE as `HOST`'s own session log: claude-code (a transcript) or codex (a rollout)")
	fs.StringVar(&c.subagents, "subagents", "", "with --from claude-code: the `DIR` of the subagents' transcripts (default: <session id>/subagents beside FILE)")
	fs.BoolVar(&c.again, "again", false, "with --from: make another voyage of a session the home holds already")
}

func (c *voyageImportCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) != 1 {
		return usageErrorf(a.cmd, "voyage import: one FILE expected (a voyage exported with --format jsonl, or - for standard input), got %d arguments", len(args))
	}
	if c.from != "" {
		return c.importSession(ctx, a, args[0])
	}
	if c.subagents != "" || c.again {
		return usageErrorf(a.cmd, "voyage import: --subagents and --again go with --from HOST")
	}
	opts := &helm.ImportOptions{}
	for _, w := range c.witnesses {
		head, err := chain.Parse(w)
		if err != nil {
			return &usageError{Err: fmt.Errorf("voyage import: --witness: %w", err), Hint: "give a head exactly as helm voyage head prints it: SEQ:HEX"}
		}
		opts.Witnesses = append(opts.Witnesses, head)
	}
	h, err := a.openHome()
	if err != nil {
		return err
	}
	var r io.Reader = a.stdin
	if args[0] != "-" {
		f, err := os.Open(a.abs(args[0]))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
				return &usageError{Err: fmt.Errorf("voyage import: %w", err), Hint: "helm voyage export VOYAGE -o FILE writes one, in the home that holds the voyage"}
			}
			return err
		}
		defer f.Close()
		if info, err := f.Stat(); err == nil && info.IsDir() {
			return &usageError{Err: fmt.Errorf("voyage import: %s is a directory, not an exported voyage", printable(args[0])), Hint: "helm voyage export VOYAGE -o FILE writes one"}
		}
		r = f
	}
	hdr := &headerTap{r: r}
	v, err := h.Import(ctx, hdr, opts)
	if err != nil {
		if helm.HintOf(err).Kind == hint.OtherHome {
			var ve *helm.VoyageError
			if h.StoreName() != "" {
				// A store's voyage is not removed; a copy is brought up to date.
				return &hinted{Err: err, Hint: "push the voyage from the home it was exported from (helm voyage push VOYAGE --to STORE): that brings the store's copy up to date; or import it into another home"}
			}
			where := "the voyage's directory in " + h.Dir()
			if errors.As(err, &ve) && ve.Voyage != "" {
				if held, oerr := h.Voyage(ctx, ve.Voyage); oerr == nil {
					where = held.Storage().Dir
					held.Close()
				}
			}
			return &hinted{Err: err, Hint: fmt.Sprintf("helm --home OTHER-HOME voyage import %s, or remove %s first", args[0], where)}
		}
		// The library names the archive's line; the file is the caller's.
		name := "standard input"
		if args[0] != "-" {
			name = printable(args[0])
		}
		return fmt.Errorf("archive %s: %w", name, err)
	}
	a.voyages = append(a.voyages, v)
	archived := hdr.head()
	if archived == nil {
		fmt.Fprintln(a.stderr, "helm: note: the archive carried no chain (written by an older helm): nothing proved it is the voyage as exported")
	}
	head, herr := v.Head(ctx)
	switch {
	case herr != nil:
		fmt.Fprintf(a.stderr, "helm: voyage import: voyage %s has no head to print: %s\n", short(v.ID()), printable(herr.Error()))
	case archived != nil && head != *archived:
		// This home stores some record otherwise than the archive did
		// (its redaction hides more, or its store names artifacts
		// otherwise): the voyage is the same story, not the same chain.
		fmt.Fprintf(a.stderr, "helm: note: the archive's head is %s; this home holds the voyage at head %s: it stores some record otherwise (docs/export.md), so a witness of the exported voyage does not hold for this copy\n", archived, head)
	}
	if a.g.json {
		out := completedJSON{VoyageInfo: v.Info()}
		if herr == nil {
			out.Head = &head
		}
		return writeJSON(a.stdout, out)
	}
	var b strings.Builder
	fmt.Fprintln(&b, v.ID())
	if herr == nil {
		fmt.Fprintf(&b, "Head: %s\n", head)
	}
	_, err = fmt.Fprint(a.stdout, b.String())
	return err
}

// headerTap keeps the first line of what is read through it: the
// archive's header, which says whether it carries a chain.
type headerTap struct {
	r    io.Reader
	line []byte
	done bool
}

func (t *headerTap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if !t.done {
		b := p[:n]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b, t.done = b[:i], true
		}
		t.line = append(t.line, b...)
		if len(t.line) > 4096 {
			t.done = true
		}
	}
	return n, err
}

// head returns the head the header read holds (nil: the archive carries
// no chain).
func (t *headerTap) head() *chain.Head {
	var hdr struct {
		Head *chain.Head `json:"head"`
	}
	if json.Unmarshal(t.line, &hdr) != nil {
		return nil
	}
	return hdr.Head
}
