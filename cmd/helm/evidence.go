package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/internal/utf8x"
	"github.com/helmlog/helm/sighting"
)

// The evidence behind a voyage: its sightings shown, its artifacts listed,
// jettisoned and reduced (sighting show, artifact list|jettison|reduce).

func newSightingCmd(a *app) *cobra.Command {
	c := group(a, &cobra.Command{
		Use:     "sighting show ...",
		Short:   "show what an observation saw",
		Example: "  helm sighting show 'context:the user wants a fix'\n  helm sighting show 9f2c41d0 --json",
	})
	c.AddCommand(leafCmd(a, &cobra.Command{
		Use:   "show KEY|HASH",
		Short: "print a sighting, decoded and checked against its address",
		Long: `Print the sighting an observation recorded: the mark's key (as slate list
and voyage show --json name it) or its artifact's hash, or a prefix of
either. File contents print as text, directory trees as trees, a command
with its exit status and output, web and GitHub answers field by field.
The bytes are checked against their BLAKE3 address first. --json prints
the sighting's JSON.`,
		Example: "  helm sighting show 9f2c41d0\n  helm sighting show 'rust-project:\"/work/widget\"' --json",
	}, &sightingShowCommand{}))
	return c
}

type sightingShowCommand struct{}

func (*sightingShowCommand) Flags(*pflag.FlagSet) {}

func (*sightingShowCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) != 1 {
		return usageErrorf(a.cmd, "sighting show: one KEY or HASH expected, got %d arguments", len(args))
	}
	v, err := a.openVoyage(ctx)
	if err != nil {
		return err
	}
	info, err := findSighting(ctx, v, args[0])
	if err != nil {
		return err
	}
	if a.g.json && info.Status != helm.ArtifactStowed {
		return writeJSON(a.stdout, info)
	}
	if a.g.json {
		if err := copySighting(ctx, a.stdout, v, info.Hash); err != nil {
			return err
		}
		_, err := io.WriteString(a.stdout, "\n")
		return err
	}
	return writeSightingText(ctx, a.stdout, v, info)
}

// findSighting finds the sighting key names: a mark key, as slate list
// gives it, or an artifact hash, or a prefix of either.
func findSighting(ctx context.Context, v *helm.Voyage, key string) (helm.ArtifactInfo, error) {
	hash := key
	h, ok, err := keyToArtifact(ctx, v, key)
	if err != nil {
		return helm.ArtifactInfo{}, err
	}
	if ok {
		hash = h
	}
	return findArtifactInfo(ctx, v, hash)
}

// A sighting is read as a stream, whatever its size: its bytes are read
// to their end and checked against their address first, then decoded
// with its long texts left in the store (sighting.Skim), which are
// streamed to the output a buffer at a time. Reading a sighting of a
// gigabyte costs a few buffers, as writing it does.

// streamedMembers name the texts of a sighting that are streamed when
// long: a file's, a program's output, a description, GitHub's bodies,
// diffs and patches. The rest (paths, names, errors) are decoded.
var streamedMembers = []string{"text", "stdout", "stderr", "description", "body", "diff", "patch"}

// skimSighting reads the sighting stored under hash, checked against its
// address, and decodes it with its long texts left in the store. The
// caller closes it.
func skimSighting(ctx context.Context, v *helm.Voyage, hash string) (*sighting.Skimmed, error) {
	sk, err := sighting.Skim(func() (io.ReadCloser, error) { return v.OpenArtifact(ctx, hash) }, sighting.SkimOptions{Members: streamedMembers})
	switch {
	case err == nil:
		return sk, nil
	case errors.As(err, new(*helm.VoyageError)):
		return nil, err
	case errors.Is(err, sighting.ErrTooLarge):
		return nil, &hinted{Err: fmt.Errorf("artifact %s of voyage %s: %w", hash, v.ID(), err),
			Hint: "helm sighting show " + short(hash) + " --json, which streams it as stored", Tool: "call sighting_show with format json, a page at a time"}
	}
	return nil, fmt.Errorf("artifact %s of voyage %s: %w", hash, v.ID(), err)
}

// copySighting writes the JSON stored under hash to w as it is stored,
// once it has been read to its end and checked against its address.
func copySighting(ctx context.Context, w io.Writer, v *helm.Voyage, hash string) error {
	for _, out := range []io.Writer{io.Discard, w} {
		r, err := v.OpenArtifact(ctx, hash)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, r)
		r.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// writeSightingText writes the sighting info names for people: decoded,
// or what became of its bytes.
func writeSightingText(ctx context.Context, w io.Writer, v *helm.Voyage, info helm.ArtifactInfo) error {
	if info.Status != helm.ArtifactStowed {
		_, err := fmt.Fprintf(w, "%s (artifact %s)\n", goneText(info), short(info.Hash))
		return err
	}
	sk, err := skimSighting(ctx, v, info.Hash)
	if err != nil {
		return err
	}
	defer sk.Close()
	labels, err := observationLabels(ctx, v)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "Sighting %s of %s (artifact %s, %s)\n", sk.Sighting.Kind(), printable(orDash(labels[info.Hash])), short(info.Hash), size(info.Size)); err != nil {
		return err
	}
	return renderSighting(w, sk, "  ")
}

// goneText describes an artifact whose bytes are not read any more.
func goneText(info helm.ArtifactInfo) string {
	switch info.Status {
	case helm.ArtifactJettisoned:
		return "jettisoned: " + printable(orDash(info.Reason))
	case helm.ArtifactReduced:
		return "reduced to artifact " + short(info.ReducedTo) + " (helm sighting show " + short(info.ReducedTo) + ")"
	}
	return string(info.Status)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// observationLabels maps each artifact hash to the label of an
// observation that recorded it (the slate's first, then the logbook's).
func observationLabels(ctx context.Context, v *helm.Voyage) (map[string]string, error) {
	out := map[string]string{}
	add := func(o helm.ObservationRecord) {
		if _, ok := out[o.Artifact]; !ok {
			out[o.Artifact] = o.Label
		}
	}
	for _, o := range v.Slate() {
		add(o)
	}
	if err := eachObservation(ctx, v, add); err != nil {
		return nil, err
	}
	for a, err := range v.Artifacts(ctx, nil) {
		if err != nil {
			return nil, err
		}
		if a.DerivedFrom != "" {
			out[a.Hash] = "summary of " + short(a.DerivedFrom) + " (" + a.Method + ")"
		}
	}
	return out, nil
}

// eachObservation calls fn with each observation the logbook's bearings
// sealed, in order.
func eachObservation(ctx context.Context, v *helm.Voyage, fn func(helm.ObservationRecord)) error {
	for e, err := range v.Entries(ctx, nil) {
		if err != nil {
			return err
		}
		if e.Bearing != nil {
			for _, o := range e.Bearing.Observations {
				fn(o)
			}
		}
	}
	return nil
}

// keyToArtifact finds the artifact of the observation whose mark key is
// key, or starts with it (unambiguously), on the slate or in the logbook.
func keyToArtifact(ctx context.Context, v *helm.Voyage, key string) (string, bool, error) {
	found := map[string]string{} // key -> artifact; the newest observation wins
	look := func(o helm.ObservationRecord) {
		if strings.HasPrefix(o.Key, key) {
			found[o.Key] = o.Artifact
		}
	}
	if err := eachObservation(ctx, v, look); err != nil {
		return "", false, err
	}
	for _, o := range v.Slate() {
		look(o)
	}
	if h, ok := found[key]; ok {
		return h, true, nil
	}
	if len(found) == 1 {
		for _, h := range found {
			return h, true, nil
		}
	}
	return "", false, nil
}

// findArtifactInfo finds the artifact hash names (a prefix of at least 4
// hex digits will do).
func findArtifactInfo(ctx context.Context, v *helm.Voyage, hash string) (helm.ArtifactInfo, error) {
	if a, err := v.ArtifactInfo(ctx, hash); err == nil && a.Hash == hash {
		return a, nil // a full hash: found at once
	}
	var match []helm.ArtifactInfo
	for a, err := range v.Artifacts(ctx, nil) {
		if err != nil {
			return helm.ArtifactInfo{}, err
		}
		if a.Hash == hash {
			return a, nil
		}
		if len(hash) >= 4 && strings.HasPrefix(a.Hash, hash) {
			match = append(match, a)
		}
	}
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
		return helm.ArtifactInfo{}, &hinted{
			Err:  fmt.Errorf("%w: no observation key or artifact hash of voyage %s starts with %q", helm.ErrNoArtifact, v.ID(), hash),
			Hint: "helm artifact list, or helm slate list, for the hashes and keys", Tool: "call artifact_list, or slate_list, for the hashes and keys"}
	}
	var names []string
	for _, a := range match {
		names = append(names, short(a.Hash))
	}
	return helm.ArtifactInfo{}, &usageError{Err: fmt.Errorf("%w: %q matches %d artifacts (%s); give more of the hash", helm.ErrAmbiguous, hash, len(match), strings.Join(names, ", ")), Hint: "helm artifact list", Tool: "call artifact_list"}
}

// renderSighting writes a skimmed sighting for a person to read, each
// line indented; its long texts are streamed from the store.
func renderSighting(w io.Writer, sk *sighting.Skimmed, indent string) error {
	r := &sightingRenderer{w: w, sk: sk}
	r.sighting(indent)
	return r.err
}

// sightingRenderer writes a sighting, keeping the first error.
type sightingRenderer struct {
	w   io.Writer
	sk  *sighting.Skimmed
	err error
}

func (r *sightingRenderer) printf(format string, args ...any) {
	if r.err == nil {
		_, r.err = fmt.Fprintf(r.w, format, args...)
	}
}

// lines writes text t (a string of the sighting, or a long one's
// stand-in) a line at a time, each after prefix, made printable: as
// strings.Split(strings.TrimSuffix(t, "\n"), "\n") would give them.
func (r *sightingRenderer) lines(prefix, t string) {
	if r.err != nil {
		return
	}
	src, err := r.sk.Text(t)
	if err != nil {
		r.err = err
		return
	}
	lw := &lineWriter{w: r.w, prefix: prefix}
	if _, err := io.Copy(lw, src); err != nil {
		r.err = err
		return
	}
	r.err = lw.close()
}

func (r *sightingRenderer) sighting(indent string) {
	line := func(format string, args ...any) { r.printf(indent+format+"\n", args...) }
	text := func(label, t string) {
		if t == "" {
			line("%s: (empty)", label)
			return
		}
		line("%s:", label)
		r.lines(indent+"  │ ", t)
	}
	files := func(contents []sighting.FileContents) {
		for _, f := range contents {
			c := f.Content
			switch c.Type {
			case sighting.ContentText:
				text(f.Path+" ("+size(int64(c.SizeBytes))+")", c.Text)
			case sighting.ContentBinary:
				line("%s: binary, %s", printable(f.Path), size(int64(c.SizeBytes)))
			default:
				line("%s: could not be read: %s", printable(f.Path), printable(c.Error))
			}
			if c.Truncated {
				line("  (truncated)")
			}
		}
	}
	tree := func(listings []sighting.DirectoryListing) {
		for _, l := range listings {
			if l.Error != "" {
				line("%s/ could not be listed: %s", printable(l.Path), printable(l.Error))
				continue
			}
			line("%s/", printable(l.Path))
			for _, e := range l.Entries {
				switch {
				case e.IsDir:
					line("  %s/", printable(e.Name))
				case e.Symlink != "":
					line("  %s -> %s", printable(e.Name), printable(e.Symlink))
				case e.SizeBytes != nil:
					line("  %s (%s)", printable(e.Name), size(int64(*e.SizeBytes)))
				default:
					line("  %s", printable(e.Name))
				}
			}
		}
	}
	switch s := r.sk.Sighting.(type) {
	case *sighting.Context:
		text("Description", s.Description)
	case *sighting.Files:
		files(s.Contents)
	case *sighting.DirectoryTree:
		tree(s.Listings)
	case *sighting.RustProject:
		tree(s.Listings)
		files(s.Contents)
	case *sighting.GoProject:
		tree(s.Listings)
		files(s.Contents)
		for _, m := range s.Modules {
			line("module %s (%s, go %s, %d requirements)", printable(m.Module), printable(m.File), printable(orDash(m.Go)), len(m.Requires))
		}
		line("%s", plural(len(s.Packages), "package"))
	case *sighting.Command:
		status := "did not exit by itself"
		if s.ExitCode != nil {
			status = fmt.Sprintf("exit status %d", *s.ExitCode)
		}
		line("%s, after %dms", status, s.DurationMS)
		text("stdout", s.Stdout)
		text("stderr", s.Stderr)
	default:
		r.json(indent)
	}
	for _, f := range sighting.Failures(r.sk.Sighting) {
		line("failed: %s", printable(f.String()))
	}
}

// json writes a sighting's fields one a line, nested ones indented,
// long texts as blocks: the form for web and GitHub answers.
func (r *sightingRenderer) json(indent string) {
	var m map[string]any
	if err := json.Unmarshal(r.sk.Doc, &m); err != nil {
		r.printf("%s%s\n", indent, printable(string(r.sk.Doc)))
		return
	}
	delete(m, "kind")
	r.value(m, indent)
}

func (r *sightingRenderer) value(v any, indent string) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			switch x := v[k].(type) {
			case map[string]any, []any:
				r.printf("%s%s:\n", indent, printable(k))
				r.value(x, indent+"  ")
			case string:
				switch {
				case r.sk.HasNewline(x):
					r.printf("%s%s:\n", indent, printable(k))
					r.lines(indent+"  │ ", x)
				case r.sk.IsLong(x): // one line, streamed
					r.lines(indent+printable(k)+": ", x)
				default:
					r.printf("%s%s: %s\n", indent, printable(k), printable(x))
				}
			default:
				r.printf("%s%s: %v\n", indent, printable(k), x)
			}
		}
	case []any:
		for i, x := range v {
			switch x := x.(type) {
			case map[string]any, []any:
				r.printf("%s- [%d]\n", indent, i)
				r.value(x, indent+"  ")
			case string:
				if r.sk.IsLong(x) {
					r.lines(indent+"- ", x) // printable: one line, escaped
					continue
				}
				r.printf("%s- %s\n", indent, printable(x))
			default:
				r.printf("%s- %s\n", indent, printable(fmt.Sprint(x)))
			}
		}
	}
}

// lineWriter writes text a line at a time, each after prefix and made
// printable, as it comes: a line of any length costs a buffer. A line
// feed at the text's very end ends its last line and opens no other.
type lineWriter struct {
	w      io.Writer
	prefix string
	open   bool   // a line has been begun
	carry  []byte // the start of a rune split across writes
	out    []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	p, l.carry = utf8x.Whole(l.carry, p)
	l.out = l.out[:0]
	for len(p) > 0 {
		if !l.open {
			l.out = append(l.out, l.prefix...)
			l.open = true
		}
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.out = append(l.out, printable(string(p))...)
			break
		}
		l.out = append(append(l.out, printable(string(p[:i]))...), '\n')
		l.open = false
		p = p[i+1:]
	}
	if _, err := l.w.Write(l.out); err != nil {
		return 0, err
	}
	return n, nil
}

// close ends the last line, if it is open (a rune left incomplete at the
// text's end is written as it is, made printable).
func (l *lineWriter) close() error {
	l.out = l.out[:0]
	if len(l.carry) > 0 {
		if !l.open {
			l.out = append(l.out, l.prefix...)
			l.open = true
		}
		l.out = append(l.out, printable(string(l.carry))...)
		l.carry = nil
	}
	if l.open {
		l.out = append(l.out, '\n')
		l.open = false
	}
	_, err := l.w.Write(l.out)
	return err
}

func newArtifactCmd(a *app) *cobra.Command {
	c := group(a, &cobra.Command{
		Use:   "artifact list|jettison|reduce ...",
		Short: "list, jettison and reduce the evidence stored for a voyage",
		Long: `A voyage stores each sighting once, as an artifact addressed by its BLAKE3
hash. An artifact is stowed (its bytes are read), reduced (a summary stands
in for it) or jettisoned (its bytes are no longer read; helm voyage compact
reclaims their space). Who did it, when and why is recorded.`,
		Example: "  helm artifact list\n  helm artifact jettison 9f2c41d0 --reason \"holds a customer's data\"\n  helm voyage compact",
	})
	c.AddCommand(
		leafCmd(a, &cobra.Command{
			Use:     "list",
			Short:   "list the voyage's artifacts: hash, kind, mark, sizes, where, state",
			Example: "  helm artifact list --json",
		}, &artifactListCommand{}),
		leafCmd(a, &cobra.Command{
			Use:     "jettison HASH --reason TEXT",
			Short:   "discard an artifact's bytes, saying why (voyage compact reclaims them)",
			Example: "  helm artifact jettison 9f2c41d0 --reason \"holds a customer's data\"",
		}, &artifactJettisonCommand{}),
		leafCmd(a, &cobra.Command{
			Use:     "reduce HASH --method METHOD --summary TEXT",
			Short:   "replace an artifact with a summary, saying how it was made",
			Example: "  helm artifact reduce 9f2c41d0 --method human --summary \"build log: 3 warnings, no errors\"",
		}, &artifactReduceCommand{}),
	)
	return c
}

type artifactListCommand struct{}

func (*artifactListCommand) Flags(*pflag.FlagSet) {}

// artifactRow is one artifact in `artifact list --json`.
type artifactRow struct {
	helm.ArtifactInfo
	Kind  string `json:"kind,omitempty"`
	Mark  string `json:"mark,omitempty"`
	Where string `json:"where"`
}

func (*artifactListCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 0 {
		return usageErrorf(a.cmd, "artifact list takes no arguments (choose the voyage with --voyage ID)")
	}
	v, err := a.openVoyage(ctx)
	if err != nil {
		return err
	}
	infos, err := collect(v.Artifacts(ctx, nil))
	if err != nil {
		return err
	}
	rows, err := artifactRows(ctx, v, infos)
	if err != nil {
		return err
	}
	if a.g.json {
		return writeJSON(a.stdout, rows)
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintf(a.stdout, "Voyage %s stores no artifacts.\n", short(v.ID()))
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s  %-14s  %9s  %9s  %-4s  %-40s  %s\n", "HASH", "KIND", "SIZE", "STORED", "IN", "MARK", "STATE")
	for _, r := range rows {
		state := string(r.Status)
		switch r.Status {
		case helm.ArtifactJettisoned:
			state += ": " + orDash(r.Reason)
		case helm.ArtifactReduced:
			state += " to " + short(r.ReducedTo)
		}
		fmt.Fprintf(&b, "%-8s  %-14s  %9s  %9s  %-4s  %-40s  %s\n", short(r.Hash), orDash(r.Kind), size(r.Size), size(r.StoredSize), r.Where, printable(orDash(r.Mark)), printable(state))
	}
	_, err = io.WriteString(a.stdout, b.String())
	return err
}

// artifactRows describes infos, artifacts of v, as artifact list does.
func artifactRows(ctx context.Context, v *helm.Voyage, infos []helm.ArtifactInfo) ([]artifactRow, error) {
	labels, err := observationLabels(ctx, v)
	if err != nil {
		return nil, err
	}
	kinds, err := observationKinds(ctx, v)
	if err != nil {
		return nil, err
	}
	rows := []artifactRow{}
	for _, info := range infos {
		where := "pack"
		if info.Blob != 0 {
			where = "log"
		}
		rows = append(rows, artifactRow{ArtifactInfo: info, Kind: kinds[info.Hash], Mark: labels[info.Hash], Where: where})
	}
	return rows, nil
}

// collect gathers what seq yields, up to its first error.
func collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var out []T
	for x, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, x)
	}
	return out, nil
}

// observationKinds maps each artifact hash to the kind of the mark that
// recorded it.
func observationKinds(ctx context.Context, v *helm.Voyage) (map[string]string, error) {
	out := map[string]string{}
	add := func(o helm.ObservationRecord) {
		var m struct {
			Kind string `json:"kind"`
		}
		if json.Unmarshal(o.Mark, &m) == nil && m.Kind != "" {
			out[o.Artifact] = m.Kind
		}
	}
	if err := eachObservation(ctx, v, add); err != nil {
		return nil, err
	}
	for _, o := range v.Slate() {
		add(o)
	}
	for a, err := range v.Artifacts(ctx, nil) {
		if err != nil {
			return nil, err
		}
		if a.DerivedFrom != "" {
			out[a.Hash] = "summary"
		}
	}
	return out, nil
}

type artifactJettisonCommand struct{ reason string }

func (c *artifactJettisonCommand) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.reason, "reason", "", "why the artifact is discarded, `TEXT` (recorded)")
}

func (c *artifactJettisonCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) != 1 {
		return usageErrorf(a.cmd, "artifact jettison: one HASH expected, got %d arguments", len(args))
	}
	if strings.TrimSpace(c.reason) == "" {
		return usageErrorf(a.cmd, "artifact jettison: --reason TEXT is required: say why the artifact is discarded")
	}
	v, who, err := a.activeVoyage(ctx, false)
	if err != nil {
		return err
	}
	info, err := findArtifactInfo(ctx, v, args[0])
	if err != nil {
		return err
	}
	if err := v.Jettison(ctx, info.Hash, c.reason, who); err != nil {
		return err
	}
	_, err = fmt.Fprintf(a.stdout, "Artifact %s jettisoned from voyage %s (%s stored; helm voyage compact reclaims it)\n", short(info.Hash), short(v.ID()), size(info.StoredSize))
	return err
}

type artifactReduceCommand struct{ method, summary string }

func (c *artifactReduceCommand) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.method, "method", "", "how the summary was made, `METHOD`: human, a model name")
	fs.StringVar(&c.summary, "summary", "", "the summary, `TEXT`, that stands in for the artifact")
}

func (c *artifactReduceCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) != 1 {
		return usageErrorf(a.cmd, "artifact reduce: one HASH expected, got %d arguments", len(args))
	}
	if strings.TrimSpace(c.method) == "" || strings.TrimSpace(c.summary) == "" {
		return usageErrorf(a.cmd, "artifact reduce: --method METHOD and --summary TEXT are required")
	}
	v, who, err := a.activeVoyage(ctx, false)
	if err != nil {
		return err
	}
	info, err := findArtifactInfo(ctx, v, args[0])
	if err != nil {
		return err
	}
	sum, err := v.Reduce(ctx, info.Hash, helm.Reduction{Summary: &sighting.Context{Description: c.summary}, Method: c.method}, who)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(a.stdout, "Artifact %s reduced to %s in voyage %s\n", short(info.Hash), short(sum), short(v.ID()))
	return err
}
