package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// addTUIFlags adds the root command's flags (the TUI's); placeholder until
// the TUI lands.
func addTUIFlags(*cobra.Command) {}

func runTUI(*cobra.Command, []string) error {
	return errors.New("the TUI is not built yet")
}
