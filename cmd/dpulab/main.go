// Command dpulab is an interactive terminal lab guide: it walks a person
// through accelerating Redis with NVIDIA BlueField DPUs and RDMA networking,
// and ships the server, load generator and host sampler that the labs run.
//
// main stays thin: every subcommand lives in a file of its own here, parses
// its flags and calls into the packages that do the work.
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

// exitError carries a process exit status through cobra without printing
// anything more: the command has already said what went wrong. The
// host-side commands (server, bench, sample, version) live in
// internal/agentcmd, shared with dpulab-agent, with the same statuses.
type exitError = agentcmd.ExitError

// Exit statuses, the same for every subcommand (and in FORMATS.md).
const (
	exitOK     = agentcmd.ExitOK
	exitFailed = agentcmd.ExitFailed
	exitUsage  = agentcmd.ExitUsage
)

// usageError is a mistake in how dpulab was called: exit status 2.
type usageError = agentcmd.UsageError

// exitStatus maps what Execute returned to the process's exit status and
// the message to print (empty: the command has said it already).
func exitStatus(err error) (int, string) { return agentcmd.ExitStatus(err) }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	root := newRootCmd()
	err := root.ExecuteContext(ctx)
	stop()
	code, msg := exitStatus(err)
	if msg != "" {
		// Errors quote lab files, hosts and servers: filtered like all
		// outside text on its way to a terminal.
		fmt.Fprintln(os.Stderr, "dpulab:", termtext.Plain(msg))
	}
	os.Exit(code)
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "dpulab",
		Short: "Hands-on lab guide: Redis with and without DPU/RDMA acceleration",
		Long: `dpulab walks you through a hands-on lab: install, configure, deploy, then
benchmark and compare Redis with and without acceleration, with live charts.

Run without arguments to open the lab picker (quickstart runs on this machine).
SIGINT, SIGTERM and a closed terminal act as Ctrl+C does: the running step is
stopped and what the lab started is cleaned up before dpulab exits (with
128 + the signal's number).

Exit status, every subcommand alike: 0 done; 1 a step, the bench or a check
failed; 2 usage error (a bad flag or argument, a bad --set, an unknown lab or
step, an inventory that cannot be read); 130 interrupted by Ctrl-C (128 + N
for signal N: 143 SIGTERM, 129 SIGHUP, 141 output gone). Machine-readable
output (--json of run, bench, labs; sample) is JSON lines described in
FORMATS.md.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
	}
	addTUIFlags(root)
	root.RunE = runTUI
	root.AddCommand(
		newRunCmd(),
		newLabsCmd(),
		newLintCmd(),
		agentcmd.NewServerCmd(),
		agentcmd.NewBenchCmd(),
		agentcmd.NewSampleCmd(),
		newReportCmd(),
		newReplayCmd(),
		agentcmd.NewVersionCmd("dpulab", version),
		newCleanupCmd(),
	)
	// A bad flag or argument anywhere is a usage error (exit status 2).
	agentcmd.Flags(root)
	return root
}
