package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/helmlog/helm/internal/regular"
)

// An untrusted home is refused, as ssh's StrictModes refuses an
// authorized_keys others can write and git's safe.directory refuses a
// repository another user owns: whoever can change a home's config.toml
// can send its voyages to their own server (store), hand gh and git a
// token (pass_env) or let every action through (the guard rules), and
// whoever can change a gh configuration can log an identity in as
// themselves. So before helm uses a home it judges the home's directory,
// the gh configurations in it (gh-config/, each gh-config/IDENTITY/ and
// its hosts.yml and config.yml), config.toml as it reads it and the guard
// rules' file before it is loaded: each must be owned by the user running
// helm (or by root, who can change it anyway) and writable by no group
// and no other user. What is judged is what helm opens: a link is
// followed, and its target judged. The directories above the home are not
// judged (a home in /tmp, which everyone can write, is fine when it is
// the user's own). A home helm creates is the user's, 0700.
//
// HELM_SAFE_HOMES opts a shared home in, as git's safe.directory does:
// a list of homes (separated as PATH is) whose directory and files are
// taken as they are, or * for every home.
//
// File modes and owners mean nothing on Windows: there the checks are
// not made (safehome_other.go).

// safeHomesEnv names the homes trusted whatever their owner and modes.
const safeHomesEnv = "HELM_SAFE_HOMES"

// untrustedError is a home, or a file helm would read from it, that a
// user other than the one running helm can change.
type untrustedError struct {
	// What names what helm would have used: "the helm home",
	// "config.toml", "the guard rules", "a gh configuration".
	What string
	// Path is where helm would have read it; Target is what Path links
	// to, when it is a link.
	Path, Target string
	// Home is the home it is in (for the hint that opts it in).
	Home string
	// Owner and Self are the uid that owns it and the one running helm,
	// when the owner is wrong; Mode is its mode, when that is wrong.
	Owner, Self int
	Mode        fs.FileMode
	badOwner    bool
}

// chown is the command that gives a directory, and what it holds, or a
// file to the user running helm.
func (e *untrustedError) chown() []string {
	if e.Mode.IsDir() {
		return []string{"chown", "-R", fmt.Sprint(e.Self), e.Path}
	}
	return []string{"chown", fmt.Sprint(e.Self), e.Path}
}

func (e *untrustedError) Error() string {
	where := e.Path
	if e.Target != "" {
		where += " (a link to " + e.Target + ")"
	}
	why := fmt.Sprintf("it is writable by %s (mode %s)", writers(e.Mode), e.Mode)
	if e.badOwner {
		why = fmt.Sprintf("it is owned by uid %d, not by you (uid %d)", e.Owner, e.Self)
	}
	return fmt.Sprintf("refusing %s %s: %s, so another user could have changed what helm would read there (where its voyages go, the guard rules, who gh logs in as)", e.What, where, why)
}

// hint says how to make the path trustworthy, or to trust the home.
func (e *untrustedError) hint() string {
	fix := commandLine([]string{"chmod", "go-w", e.Path})
	if e.badOwner {
		fix = commandLine(e.chown()) + " if it is yours"
	}
	return fix + "; or, for a home you share on purpose, " + safeHomesEnv + "=" + commandLine([]string{e.Home})
}

// writers names who besides the owner may write a file of mode m.
func writers(m fs.FileMode) string {
	switch m.Perm() & 0o022 {
	case 0o020:
		return "its group"
	case 0o002:
		return "others"
	}
	return "its group and others"
}

// safeHome reports whether HELM_SAFE_HOMES trusts home whatever its owner
// and modes: it lists home (relative entries resolve against the working
// directory, as HELM_HOME does; a link and its target are one home), or *.
func (a *app) safeHome(home string) bool {
	var real string
	for _, e := range filepath.SplitList(a.getenv(safeHomesEnv)) {
		e = strings.TrimSpace(e)
		switch {
		case e == "":
			continue
		case e == "*":
			return true
		case filepath.Clean(a.abs(e)) == filepath.Clean(home):
			return true
		}
		if real == "" {
			real, _ = filepath.EvalSymlinks(home)
		}
		if r, err := filepath.EvalSymlinks(a.abs(e)); err == nil && real != "" && r == real {
			return true
		}
	}
	return false
}

// checkHome judges the home in dir before helm reads anything of it: its
// directory, and its gh configurations. A home not there yet is fine:
// helm creates it, the user's, 0700.
func (a *app) checkHome(dir string) error {
	if !modesMatter || a.safeHome(dir) {
		return nil
	}
	if err := a.judgePath(dir, "the helm home", dir); err != nil {
		return err
	}
	gh := filepath.Join(dir, "gh-config")
	if err := a.judgePath(gh, "the gh configurations", dir); err != nil {
		return err
	}
	entries, err := os.ReadDir(gh)
	if err != nil {
		return nil // none, or unreadable: gh reads nothing there either
	}
	for _, e := range entries {
		p := filepath.Join(gh, e.Name())
		if info, err := os.Stat(p); err != nil || !info.IsDir() {
			continue // gh reads only directories (GH_CONFIG_DIR)
		}
		what := "the gh configuration of " + e.Name()
		for _, f := range []string{p, filepath.Join(p, "hosts.yml"), filepath.Join(p, "config.yml")} {
			if err := a.judgePath(f, what, dir); err != nil {
				return err
			}
		}
	}
	return nil
}

// trustFile judges path, a file of the home in dir that helm is about to
// read (what names it); one not there is fine.
func (a *app) trustFile(path, what string) error {
	dir, err := a.homeDir()
	if err != nil || !modesMatter || a.safeHome(dir) {
		return err
	}
	return a.judgePath(path, what, dir)
}

// readHomeFile reads path, a file of the home in dir, judging the file it
// opened (what names it) before it reads a byte of it. Only a regular file
// of at most maxHomeFile bytes is read (regular.Open): a FIFO would hold
// every command, a hook among them, until something wrote to it.
func (a *app) readHomeFile(path, what, dir string) ([]byte, error) {
	f, err := regular.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if modesMatter && !a.safeHome(dir) {
		info, err := f.Stat()
		if err != nil {
			return nil, err
		}
		if err := judge(path, what, dir, info); err != nil {
			return nil, err
		}
	}
	return regular.ReadLimited(f, path, maxHomeFile)
}

// judgePath judges what path names, a link followed; a path not there
// (or that cannot be looked at, which helm then cannot read either) is
// left for its reader.
func (a *app) judgePath(path, what, dir string) error {
	info, err := os.Stat(path)
	if err != nil {
		return nil
	}
	return judge(path, what, dir, info)
}

// judge refuses the file or directory at path (info, what stat says of
// what path names) when a user other than the one running helm, or root,
// owns it, or its group or others may write it.
func judge(path, what, dir string, info fs.FileInfo) error {
	owner, ok := ownerOf(info)
	self := os.Geteuid()
	e := &untrustedError{What: what, Path: path, Home: dir, Owner: owner, Self: self, Mode: info.Mode()}
	switch {
	case ok && owner != self && owner != 0:
		e.badOwner = true
	case info.Mode().Perm()&0o022 == 0:
		return nil
	case info.Mode().Perm()&0o002 == 0 && groupPrivateTo(info, owner):
		// Writable by its group, which is the owner's alone (a user
		// private group, umask 002's setting): as OpenSSH's
		// StrictModes, no one else can change it.
		return nil
	}
	if l, err := os.Lstat(path); err == nil && l.Mode()&fs.ModeSymlink != 0 {
		e.Target, _ = filepath.EvalSymlinks(path)
	}
	return &usageError{Err: e, Hint: e.hint()}
}

// isUntrusted reports whether err is a refused home.
func isUntrusted(err error) bool {
	var e *untrustedError
	return errors.As(err, &e)
}
