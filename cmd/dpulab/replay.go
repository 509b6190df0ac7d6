package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newReplayCmd is a placeholder until its issue lands; it fails loudly rather
// than pretending to work.
func newReplayCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "replay",
		Short: "Play a recorded run back in the dashboard (not built yet)",
		RunE: func(*cobra.Command, []string) error {
			return errors.New("dpulab replay is not built yet")
		},
	}
}
