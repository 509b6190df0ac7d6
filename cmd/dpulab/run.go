package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newRunCmd is a placeholder until its issue lands; it fails loudly rather
// than pretending to work.
func newRunCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "run",
		Short: "Run a lab without the TUI (not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("dpulab run is not built yet")
		},
	}
}
