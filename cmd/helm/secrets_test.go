package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/internal/ghtest"
	"github.com/helmlog/helm/replay"
)

// Planted secrets: tokens in the environment, a .env file, a PEM private
// key, a URL with credentials, a JWT, an AWS key id and tokens typed into
// every text helm records. Every mark kind, a context, a bearing, a
// challenge, a commit and a pull request later, no byte under the helm
// home holds one of them — not the segments, the pack, the summaries —
// and no artifact does once decompressed; the markers are there instead.
// Not parallel: it plants secrets in the process's environment.
func TestPlantedSecretsAreNeverStored(t *testing.T) {
	planted := map[string]string{
		"env GH_TOKEN":               "ghp_PLANTEDenvTOKEN0123456789abcdefghijKL",
		"env DEPLOY_PASSWORD":        "planted-deploy-password-77",
		"env AWS_SECRET_ACCESS_KEY":  "wJalrXUtnFEMI/K7MDENG/bPxRfiCYPLANTEDKEY",
		".env DB_PASSWORD":           "planted-dotenv-db-password",
		".env STRIPE":                "sk_live_PLANTEDstripe0123456789",
		"PEM body":                   "MIIEpAIBAAKCAQEAplantedPEMbodyLINEonly0123456789abcdef",
		"URL password":               "planted-url-pa55word",
		"JWT":                        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.plantedJWTsignature0123456789",
		"AWS key id":                 "AKIAPLANTEDKEY012345",
		"typed token":                "ghp_PLANTEDtypedTOKEN0123456789abcdefghij",
		"issue body token":           "gho_PLANTEDissueBODYtoken0123456789abcdefgh",
		"web header key":             "planted-web-api-key-value-9",
		"commit message token":       "ghp_PLANTEDcommitMSGtoken0123456789abcdefg",
		"pull request body password": "planted-pr-body-password",
	}
	t.Setenv("GH_TOKEN", planted["env GH_TOKEN"])
	t.Setenv("DEPLOY_PASSWORD", planted["env DEPLOY_PASSWORD"])
	t.Setenv("AWS_SECRET_ACCESS_KEY", planted["env AWS_SECRET_ACCESS_KEY"])

	h, srv, g := newGitHubHarness(t)
	issue := srv.AddIssue("octo/widgets", ghtest.Issue{Title: "leaky", Body: "my token is " + planted["issue body token"]})
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Api-Key", planted["web header key"])
		w.Write([]byte("session " + planted["JWT"] + "\n"))
	}))
	defer web.Close()

	h.writeFile(".env", "DB_PASSWORD="+planted[".env DB_PASSWORD"]+"\nSTRIPE="+planted[".env STRIPE"]+"\nDEBUG=true\n")
	h.writeFile("id_rsa", "-----BEGIN RSA PRIVATE KEY-----\n"+planted["PEM body"]+"\n-----END RSA PRIVATE KEY-----\n")
	h.writeFile("notes.txt", "clone https://bob:"+planted["URL password"]+"@git.example.com/x.git\njwt "+planted["JWT"]+"\naws "+planted["AWS key id"]+"\n")
	h.writeFile("Cargo.toml", "[package]\nname = \"widget\"\n# api_key = \""+planted[".env DB_PASSWORD"]+"\"\n")
	h.writeFile("go.mod", "module example.com/widget // "+planted["typed token"]+"\n\ngo 1.26\n")

	h.start("planted secrets")
	h.ok("observe", "file-contents", "--read", ".env", "--read", "id_rsa", "--read", "notes.txt")
	h.ok("observe", "directory-tree", ".")
	h.ok("observe", "rust-project", ".")
	h.ok("observe", "go-project", ".")
	h.ok("observe", "command", "--", "env")
	// Passed on purpose, the program prints them: the redactor hides them.
	h.ok("observe", "command", "--pass-env", "GH_TOKEN", "--", "printenv", "GH_TOKEN")
	h.ok("observe", "command", "--pass-env", "DEPLOY_PASSWORD", "--pass-env", "AWS_SECRET_ACCESS_KEY", "--", "sh", "-c", "echo $DEPLOY_PASSWORD $AWS_SECRET_ACCESS_KEY")
	h.ok("observe", "web", web.URL)
	h.ok("observe", "github-issue", itoa(issue), "--repo", "octo/widgets")
	h.ok("observe", "context", "the user pasted "+planted["typed token"])
	h.ok("bearing", "--reading", "the key "+planted["AWS key id"]+" leaked")
	h.ok("bearing", "challenge", "1", "--with", "password="+planted["env DEPLOY_PASSWORD"], "--reading", "token "+planted["typed token"])

	g.Git(t, "switch", "-q", "-c", "leaky")
	g.WriteFile(t, "widget.rs", "fixed\n")
	g.Git(t, "add", "widget.rs")
	r := h.fails(2, "action", "commit", "-m", "rotate "+planted["commit message token"])
	assert.Contains(t, r.Stderr, "the action's parameters hold a secret (github-token): nothing was run or recorded")
	assert.NotContains(t, r.Stderr, planted["commit message token"], "the refusal names the rule, never the value")
	assert.Contains(t, r.Stderr, "\nTry: helm action commit -m 'rotate [REDACTED:github-token]' --allow-secret, or take the secret out\n")
	h.ok("action", "commit", "-m", "rotate "+planted["commit message token"], "--allow-secret")
	h.ok("action", "push")
	h.ok("action", "create-pull-request", "--title", "Rotate", "--body", "password: "+planted["pull request body password"], "--allow-secret")
	h.ok("complete", "--summary", "rotated "+planted["AWS key id"])

	// Every byte under the home.
	var files int
	require.NoError(t, filepath.Walk(h.Home, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		files++
		for what, secret := range planted {
			assert.NotContains(t, string(data), secret, "%s found in %s", what, path)
		}
		return nil
	}))
	assert.Positive(t, files)

	// Every artifact, decompressed, and every event.
	home, err := helm.Open(h.Home, nil)
	require.NoError(t, err)
	list, err := home.List(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, list, 1)
	v, err := home.Voyage(context.Background(), list[0].ID)
	require.NoError(t, err)
	defer v.Close()
	var all strings.Builder
	for a, err := range v.Artifacts(context.Background(), nil) {
		require.NoError(t, err)
		r, err := v.OpenArtifact(context.Background(), a.Hash)
		require.NoError(t, err)
		_, err = io.Copy(&all, r)
		require.NoError(t, err)
		require.NoError(t, r.Close())
	}
	require.NoError(t, replay.WriteEvents(context.Background(), &all, v))
	for what, secret := range planted {
		assert.NotContains(t, all.String(), secret, "%s found in the stored artifacts or events", what)
	}
	for _, marker := range []string{
		"[REDACTED:env:GH_TOKEN]", "[REDACTED:env:DEPLOY_PASSWORD]", "[REDACTED:env:AWS_SECRET_ACCESS_KEY]",
		"[REDACTED:secret-assignment]", "[REDACTED:stripe-key]", "[REDACTED:private-key]", "[REDACTED:url-credentials]",
		"[REDACTED:jwt]", "[REDACTED:aws-access-key-id]", "[REDACTED:github-token]", `"redactions":`,
	} {
		assert.Contains(t, all.String(), marker)
	}
}
