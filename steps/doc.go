// Package steps runs a lab: it takes a labs.Lab, runs its steps in order
// against runner Targets chosen from the inventory, and reports what happens
// as typed Events. It saves progress after every step and writes results;
// it never draws. The TUI and `dpulab run` are two renderers of its events.
package steps
