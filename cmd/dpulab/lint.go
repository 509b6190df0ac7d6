package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newLintCmd is a placeholder until its issue lands; it fails loudly rather
// than pretending to work.
func newLintCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "lint",
		Short: "Validate lab files (not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("dpulab lint is not built yet")
		},
	}
}
