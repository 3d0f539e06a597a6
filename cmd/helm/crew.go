package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm"
	"github.com/helmlog/helm/logbook"
)

// The crew's record from the command line: notes, resuming a voyage, and
// judging one.

func newNoteCmd(a *app) *cobra.Command {
	return leafCmd(a, &cobra.Command{
		Use:   "note TEXT",
		Short: "record a note: a status or a decision, without an observation",
		Long: `Record a logbook entry of text alone: where things stand, what was
decided, what is being waited for. It is numbered like bearings and
actions, and records who wrote it.`,
		Example: `  helm note "Waiting for CI on PR #45 before merging."`,
	}, &noteCommand{})
}

type noteCommand struct{}

func (*noteCommand) Flags(*pflag.FlagSet) {}

func (*noteCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) != 1 {
		return usageErrorf(a.cmd, "note: one TEXT expected, got %d arguments (quote the note)", len(args))
	}
	if strings.TrimSpace(args[0]) == "" {
		return usageErrorf(a.cmd, "note: the TEXT is empty: say what to note")
	}
	v, who, err := a.activeVoyage(ctx, true)
	if err != nil {
		return err
	}
	e, err := v.Note(ctx, args[0], who)
	if err != nil {
		return err
	}
	if a.g.json {
		return writeJSON(a.stdout, e)
	}
	_, err = fmt.Fprintf(a.stdout, "Note %d recorded for voyage %s\n", e.N, short(v.ID()))
	return err
}

// voyageResumeCommand resumes a blocked or partial voyage.
type voyageResumeCommand struct{ reason string }

func (c *voyageResumeCommand) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.reason, "reason", "", "why the voyage goes on, as `TEXT`")
}

func (c *voyageResumeCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 0 {
		return usageErrorf(a.cmd, "voyage resume: unexpected arguments %q (choose the voyage with --voyage ID; quote the reason: --reason \"TEXT\")", args)
	}
	v, err := a.openVoyageAmong(ctx, helm.ListOpen, "blocked or partial", func(i helm.VoyageInfo) bool { return i.Status.Resumable() })
	if err != nil {
		return err
	}
	who, err := a.who(ctx, v, false)
	if err != nil {
		return err
	}
	if err := v.Resume(ctx, c.reason, who); err != nil {
		return err
	}
	if a.g.json {
		return writeJSON(a.stdout, v.Info())
	}
	_, err = fmt.Fprintf(a.stdout, "Voyage %s is active again\n", short(v.ID()))
	return err
}

func newJudgeCmd(a *app) *cobra.Command {
	return leafCmd(a, &cobra.Command{
		Use:   "judge --score 1-10 --dimension NAME --evidence N[,N...] TEXT",
		Short: "record an evaluation of the voyage by someone who took no part in it",
		Long: `Record a judgement: a score from 1 to 10 on one dimension (correctness,
care, ...), citing the entries it rests on by number, with what the judge
says. The judge (--as) must be an identity that recorded nothing in the
voyage. A voyage may be judged after it is completed.`,
		Example: `  helm judge --as carol --role judge --method human --score 8 --dimension correctness --evidence 1,3 "The fix addresses the crash."`,
	}, &judgeCommand{})
}

type judgeCommand struct {
	score     int
	dimension string
	evidence  string
}

func (c *judgeCommand) Flags(fs *pflag.FlagSet) {
	fs.IntVar(&c.score, "score", 0, "the score, `1-10`")
	fs.StringVar(&c.dimension, "dimension", "", "what is judged, `NAME` (correctness, care, ...)")
	fs.StringVar(&c.evidence, "evidence", "", "the entries it rests on, `N[,N...]`")
}

func (c *judgeCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) != 1 || strings.TrimSpace(args[0]) == "" {
		return usageErrorf(a.cmd, "judge: one TEXT expected (what the judge says), got %q", args)
	}
	if c.score < 1 || c.score > 10 {
		return usageErrorf(a.cmd, "judge: --score %d is not from 1 to 10", c.score)
	}
	if strings.TrimSpace(c.dimension) == "" {
		return usageErrorf(a.cmd, "judge: --dimension NAME is required (correctness, care, ...)")
	}
	var evidence []int
	for _, f := range strings.Split(c.evidence, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return usageErrorf(a.cmd, "judge: --evidence %q: %q is not an entry number", c.evidence, f)
		}
		evidence = append(evidence, n)
	}
	if len(evidence) == 0 {
		return usageErrorf(a.cmd, "judge: --evidence N[,N...] is required: the entries the judgement rests on (see helm log)")
	}
	v, err := a.openVoyage(ctx)
	if err != nil {
		return err
	}
	who, err := a.who(ctx, v, true)
	if err != nil {
		return err
	}
	e, err := v.Judge(ctx, logbook.Judgement{Score: c.score, Dimension: c.dimension, Evidence: evidence, Text: args[0]}, who)
	if err != nil {
		return err
	}
	if a.g.json {
		return writeJSON(a.stdout, e)
	}
	_, err = fmt.Fprintf(a.stdout, "Judgement %d recorded for voyage %s: %s %d/10\n", e.N, short(v.ID()), printable(c.dimension), c.score)
	return err
}

// orNone is s, or "(none)" when it is empty.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
