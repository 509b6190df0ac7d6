package main

import (
	"os"
	"path/filepath"
)

// LabPathEnv lists extra lab folders, separated by the OS's list separator
// (":" on Linux), like PATH.
const LabPathEnv = "DPULAB_LAB_PATH"

// labDirs is where dpulab looks for labs besides the built-in ones, in
// order: $XDG_CONFIG_HOME/dpulab/labs (~/.config/dpulab/labs) when it
// exists, each folder of DPULAB_LAB_PATH, then the --lab-dir flags. A later
// folder's lab replaces an earlier one's with the same id, so a --lab-dir
// given on the command line wins.
func labDirs(flags []string) []string {
	var dirs []string
	if d := userLabDir(); d != "" {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			dirs = append(dirs, d)
		}
	}
	for _, d := range filepath.SplitList(os.Getenv(LabPathEnv)) {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	return append(dirs, flags...)
}

// userLabDir is $XDG_CONFIG_HOME/dpulab/labs, or ~/.config/dpulab/labs.
func userLabDir() string {
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "dpulab", "labs")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".config", "dpulab", "labs")
}
