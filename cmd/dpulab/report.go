package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newReportCmd is a placeholder until its issue lands; it fails loudly rather
// than pretending to work.
func newReportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "report",
		Short: "Re-render a results folder (not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("dpulab report is not built yet")
		},
	}
}
