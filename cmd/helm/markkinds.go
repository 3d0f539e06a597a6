package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/helmlog/helm/cmd/helm/internal/markkind"
	"github.com/helmlog/helm/marks"
)

// The mark kinds are package markkind's, which the MCP server shares;
// this file holds how the command line gives their parameters, and
// anchors their paths at its working directory.

// buildMark builds the mark a command line names, its relative paths
// anchored at the working directory: "a.go" typed in two worktrees names
// two files, and the slate keys them apart.
func (a *app) buildMark(ctx context.Context, k *markkind.Kind, p *markkind.Params, args []string) (marks.Mark, error) {
	if err := markFromArgs(a, k, p, args); err != nil {
		return nil, err
	}
	return a.anchoredMark(ctx, k, p)
}

// anchoredMark builds k's mark from p, its relative paths anchored at the
// working directory.
func (a *app) anchoredMark(ctx context.Context, k *markkind.Kind, p *markkind.Params) (marks.Mark, error) {
	m, err := k.Build(ctx, p, a.repo)
	if err != nil {
		return nil, err
	}
	dir := a.main.Dir
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("find the working directory to anchor %s: %w", m, err)
		}
	}
	marks.SetBase(m, dir)
	return m, nil
}

// markFromArgs sets the parameter of k the command line's positional
// arguments give.
func markFromArgs(a *app, k *markkind.Kind, p *markkind.Params, args []string) error {
	var err error
	switch k.Arg {
	case "":
		if len(args) > 0 {
			return usageErrorf(a.cmd, "%s takes no arguments, got %q (name the repository with --repo OWNER/NAME)", k.Name, args)
		}
	case "paths":
		p.Paths = append(p.Paths, args...)
		if len(p.Paths) == 0 {
			return usageErrorf(a.cmd, "%s needs at least one --read FILE", k.Name)
		}
	case "command":
		if len(args) == 0 {
			return usageErrorf(a.cmd, "%s needs a PROGRAM after --", k.Name)
		}
		p.Command = args
	case "number":
		p.Number, err = numberArg(a, args, k.ArgName)
	case "root":
		p.Root, err = oneArg(a, args, k.ArgName)
	case "path":
		p.Path, err = oneArg(a, args, k.ArgName)
	case "description":
		p.Description, err = oneArg(a, args, k.ArgName)
	case "url":
		p.URL, err = oneArg(a, args, k.ArgName)
	default:
		panic("mark kind " + k.Name + ": no argument " + k.Arg)
	}
	return err
}

func oneArg(a *app, args []string, name string) (string, error) {
	switch len(args) {
	case 1:
		return args[0], nil
	case 0:
		return "", usageErrorf(a.cmd, "%s: missing %s", commandName(a.cmd), name)
	}
	return "", usageErrorf(a.cmd, "%s: one %s expected, got %d arguments: %q", commandName(a.cmd), name, len(args), args)
}

func numberArg(a *app, args []string, name string) (int, error) {
	s, err := oneArg(a, args, name)
	if err != nil {
		return 0, err
	}
	return parseNumber(a, s, name)
}

func parseNumber(a *app, s, name string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(s, "#"))
	if err != nil || n <= 0 {
		return 0, usageErrorf(a.cmd, "%s: %s must be a positive number, got %q", commandName(a.cmd), name, s)
	}
	return n, nil
}

// repo is the GitHub repository: flag (--repo, or a tool's repo), else the
// one the origin remote of the working directory names.
func (a *app) repo(ctx context.Context, flag string) (string, error) {
	r, err := a.runner("", flag)
	if err != nil {
		return "", err
	}
	repo, err := r.Repo(ctx)
	if err != nil {
		return "", &hinted{Err: err, Hint: "helm " + commandLine(a.args) + " --repo OWNER/NAME", Tool: "give repo as OWNER/NAME"}
	}
	return repo, nil
}
