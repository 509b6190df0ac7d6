package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newBenchCmd is a placeholder until its issue lands; it fails loudly rather
// than pretending to work.
func newBenchCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "bench",
		Short: "Run the load generator (not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("dpulab bench is not built yet")
		},
	}
}
