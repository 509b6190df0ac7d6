package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/dpulab/dpulab/assets"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/spf13/cobra"

	"github.com/dpulab/dpulab/tui"
	"github.com/dpulab/dpulab/tui/pages/replay"
)

// newReplayCmd plays a recorded results folder back in the dashboard and
// the compare view, labelled as a replay with its date and hosts.
func newReplayCmd() *cobra.Command {
	var loop, list bool
	var step, hold time.Duration
	cmd := &cobra.Command{
		Use:   "replay DIR|RECORDING",
		Short: "Play a recorded run back in the live dashboard and compare view",
		Long: `Play a results folder (results/LAB/TIMESTAMP, holding results.json) back:
the dashboard shows the recorded per-second series, then the compare view
shows the table, charts, sweep and TCO. Everything is labelled as a replay of
a run recorded on its date on its hosts, and as what it recorded (an
emulation, a rehearsal): this is how a booth without the hardware, or
without root, shows a real run.

RECORDING names a recording that ships inside dpulab (--list shows them),
made with dpulab run on the machine and date its notes give.

Keys: space pause · tab dashboard/compare · 1-4 compare tabs · R restart · q quit.`,
		Example: `  dpulab replay --list
  dpulab replay --loop quickstart-offload-emulation
  dpulab replay results/quickstart/20261202T171500Z
  dpulab replay --loop --speed 100ms results/redis-dpu-uptv2/20261130T090000Z`,
		Args: func(cmd *cobra.Command, args []string) error {
			if list {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				return listRecordings(cmd.OutOrStdout())
			}
			res, err := loadReplay(args[0])
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
			return runProgram(app, nil)
		},
	}
	cmd.Flags().BoolVar(&list, "list", false, "list the recordings that ship with dpulab")
	cmd.Flags().BoolVar(&loop, "loop", false, "start over after showing the compare view (booth)")
	cmd.Flags().DurationVar(&step, "speed", 250*time.Millisecond, "wall time per recorded second (250ms = 4× speed)")
	cmd.Flags().DurationVar(&hold, "hold", 45*time.Second, "with --loop: how long the compare view stays")
	return cmd
}

// loadReplay reads a results folder, or a shipped recording by name when
// no folder of that name exists.
func loadReplay(arg string) (*results.Results, error) {
	if _, err := os.Stat(arg); err == nil || !slices.Contains(assets.Recordings(), arg) {
		return results.LoadResults(arg)
	}
	b, err := assets.Recording(arg)
	if err != nil {
		return nil, err
	}
	return results.ParseResults(b, "recording "+arg)
}

// listRecordings prints each shipped recording with what it is.
func listRecordings(w io.Writer) error {
	names := assets.Recordings()
	if len(names) == 0 {
		_, err := fmt.Fprintln(w, "no recordings ship with this build")
		return err
	}
	for _, n := range names {
		r, err := loadReplay(n)
		if err != nil {
			return err
		}
		what := cmp.Or(results.ReportKind(r), "measured "+results.MeasuredWhere(r))
		if _, err := fmt.Fprintf(w, "%s\t%s, recorded %s: %s\n", n, r.Lab, r.Started.UTC().Format("2006-01-02"), what); err != nil {
			return err
		}
	}
	return nil
}
