package main

import (
	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
)

// loadInventory reads hosts.yaml (errors as file:line: message) and
// refuses a role no lab uses (a typo: the host would take part in
// nothing): the roles of the labs in the catalogue (embedded, and
// labDirs), of also (a lab given by path), and "local".
func loadInventory(path string, labDirs []string, also ...*labs.Lab) (*runner.Inventory, error) {
	inv, err := runner.LoadInventory(path)
	if err != nil {
		return nil, err
	}
	if err := inv.CheckRoles(knownRoles(labDirs, also...)); err != nil {
		return nil, err
	}
	return inv, nil
}

// knownRoles are the roles of every lab dpulab knows, and "local". Lab
// folders that cannot be read are left out (their own errors are said
// where they are used).
func knownRoles(labDirs []string, also ...*labs.Lab) []string {
	out := []string{runner.LocalName}
	ls, _, _ := labs.Catalogue(labDirs...)
	for _, l := range append(ls, also...) {
		if l == nil {
			continue
		}
		for _, r := range l.Roles {
			out = append(out, r.Name)
		}
	}
	return out
}
