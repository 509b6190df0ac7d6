package rdma

import (
	"strings"
	"testing"
)

// TestSplitAddr: a listener may ask for port 0, a client may not; a bad
// address names itself and what was being done.
func TestSplitAddr(t *testing.T) {
	for _, tc := range []struct {
		op, addr, host string
		port           int
		err            string
	}{
		{"listen", "127.0.0.1:0", "127.0.0.1", 0, ""},
		{"listen", "[::1]:6379", "::1", 6379, ""},
		{"connect", "10.0.0.2:6379", "10.0.0.2", 6379, ""},
		{"connect", "10.0.0.2:0", "", 0, "rdma connect 10.0.0.2:0: bad port"},
		{"listen", "h:65536", "", 0, "rdma listen h:65536: bad port"},
		{"listen", "h:x", "", 0, "rdma listen h:x: bad port"},
		{"connect", "nohost", "", 0, "rdma connect nohost: address nohost: missing port"},
	} {
		host, port, err := splitAddr(tc.op, tc.addr)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %s: %v, want %q", tc.op, tc.addr, err, tc.err)
			}
			continue
		}
		if err != nil || host != tc.host || port != tc.port {
			t.Errorf("%s %s = %q, %d, %v", tc.op, tc.addr, host, port, err)
		}
	}
}
