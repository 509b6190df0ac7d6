package server

import "testing"

// startDiffOurs starts the server under test for TestDiff, in process on a
// free loopback port.
func startDiffOurs(t testing.TB) (network, addr string) {
	return "tcp", StartTest(t, DefaultConfig())
}
