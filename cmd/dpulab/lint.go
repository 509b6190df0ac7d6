package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dpulab/dpulab/internal/termtext"
	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/steps"
)

// newLintCmd checks lab files and prints every problem as file:line:
// message, the form editors and CI logs link to.
func newLintCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "lint [PATH...]",
		Short: "Validate lab files; every problem as file:line: message",
		Long: `Check lab files: YAML syntax, unknown or missing keys, steps that run on
roles the lab does not declare, variables used but not declared, template
errors, defaults outside min/max, duplicate step ids, missing doc and
template files.

PATH is a lab directory, its lab.yaml, or a directory of labs. Without a
PATH the labs built into dpulab are checked. Exits 1 when anything is wrong.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			n, probs, err := labs.LintPaths(args...)
			if err != nil {
				return err
			}
			for _, p := range probs {
				// A problem quotes the lab file: one filtered line
				// each, so it can neither drive the terminal nor
				// pass for another file:line for an editor.
				fmt.Fprintln(out, termtext.Line(fmt.Sprint(p)))
			}
			if len(probs) > 0 {
				fmt.Fprintf(errOut, "%d problem(s) in %s\n", len(probs), plural(n, "lab"))
				return exitError{Code: 1}
			}
			fmt.Fprintf(errOut, "%s, no problems\n", plural(n, "lab"))
			for _, note := range lintNotes(args) {
				fmt.Fprintln(errOut, termtext.Line("note: "+note))
			}
			return nil
		},
	}
}

// plural writes "1 lab" or "3 labs".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// lintNotes are what a valid lab cannot do with this build (a transport it
// was built without), lab by lab.
func lintNotes(paths []string) []string {
	var ls []*labs.Lab
	if len(paths) == 0 {
		ls, _ = labs.Embedded()
	}
	for _, p := range paths {
		dl, err := labs.FromDir(p)
		if err == nil {
			ls = append(ls, dl...)
		}
	}
	var notes []string
	for _, l := range ls {
		// Judged for a run on this machine (no inventory): lab hosts
		// reached over SSH run the Linux agent, which has RDMA.
		for _, n := range labs.TransportNotes(l, steps.TransportJudge(nil, nil)) {
			notes = append(notes, l.ID+": "+n)
		}
	}
	return notes
}
