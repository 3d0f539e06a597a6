package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/sighting"
)

// Sightings rendered as `sighting show` prints them: file contents as
// text (highlighted), directory trees as trees, a command with its exit
// status, duration and output, other answers (web, GitHub) field by
// field; and the raw sighting JSON as text/plain.

const (
	// inlineMax is the largest sighting (its JSON) shown inside a page
	// that lists several; a larger one is shown on its own page.
	inlineMax = 512 << 10
	// pageSightingBudget is how many bytes of sightings one voyage page
	// shows inline in all; the others link to their own page.
	pageSightingBudget = 8 << 20
	// pageMax is the largest sighting shown on its own page; a larger
	// one is only served raw.
	pageMax = 16 << 20
)

// budget counts what a page may still show inline.
type budget struct{ left int64 }

func (b *budget) take(n int64) bool {
	if n > b.left {
		return false
	}
	b.left -= n
	return true
}

// obsView is one observation: its mark, when and by whom, and its
// sighting when it is shown inline.
type obsView struct {
	DOM        string
	Voyage     string
	Label      string
	Key        string
	MarkKind   string
	Hash       string
	ObservedAt time.Time
	ObservedBy logbook.Who
	Size       int64
	Gone       string // why the bytes are no longer read (jettisoned, reduced)
	Error      string // why the sighting could not be read
	Elsewhere  bool   // too large to show here: on its own page
	Sighting   *sightingView
}

// sightingView is a decoded sighting, ready for the templates.
type sightingView struct {
	Kind        string
	Description string
	HasText     bool
	Files       []fileView
	Trees       []*treeNode
	Command     *commandView
	Modules     []string
	Packages    int
	Fields      []field
	Failures    []string
}

type fileView struct {
	Path      string
	Size      uint64
	Type      sighting.ContentType
	Code      template.HTML // highlighted text
	Plain     string        // text too long to highlight
	Error     string
	Truncated bool
}

type treeNode struct {
	Name     string
	Dir      bool
	Symlink  string
	HasSize  bool
	Size     uint64
	Error    string
	Children []*treeNode
}

type commandView struct {
	Exited          bool
	ExitCode        int
	Failed          bool
	DurationMS      int64
	TimedOut        bool
	Signal          string
	Error           string
	Dir             string
	Stdout, Stderr  string
	StdoutTruncated int64
	StderrTruncated int64
}

// field is one field of a sighting rendered generically: a value, a
// block of text, or nested fields.
type field struct {
	Key      string
	Value    string
	Block    bool
	Children []field
}

// observation renders one observation record; its sighting is read and
// shown inline when it is small enough and the page's budget allows.
func (s *Server) observation(ctx context.Context, v *helm.Voyage, o logbook.ObservationRecord, dom string, b *budget) obsView {
	ov := obsView{DOM: dom + "-" + short(o.Artifact), Voyage: v.ID(), Label: o.Label, Key: o.Key, Hash: o.Artifact,
		ObservedAt: o.ObservedAt, ObservedBy: o.ObservedBy}
	var m struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal(o.Mark, &m) == nil {
		ov.MarkKind = m.Kind
	}
	info, err := v.ArtifactInfo(ctx, o.Artifact)
	if err != nil {
		ov.Error = err.Error()
		return ov
	}
	ov.Size = info.Size
	if gone := goneText(info); gone != "" {
		ov.Gone = gone
		return ov
	}
	if info.Size > inlineMax || !b.take(info.Size) {
		ov.Elsewhere = true
		return ov
	}
	sv, err := s.readSighting(ctx, v, info.Hash)
	if err != nil {
		ov.Error = err.Error()
		return ov
	}
	ov.Sighting = sv
	return ov
}

// goneText says why an artifact's bytes are no longer read, "" if they are.
func goneText(info helm.ArtifactInfo) string {
	by := ""
	if info.CuratedBy != nil {
		by = " by " + info.CuratedBy.Identity + " (method " + info.CuratedBy.Method + ") at " + info.CuratedAt.UTC().Format(time.RFC3339)
	}
	switch info.Status {
	case logbook.ArtifactJettisoned:
		return "jettisoned" + by + ": " + info.Reason
	case logbook.ArtifactReduced:
		return "reduced to a summary (artifact " + short(info.ReducedTo) + ")" + by
	case logbook.ArtifactStowed:
		return ""
	}
	return string(info.Status)
}

// readSighting reads, checks and decodes the sighting stored under hash.
func (s *Server) readSighting(ctx context.Context, v *helm.Voyage, hash string) (*sightingView, error) {
	rc, err := v.OpenArtifact(ctx, hash)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, err
	}
	sg, err := sighting.Unmarshal(data)
	if err != nil {
		return nil, fmt.Errorf("artifact %s of voyage %s: %w", hash, v.ID(), err)
	}
	return renderSighting(sg, data), nil
}

// renderSighting turns a sighting into its view, as `sighting show`
// prints it.
func renderSighting(sg sighting.Sighting, data []byte) *sightingView {
	sv := &sightingView{Kind: sg.Kind()}
	switch x := sg.(type) {
	case *sighting.Context:
		sv.Description, sv.HasText = x.Description, true
	case *sighting.Files:
		sv.Files = files(x.Contents)
	case *sighting.DirectoryTree:
		sv.Trees = trees(x.Listings)
	case *sighting.RustProject:
		sv.Trees, sv.Files = trees(x.Listings), files(x.Contents)
	case *sighting.GoProject:
		sv.Trees, sv.Files = trees(x.Listings), files(x.Contents)
		for _, m := range x.Modules {
			goVersion := m.Go
			if goVersion == "" {
				goVersion = "-"
			}
			sv.Modules = append(sv.Modules, fmt.Sprintf("module %s (%s, go %s, %d requirements)", m.Module, m.File, goVersion, len(m.Requires)))
		}
		sv.Packages = len(x.Packages)
	case *sighting.Command:
		sv.Command = &commandView{DurationMS: x.DurationMS, TimedOut: x.TimedOut, Signal: x.Signal,
			Error: x.Error, Dir: x.Dir, Stdout: x.Stdout, Stderr: x.Stderr,
			StdoutTruncated: x.StdoutTruncatedBytes, StderrTruncated: x.StderrTruncatedBytes}
		if x.ExitCode != nil {
			sv.Command.Exited, sv.Command.ExitCode = true, *x.ExitCode
		}
		sv.Command.Failed = x.ExitCode == nil || *x.ExitCode != 0 || x.TimedOut || x.Signal != "" || x.Error != ""
	default:
		sv.Fields = jsonFields(data)
	}
	for _, f := range sighting.Failures(sg) {
		sv.Failures = append(sv.Failures, f.String())
	}
	return sv
}

func files(contents []sighting.FileContents) []fileView {
	var out []fileView
	for _, f := range contents {
		c := f.Content
		fv := fileView{Path: f.Path, Size: c.SizeBytes, Type: c.Type, Error: c.Error, Truncated: c.Truncated}
		if c.Type == sighting.ContentText {
			if code, ok := highlight(f.Path, c.Text); ok {
				fv.Code = code
			} else {
				fv.Plain = c.Text
			}
		}
		out = append(out, fv)
	}
	return out
}

// trees rebuilds the tree that a walk's flat listings encode by their
// paths: each listing's directory entries hold the listing of their path.
func trees(listings []sighting.DirectoryListing) []*treeNode {
	byPath := map[string]*sighting.DirectoryListing{}
	for i := range listings {
		byPath[listings[i].Path] = &listings[i]
	}
	used := map[string]bool{}
	var build func(p, name string) *treeNode
	build = func(p, name string) *treeNode {
		n := &treeNode{Name: name, Dir: true}
		l, ok := byPath[p]
		if !ok || used[p] {
			return n
		}
		used[p] = true
		n.Error = l.Error
		for _, e := range l.Entries {
			child := &treeNode{Name: e.Name, Dir: e.IsDir, Symlink: e.Symlink, Error: e.Error}
			if e.SizeBytes != nil {
				child.HasSize, child.Size = true, *e.SizeBytes
			}
			if e.IsDir {
				cp := e.Name
				if p != "." {
					cp = p + "/" + e.Name
				}
				if _, listed := byPath[cp]; listed {
					child = build(cp, e.Name)
				}
			}
			n.Children = append(n.Children, child)
		}
		return n
	}
	var roots []*treeNode
	paths := make([]string, 0, len(listings))
	for _, l := range listings {
		paths = append(paths, l.Path)
	}
	// The root first ("." sorts before any name), then any listing its
	// parent does not reach.
	sort.SliceStable(paths, func(i, j int) bool { return depth(paths[i]) < depth(paths[j]) })
	for _, p := range paths {
		if !used[p] {
			name := p
			if p != "." {
				name = path.Clean(p)
			}
			roots = append(roots, build(p, name))
		}
	}
	return roots
}

func depth(p string) int {
	if p == "." {
		return 0
	}
	return strings.Count(p, "/") + 1
}

// jsonFields renders a sighting's JSON field by field, nested fields
// under their name, multi-line texts as blocks: the form for web and
// GitHub answers.
func jsonFields(data []byte) []field {
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return []field{{Key: "sighting", Value: string(data), Block: true}}
	}
	delete(m, "kind")
	return fieldsOf(m)
}

func fieldsOf(v any) []field {
	var out []field
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = append(out, fieldOf(k, v[k]))
		}
	case []any:
		for i, x := range v {
			out = append(out, fieldOf(fmt.Sprintf("[%d]", i), x))
		}
	}
	return out
}

func fieldOf(k string, v any) field {
	switch x := v.(type) {
	case map[string]any, []any:
		return field{Key: k, Children: fieldsOf(x)}
	case string:
		return field{Key: k, Value: x, Block: strings.Contains(x, "\n")}
	case nil:
		return field{Key: k, Value: "null"}
	}
	return field{Key: k, Value: fmt.Sprint(v)}
}

// sightingPage shows one sighting on its own page.
type sightingPage struct {
	Title   string
	Voyage  helm.VoyageInfo
	Info    helm.ArtifactInfo
	Label   string
	Gone    string
	TooBig  bool
	View    *sightingView
	RawPath string
}

func (s *Server) sightingPage(w http.ResponseWriter, r *http.Request) {
	hash, err := artifactHash(r)
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	v, err := s.openVoyage(r)
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	defer v.Close()
	info, err := v.ArtifactInfo(r.Context(), hash)
	if errors.Is(err, helm.ErrNoArtifact) {
		s.fail(w, r, http.StatusNotFound, err)
		return
	} else if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	p := sightingPage{Title: "Sighting " + short(hash), Voyage: v.Info(), Info: info, Gone: goneText(info),
		RawPath: "/voyages/" + v.ID() + "/artifacts/" + hash}
	obs, err := observations(r.Context(), v)
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	for _, o := range obs {
		if o.Artifact == hash {
			p.Label = o.Label
		}
	}
	switch {
	case p.Gone != "":
	case info.Size > pageMax:
		p.TooBig = true
	default:
		if p.View, err = s.readSighting(r.Context(), v, hash); err != nil {
			s.fail(w, r, 0, err)
			return
		}
	}
	s.render(w, r, http.StatusOK, "sighting", p)
}

// observations lists every observation of the voyage: sealed, then on the
// slate.
func observations(ctx context.Context, v *helm.Voyage) ([]logbook.ObservationRecord, error) {
	var out []logbook.ObservationRecord
	for e, err := range v.Entries(ctx, nil) {
		if err != nil {
			return nil, err
		}
		if e.Bearing != nil {
			out = append(out, e.Bearing.Observations...)
		}
	}
	return append(out, v.Slate()...), nil
}

// rawArtifact serves a sighting's JSON as it is stored (checked against
// its address as it is read) as text/plain: a browser shows it, never
// runs it.
func (s *Server) rawArtifact(w http.ResponseWriter, r *http.Request) {
	hash, err := artifactHash(r)
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	v, err := s.openVoyage(r)
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	defer v.Close()
	rc, err := v.OpenArtifact(r.Context(), hash)
	switch {
	case errors.Is(err, helm.ErrNoArtifact):
		s.fail(w, r, http.StatusNotFound, err)
		return
	case errors.Is(err, helm.ErrArtifactGone):
		s.fail(w, r, http.StatusGone, err)
		return
	case err != nil:
		s.fail(w, r, 0, err)
		return
	}
	defer rc.Close()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Disposition", "inline")
	w.Header().Set("Cache-Control", "no-store")
	// Damage shows at the end of the bytes, after they were sent: the
	// connection is then cut, so the client sees a failed transfer.
	if _, err := io.Copy(w, rc); err != nil {
		panic(http.ErrAbortHandler)
	}
}
