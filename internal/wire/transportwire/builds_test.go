package transportwire

import (
	"strings"
	"testing"
)

// TestBuildLacks: which builds have which transports, over the platforms a
// controller or an agent is built for, with and without -tags nordma.
func TestBuildLacks(t *testing.T) {
	for _, c := range []struct {
		b    Build
		rdma string // "" (has it) or a part of the reason
	}{
		{Build{OS: "linux", Arch: "amd64"}, ""},
		{Build{OS: "linux", Arch: "arm64"}, ""},
		{Build{OS: "linux"}, ""}, // a Linux host not yet connected
		{Build{OS: "linux", Arch: "amd64", NoRDMA: true}, "built with -tags nordma"},
		{Build{OS: "linux", Arch: "arm64", NoRDMA: true}, "built with -tags nordma"},
		{Build{OS: "linux", Arch: "386"}, "built for linux/386, "},
		{Build{OS: "linux", Arch: "riscv64"}, "built for linux/riscv64, "},
		{Build{OS: "darwin", Arch: "arm64"}, "built for darwin/arm64, and dpulab's RDMA provider (rdma-core, loaded at run time) is linux/amd64 and linux/arm64 only"},
		{Build{OS: "darwin", Arch: "amd64"}, "built for darwin/amd64, "},
		{Build{OS: "windows", Arch: "amd64"}, "built for windows/amd64, "},
		{Build{OS: "windows", Arch: "arm64", NoRDMA: true}, "built with -tags nordma"},
		{Build{OS: "freebsd"}, "built for freebsd, "},
	} {
		for _, n := range []Name{TCP, Unix} {
			if why := c.b.Lacks(n); why != "" {
				t.Errorf("%+v lacks %s: %s", c.b, n, why)
			}
		}
		why := c.b.Lacks(RDMA)
		if (why == "") != (c.rdma == "") || !strings.Contains(why, c.rdma) {
			t.Errorf("%+v lacks rdma: %q, want %q", c.b, why, c.rdma)
		}
	}
	if why := (Build{OS: "darwin"}).Lacks("quic"); why != "" {
		t.Errorf("an unknown transport is UnknownError's business, got %q", why)
	}
}
