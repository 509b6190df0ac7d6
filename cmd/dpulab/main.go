// Command dpulab is an interactive terminal lab guide: it walks a person
// through accelerating Redis with NVIDIA BlueField DPUs and RDMA networking,
// and ships the server, load generator and host sampler that the labs run.
//
// main stays thin: every subcommand lives in a file of its own here, parses
// its flags and calls into the packages that do the work.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/dpulab/dpulab/internal/termtext"
)

// exitError carries a process exit status through cobra without printing
// anything more: the command has already said what went wrong.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	root := newRootCmd()
	err := root.ExecuteContext(ctx)
	stop()
	if err == nil {
		return
	}
	var ee exitError
	if errors.As(err, &ee) {
		os.Exit(ee.code)
	}
	// Errors quote lab files, hosts and servers: filtered like all outside
	// text on its way to a terminal.
	fmt.Fprintln(os.Stderr, "dpulab:", termtext.Plain(err.Error()))
	os.Exit(1)
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
128 + the signal's number).`,
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
		newServerCmd(),
		newBenchCmd(),
		newSampleCmd(),
		newReportCmd(),
		newReplayCmd(),
		newVersionCmd(),
	)
	return root
}
