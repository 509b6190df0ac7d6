// Command dpulab-agent is what dpulab runs on a lab host: the
// Redis-compatible server, the load generator and the host sampler
// (server, bench, sample, version), with the same flags, output and exit
// statuses as `dpulab server|bench|sample|version` (both mains build
// internal/agentcmd). It holds nothing else: no TUI, reports, SSH or
// vSphere client, so it is small enough to upload to every host, a
// BlueField's Arm cores included, and builds with CGO_ENABLED=0 for any
// GOOS/GOARCH (deps_test.go pins what it may link).
//
// The controller uploads it (runner.FindAgent picks the build for the
// host's uname); people need not run it by hand, though they may.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/dpulab/dpulab/internal/agentcmd"
	"github.com/dpulab/dpulab/internal/termtext"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3";
// otherwise the module version or VCS revision from the build info is
// shown.
var version = ""

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	code, msg := agentcmd.ExitStatus(err)
	if msg != "" {
		fmt.Fprintln(os.Stderr, "dpulab-agent:", termtext.Plain(msg))
	}
	os.Exit(code)
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "dpulab-agent",
		Short: "What dpulab runs on a lab host: server, bench, sample",
		Long: `dpulab-agent is the part of dpulab that runs on lab hosts: the bundled
Redis-compatible server, the load generator and the host sampler. dpulab
uploads it to each host and runs it there; its commands are dpulab's own
(dpulab server|bench|sample|version), with the same flags, output (FORMATS.md)
and exit statuses: 0 done; 1 the bench or a check failed; 2 usage error;
128 + N for signal N.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
	}
	root.AddCommand(
		agentcmd.NewServerCmd(),
		agentcmd.NewBenchCmd(),
		agentcmd.NewSampleCmd(),
		agentcmd.NewVersionCmd("dpulab agent", version),
	)
	agentcmd.Flags(root)
	return root
}
