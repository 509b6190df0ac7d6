package serverwire

import (
	"strings"
	"testing"
)

// TestRDMASetGet: every rdma-* name round-trips through Set and Get, bad
// values get Redis's messages and leave the setting alone, and a name that
// is not RDMA's is not taken.
func TestRDMASetGet(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"rdma-port", "7100", "7100"},
		{"rdma-bind", "10.0.0.1 10.0.0.2", "10.0.0.1 10.0.0.2"},
		{"rdma-rx-size", "256kb", "262144"},
		{"rdma-completion-vector", "3", "3"},
		{"rdma-enabled", "YES", "yes"},
		{"rdma-transport-mode", "Unreliable-Connected", "unreliable-connected"},
		{"rdma-inline-size", "256", "256"},
		{"rdma-sq-size", "64", "64"},
		{"rdma-rq-size", "128", "128"},
		{"rdma-poll-us", "50", "50"},
		{"rdma-retry-count", "3", "3"},
	} {
		r := DefaultRDMA()
		ok, err := r.Set(tc.name, strings.Fields(tc.in))
		if !ok || err != nil {
			t.Errorf("Set(%s, %s) = %v, %v", tc.name, tc.in, ok, err)
			continue
		}
		if got, ok := r.Get(tc.name); !ok || got != tc.want {
			t.Errorf("Get(%s) = %q, %v; want %q", tc.name, got, ok, tc.want)
		}
		if err := r.Validate(); err != nil {
			t.Errorf("%s %s: %v", tc.name, tc.in, err)
		}
	}
	if len(RDMANames) != 11 {
		t.Errorf("RDMANames has %d names, the table above 11", len(RDMANames))
	}
	for _, tc := range []struct{ name, in, want string }{
		{"rdma-rx-size", "1kb", "argument must be between 64kb and 16mb"},
		{"rdma-port", "x", "argument couldn't be parsed into an integer"},
		{"rdma-retry-count", "8", "argument must be between 0 and 7 inclusive"},
		{"rdma-enabled", "maybe", "argument must be 'yes' or 'no'"},
		{"rdma-transport-mode", "ud", "argument must be reliable-connected or unreliable-connected"},
		{"rdma-sq-size", "", "wrong number of arguments"},
	} {
		r := DefaultRDMA()
		before, _ := r.Get(tc.name)
		_, err := r.Set(tc.name, strings.Fields(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("Set(%s, %q) = %v, want %q", tc.name, tc.in, err, tc.want)
		}
		if after, _ := r.Get(tc.name); after != before {
			t.Errorf("a refused %s changed it from %q to %q", tc.name, before, after)
		}
	}
	r := DefaultRDMA()
	if ok, _ := r.Set("port", []string{"1"}); ok {
		t.Error("Set took port, which is not an RDMA setting")
	}
	if _, ok := r.Get("maxclients"); ok {
		t.Error("Get knew maxclients")
	}
}
