// Package agentcmd holds the commands a lab host runs: server, bench, sample
// and version. Both mains build them: cmd/dpulab-agent, the small program
// the engine uploads to every lab host (no TUI, no reports, no SSH), and
// cmd/dpulab, the controller, which keeps `dpulab server|bench|sample` for
// people who run them by hand and for local targets.
//
// What is here must stay light: a test (deps_test.go in cmd/dpulab-agent)
// pins that the agent links nothing of the controller's world.
//
// Exit statuses are FORMATS.md's, the same in both programs: ExitError
// carries one through cobra, UsageError is status 2, ExitStatus maps what
// Execute returned to the status and the message to print.
package agentcmd
