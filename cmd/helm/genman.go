package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// newGenManCmd writes the man pages, one per command, into a directory:
// they are generated from the command tree when helm is built or
// packaged, never committed, so they cannot drift from the help.
func newGenManCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "__gen-man DIR",
		Short:   "write helm's man pages into DIR",
		Example: "  helm __gen-man ./man && man ./man/helm-observe-command.1",
		Hidden:  true,
		Args:    cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf(c, "__gen-man: one DIR expected, got %q", args)
			}
			if err := os.MkdirAll(args[0], 0o755); err != nil {
				return fmt.Errorf("write man pages: %w", err)
			}
			if _, err := writeManTree(c.Root(), newManHeader(), args[0]); err != nil {
				return fmt.Errorf("write man pages into %s: %w", args[0], err)
			}
			return nil
		},
	}
}

// newManCmd is `helm man install [DIR]`: the man pages, generated from
// this helm's command tree, written where man finds them.
func newManCmd(a *app) *cobra.Command {
	c := group(a, &cobra.Command{
		Use:     "man install [DIR]",
		Short:   "install helm's man pages",
		Example: "  helm man install\n  man helm-log",
	})
	c.AddCommand(leafCmd(a, &cobra.Command{
		Use:   "install [DIR]",
		Short: "write helm's man pages (helm.1, helm-log.1, ...) into DIR",
		Long: `Write helm's man pages, one per command and generated from this helm, so
that they match it, into DIR: by default $XDG_DATA_HOME/man/man1, else
~/.local/share/man/man1, which man searches when ~/.local/bin is on PATH
(else add ~/.local/share/man to MANPATH). Pages already there are
replaced; nothing else is touched. Run it again after updating helm.`,
		Example: "  helm man install && man helm-log\n  sudo helm man install /usr/local/share/man/man1",
	}, &manInstallCmd{}))
	return c
}

type manInstallCmd struct{}

func (*manInstallCmd) Flags(*pflag.FlagSet) {}

func (*manInstallCmd) Run(_ context.Context, a *app, args []string) error {
	if len(args) > 1 {
		return usageErrorf(a.cmd, "man install: one DIR at most, got %q", args)
	}
	dir := ""
	switch {
	case len(args) == 1:
		dir = a.abs(args[0])
	case a.getenv("XDG_DATA_HOME") != "":
		dir = filepath.Join(a.getenv("XDG_DATA_HOME"), "man", "man1")
	default:
		home := a.getenv("HOME")
		if home == "" {
			var err error
			if home, err = os.UserHomeDir(); err != nil {
				return &usageError{Err: fmt.Errorf("man install: no home directory to install into: %w", err), Hint: "helm man install DIR"}
			}
		}
		dir = filepath.Join(home, ".local", "share", "man", "man1")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &hinted{Err: fmt.Errorf("man install: create %s: %w", dir, err), Hint: "helm man install DIR, with a DIR you can write"}
	}
	pages, err := writeManTree(a.cmd.Root(), newManHeader(), dir)
	if err != nil {
		return &hinted{Err: fmt.Errorf("man install: write the pages into %s: %w", dir, err), Hint: "helm man install DIR, with a DIR you can write"}
	}
	if a.g.json {
		return writeJSON(a.stdout, map[string]any{"dir": dir, "pages": pages})
	}
	_, err = fmt.Fprintf(a.stdout, "Installed %s in %s (man helm, man helm-log, ...)\n", plural(pages, "man page"), printable(dir))
	return err
}
