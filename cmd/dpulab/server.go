package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newServerCmd is a placeholder until its issue lands; it fails loudly rather
// than pretending to work.
func newServerCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "server",
		Short: "Run the bundled Redis-compatible server (not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("dpulab server is not built yet")
		},
	}
}
