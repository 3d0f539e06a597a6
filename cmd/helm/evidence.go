package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/logbook"
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
the sighting's JSON.

A jettisoned artifact is not shown: helm says it was jettisoned, by whom,
when and why (--json: its index entry, with status, reason, curated_by
and curated_at); a reduced one, to which summary, by whom and when.`,
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
	v, err := a.openReadVoyage(ctx, "")
	if err != nil {
		return err
	}
	info, err := view.FindSighting(ctx, v, args[0])
	if err != nil {
		return err
	}
	if info.Status != logbook.ArtifactStowed {
		// Who jettisoned or reduced it, and when, read from the log.
		if info, err = v.ArtifactInfo(ctx, info.Hash); err != nil {
			return err
		}
	}
	if a.g.json && info.Status != logbook.ArtifactStowed {
		return writeJSON(a.stdout, info)
	}
	if a.g.json {
		if err := view.CopySighting(ctx, a.stdout, v, info.Hash); err != nil {
			return err
		}
		_, err := io.WriteString(a.stdout, "\n")
		return err
	}
	// Long: paged on a terminal (terminal.go).
	return a.page(nil, func(w io.Writer) error { return view.WriteSightingText(ctx, w, v, info) })
}

func newArtifactCmd(a *app) *cobra.Command {
	c := group(a, &cobra.Command{
		Use:   "artifact list|jettison|reduce ...",
		Short: "list, jettison and reduce the evidence stored for a voyage",
		Long: `A voyage stores each sighting once, as an artifact addressed by its BLAKE3
hash. An artifact is stowed (its bytes are read), reduced (a summary stands
in for it) or jettisoned (its bytes are no longer read; helm voyage compact
reclaims their space). Who did it, when and why is recorded.

Curation after completion: jettison and reduce change what a voyage keeps,
not what happened, so they work on a voyage of any status, a completed,
failed or cancelled one included, which stays as it was closed. They are
guarded as actions are (helm policy check jettison): by default only a
person (method human) may curate a closed voyage; an agent is refused
(exit 4, the refusal recorded in the story). A rule of the system policy
(/etc/helm/policy.toml, root's) may allow agents; a rule of the home's
policy.toml can tighten this, never loosen it. On a closed voyage the
identity, role and method must be set (--as, --role, --method or their
variables; for reduce, whose --method says how the summary was made,
HELM_METHOD or method in config.toml, else that --method). A method is a
claim: an agent that runs helm as the user and claims "human" is recorded
under that claim (see docs/design.md, "Curation after completion").`,
		Example: "  helm artifact list\n  helm artifact jettison 9f2c41d0 --reason \"holds a customer's data\"\n  helm voyage compact",
	})
	c.AddCommand(
		leafCmd(a, &cobra.Command{
			Use:     "list [VOYAGE]",
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

func (*artifactListCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 1 {
		return usageErrorf(a.cmd, "artifact list: one VOYAGE at most, got %d arguments %q", len(args), args)
	}
	v, err := a.openReadVoyage(ctx, firstArg(args))
	if err != nil {
		return err
	}
	var infos []helm.ArtifactInfo
	for info, err := range v.Artifacts(ctx, nil) {
		if err != nil {
			return err
		}
		infos = append(infos, info)
	}
	rows, err := view.ArtifactRows(ctx, v, infos)
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
		case logbook.ArtifactJettisoned:
			state += ": " + view.OrDash(r.Reason)
		case logbook.ArtifactReduced:
			state += " to " + short(r.ReducedTo)
		}
		fmt.Fprintf(&b, "%-8s  %-14s  %9s  %9s  %-4s  %-40s  %s\n", short(r.Hash), view.OrDash(r.Kind), size(r.Size), size(r.StoredSize), r.Where, printable(view.OrDash(r.Mark)), printable(state))
	}
	_, err = io.WriteString(a.stdout, b.String())
	return err
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
	v, who, err := a.curatedVoyage(ctx)
	if err != nil {
		return err
	}
	info, err := view.FindArtifactInfo(ctx, v, args[0])
	if err != nil {
		return err
	}
	if err := v.Jettison(ctx, info.Hash, c.reason, who); err != nil {
		return err
	}
	reindexVoyage(ctx, a, v.ID(), true) // the content index forgets its words
	gone := "helm voyage compact reclaims it"
	if v.Storage().Dir == "" { // a shared store: the jettison erased its key
		gone = "its key is erased; helm voyage compact reports any bytes an earlier helm stored that it cannot erase"
	}
	_, err = fmt.Fprintf(a.stdout, "Artifact %s jettisoned from voyage %s (%s stored; %s)\n", short(info.Hash), short(v.ID()), size(info.StoredSize), gone)
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
	// The command's --method is the summary's (it shadows the global
	// flag): whoever made the summary reduces, unless HELM_METHOD or
	// config.toml say otherwise.
	if _, method, err := a.resolveRoleMethod(false); err == nil && method == "" {
		a.g.method = c.method
	}
	v, who, err := a.curatedVoyage(ctx)
	if err != nil {
		return err
	}
	info, err := view.FindArtifactInfo(ctx, v, args[0])
	if err != nil {
		return err
	}
	sum, err := v.Reduce(ctx, info.Hash, helm.Reduction{Summary: &sighting.Context{Description: c.summary}, Method: c.method}, who)
	if err != nil {
		return err
	}
	reindexVoyage(ctx, a, v.ID(), true) // the content index forgets its words
	_, err = fmt.Fprintf(a.stdout, "Artifact %s reduced to %s in voyage %s\n", short(info.Hash), short(sum), short(v.ID()))
	return err
}

// curatedVoyage resolves the voyage an artifact command curates, of any
// status (curation changes what is kept, not what happened), and who
// curates it: in full (identity, role and method) on a voyage that is
// not active, where the guard judges the actor and records a refusal as
// an entry.
func (a *app) curatedVoyage(ctx context.Context) (*helm.Voyage, logbook.Who, error) {
	v, err := a.openVoyage(ctx)
	if err != nil {
		return nil, logbook.Who{}, err
	}
	who, err := a.who(ctx, v, v.Info().Status != logbook.StatusActive)
	if err != nil {
		return nil, logbook.Who{}, err
	}
	return v, who, nil
}
