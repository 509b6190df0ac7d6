package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newSampleCmd is a placeholder until its issue lands; it fails loudly rather
// than pretending to work.
func newSampleCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "sample",
		Short: "Sample host CPU, network and power as JSON lines (not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("dpulab sample is not built yet")
		},
	}
}
