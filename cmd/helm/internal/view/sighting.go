package view

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/exit"
	"github.com/helmlog/helm/internal/safetext"
	"github.com/helmlog/helm/internal/utf8x"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/sighting"
)

// Sightings as both show them: found by a mark's key or an artifact's
// hash, checked against their address, decoded for a person to read or
// copied as stored. A sighting is read as a stream, whatever its size.

// FindSighting finds the sighting key names: a mark key, as slate list
// gives it, or an artifact hash, or a prefix of either.
func FindSighting(ctx context.Context, v *helm.Voyage, key string) (helm.ArtifactInfo, error) {
	hash := key
	h, ok, err := keyToArtifact(ctx, v, key)
	if err != nil {
		return helm.ArtifactInfo{}, err
	}
	if ok {
		hash = h
	}
	return FindArtifactInfo(ctx, v, hash)
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
	sk, err := sighting.Skim(func() (io.ReadCloser, error) { return v.OpenArtifact(ctx, hash) }, &sighting.SkimOptions{Members: streamedMembers})
	switch {
	case err == nil:
		return sk, nil
	case errors.As(err, new(*helm.VoyageError)):
		return nil, err
	case errors.Is(err, sighting.ErrTooLarge):
		return nil, &exit.Hinted{Err: fmt.Errorf("artifact %s of voyage %s: %w", hash, v.ID(), err),
			Hint: "helm sighting show " + Short(hash) + " --json, which streams it as stored", Tool: "call sighting_show with format json, a page at a time"}
	}
	return nil, fmt.Errorf("artifact %s of voyage %s: %w", hash, v.ID(), err)
}

// CopySighting writes the JSON stored under hash to w as it is stored,
// once it has been read to its end and checked against its address.
func CopySighting(ctx context.Context, w io.Writer, v *helm.Voyage, hash string) error {
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

// WriteSightingText writes the sighting info names for people: decoded,
// or what became of its bytes.
func WriteSightingText(ctx context.Context, w io.Writer, v *helm.Voyage, info helm.ArtifactInfo) error {
	if info.Status != logbook.ArtifactStowed {
		_, err := fmt.Fprintf(w, "%s (artifact %s)\n", GoneText(info), Short(info.Hash))
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
	if _, err := fmt.Fprintf(w, "Sighting %s of %s (artifact %s, %s)\n", sk.Sighting.Kind(), safetext.Line(OrDash(labels[info.Hash])), Short(info.Hash), Size(info.Size)); err != nil {
		return err
	}
	return renderSighting(w, sk, "  ")
}

// GoneText describes an artifact whose bytes are not read any more.
// When info says who jettisoned or reduced it (helm.Voyage.ArtifactInfo
// does), so does the text.
func GoneText(info helm.ArtifactInfo) string {
	by := ""
	if w := info.CuratedBy; w != nil {
		by = safetext.Line(fmt.Sprintf(" by %s (role %s, method %s) at %s", w.Identity, OrDash(w.Role), OrDash(w.Method), Stamp(info.CuratedAt)))
	}
	switch info.Status {
	case logbook.ArtifactJettisoned:
		return "jettisoned" + by + ": " + safetext.Line(OrDash(info.Reason))
	case logbook.ArtifactReduced:
		return "reduced to artifact " + Short(info.ReducedTo) + by + " (helm sighting show " + Short(info.ReducedTo) + ")"
	}
	return string(info.Status)
}

func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// observationLabels maps each artifact hash to the label of an
// observation that recorded it (the slate's first, then the logbook's).
func observationLabels(ctx context.Context, v *helm.Voyage) (map[string]string, error) {
	out := map[string]string{}
	add := func(o logbook.ObservationRecord) {
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
			out[a.Hash] = "summary of " + Short(a.DerivedFrom) + " (" + a.Method + ")"
		}
	}
	return out, nil
}

// eachObservation calls fn with each observation the logbook's bearings
// sealed, in order.
func eachObservation(ctx context.Context, v *helm.Voyage, fn func(logbook.ObservationRecord)) error {
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
	look := func(o logbook.ObservationRecord) {
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

// FindArtifactInfo finds the artifact hash names (a prefix of at least 4
// hex digits will do).
func FindArtifactInfo(ctx context.Context, v *helm.Voyage, hash string) (helm.ArtifactInfo, error) {
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
		return helm.ArtifactInfo{}, &exit.Hinted{
			Err:  fmt.Errorf("%w: no observation key or artifact hash of voyage %s starts with %q", helm.ErrNoArtifact, v.ID(), hash),
			Hint: "helm artifact list, or helm slate list, for the hashes and keys", Tool: "call artifact_list, or slate_list, for the hashes and keys"}
	}
	var names []string
	for _, a := range match {
		names = append(names, Short(a.Hash))
	}
	return helm.ArtifactInfo{}, &exit.UsageError{Err: fmt.Errorf("%w: %q matches %d artifacts (%s); give more of the hash", helm.ErrAmbiguous, hash, len(match), strings.Join(names, ", ")), Hint: "helm artifact list", Tool: "call artifact_list"}
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
				text(f.Path+" ("+Size(int64(c.SizeBytes))+")", c.Text)
			case sighting.ContentBinary:
				line("%s: binary, %s", safetext.Line(f.Path), Size(int64(c.SizeBytes)))
			default:
				line("%s: could not be read: %s", safetext.Line(f.Path), safetext.Line(c.Error))
			}
			if c.Truncated {
				line("  (truncated)")
			}
		}
	}
	tree := func(listings []sighting.DirectoryListing) {
		for _, l := range listings {
			if l.Error != "" {
				line("%s/ could not be listed: %s", safetext.Line(l.Path), safetext.Line(l.Error))
				continue
			}
			line("%s/", safetext.Line(l.Path))
			for _, e := range l.Entries {
				switch {
				case e.IsDir:
					line("  %s/", safetext.Line(e.Name))
				case e.Symlink != "":
					line("  %s -> %s", safetext.Line(e.Name), safetext.Line(e.Symlink))
				case e.SizeBytes != nil:
					line("  %s (%s)", safetext.Line(e.Name), Size(int64(*e.SizeBytes)))
				default:
					line("  %s", safetext.Line(e.Name))
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
			line("module %s (%s, go %s, %d requirements)", safetext.Line(m.Module), safetext.Line(m.File), safetext.Line(OrDash(m.Go)), len(m.Requires))
		}
		line("%s", Plural(len(s.Packages), "package"))
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
		line("failed: %s", safetext.Line(f.String()))
	}
}

// json writes a sighting's fields one a line, nested ones indented,
// long texts as blocks: the form for web and GitHub answers.
func (r *sightingRenderer) json(indent string) {
	var m map[string]any
	if err := json.Unmarshal(r.sk.Doc, &m); err != nil {
		r.printf("%s%s\n", indent, safetext.Line(string(r.sk.Doc)))
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
				r.printf("%s%s:\n", indent, safetext.Line(k))
				r.value(x, indent+"  ")
			case string:
				switch {
				case r.sk.HasNewline(x):
					r.printf("%s%s:\n", indent, safetext.Line(k))
					r.lines(indent+"  │ ", x)
				case r.sk.IsLong(x): // one line, streamed
					r.lines(indent+safetext.Line(k)+": ", x)
				default:
					r.printf("%s%s: %s\n", indent, safetext.Line(k), safetext.Line(x))
				}
			default:
				r.printf("%s%s: %v\n", indent, safetext.Line(k), x)
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
				r.printf("%s- %s\n", indent, safetext.Line(x))
			default:
				r.printf("%s- %s\n", indent, safetext.Line(fmt.Sprint(x)))
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
			l.out = append(l.out, safetext.Line(string(p))...)
			break
		}
		l.out = append(append(l.out, safetext.Line(string(p[:i]))...), '\n')
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
		l.out = append(l.out, safetext.Line(string(l.carry))...)
		l.carry = nil
	}
	if l.open {
		l.out = append(l.out, '\n')
		l.open = false
	}
	_, err := l.w.Write(l.out)
	return err
}
