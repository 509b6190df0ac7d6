// Package tuiperf measures the TUI at the scale issue 17 names (240
// instances on 3 server hosts, 8 client hosts, a second every second),
// with the real app and a synthetic bench: DashboardAtScale. It is built
// only with -tags perf, for the perf tests of tui and of steps (go test
// -tags perf -run Perf -v ./tui/ or ./steps/), which both print it.
package tuiperf
