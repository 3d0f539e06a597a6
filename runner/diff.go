package runner

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// FileStat is one file a diff changed: its path, the path it was renamed
// from (if it was), and how many lines were added and deleted. A binary
// file counts no lines: git reports none for it.
type FileStat struct {
	Path    string
	From    string // the path before a rename; empty otherwise
	Added   int
	Deleted int
	Binary  bool
}

// DiffStat reports the files that differ between commits base and head
// in the runner's repository, as `git diff --numstat` counts them, in
// git's order (by path). Renames are found (-M) whatever the repository's
// configuration says, so that a moved file is one entry and not a
// deletion and an addition. It reads the repository and changes nothing.
func (r *Runner) DiffStat(ctx context.Context, base, head string) ([]FileStat, error) {
	for _, rev := range []struct{ name, val string }{{"base", base}, {"head", head}} {
		if rev.val == "" || strings.HasPrefix(rev.val, "-") || strings.ContainsAny(rev.val, " \t\n\x00") {
			return nil, fmt.Errorf("diff %s..%s: the %s commit %q is not a revision", base, head, rev.name, rev.val)
		}
	}
	// -z: paths as they are, NUL-terminated, never quoted; the trailing
	// "--" keeps git from reading a revision as a path.
	out, err := r.Git(ctx, "diff", "--numstat", "-z", "-M", "--no-ext-diff", "--no-textconv", base, head, "--")
	if err != nil {
		return nil, fmt.Errorf("diff %s..%s in %s: %w", base, head, r.dirName(), err)
	}
	stats, err := parseNumstat(string(out))
	if err != nil {
		return nil, fmt.Errorf("diff %s..%s in %s: %w", base, head, r.dirName(), err)
	}
	return stats, nil
}

// parseNumstat reads `git diff --numstat -z`: for each file
// "ADDED\tDELETED\tPATH\0", or for a rename "ADDED\tDELETED\t\0FROM\0TO\0";
// a binary file counts "-" lines.
func parseNumstat(out string) ([]FileStat, error) {
	if out == "" {
		return nil, nil
	}
	body, ok := strings.CutSuffix(out, "\x00")
	if !ok {
		return nil, fmt.Errorf("git's numstat output does not end in a NUL: it was cut short")
	}
	fields := strings.Split(body, "\x00")
	var stats []FileStat
	for i := 0; i < len(fields); i++ {
		rec := fields[i]
		added, rest, ok1 := strings.Cut(rec, "\t")
		deleted, path, ok2 := strings.Cut(rest, "\t")
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("git's numstat output has a record %q that is not ADDED<TAB>DELETED<TAB>PATH", rec)
		}
		s := FileStat{Path: path}
		if path == "" { // a rename: the paths follow
			if i+2 >= len(fields) {
				return nil, fmt.Errorf("git's numstat output ends in the middle of a rename after %q", rec)
			}
			s.From, s.Path = fields[i+1], fields[i+2]
			i += 2
		}
		if added == "-" && deleted == "-" {
			s.Binary = true
		} else {
			var err error
			if s.Added, err = strconv.Atoi(added); err != nil {
				return nil, fmt.Errorf("git's numstat output counts %q lines added to %s", added, s.Path)
			}
			if s.Deleted, err = strconv.Atoi(deleted); err != nil {
				return nil, fmt.Errorf("git's numstat output counts %q lines deleted from %s", deleted, s.Path)
			}
		}
		stats = append(stats, s)
	}
	return stats, nil
}
