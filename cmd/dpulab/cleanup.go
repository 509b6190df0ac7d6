package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dpulab/dpulab/internal/termtext"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/runner/netpath"
)

const cleanupLong = `dpulab cleanup removes what interrupted or crashed runs left of the emulated
network paths: every network namespace, link and nftables table whose name starts
with "dpulab-" (with whatever still runs inside those namespaces). Nothing else is
touched. It prints what it removed; run twice, the second run finds nothing.

It needs root (namespaces and nftables are root's): run it as "sudo dpulab cleanup".
With --inventory it cleans every host of the inventory as well, over SSH as the
inventory's user, through sudo when that user is not root (passwordless sudo:
cleanup asks no questions). Run it when no lab is running: a running lab's paths
are removed too, unless --run names the one run to clean up.

Exit status: 0 cleaned (or nothing to clean), 1 something could not be removed
or a host could not be reached (what was removed is still printed), 2 usage.`

// cleanupEUID is os.Geteuid, a variable so a test can be "not root".
var cleanupEUID = os.Geteuid

type cleanupFlags struct {
	inventory string
	acceptNew bool
	run       string
}

func newCleanupCmd() *cobra.Command {
	var f cleanupFlags
	cmd := &cobra.Command{
		Use:   "cleanup [--inventory FILE] [--run ID]",
		Short: "Remove the dpulab- network namespaces, links and nftables tables left by interrupted runs",
		Long:  cleanupLong,
		Example: `  sudo dpulab cleanup
  sudo dpulab cleanup --inventory hosts.yaml
  sudo dpulab cleanup --run k3x9q`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCleanup(cmd.Context(), f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.inventory, "inventory", "", "also clean the hosts of this inventory (hosts.yaml or Ansible)")
	fl.BoolVar(&f.acceptNew, "accept-new-host-keys", false, "trust and save host keys not yet in known_hosts (never changed ones)")
	fl.StringVar(&f.run, "run", "", "remove only what the run with this id made (names starting dpulab-ID-)")
	return cmd
}

func runCleanup(ctx context.Context, f cleanupFlags, stdout, stderr io.Writer) error {
	prefix := netpath.Prefix
	if f.run != "" {
		if err := (&netpath.Config{Variant: netpath.Direct, RunID: f.run}).Validate(); err != nil {
			return usageError{Err: fmt.Errorf("--run: %w", err)}
		}
		prefix = netpath.RunPrefix(f.run)
	}
	if cleanupEUID() != 0 {
		fmt.Fprintln(stderr, "dpulab cleanup: network namespaces, links and nftables tables can only be removed as root: run `sudo dpulab cleanup`")
		return exitError{Code: exitFailed}
	}
	type host struct {
		target runner.Target
		sudo   bool
	}
	var hosts []host
	if f.inventory != "" {
		inv, err := loadInventory(f.inventory, labDirs(nil))
		if err != nil {
			return usageError{Err: err}
		}
		pool := runner.NewPool(inv, runner.SSHOptions{Prompter: runner.HeadlessPrompter{AcceptNewHostKeys: f.acceptNew}})
		defer pool.Close()
		for _, h := range inv.Hosts {
			if h.IsLocal() {
				continue // this machine is cleaned once, above
			}
			t, err := pool.Target(h)
			if err != nil {
				return fmt.Errorf("host %s: %w", h.Name, err)
			}
			// Remote users are often not root: sudo, which does
			// nothing when they are.
			hosts = append(hosts, host{target: t, sudo: true})
		}
	}
	hosts = append(hosts, host{target: runner.NewLocal()})
	var failed []string
	for _, h := range hosts {
		s, err := netpath.Sweep(ctx, h.target, h.sudo, prefix)
		printSwept(stdout, h.target.Name(), prefix, s)
		if err != nil {
			msg := err.Error()
			if hint := runner.Hint(err); hint != "" {
				msg += " (" + hint + ")"
			}
			fmt.Fprintln(stderr, termtext.Line("dpulab cleanup: "+msg))
			failed = append(failed, h.target.Name())
		}
		if errors.Is(ctx.Err(), context.Canceled) {
			return ctx.Err()
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(stderr, "dpulab cleanup: not everything could be removed on %s; see above, then run it again\n", strings.Join(failed, ", "))
		return exitError{Code: exitFailed}
	}
	return nil
}

// printSwept says what was removed on host, one object a line. The names
// come from the host's `ip` and `nft`: filtered on their way to a terminal.
func printSwept(w io.Writer, host, prefix string, s netpath.Swept) {
	say := func(format string, a ...any) { fmt.Fprintln(w, termtext.Line(fmt.Sprintf(format, a...))) }
	if s.Empty() {
		say("%s: nothing named %s* to remove", host, prefix)
		return
	}
	for _, ns := range s.Namespaces {
		say("%s: removed network namespace %s (and what ran in it)", host, ns)
	}
	for _, l := range s.Links {
		say("%s: removed link %s", host, l)
	}
	for _, t := range s.Tables {
		say("%s: removed nftables table %s", host, t)
	}
}
