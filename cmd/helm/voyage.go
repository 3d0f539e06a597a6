package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/chain"
	"github.com/helmlog/helm/cmd/helm/internal/view"
	"github.com/helmlog/helm/logbook"
	"github.com/helmlog/helm/runner"
)

func newVoyageCmd(a *app) *cobra.Command {
	c := group(a, &cobra.Command{
		Use:     "voyage new|list|show|head|resume|verify|compact|fork|salvage|rechain|export|import ...",
		Short:   "start, list, show, resume, verify, compact, fork, salvage, rechain, export and import voyages, and print their heads",
		Example: `  helm voyage new --kind resolve-issue "Resolve #42: fix widget crash"`,
	})
	newCmd := leafCmd(a, &cobra.Command{
		Use:   "new [--kind open-waters|resolve-issue] [--parent ID] [--worktree [DIR]] [--branch NAME] INTENT",
		Short: "start a voyage and print its id",
		Long: `Start a voyage. Its identity (--as, HELM_IDENTITY, or identity in
$HELM_HOME/config.toml) becomes the default identity of everything
recorded on it. Prints the new voyage's id.

--parent makes it a sub-voyage: one crew member's part of a larger voyage
(helm transcript and helm stats read them together). Started inside a git
repository, the voyage records the repository (OWNER/NAME of its origin,
when it names one), its top directory, and the commit and branch checked
out: the base that helm report diffs against.

--worktree makes the voyage a git worktree of its own (default: beside the
repository, named from the voyage's id, on a new branch helm/ID8; --branch
names another), recorded with the voyage and printed on stderr. A command
run inside it acts on that voyage without --voyage; helm voyage clean
removes it once the voyage is done.`,
		Example: `  helm voyage new --as john-agent --kind resolve-issue "Resolve #42: fix widget crash"
  helm voyage new --as bob --parent a3b "Write the regression test for #42"`,
	}, &voyageNewCommand{})
	fixedValues(newCmd, "kind", string(helm.OpenWaters), string(helm.ResolveIssue))
	list := leafCmd(a, &cobra.Command{
		Use:   "list [--status STATUS] [--stale DURATION]",
		Short: "list voyages",
		Long: `List voyages, oldest first. Without --status, only the active ones.
--status takes a status (active, blocked, partial, completed, failed,
cancelled), open (active, blocked or partial), closed (completed, failed or
cancelled) or all. --stale 30m lists the active voyages with no event for
30 minutes or more: the ones nobody is working on.`,
		Example: "  helm voyage list --status all --json\n  helm voyage list --stale 30m",
	}, &voyageListCommand{})
	var filters []string
	for _, f := range helm.StatusFilters() {
		filters = append(filters, string(f))
	}
	fixedValues(list, "status", filters...)
	c.AddCommand(newCmd, list,
		leafCmd(a, &cobra.Command{
			Use:   "resume [--reason TEXT]",
			Short: "make a blocked or partial voyage active again",
			Long: `Resume a voyage completed as blocked or partial: it is active again, and
the resumption is recorded with who resumed it and why. Completed, failed
and cancelled voyages are final. Without --voyage, the only blocked or
partial voyage.`,
			Example: `  helm --voyage a3b voyage resume --reason "Upstream released the fix"`,
		}, &voyageResumeCommand{}),
		leafCmd(a, &cobra.Command{
			Use:     "show [VOYAGE]",
			Short:   "show a voyage: metadata, slate, logbook counts, artifacts",
			Example: "  helm --voyage a3b voyage show --json",
		}, &voyageShowCommand{}),
		leafCmd(a, &cobra.Command{
			Use:   "head [VOYAGE]",
			Short: "print where a voyage's tamper-evident chain stands: SEQ:HEX",
			Long: `Print the voyage's head: the seq of its last record and the BLAKE3
chain's link after it, as SEQ:HEX (64 lowercase hex digits), one line and
nothing else, so that $(helm voyage head) is the head. --json prints
{"voyage":"ID","seq":N,"hash":"HEX"}. Without VOYAGE (or --voyage), the
voyage commands act on here (helm voyage current).

A head held outside the home is a witness: paste it in a pull request,
an issue or a chat, or let the commits helm makes carry it (their
Helm-Voyage trailer). Anyone with write access to the home can recompute
the chain; no one can change a head held elsewhere, and any edit,
truncation or rollback of a record at or below it changes the link at its
seq. Reading the head records nothing.`,
			Example: "  helm voyage head a3b\n  helm voyage head --json",
		}, &voyageHeadCommand{}),
		leafCmd(a, &cobra.Command{
			Use:   "current",
			Short: "say which voyage commands act on here, and why",
			Long: `Say which voyage a command run here acts on, and why: --voyage, then
HELM_VOYAGE, then the voyage whose worktree the working directory is in
(made by voyage new --worktree), then the only active voyage.`,
			Example: "  helm voyage current          # in a voyage's worktree: that voyage",
		}, &voyageCurrentCommand{}),
		leafCmd(a, &cobra.Command{
			Use:   "clean [VOYAGE] [--force]",
			Short: "remove the worktree of a voyage that is no longer active",
			Long: `Remove the git worktree voyage new --worktree made for a voyage that is
completed, failed, cancelled, blocked or partial; its branch is kept. A
worktree that holds what removing it would lose (changed, untracked or
ignored files, commits no branch or tag keeps) is refused, exit 1, with
the list and how to keep them, unless --force (they are lost). The
removal is recorded, as forced or not.`,
			Example: "  helm voyage clean a3b",
		}, &voyageCleanCommand{}),
		leafCmd(a, &cobra.Command{
			Use:   "replay DIR|FILE [--record]",
			Short: "replay a recorded voyage with this helm and report where its views diverge",
			Long: `Replay a recorded voyage — a voyage directory, or a .jsonl of exported
events — with this helm, and compare the views after each event with the
views recorded beside it (DIR.views.json, FILE.views.json). On a
divergence, print the first event after which the views differ (its
sequence number, type and who recorded it) and each view field that
differs, recorded (-) and replayed (+), and exit 1. Nothing is run again:
actions are read from their recorded results. --record writes the views
this helm folds beside the events instead, to make a recording.`,
			Example: "  helm voyage replay --record testdata/fix-42.jsonl\n  helm voyage replay testdata/fix-42.jsonl",
		}, &voyageReplayCommand{}),
		leafCmd(a, &cobra.Command{
			Use:   "verify [VOYAGE] [--witness W]...",
			Short: "check a voyage's event log and artifacts for damage, and against its witnesses",
			Long: `Check every record of the voyage's event log (checksums and the chain
linking records) and every stowed artifact against its BLAKE3 address,
and print the chain's head (SEQ:HEX). With --witness, also check the log
against heads held outside the home: a git repository (every commit
reachable from its refs whose Helm-Voyage trailer names the voyage: helm
puts one on every commit it makes) or a head as helm voyage head prints
it. A witness the log no longer reaches, or whose link differs, means the
log was edited, truncated or rolled back at or below it. Exits 1 when
anything is damaged or a witness differs.`,
			Example: "  helm --voyage a3b voyage verify\n  helm --voyage a3b voyage verify --witness ~/src/widgets",
		}, &voyageVerifyCommand{}),
		leafCmd(a, &cobra.Command{
			Use:   "compact",
			Short: "reclaim the disk space of jettisoned artifacts",
			Long: `Reclaim the bytes of the voyage's jettisoned artifacts: their records in
the event log keep their place in its chain (verify still checks every
record) and their frames in the pack file are punched out. The story, the
entry numbers and every artifact still stowed read the same afterwards.
Other commands on the voyage wait for it; a crash leaves every file whole,
and compacting again finishes the work.`,
			Example: "  helm artifact jettison 9f2c --reason \"holds a customer's data\"\n  helm voyage compact",
		}, &voyageCompactCommand{}),
		newVoyageForkCmd(a),
		newVoyageSalvageCmd(a),
		newVoyageRechainCmd(a),
		newVoyageHandoffCmd(a),
		newVoyageExportCmd(a),
		newVoyageImportCmd(a),
		newVoyagePushCmd(a),
		newVoyagePullCmd(a),
	)
	return c
}

// voyageNewCommand starts a voyage.
type voyageNewCommand struct{ kind, parent, worktree, branch string }

// autoWorktree is --worktree without a DIR: beside the repository.
const autoWorktree = "\x00beside"

func (c *voyageNewCommand) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.kind, "kind", string(helm.OpenWaters), "voyage `KIND`: open-waters or resolve-issue")
	fs.StringVar(&c.parent, "parent", "", "make it a sub-voyage of voyage `ID` (or an unambiguous prefix)")
	fs.StringVar(&c.worktree, "worktree", "", "make the voyage a git worktree of its own at `DIR` (default: beside the repository, named from the voyage's id)")
	fs.Lookup("worktree").NoOptDefVal = autoWorktree
	fs.StringVar(&c.branch, "branch", "", "the worktree's new branch, `NAME` (default helm/ID8)")
}

func (c *voyageNewCommand) Run(ctx context.Context, a *app, args []string) error {
	if c.worktree == autoWorktree && len(args) == 2 {
		// --worktree DIR INTENT: the flag's value is optional, so DIR
		// came as the first argument.
		c.worktree, args = args[0], args[1:]
	}
	if len(args) == 0 {
		return usageErrorf(a.cmd, "voyage new: say what the voyage is for (INTENT)")
	}
	if len(args) > 1 {
		return usageErrorf(a.cmd, "voyage new: one INTENT expected, got %d arguments (quote the intent)", len(args))
	}
	h, err := a.openHome()
	if err != nil {
		return err
	}
	who, err := a.whoStarts()
	if err != nil {
		return err
	}
	r, err := a.runner("", "")
	if err != nil {
		return err
	}
	ws, wsErr := r.Workspace(ctx)
	opts := startIn(c.parent, ws, wsErr)
	var made string // the worktree made, removed again if the start fails
	if c.worktree != "" {
		if wsErr != nil {
			return &usageError{Err: fmt.Errorf("voyage new --worktree: not in a git repository: %w", wsErr), Hint: "run it inside the repository the voyage works on"}
		}
		if ws.Head == "" {
			return &usageError{Err: errors.New("voyage new --worktree: the repository has no commit to start the worktree from"), Hint: "commit something first"}
		}
		base := opts
		opts.Prepare = func(id string) (helm.StartOptions, error) {
			dir := c.worktree
			if dir == autoWorktree {
				dir = filepath.Join(filepath.Dir(ws.Top), filepath.Base(ws.Top)+"-"+short(id))
			}
			dir = a.abs(dir)
			if abs, err := filepath.Abs(dir); err == nil {
				dir = abs // recorded whole: detection compares it with where commands run
			}
			branch := c.branch
			if branch == "" {
				branch = "helm/" + short(id)
			}
			if err := r.AddWorktree(ctx, dir, branch, ws.Head); err != nil {
				return base, fmt.Errorf("make the voyage's worktree %s: %w", dir, err)
			}
			made = dir
			p := base
			p.Worktree, p.Branch = dir, branch
			return p, nil
		}
	} else if c.branch != "" {
		return usageErrorf(a.cmd, "voyage new: --branch names the branch of a worktree: give --worktree too")
	}
	v, err := h.Start(ctx, args[0], helm.Kind(c.kind), who, &opts)
	if err != nil {
		if made != "" {
			_ = r.RemoveWorktree(context.WithoutCancel(ctx), made, true)
		}
		return err
	}
	a.voyages = append(a.voyages, v)
	if made != "" && !a.g.json {
		fmt.Fprintf(a.stderr, "Worktree %s on branch %s\n", printable(made), printable(v.Info().Branch))
	}
	if a.g.json {
		return writeJSON(a.stdout, v.Info())
	}
	_, err = fmt.Fprintln(a.stdout, v.ID())
	return err
}

// startIn returns the options of a voyage started in workspace ws (none
// when wsErr says the working directory is in no git repository), as a
// sub-voyage of parent when it is set.
func startIn(parent string, ws runner.Workspace, wsErr error) helm.StartOptions {
	opts := helm.StartOptions{Parent: parent}
	if wsErr == nil {
		opts.Repo, opts.Dir, opts.Base, opts.Branch = ws.Repo, ws.Top, ws.Head, ws.Branch
	}
	return opts
}

// voyageListCommand lists voyages.
type voyageListCommand struct {
	status string
	stale  time.Duration
}

func (c *voyageListCommand) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.status, "status", string(helm.ListActive), "list voyages whose status is `STATUS`: active, blocked, partial, completed, failed, cancelled, open, closed or all")
	fs.DurationVar(&c.stale, "stale", 0, "list the active voyages with no event for `DURATION` (30m, 2h)")
}

func (c *voyageListCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 0 {
		return usageErrorf(a.cmd, "voyage list takes no arguments, got %q", args)
	}
	h, err := a.openHome()
	if err != nil {
		return err
	}
	if !slices.Contains(helm.StatusFilters(), helm.StatusFilter(c.status)) {
		return usageErrorf(a.cmd, "voyage list: --status %q is not one of %v", c.status, helm.StatusFilters())
	}
	if c.stale < 0 {
		return usageErrorf(a.cmd, "voyage list: --stale %s is negative", c.stale)
	}
	if c.stale > 0 && a.cmd.Flags().Changed("status") && c.status != string(helm.ListActive) {
		return usageErrorf(a.cmd, "voyage list: --stale lists active voyages; --status %s selects none of them", c.status)
	}
	list, err := h.List(ctx, &helm.ListOptions{Status: helm.StatusFilter(c.status), IdleFor: c.stale})
	var unreadable *helm.ListError
	if err != nil && !errors.As(err, &unreadable) {
		return err
	}
	// Voyages that could not be read do not hide the others: list what
	// was read, then report the rest (exit 1).
	if err := c.print(a, h, list, unreadable); err != nil {
		return err
	}
	return err
}

func (c *voyageListCommand) print(a *app, h *helm.Home, list []helm.VoyageInfo, unreadable *helm.ListError) error {
	if a.g.json {
		if list == nil {
			list = []helm.VoyageInfo{}
		}
		return writeJSON(a.stdout, list)
	}
	var damaged []string
	if unreadable != nil {
		damaged = unreadable.Voyages
	}
	if len(list) == 0 && len(damaged) == 0 {
		what := "voyages"
		if c.status != string(helm.ListAll) {
			what = c.status + " voyages"
		}
		if c.stale > 0 {
			what = "active voyages idle for " + c.stale.String()
		}
		fmt.Fprintf(a.stdout, "No %s in %s.\n", what, printable(homeName(h)))
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSTATUS\tCREATED\tLAST EVENT\tIDENTITY\tINTENT")
	for _, v := range list {
		intent := printable(v.Intent)
		if v.Parent != "" {
			intent += " (part of " + short(v.Parent) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", short(v.ID), printable(string(v.Kind)), v.Status, stamp(v.Created), stamp(v.LastAt), printable(v.CurrentIdentity), intent)
	}
	for _, id := range damaged {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", short(id), "?", "DAMAGED", "?", "?", "?", "(cannot be read: see below)")
	}
	return tw.Flush()
}

// voyageShowCommand shows one voyage.
type voyageShowCommand struct{}

func (*voyageShowCommand) Flags(*pflag.FlagSet) {}

// voyageShow is the --json form of `helm voyage show`.
type voyageShow struct {
	Voyage        helm.VoyageInfo             `json:"voyage"`
	Logbook       logbookCounts               `json:"logbook"`
	Slate         []logbook.ObservationRecord `json:"slate"`
	Artifacts     []helm.ArtifactInfo         `json:"artifacts"`
	FailedActions []logbook.Entry             `json:"failed_actions"`
}

type logbookCounts = helm.LogbookCounts

func (*voyageShowCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 1 {
		return usageErrorf(a.cmd, "voyage show: one VOYAGE at most, got %d arguments %q", len(args), args)
	}
	v, err := a.openReadVoyage(ctx, firstArg(args))
	if err != nil {
		return err
	}
	failed, err := view.Entries(ctx, v, &helm.EntriesOptions{OutsideStory: true})
	if err != nil {
		return err
	}
	info := v.Info()
	s := voyageShow{Voyage: info, Logbook: info.Counts, Slate: v.Slate(), FailedActions: failed}
	s.Voyage.Counts = helm.LogbookCounts{} // shown once, as "logbook"
	if s.Slate == nil {
		s.Slate = []logbook.ObservationRecord{}
	}
	if s.FailedActions == nil {
		s.FailedActions = []logbook.Entry{}
	}
	if a.g.json {
		return writeShowJSON(a.stdout, &s, v.Artifacts(ctx, nil))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Voyage:    %s\n", info.ID)
	fmt.Fprintf(&b, "Intent:    %s\n", printable(info.Intent))
	fmt.Fprintf(&b, "Kind:      %s\n", printable(string(info.Kind)))
	if len(info.Handoffs) == 0 {
		fmt.Fprintf(&b, "Identity:  %s\n", printable(info.Identity))
	} else {
		fmt.Fprintf(&b, "Identity:  %s (started by %s)\n", printable(info.CurrentIdentity), printable(info.Identity))
		for _, e := range info.Handoffs {
			fmt.Fprintf(&b, "  handoff %d, %s: %s\n", e.N, stamp(e.At), printable(logbook.DescribeHandoff(e.Handoff, e.Who)))
		}
	}
	fmt.Fprintf(&b, "Created:   %s\n", stamp(info.Created))
	if info.Parent != "" {
		fmt.Fprintf(&b, "Parent:    %s\n", info.Parent)
	}
	if f := info.Fork; f != nil {
		fmt.Fprintf(&b, "Forked:    from voyage %s at entry %d (its head %d:%s)\n", printable(f.Voyage), f.Entry, f.Seq, printable(f.Head))
	}
	if o := info.Salvage; o != nil {
		fmt.Fprintf(&b, "Salvaged:  from voyage %s, records up to %d (its head %d:%s)\n", printable(o.Voyage), o.Seq, o.Seq, printable(o.Head))
		if l := o.Lost; l != nil {
			fmt.Fprintf(&b, "Lost:      %s\n", printable(lossLine(l)))
		}
	}
	if info.Dir != "" {
		fmt.Fprintf(&b, "Repository: %s (%s) at %s on %s\n", printable(orNone(info.Repo)), printable(info.Dir), printable(orNone(short(info.Base))), printable(orNone(info.Branch)))
	}
	if len(info.Crew) > 1 {
		fmt.Fprintf(&b, "Crew:      %s\n", printable(strings.Join(info.Crew, ", ")))
	}
	if info.Status != logbook.StatusActive {
		fmt.Fprintf(&b, "Status:    %s (%s)\n", info.Status, stamp(info.CompletedAt))
		if info.Summary != "" {
			fmt.Fprintf(&b, "Summary:   %s\n", block(info.Summary, "           "))
		}
	} else {
		fmt.Fprintf(&b, "Status:    %s\n", info.Status)
	}
	c := s.Logbook
	fmt.Fprintf(&b, "Logbook:   %s, %s", plural(c.Bearings, "bearing"), plural(c.Actions, "action"))
	var about []string
	if c.Failed > 0 {
		about = append(about, fmt.Sprintf("%d failed", c.Failed))
	}
	if c.OutcomeUnknown > 0 {
		about = append(about, fmt.Sprintf("%d with unknown outcome", c.OutcomeUnknown))
	}
	if len(about) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(about, ", "))
	}
	for _, n := range []struct {
		n    int
		what string
	}{{c.Refused, "refused action"}, {c.Notes, "note"}, {c.Judgements, "judgement"}} {
		if n.n > 0 {
			fmt.Fprintf(&b, ", %s", plural(n.n, n.what))
		}
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "Slate:     %s\n", plural(len(s.Slate), "observation"))
	for _, o := range s.Slate {
		fmt.Fprintf(&b, "  %s  (artifact %s, observed %s)\n", printable(o.Label), short(o.Artifact), stamp(o.ObservedAt))
	}
	t, err := view.TotalsOf(ctx, v)
	if err != nil {
		return err
	}
	fmt.Fprintf(&b, "Artifacts: %d (%s of sightings stored in %s)\n", t.Count, size(t.Size), size(t.StoredSize))
	for art, err := range v.Artifacts(ctx, nil) {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "  %s  %-10s  %s → %s", short(art.Hash), art.Status, size(art.Size), size(art.StoredSize))
		if art.DerivedFrom != "" {
			fmt.Fprintf(&b, "  summary of %s (%s)", short(art.DerivedFrom), printable(art.Method))
		}
		if art.Reason != "" {
			fmt.Fprintf(&b, "  jettisoned: %s", printable(art.Reason))
		}
		b.WriteString("\n")
	}
	if len(s.FailedActions) > 0 {
		// Failed before entry numbers were stored in events: out of the story.
		fmt.Fprintf(&b, "Failed actions outside the story: %d\n", len(s.FailedActions))
		for _, e := range s.FailedActions {
			fmt.Fprintf(&b, "  %s  %s  %s\n", stamp(e.At), printable(e.Action.Kind), printable(firstLine(e.Action.Error)))
		}
	}
	_, err = fmt.Fprint(a.stdout, b.String())
	return err
}

// writeShowJSON writes s as writeJSON does, with arts as its artifacts:
// they are encoded one at a time, as they are read, so that the index of a
// long voyage is never held whole, in the voyage's views or in the output.
func writeShowJSON(w io.Writer, s *voyageShow, arts iter.Seq2[helm.ArtifactInfo, error]) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// put writes v at the indent of depth levels, as writeJSON would.
	put := func(v any, depth int) error {
		buf.Reset()
		enc.SetIndent(strings.Repeat("  ", depth), "  ")
		if err := enc.Encode(v); err != nil {
			return err
		}
		_, err := bw.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		return err
	}
	fields := []struct {
		name string
		v    any
	}{{"voyage", s.Voyage}, {"logbook", s.Logbook}, {"slate", s.Slate}, {"artifacts", nil}, {"failed_actions", s.FailedActions}}
	bw.WriteString("{\n")
	for i, f := range fields {
		fmt.Fprintf(bw, "  %q: ", f.name)
		if f.name != "artifacts" {
			if err := put(f.v, 1); err != nil {
				return err
			}
		} else {
			n := 0
			for art, err := range arts {
				if err != nil {
					return err
				}
				if n == 0 {
					bw.WriteString("[\n    ")
				} else {
					bw.WriteString(",\n    ")
				}
				n++
				if err := put(art, 2); err != nil {
					return err
				}
			}
			if n == 0 {
				bw.WriteString("[]")
			} else {
				bw.WriteString("\n  ]")
			}
		}
		if i < len(fields)-1 {
			bw.WriteString(",")
		}
		bw.WriteString("\n")
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// voyageVerifyCommand checks a voyage for damage, and against the
// witnesses given.
type voyageVerifyCommand struct {
	witnesses []string
}

func (c *voyageVerifyCommand) Flags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&c.witnesses, "witness", nil, "check the log against `W`: a git repository (its commits' Helm-Voyage trailers) or a head SEQ:HEX as helm voyage head prints it (repeatable)")
}

// options reads the --witness values: a directory is a git repository,
// anything else must be a head as printed.
func (c *voyageVerifyCommand) options(a *app) (*helm.VerifyOptions, error) {
	if len(c.witnesses) == 0 {
		return nil, nil
	}
	opts := &helm.VerifyOptions{}
	for _, w := range c.witnesses {
		if fi, err := os.Stat(w); err == nil && fi.IsDir() {
			opts.Repositories = append(opts.Repositories, w)
			continue
		}
		h, err := chain.Parse(w)
		if err != nil {
			return nil, &usageError{
				Err:  fmt.Errorf("--witness %q is neither a directory (a git repository) nor a head: %v", w, err),
				Hint: "helm " + commandWords(a.cmd) + "--witness PATH-TO-REPOSITORY, or --witness SEQ:HEX as helm voyage head prints it",
			}
		}
		opts.Heads = append(opts.Heads, h)
	}
	return opts, nil
}

// witnessLine is one witness checked, as --json gives it.
type witnessLine struct {
	helm.WitnessReport
	OK bool `json:"ok"`
}

// verifyProblem is one damage verify found: where (file, offset, seq,
// artifact), why, and the whole message.
type verifyProblem struct {
	*helm.DamageError
	Message string `json:"message"`
}

// verifyJSON is the --json form of `helm voyage verify`.
type verifyJSON struct {
	Voyage            string          `json:"voyage"`
	OK                bool            `json:"ok"`
	Segments          int             `json:"segments"`
	Records           uint64          `json:"records"`
	Reclaimed         uint64          `json:"reclaimed"`
	Bytes             int64           `json:"bytes"`
	LastSeq           uint64          `json:"last_seq"`
	Watermark         uint64          `json:"watermark"`
	TornTail          string          `json:"torn_tail,omitempty"`
	Store             string          `json:"store,omitempty"` // the shared store holding the log
	ArtifactsChecked  int             `json:"artifacts_checked"`
	ArtifactsSkipped  int             `json:"artifacts_skipped"`
	SkippedJettisoned int             `json:"artifacts_skipped_jettisoned"`
	SkippedReduced    int             `json:"artifacts_skipped_reduced"`
	Problems          []verifyProblem `json:"problems"`
	OpenedWithoutLoad bool            `json:"views_not_loaded,omitempty"`
	// Snapshot is the voyage's snapshot, if it has one: the event it was
	// taken at, and why opening ignores it, if it does.
	Snapshot *helm.SnapshotReport `json:"snapshot,omitempty"`
	// Policies are the guard rules the voyage recorded: the first it ran
	// under, then each change, by entry number.
	Policies []helm.PolicyEntry `json:"policies,omitempty"`
	// Head is the chain's head after the last record, recomputed from
	// the first (absent when it could not be).
	Head *chain.Head `json:"head,omitempty"`
	// Chain is the chain the log stores: "blake3" or "crc32c" (an older
	// segment format: it detects accidents, not edits); Format the
	// segment format of its last segment; ChainSince, for a log
	// rechained onto BLAKE3, the first seq in format 4.
	Chain      string `json:"chain,omitempty"`
	Format     uint32 `json:"format,omitempty"`
	ChainSince uint64 `json:"chain_since,omitempty"`
	// Witnesses are the witnesses checked (--witness).
	Witnesses []witnessLine `json:"witnesses,omitempty"`
	// Repositories are the witness repositories read (--witness), each
	// with how many witnesses of the voyage it held: one holding none
	// makes ok false and the exit status 1.
	Repositories []helm.RepositoryReport `json:"repositories,omitempty"`
	// Origin is, for a fork or a salvage, what was checked of its carried
	// records against its origin's, or why they were not.
	Origin string `json:"origin,omitempty"`
}

func (c *voyageVerifyCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 1 {
		return usageErrorf(a.cmd, "voyage verify: one VOYAGE at most, got %d arguments %q", len(args), args)
	}
	opts, err := c.options(a)
	if err != nil {
		return err
	}
	id, err := a.readVoyageID(ctx, firstArg(args))
	if err != nil {
		return err
	}
	out := verifyJSON{Voyage: id}
	// A witness repository holding no witness of the voyage comes with
	// the report: the report is printed, and the error said after it.
	rep, incomplete := a.home.Verify(ctx, id, opts)
	if rep == nil {
		return incomplete
	}
	out.Repositories = rep.Repositories
	if rep.Head != (chain.Head{}) {
		out.Head = &rep.Head
	}
	for _, w := range rep.Witnesses {
		out.Witnesses = append(out.Witnesses, witnessLine{WitnessReport: w, OK: w.Problem == "" && w.Malformed == ""})
	}
	out.fill(rep.Events)
	out.ArtifactsChecked, out.ArtifactsSkipped = rep.Artifacts, rep.Skipped
	out.SkippedJettisoned, out.SkippedReduced = rep.SkippedJettisoned, rep.SkippedReduced
	out.Snapshot = rep.Snapshot
	out.Policies = rep.Policies
	out.Origin = rep.Origin
	for _, p := range rep.Problems {
		out.Problems = append(out.Problems, verifyProblem{DamageError: p, Message: p.Error()})
	}
	// Damage in the event log stops the views from loading, and with them
	// the artifact index: the artifacts go unchecked. A witness that
	// differs stops nothing.
	differ := 0
	for _, w := range rep.Witnesses {
		if w.Problem != "" {
			differ++
		}
	}
	out.OpenedWithoutLoad = len(rep.Problems) > differ && rep.Artifacts == 0 && rep.Skipped == 0
	if out.Problems == nil {
		out.Problems = []verifyProblem{}
	}
	out.OK = len(out.Problems) == 0 && incomplete == nil
	if a.g.json {
		if err := writeJSON(a.stdout, out); err != nil {
			return err
		}
	} else {
		var b strings.Builder
		fmt.Fprintf(&b, "Voyage %s\n", id)
		if out.Store != "" {
			fmt.Fprintf(&b, "  events:    %s in %s, last seq %d\n", plural(int(out.Records), "record"), out.Store, out.LastSeq)
		} else {
			fmt.Fprintf(&b, "  events:    %s in %s (%s), last seq %d\n", plural(int(out.Records), "record"), plural(out.Segments, "segment"), size(out.Bytes), out.LastSeq)
		}
		if out.TornTail != "" {
			fmt.Fprintf(&b, "  torn tail: %s (cut by the next write; not damage)\n", out.TornTail)
		}
		if s := out.Snapshot; s != nil && s.Ignored != "" {
			fmt.Fprintf(&b, "  snapshot:  ignored by opening, which folds every event instead (not damage): %s\n", s.Ignored)
		} else if s != nil {
			fmt.Fprintf(&b, "  snapshot:  at event %d\n", s.Seq)
		}
		if out.Head != nil {
			fmt.Fprintf(&b, "  head:      %s\n", out.Head)
		}
		if line := chainLine(out.Chain, out.Format, out.ChainSince); line != "" {
			fmt.Fprintf(&b, "  chain:     %s\n", line)
		}
		for _, r := range out.Repositories {
			if r.Witnesses == 0 {
				fmt.Fprintf(&b, "  git repo:  %s: holds no %s line naming voyage %s: nothing there witnesses it\n", printable(r.Repository), chain.TrailerKey, id)
			} else if r.Witnesses == 1 {
				fmt.Fprintf(&b, "  git repo:  %s: 1 witness of the voyage\n", printable(r.Repository))
			} else {
				fmt.Fprintf(&b, "  git repo:  %s: %d witnesses of the voyage\n", printable(r.Repository), r.Witnesses)
			}
		}
		for _, w := range out.Witnesses {
			where := "given"
			if w.Commit != "" {
				where = "commit " + w.Commit + " in " + w.Repository
			}
			switch {
			case w.Malformed != "":
				fmt.Fprintf(&b, "  witness:   %s: not read (%s)\n", where, printable(w.Malformed))
			case w.Problem != "":
				fmt.Fprintf(&b, "  witness:   %s %s: DIFFERS\n", w.Head, where)
			default:
				fmt.Fprintf(&b, "  witness:   %s %s: ok\n", w.Head, where)
			}
		}
		if out.Origin != "" {
			fmt.Fprintf(&b, "  origin:    %s\n", printable(out.Origin))
		}
		for _, p := range out.Policies {
			desc := "no guard rules"
			if p.Digest != "" {
				desc = p.Digest + " (" + strings.Join(p.Sources, ", ") + ")"
			}
			if p.N == 0 {
				fmt.Fprintf(&b, "  policy:    started under %s\n", printable(desc))
			} else {
				fmt.Fprintf(&b, "  policy:    entry %d changed to %s\n", p.N, printable(desc))
			}
		}
		if out.OpenedWithoutLoad {
			b.WriteString("  artifacts: not checked (the events could not be loaded)\n")
		} else {
			fmt.Fprintf(&b, "  artifacts: %d checked against their BLAKE3 address, %d skipped (bytes gone: %d jettisoned, %d reduced, then compacted)\n",
				out.ArtifactsChecked, out.ArtifactsSkipped, out.SkippedJettisoned, out.SkippedReduced)
		}
		switch {
		case out.OK:
			b.WriteString("OK: nothing damaged\n")
		case len(out.Problems) == 0:
			b.WriteString("NOT CHECKED: a witness repository holds no witness of the voyage (nothing found damaged)\n")
		default:
			fmt.Fprintf(&b, "DAMAGED: %s\n", plural(len(out.Problems), "problem"))
			for _, p := range out.Problems {
				fmt.Fprintf(&b, "  - %s\n", p.Message)
			}
		}
		if _, err := fmt.Fprint(a.stdout, b.String()); err != nil {
			return err
		}
	}
	if len(out.Problems) > 0 {
		return errors.Join(&damagedError{Voyage: id}, incomplete)
	}
	return incomplete
}

func (o *verifyJSON) fill(r helm.LogReport) {
	o.Segments, o.Records, o.Bytes, o.LastSeq, o.Watermark = r.Segments, r.Records, r.Bytes, r.LastSeq, r.Watermark
	o.Reclaimed, o.Store = r.Reclaimed, r.Store
	o.Chain, o.Format, o.ChainSince = r.Chain, r.Format, r.ChainSince
	if r.Torn != nil {
		o.TornTail = fmt.Sprintf("%s at offset %d (%d bytes)", r.Torn.File, r.Torn.Offset, r.Torn.Bytes)
	}
}

// chainLine says plainly which chain protects the log ("" when verify
// could not tell).
func chainLine(kind string, format uint32, since uint64) string {
	switch {
	case kind == "crc32c":
		return fmt.Sprintf("CRC32C (segment format %d): detects accidents, not edits; helm voyage rechain moves it onto the BLAKE3 chain", format)
	case kind == "blake3" && since > 1:
		return fmt.Sprintf("BLAKE3 since seq %d (re-chained)", since)
	case kind == "blake3":
		return "BLAKE3"
	}
	return ""
}

// voyageCompactCommand reclaims the bytes of jettisoned artifacts and the
// payloads of reduced ones.
type voyageCompactCommand struct{}

func (*voyageCompactCommand) Flags(*pflag.FlagSet) {}

func (*voyageCompactCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 0 {
		return usageErrorf(a.cmd, "voyage compact takes no arguments (choose the voyage with --voyage ID)")
	}
	v, err := a.openVoyage(ctx)
	if err != nil {
		return err
	}
	rep, err := v.Compact(ctx)
	if err != nil {
		return err
	}
	if a.g.json {
		return writeJSON(a.stdout, rep)
	}
	if rep.Artifacts == 0 && rep.Kept == 0 {
		_, err = fmt.Fprintf(a.stdout, "Voyage %s: nothing to reclaim (no jettisoned or reduced artifact holds bytes)\n", short(v.ID()))
		return err
	}
	reduced := ""
	if rep.Reduced > 0 {
		reduced = fmt.Sprintf(" (%s of reduced artifacts)", plural(rep.Reduced, "payload"))
	}
	if store := a.home.StoreName(); store != "" {
		// A JetStream home erases (destroys the keys), never reclaims.
		_, err = fmt.Fprintf(a.stdout, "Voyage %s compacted: %s erased%s in %s: their keys are destroyed, the log is untouched\n", short(v.ID()), plural(rep.Artifacts, "artifact"), reduced, store)
		if err == nil && rep.Kept > 0 {
			_, err = fmt.Fprintf(a.stdout, "  %s kept: stored unencrypted by an earlier helm, or as records of the log, which cannot be erased\n", plural(rep.Kept, "jettisoned or reduced artifact"))
		}
		return err
	}
	_, err = fmt.Fprintf(a.stdout, "Voyage %s compacted: %s reclaimed%s, %s from the event log (%s) and %s from the pack file\n",
		short(v.ID()), plural(rep.Artifacts, "artifact"), reduced, size(rep.LogBytes), plural(rep.LogRecords, "record"), size(rep.PackBytes))
	if err == nil && rep.Kept > 0 {
		_, err = fmt.Fprintf(a.stdout, "  %s kept: in segments of the log's first format, which are never rewritten\n", plural(rep.Kept, "jettisoned or reduced record"))
	}
	return err
}
