package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"
)

// What helm does for a person watching, as git and gh do: when standard
// output is a terminal, a long output (helm log) goes through a pager,
// its headings are coloured and its times read "2 minutes ago". Output
// to a pipe or a file is never touched: scripts and goldens read what
// they always read, absolute times in UTC and no escape sequences.
//
//   - colour: on a terminal, unless NO_COLOR is set (no-color.org) or
//     TERM is "dumb";
//   - pager: on a terminal, unless --no-pager; HELM_PAGER, then PAGER,
//     then git's default, less with LESS=FRX (quit when the output fits
//     one screen, pass colours, leave the screen as it was); "cat" means
//     none; --follow never pages;
//   - relative times: on a terminal, unless --absolute.

// stdoutIsTerminal reports whether the command's output is a terminal.
func (a *app) stdoutIsTerminal() bool { return isTerminalWriter(a.stdout) }

// colour reports whether output to stdout is coloured.
func (a *app) colour() bool {
	return a.stdoutIsTerminal() && a.getenv("NO_COLOR") == "" && a.getenv("TERM") != "dumb"
}

// pagerCommand is the pager to run, "" for none.
func (a *app) pagerCommand() string {
	if a.g.noPager || !a.stdoutIsTerminal() {
		return ""
	}
	p := a.getenv("HELM_PAGER")
	if p == "" {
		p = a.getenv("PAGER")
	}
	if p == "" {
		p = "less"
	}
	if p == "cat" {
		return ""
	}
	// A pager that is not installed (less, on a small container) would
	// swallow the output: print it directly instead.
	if f := strings.Fields(p); len(f) == 0 || !onPath(f[0]) {
		return ""
	}
	return p
}

// page runs write with its output going through the pager (pagerCommand)
// and, on a terminal, styled by style (nil: as it is). A pager the user
// quits early ends the writing quietly, as git's does; a pager that
// cannot start leaves the output unpaged.
func (a *app) page(style func(string) string, write func(w io.Writer) error) error {
	var out io.Writer = a.stdout
	var pager *exec.Cmd
	var pipe io.WriteCloser
	if p := a.pagerCommand(); p != "" {
		pager = pagerCmd(p)
		pager.Stdout, pager.Stderr = a.stdout, a.stderr
		pager.Env = os.Environ()
		if a.getenv("LESS") == "" {
			pager.Env = append(pager.Env, "LESS=FRX")
		}
		if a.getenv("LV") == "" {
			pager.Env = append(pager.Env, "LV=-c")
		}
		if w, err := pager.StdinPipe(); err == nil && pager.Start() == nil {
			out, pipe = w, w
		} else {
			pager = nil
		}
	}
	var sw *lineStyler
	if style != nil && a.stdoutIsTerminal() {
		sw = &lineStyler{w: out, style: style}
		out = sw
	}
	err := write(out)
	if sw != nil && err == nil {
		err = sw.Flush()
	}
	if pager != nil {
		pipe.Close()
		werr := pager.Wait()
		if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
			err = nil // the reader quit the pager before the end
		}
		if err == nil && werr != nil {
			var xe *exec.ExitError
			if !errors.As(werr, &xe) {
				return fmt.Errorf("pager %q: %w", a.pagerCommand(), werr)
			}
		}
	}
	return err
}

// pagerCmd runs the pager p as git does: through the shell, so that it
// may hold arguments ("less -S").
func pagerCmd(p string) *exec.Cmd {
	if runtime.GOOS == "windows" {
		f := strings.Fields(p)
		return exec.Command(f[0], f[1:]...)
	}
	return exec.Command("sh", "-c", p)
}

// lineStyler restyles what is written through it a whole line at a time.
type lineStyler struct {
	w     io.Writer
	style func(string) string
	buf   []byte
}

func (s *lineStyler) Write(p []byte) (int, error) {
	s.buf = append(s.buf, p...)
	for {
		i := strings.IndexByte(string(s.buf), '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(s.buf[:i])
		s.buf = s.buf[i+1:]
		if _, err := io.WriteString(s.w, s.style(line)+"\n"); err != nil {
			return 0, err
		}
	}
}

// Flush writes a last line that had no newline.
func (s *lineStyler) Flush() error {
	if len(s.buf) == 0 {
		return nil
	}
	line := string(s.buf)
	s.buf = nil
	_, err := io.WriteString(s.w, s.style(line))
	return err
}

// SGR sequences for the few colours helm uses.
const (
	sgrReset  = "\x1b[0m"
	sgrBold   = "\x1b[1m"
	sgrYellow = "\x1b[33m"
	sgrGreen  = "\x1b[32m"
	sgrRed    = "\x1b[31m"
	sgrDim    = "\x1b[2m"
)

// stampPattern is a stamp as the story writes it (view.Stamp).
const stampPattern = `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`

var (
	entryHeading = lazyRegexp(`^(── .+ \d+ ──) (` + stampPattern + `)( · .*)?$`)
	storyStamp   = lazyRegexp(`^(Created: |Status: [a-z-]+ \()(` + stampPattern + `)(\)?)$`)
)

// logStyle restyles the story's lines for a terminal: each entry's
// heading coloured (as git colours a commit's), the voyage's status by
// what it says, and the times of headings relative when relative is set.
// Only lines the story itself writes at the start of a line are touched
// (what callers wrote is indented under them, or escaped on one line),
// so that no recorded text is ever restyled or reread as a time.
func logStyle(colour, relative bool, now time.Time) func(string) string {
	paint := func(sgr, s string) string {
		if !colour || s == "" {
			return s
		}
		return sgr + s + sgrReset
	}
	when := func(stamp string) string {
		if !relative {
			return stamp
		}
		t, err := time.Parse(time.RFC3339, stamp)
		if err != nil {
			return stamp
		}
		return relativeTime(t, now)
	}
	return func(line string) string {
		if m := entryHeading().FindStringSubmatch(line); m != nil {
			return paint(sgrYellow, m[1]) + " " + when(m[2]) + paint(sgrDim, m[3])
		}
		if m := storyStamp().FindStringSubmatch(line); m != nil {
			return m[1] + when(m[2]) + m[3]
		}
		switch {
		case strings.HasPrefix(line, "Voyage: "):
			return paint(sgrBold, line)
		case strings.HasPrefix(line, "Status: failed"), strings.HasPrefix(line, "Status: cancelled"), strings.HasPrefix(line, "Status: blocked"):
			return "Status: " + paint(sgrRed, strings.TrimPrefix(line, "Status: "))
		case strings.HasPrefix(line, "Status: "):
			return "Status: " + paint(sgrGreen, strings.TrimPrefix(line, "Status: "))
		}
		return line
	}
}

// relativeTime renders t as gh does, counted back from now: "less than
// a minute ago", "5 minutes ago", "about 1 hour ago", "3 days ago",
// "about 1 year ago". A time after now (another machine's clock, or a
// forged one) is shown absolute, and so is one too far back for a
// Duration to count (about 292 years: Sub would saturate and say so for
// any older time).
func relativeTime(t, now time.Time) string {
	d := now.Sub(t)
	if d < 0 || !t.Add(d).Equal(now) {
		return stamp(t)
	}
	ago := func(n int, unit string) string {
		if n == 1 {
			return "about 1 " + unit + " ago"
		}
		return fmt.Sprintf("%d %ss ago", n, unit)
	}
	switch {
	case d < time.Minute:
		return "less than a minute ago"
	case d < time.Hour:
		if n := int(d / time.Minute); n > 1 {
			return fmt.Sprintf("%d minutes ago", n)
		}
		return "1 minute ago"
	case d < 24*time.Hour:
		return ago(int(d/time.Hour), "hour")
	case d < 30*24*time.Hour:
		return ago(int(d/(24*time.Hour)), "day")
	case d < 365*24*time.Hour:
		return ago(int(d/(30*24*time.Hour)), "month")
	}
	return ago(int(d/(365*24*time.Hour)), "year")
}

// slowKinds are the mark kinds whose observation may take a while with
// nothing to show for it (a command's own output shows as it runs).
var slowKinds = map[string]bool{"file-contents": true, "web": true, "directory-tree": true}

// startProgress shows "helm: WHAT… Ns" on the terminal w, on one line
// (cut to the terminal's width) rewritten each second, until the
// returned stop erases it. The first frame is written at once.
func startProgress(w io.Writer, what string) (stop func()) {
	width := 80
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			width = cols
		}
	}
	began := time.Now()
	frame := func() {
		line := []rune("helm: " + printable(what) + "… " + time.Since(began).Truncate(time.Second).String())
		if len(line) > width-1 {
			line = line[:width-1]
		}
		fmt.Fprint(w, "\r\x1b[K"+string(line))
	}
	frame()
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(w, "\r\x1b[K")
				return
			case <-t.C:
				frame()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// onPath reports whether program is one exec finds.
func onPath(program string) bool {
	_, err := exec.LookPath(program)
	return err == nil
}
