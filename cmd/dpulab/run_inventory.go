package main

import (
	"github.com/dpulab/dpulab/runner"
)

// loadInventory reads hosts.yaml (errors as file:line: message).
func loadInventory(path string) (*runner.Inventory, error) {
	return runner.LoadInventory(path)
}
