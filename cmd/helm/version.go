package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// version is set at link time (-ldflags "-X main.version=v1.2.3"); when
// empty, the module version from the build information is used.
var version = ""

// buildVersion is what helm knows of its own build.
type buildVersion struct {
	Version  string `json:"version"`            // v0.1.0, or (devel) for a build from a checkout
	Revision string `json:"revision,omitempty"` // the commit a checkout was at
	Modified bool   `json:"modified,omitempty"` // the checkout had uncommitted changes
	Go       string `json:"go"`                 // the Go release it was built with
}

// readVersion reads the version from the ldflag, else from the build
// information: the module's version when installed with `go install
// ...@v0.1.0`, "(devel)" and the VCS revision when built in a checkout.
func readVersion() buildVersion {
	v := buildVersion{Version: version, Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		if v.Version == "" {
			v.Version = "(unknown)"
		}
		return v
	}
	v.Go = bi.GoVersion
	if v.Version == "" {
		v.Version = bi.Main.Version
	}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// versionString is the one line `helm version` prints after "helm ":
// "v0.1.0 go1.26.0", or "(devel) 0123456789ab+dirty go1.26.0".
func versionString() string {
	v := readVersion()
	s := v.Version
	if v.Revision != "" && strings.Contains(s, "devel") {
		rev := v.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		s += " " + rev
		if v.Modified {
			s += "+dirty"
		}
	}
	return s + " " + v.Go
}

func newVersionCmd(a *app) *cobra.Command {
	return leafCmd(a, &cobra.Command{
		Use:   "version",
		Short: "print helm's version",
		Long: `Print helm's version: the one set when it was built (-ldflags
"-X main.version=v0.1.0"), else the module's version from the build
information, or "(devel)" and the commit for a build from a checkout; then
the Go release. The same as helm --version.`,
		Example: "  helm version\n  helm version --json",
	}, versionLeaf{})
}

type versionLeaf struct{}

func (versionLeaf) Flags(*pflag.FlagSet) {}

func (versionLeaf) Run(_ context.Context, a *app, args []string) error {
	if len(args) > 0 {
		return usageErrorf(a.cmd, "version takes no arguments, got %q", args)
	}
	if a.g.json {
		return writeJSON(a.stdout, readVersion())
	}
	_, err := fmt.Fprintf(a.stdout, "helm %s\n", versionString())
	return err
}
