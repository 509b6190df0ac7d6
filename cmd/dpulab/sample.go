package main

import (
	"fmt"
	"time"

	"github.com/dpulab/dpulab/runner/sample"
	"github.com/spf13/cobra"
)

// newSampleCmd is `dpulab sample`: the host sampler the labs run on every
// server host during a benchmark, streaming JSON lines back over SSH.
func newSampleCmd() *cobra.Command {
	var (
		interval time.Duration
		ifaces   []string
		count    int
		host     string
	)
	cmd := &cobra.Command{
		Use:   "sample",
		Short: "Sample host CPU, network and power as JSON lines",
		Long: `Print one JSON line per interval with this host's CPU time split (user,
system, softirq, irq, iowait, steal, idle, and network = softirq + irq, in %
of all CPUs), network bytes/s per interface (/proc/net/dev) and package power
in watts from RAPL (/sys/class/powercap), or null when RAPL is not readable.
Runs until interrupted, or for --count samples.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if interval < 10*time.Millisecond {
				return fmt.Errorf("--interval %s is too short: use 10ms or more (default 1s)", interval)
			}
			if count < 0 {
				return fmt.Errorf("--count %d: use 0 (run until interrupted) or a positive number", count)
			}
			s := &sample.Sampler{Host: host, Ifaces: ifaces}
			if err := s.CheckIfaces(); err != nil {
				return err
			}
			return s.Run(cmd.Context(), cmd.OutOrStdout(), interval, count)
		},
	}
	f := cmd.Flags()
	f.DurationVar(&interval, "interval", time.Second, "time between samples")
	f.StringSliceVar(&ifaces, "iface", nil, "network interface to report (repeatable; default all but lo)")
	f.IntVar(&count, "count", 0, "stop after this many samples (0 = until interrupted)")
	f.StringVar(&host, "host", "", "host name to put in each sample (default: the system's host name)")
	return cmd
}
