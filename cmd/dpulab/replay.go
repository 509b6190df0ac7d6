package main

import (
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/spf13/cobra"

	"github.com/dpulab/dpulab/tui"
	"github.com/dpulab/dpulab/tui/pages/replay"
)

// newReplayCmd plays a recorded results folder back in the dashboard and
// the compare view, labelled as a replay with its date and hosts.
func newReplayCmd() *cobra.Command {
	var loop bool
	var step, hold time.Duration
	cmd := &cobra.Command{
		Use:   "replay DIR",
		Short: "Play a recorded run back in the live dashboard and compare view",
		Long: `Play a results folder (results/LAB/TIMESTAMP, holding results.json) back:
the dashboard shows the recorded per-second series, then the compare view
shows the table, charts, sweep and TCO. Everything is labelled as a replay of
a run recorded on its date on its hosts: this is how a booth without the
hardware shows a real DPU run.

Keys: space pause · tab dashboard/compare · 1-4 compare tabs · R restart · q quit.`,
		Example: `  dpulab replay results/quickstart/20261202T171500Z
  dpulab replay --loop --speed 100ms results/redis-dpu-uptv2/20261130T090000Z`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := results.LoadResults(args[0])
			if err != nil {
				return err
			}
			if err := needTerminal(); err != nil {
				return err
			}
			app := tui.New(tui.Config{
				Replay:        res,
				ReplayOptions: replay.Options{Step: step, Loop: loop, Hold: hold, TCO: computeTCO},
				NoColor:       noColor(),
				Clipboard:     clipboard(),
				TCO:           computeTCO,
			})
			return runProgram(app)
		},
	}
	cmd.Flags().BoolVar(&loop, "loop", false, "start over after showing the compare view (booth)")
	cmd.Flags().DurationVar(&step, "speed", 250*time.Millisecond, "wall time per recorded second (250ms = 4× speed)")
	cmd.Flags().DurationVar(&hold, "hold", 45*time.Second, "with --loop: how long the compare view stays")
	return cmd
}
