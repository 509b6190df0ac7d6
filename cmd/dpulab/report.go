package main

import (
	"fmt"
	"path/filepath"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/spf13/cobra"

	"github.com/dpulab/dpulab/internal/termtext"
)

func newReportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "report DIR",
		Short: "Re-render a results folder (report.md and samples.csv from results.json)",
		Long: `Re-render a results folder: reads DIR/results.json and writes report.md and
samples.csv again (atomically), e.g. after upgrading dpulab.`,
		Example: "  dpulab report results/quickstart/20261202T170000Z",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			r, err := results.LoadResults(dir)
			if err != nil {
				return err
			}
			if err := results.RenderFiles(dir, r); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s and %s\n", termtext.Line(filepath.Join(dir, results.ReportFile)), termtext.Line(filepath.Join(dir, results.SamplesFile)))
			return nil
		},
	}
}
