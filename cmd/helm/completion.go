package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// completionShells are the shells `helm completion` writes a script for.
var completionShells = []string{"bash", "zsh", "fish", "powershell"}

// newCompletionCmd writes a shell's completion script. The scripts call
// back into helm (a hidden __complete command), so they complete what this
// helm knows: commands, flags, flag values such as --status, and the ids
// of the active voyages for --voyage.
func newCompletionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "print a shell completion script",
		Long: `Print the completion script for bash, zsh, fish or PowerShell on
standard output.

bash (needs the bash-completion package):
  source <(helm completion bash)          # this shell
  helm completion bash > ~/.local/share/bash-completion/completions/helm

zsh (compinit must be loaded: autoload -U compinit; compinit):
  source <(helm completion zsh)           # this shell
  helm completion zsh > "${fpath[1]}/_helm"

fish:
  helm completion fish | source           # this shell
  helm completion fish > ~/.config/fish/completions/helm.fish

PowerShell:
  helm completion powershell | Out-String | Invoke-Expression    # this shell
  helm completion powershell >> $PROFILE                          # every shell`,
		Example:   "  helm completion bash > ~/.local/share/bash-completion/completions/helm\n  source <(helm completion zsh)",
		ValidArgs: completionShells,
		Args:      cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf(c, "completion: name one shell: %s", strings.Join(completionShells, ", "))
			}
			root, w := c.Root(), c.OutOrStdout()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(w, true)
			case "zsh":
				return root.GenZshCompletion(w)
			case "fish":
				return root.GenFishCompletion(w, true)
			case "powershell":
				return root.GenPowerShellCompletionWithDesc(w)
			}
			return usageErrorf(c, "completion: unknown shell %q (one of: %s)", args[0], strings.Join(completionShells, ", "))
		},
	}
}

// completeFlags registers the values the global flags complete to.
func (a *app) completeFlags(root *cobra.Command) {
	_ = root.RegisterFlagCompletionFunc("voyage", func(c *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		// Reading never writes: listing is safe while completing.
		h, err := a.openHome()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		list, _ := h.List(c.Context(), nil)
		var out []cobra.Completion
		for _, v := range list {
			if strings.HasPrefix(v.ID, prefix) {
				out = append(out, cobra.CompletionWithDesc(v.ID, fmt.Sprintf("%s: %s", v.Status, printable(v.Intent))))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
	_ = root.RegisterFlagCompletionFunc("home", cobra.FixedCompletions(nil, cobra.ShellCompDirectiveFilterDirs))
}

// fixedValues registers the values flag name of c completes to.
func fixedValues(c *cobra.Command, name string, values ...string) {
	_ = c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
}
