package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/exit"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/internal/safetext"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/story"
)

// The MCP server's resources, read-only: a voyage's story and each of its
// sightings by hash, for a host to attach as evidence to an agent's
// context. Each voyage the server has open lists its story; the
// templates reach any voyage and sighting. A long text is served a page
// at a time: a second content, its URI the next page's, says so.

func storyURI(id string) string { return "helm://voyages/" + id + "/story" }

func sightingURI(id, hash string) string { return "helm://voyages/" + id + "/sightings/" + hash }

func (s *Server) addResources() {
	s.server.AddResourceTemplate(&mcp.ResourceTemplate{
		Name: "story", Title: "A voyage's story", URITemplate: "helm://voyages/{voyage}/story{?offset}", MIMEType: "text/plain",
		Description: "The story of a voyage (its id or a prefix), as helm log tells it: each bearing with its marks and reading, each action with its result, each note, with who recorded it.",
	}, s.readResource)
	s.server.AddResourceTemplate(&mcp.ResourceTemplate{
		Name: "sighting", Title: "A sighting", URITemplate: "helm://voyages/{voyage}/sightings/{hash}{?offset}", MIMEType: "application/json",
		Description: "What an observation saw: the sighting's JSON, stored under its BLAKE3 hash (or a prefix of it) and checked against it when read.",
	}, s.readResource)
	s.server.AddResourceTemplate(&mcp.ResourceTemplate{
		Name: "export", Title: "A voyage's export", URITemplate: "helm://voyages/{voyage}/export{?format,offset}",
		Description: "A voyage's export (the export tool gives its URI and size): format jsonl (the archive helm voyage import and replay take, the default), md or html.",
	}, s.readResource)
	s.mu.Lock()
	open := make([]*helm.Voyage, 0, len(s.open))
	for _, v := range s.open {
		open = append(open, v)
	}
	s.mu.Unlock()
	for _, v := range open {
		s.addStory(v)
	}
}

// addStory lists v's story among the resources.
func (s *Server) addStory(v *helm.Voyage) {
	if s.server == nil {
		return // New lists it once the server is made
	}
	info := v.Info()
	s.server.AddResource(&mcp.Resource{
		URI: storyURI(v.ID()), Name: "story-" + view.Short(v.ID()), MIMEType: "text/plain",
		Title:       "Story of voyage " + view.Short(v.ID()) + ": " + info.Intent,
		Description: "The story of voyage " + v.ID() + " (" + info.Intent + "), as helm log tells it.",
	}, s.readResource)
}

// readResource reads a story or a sighting, a page at a time.
func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (res *mcp.ReadResourceResult, err error) {
	err = s.guard("resources/read", func() (err error) {
		res, err = s.resource(ctx, req.Params.URI)
		return err
	})
	return res, err
}

func (s *Server) resource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "helm" || u.Host != "voyages" {
		return nil, notFound(uri, "")
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	offset := 0
	if o := u.Query().Get("offset"); o != "" {
		if offset, err = strconv.Atoi(o); err != nil {
			return nil, fmt.Errorf("%s: offset %q is not a number", uri, o)
		}
	}
	v, err := s.voyage(ctx, parts[0])
	if err != nil {
		return nil, resourceError(uri, err)
	}
	// Only the page is kept: the story or the sighting is written into
	// it, and no further than its end.
	pw := newPageWriter(offset, pageSize)
	var mime, base string
	switch {
	case len(parts) == 2 && parts[1] == "story":
		if err := story.WriteText(ctx, pw, v); err != nil && !errors.Is(err, errPageFull) {
			return nil, resourceError(uri, err)
		}
		mime, base = "text/plain", storyURI(v.ID())
	case len(parts) == 3 && parts[1] == "sightings":
		info, err := view.FindArtifactInfo(ctx, v, parts[2])
		if err != nil {
			return nil, resourceError(uri, err)
		}
		if info.Status != logbook.ArtifactStowed {
			return nil, resourceError(uri, fmt.Errorf("%w: artifact %s of voyage %s is %s", helm.ErrNoArtifact, view.Short(info.Hash), view.Short(v.ID()), view.GoneText(info)))
		}
		if err := view.CopySighting(ctx, pw, v, info.Hash); err != nil && !errors.Is(err, errPageFull) {
			return nil, resourceError(uri, err)
		}
		mime, base = "application/json", sightingURI(v.ID(), info.Hash)
	case len(parts) == 2 && parts[1] == "export":
		format := u.Query().Get("format")
		if format == "" {
			format = "jsonl"
		}
		f, ok := exportFormats[format]
		if !ok {
			return nil, notFound(uri, "format "+strconv.Quote(format)+" is not jsonl, md or html")
		}
		if err := f.write(ctx, s.home, pw, v); err != nil && !errors.Is(err, errPageFull) {
			return nil, resourceError(uri, err)
		}
		mime, base = f.mime, exportURI(v.ID(), format)
	default:
		return nil, notFound(uri, "")
	}
	nextURI := ""
	body, note, err := pw.page(nil, offset, pageSize, func(next int) string {
		sep := "?"
		if strings.Contains(base, "?") {
			sep = "&"
		}
		nextURI = base + sep + "offset=" + strconv.Itoa(next)
		return "read " + nextURI
	})
	if err != nil {
		return nil, resourceError(uri, err)
	}
	res := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: body}}}
	if note != "" {
		res.Contents = append(res.Contents, &mcp.ResourceContents{URI: nextURI, MIMEType: "text/plain", Text: note})
	}
	return res, nil
}

// resourceError is err for a read of uri: a voyage or an artifact not
// there is a resource not found (the protocol's error, with helm's
// message); any other error says what to do, as a tool's would.
func resourceError(uri string, err error) error {
	msg := safetext.Block(exit.Message(err), "")
	if h := toolHint(err); h != "" {
		msg += " (Try: " + safetext.Line(h) + ")"
	}
	if errors.Is(err, helm.ErrNoVoyage) || errors.Is(err, helm.ErrNoArtifact) {
		return notFound(uri, msg)
	}
	return errors.New(msg)
}

// notFound is the protocol's error for a resource uri that is not there,
// saying why (msg, when there is more to say): Invalid Params, as MCP's
// SEP-2164 says. The SDK's ResourceNotFoundError gives its deprecated
// CodeResourceNotFound, which its MCPGODEBUG setting turns back into the
// old -32002; this one is the same code however the host is set up.
func notFound(uri, msg string) error {
	message := "Resource not found"
	if msg != "" {
		message += ": " + msg
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: message, Data: json.RawMessage(fmt.Sprintf(`{"uri":%q}`, uri))}
}
