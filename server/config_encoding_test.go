package server

import "testing"

// TestTuningPerServer: the thresholds belong to the server: two instances
// in one process (tests, StartLocal) do not see each other's CONFIG SET,
// and a container made before a CONFIG SET converts by the new value.
func TestTuningPerServer(t *testing.T) {
	a, _ := newTestServer(t)
	b, _ := newTestServer(t)
	a.must("(integer) 2", "SADD", "s", "1", "2")
	b.must("(integer) 2", "SADD", "s", "1", "2")
	a.must(`"OK"`, "CONFIG", "SET", "set-max-intset-entries", "2")
	a.must("(integer) 1", "SADD", "s", "3")
	b.must("(integer) 1", "SADD", "s", "3")
	a.must(`"hashtable"`, "OBJECT", "ENCODING", "s")
	b.must(`"intset"`, "OBJECT", "ENCODING", "s")
}
