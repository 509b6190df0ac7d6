package server

import "testing"

// startDiffOurs starts the server under test for TestDiff. Until our server
// can be started in-process, DPULAB_DIFF_SELFTEST=1 compares redis-server
// with a second redis-server to check the harness itself.
func startDiffOurs(t *testing.T) (network, addr string) {
	return "unix", startRedisPeer(t)
}
