package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// writeHelp prints the help of c: usage, what it does, its commands, its
// flags, the global flags and an example.
func writeHelp(w io.Writer, c *cobra.Command) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s\n", c.UseLine())
	if text := strings.TrimSpace(c.Long); text != "" {
		fmt.Fprintf(&b, "\n%s\n", text)
	}
	var subs []*cobra.Command
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() {
			subs = append(subs, s)
		}
	}
	if len(subs) > 0 {
		b.WriteString("\nCommands:\n")
		width := 0
		for _, s := range subs {
			width = max(width, len(s.Name()))
		}
		for _, s := range subs {
			fmt.Fprintf(&b, "  %-*s  %s\n", width, s.Name(), s.Short)
		}
	}
	if u := flagUsages(c.LocalNonPersistentFlags()); u != "" {
		fmt.Fprintf(&b, "\nFlags:\n%s", u)
	}
	fmt.Fprintf(&b, "\nGlobal flags (before or after the command):\n%s", flagUsages(c.Root().PersistentFlags()))
	if c.Example != "" {
		fmt.Fprintf(&b, "\nExample:\n%s\n", strings.TrimRight(c.Example, "\n"))
	}
	if len(subs) > 0 {
		fmt.Fprintf(&b, "\nRun 'helm %sCOMMAND --help' for a command's flags.\n", commandWords(c))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// flagUsages lists a flag set's visible flags, one a line, aligned: like
// pflag's FlagUsages, with helm's rules for showing defaults.
func flagUsages(fs *pflag.FlagSet) string {
	type row struct{ left, usage string }
	var rows []row
	width := 0
	fs.SortFlags = false
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		left := "      --" + f.Name
		if f.Shorthand != "" {
			left = "  -" + f.Shorthand + ", --" + f.Name
		}
		name, usage := pflag.UnquoteUsage(f)
		switch {
		case f.Value.Type() == "bool" || name == "":
		case f.NoOptDefVal != "":
			left += "[=" + name + "]" // a value only after "=": --json[=FIELDS]
		default:
			left += " " + name
		}
		rows = append(rows, row{left, usage + flagDefault(f)})
		width = max(width, len(left))
	})
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%-*s   %s\n", width, r.left, r.usage)
	}
	return b.String()
}

// flagDefault is what the help says of f's default: " (default 2m0s)",
// or "" when the default goes without saying (false, empty, 0, -1).
func flagDefault(f *pflag.Flag) string {
	switch f.Value.Type() {
	case "bool", "stringArray", "stringSlice":
	case "string":
		if f.DefValue != "" {
			return fmt.Sprintf(" (default %q)", f.DefValue)
		}
	default:
		if f.DefValue != "0" && f.DefValue != "-1" && f.DefValue != "" {
			return " (default " + f.DefValue + ")"
		}
	}
	return ""
}

// newHelpCmd is `helm help COMMAND...`: the same as COMMAND --help, and an
// unknown command is a usage error with suggestions, as it is when run.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "help [COMMAND...]",
		Short:   "show help for a command",
		Example: "  helm help observe github-pr",
		Args:    cobra.ArbitraryArgs,
		// Completes command names as the root does.
		ValidArgsFunction: func(c *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			target, _, err := c.Root().Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []cobra.Completion
			for _, s := range target.Commands() {
				if s.IsAvailableCommand() {
					out = append(out, cobra.CompletionWithDesc(s.Name(), s.Short))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			target := c.Root()
			for _, word := range args {
				next := findSub(target, word)
				if next == nil {
					if s := target.SuggestionsFor(word); len(s) > 0 {
						return usageErrorf(target, "help: unknown command %q for %s; did you mean %s?", word, target.CommandPath(), orList(s))
					}
					return usageErrorf(target, "help: unknown command %q for %s (one of: %s)", word, target.CommandPath(), subNames(target))
				}
				target = next
			}
			return writeHelp(c.OutOrStdout(), target)
		},
	}
}

func findSub(c *cobra.Command, name string) *cobra.Command {
	for _, s := range c.Commands() {
		if s.Name() == name || s.HasAlias(name) {
			return s
		}
	}
	return nil
}
