package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newLabsCmd is a placeholder until its issue lands; it fails loudly rather
// than pretending to work.
func newLabsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "labs",
		Short: "List labs (not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("dpulab labs is not built yet")
		},
	}
}
