package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
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
			c.Root().DisableAutoGenTag = true // the date and source say it
			header := &doc.GenManHeader{Title: "HELM", Section: "1", Source: "helm " + readVersion().Version, Manual: "helm manual"}
			if err := doc.GenManTree(c.Root(), header, args[0]); err != nil {
				return fmt.Errorf("write man pages into %s: %w", args[0], err)
			}
			return nil
		},
	}
}
