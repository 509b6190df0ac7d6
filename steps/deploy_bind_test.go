//go:build unix

package steps

import "testing"

// TestHostSideAddr: deploy pings a server from its own host on the
// loopback, unless the server is bound only to other addresses (the
// RDMA lab's bind=10.9.0.1), where 127.0.0.1 would be refused.
func TestHostSideAddr(t *testing.T) {
	for bind, want := range map[string]string{
		"":                   "127.0.0.1",
		"0.0.0.0":            "127.0.0.1",
		"::":                 "127.0.0.1",
		"*":                  "127.0.0.1",
		"127.0.0.1":          "127.0.0.1",
		"10.9.0.1":           "10.9.0.1",
		"10.9.0.1 127.0.0.1": "127.0.0.1",
		"10.9.0.1 -::1":      "::1",
		"-10.9.0.1 10.0.0.5": "10.9.0.1",
		"fd00::1":            "fd00::1",
	} {
		if got := hostSideAddr(bind); got != want {
			t.Errorf("hostSideAddr(%q) = %q, want %q", bind, got, want)
		}
	}
	p := deployPlan{Port: 7100, Bind: "10.9.0.1"}
	if got := p.hostSide(hostRef{Name: "s"}, 1).Address; got != "10.9.0.1:7101" {
		t.Errorf("hostSide with bind 10.9.0.1 = %s, want 10.9.0.1:7101", got)
	}
}
