package session

import (
	"strings"
)

// Warning is one thing that stops part of a lab, or changes what its
// figures mean, where it would run, said twice as terse lists and their
// details do (k9s, lazygit): Short is one line of a few words for the
// picker's list, what is missing and what to do; Detail is the whole of it
// (the build's reason, the provider's error, the roles that share a host)
// for the picker's details view.
type Warning struct {
	Short  string
	Detail string
}

// Warnings are l's CannotRun, NoHardware and Rehearsal, in that order (what
// stops steps first), each said short and whole.
func (l LabInfo) Warnings() []Warning {
	var out []Warning
	for _, r := range l.CannotRun {
		out = append(out, Warning{Short: "cannot run here: " + shortLack(r), Detail: "cannot run here: " + r})
	}
	if l.NoHardware != "" {
		out = append(out, Warning{
			Short:  "no RDMA device here: add Soft-RoCE, or give RDMA hosts",
			Detail: l.NoHardware + ". Or run the lab on hosts that have RDMA: --inventory hosts.yaml (README: Lab hosts)",
		})
	}
	if l.Rehearsal != "" {
		short := "REHEARSAL here: all its roles on this machine; give hosts with --inventory"
		switch {
		case l.Rehearse:
			short = "REHEARSAL (--rehearse): no hardware checks, no hardware figures"
		case !l.Local:
			short = "REHEARSAL: roles it compares share a host; give each its own"
		}
		out = append(out, Warning{Short: short, Detail: "REHEARSAL here, not a measurement of its hardware: " + l.Rehearsal})
	}
	return out
}

// shortLack is a CannotRun reason ("transport rdma: RDMA is not in this
// build: ...", or "...: the dpulab agent for linux has no RDMA: ...") in a
// few words: which transport, and whether this build or the lab hosts'
// agent lacks it.
func shortLack(reason string) string {
	name, _, ok := strings.Cut(reason, ":")
	if !ok || !strings.HasPrefix(name, "transport ") {
		return "some steps need what this build lacks"
	}
	if strings.Contains(reason, "the dpulab agent ") {
		return name + " is not in the lab hosts' dpulab agent"
	}
	return name + " is not in this build"
}
