package main

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/helmlog/helm/cmd/helm/internal/web"
)

// helm serve: the read-only web UI over the home (package internal/web).

func newServeCmd(a *app) *cobra.Command {
	return leafCmd(a, &cobra.Command{
		Use:   "serve [--addr HOST:PORT] [--max-streams N]",
		Short: "look at the home's voyages in a browser: a read-only local web UI",
		Long: `Serve a read-only web UI over the home: the voyages (filtered by status,
identity and kind; damaged ones flagged with their error), each voyage's
timeline (bearings with their sightings, challenges as a diff, actions
and their results, failed and refused ones marked) with its slate beside
it, followed live as other processes record, and a transcript across
voyages with one lane per identity and the critical-steps figures.

It binds 127.0.0.1:7878 unless --addr says otherwise, and warns when that
is not a loopback address: there is no login. Nothing it serves writes;
stored text is escaped and no script from a voyage can run (its
Content-Security-Policy allows the server's own script only). Each open
voyage page follows the voyage over one event stream; at most
--max-streams are followed at once, and a page past them is told so
(503) and how to free one. Ctrl-C stops it.`,
		Example: "  helm serve\n  helm serve --addr 127.0.0.1:9000",
	}, &serveCommand{})
}

type serveCommand struct {
	addr       string
	maxStreams int
}

// defaultAddr is where helm serve listens: loopback, so that only this
// machine's users can read the home.
const defaultAddr = "127.0.0.1:7878"

func (c *serveCommand) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.addr, "addr", defaultAddr, "listen on `HOST:PORT` (a port of 0 picks a free one)")
	fs.IntVar(&c.maxStreams, "max-streams", web.DefaultMaxStreams, "follow at most `N` live voyage pages (event streams) at once")
}

func (c *serveCommand) Run(ctx context.Context, a *app, args []string) error {
	if len(args) > 0 {
		return usageErrorf(a.cmd, "serve takes no arguments, got %q (choose the address with --addr HOST:PORT)", args[0])
	}
	host, _, err := net.SplitHostPort(c.addr)
	if err != nil {
		return usageErrorf(a.cmd, "serve: --addr %q is not HOST:PORT: %v", c.addr, err)
	}
	if c.maxStreams < 1 {
		return usageErrorf(a.cmd, "serve: --max-streams %d: want 1 or more (the default is %d)", c.maxStreams, web.DefaultMaxStreams)
	}
	home, err := a.openHome()
	if err != nil {
		return err
	}
	loopback := isLoopback(host)
	srv, err := web.New(home, &web.Options{AnyHost: !loopback, MaxStreams: c.maxStreams, MoreStreams: "restart helm serve with a larger --max-streams"})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return &hinted{Err: fmt.Errorf("serve: %w", err), Hint: "helm serve --addr 127.0.0.1:0"}
	}
	port := "0"
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok {
		port = fmt.Sprint(tcp.Port) // the one picked, for :0
	}
	bound, open := net.JoinHostPort(host, port), host
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		open = "127.0.0.1" // every interface: this machine's is one
	}
	if !loopback {
		fmt.Fprintf(a.stderr, "helm: warning: serving on %s, which is not a loopback address: anyone who can reach it reads every voyage in %s (no login, no TLS)\n", bound, homeName(home))
	}
	fmt.Fprintf(a.stdout, "Serving %s at http://%s/ (read-only; Ctrl-C stops)\n", homeName(home), net.JoinHostPort(open, port))
	if err := srv.Serve(ctx, ln); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// isLoopback reports whether host names the loopback interface only:
// localhost or a loopback address. An empty host (every interface) does
// not.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
