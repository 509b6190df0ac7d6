package server

import "testing"

// StartTest starts an in-process server on a free loopback port for the
// test and returns its address; it is stopped when the test ends.
func StartTest(t testing.TB, cfg Config) string {
	t.Helper()
	addr, stop, err := StartLocal(cfg)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	t.Cleanup(stop)
	return addr
}
