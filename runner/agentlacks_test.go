package runner

import (
	"strings"
	"testing"

	"github.com/dpulab/dpulab/internal/wire/transportwire"
)

// TestAgentLacks: whether a host can run a transport is a question about
// the agent sent to it, whatever the controller was built for or with:
// the linux/amd64 and linux/arm64 agents have RDMA unless the finder
// builds them with nordma; agents for other platforms have none, and each
// refusal says what to do.
func TestAgentLacks(t *testing.T) {
	for _, c := range []struct {
		plat   Platform
		noRDMA bool
		want   string // "" or parts of the reason
	}{
		{Platform{"linux", "amd64"}, false, ""},
		{Platform{"linux", "arm64"}, false, ""},
		{Platform{"linux", ""}, false, ""},
		{Platform{"linux", "amd64"}, true, "transport rdma: the dpulab agent for linux/amd64 has no RDMA: it is built with -tags nordma (a static binary without the RDMA provider); let dpulab build its agents without nordma, or use transport tcp"},
		{Platform{"linux", ""}, true, "the dpulab agent for linux has no RDMA: it is built with -tags nordma"},
		{Platform{"darwin", "arm64"}, false, "transport rdma: the dpulab agent for darwin/arm64 has no RDMA: it is built for darwin/arm64, and dpulab's RDMA provider (rdma-core, loaded at run time) is linux/amd64 and linux/arm64 only; give this role a Linux amd64 or arm64 host, or use transport tcp"},
		{Platform{"windows", "amd64"}, false, "the dpulab agent for windows/amd64 has no RDMA"},
		{Platform{"linux", "riscv64"}, false, "built for linux/riscv64, "},
	} {
		f := &AgentFinder{NoRDMA: c.noRDMA}
		for _, n := range []transportwire.Name{transportwire.TCP, transportwire.Unix} {
			if why := f.AgentLacks(c.plat, n); why != "" {
				t.Errorf("%+v nordma=%v: %s: %s", c.plat, c.noRDMA, n, why)
			}
		}
		why := f.AgentLacks(c.plat, transportwire.RDMA)
		if (why == "") != (c.want == "") || !strings.Contains(why, c.want) {
			t.Errorf("%+v nordma=%v: rdma: %q, want %q", c.plat, c.noRDMA, why, c.want)
		}
	}
	var none *AgentFinder // the engine's default finder, not made yet
	if why := none.AgentLacks(Platform{"linux", "arm64"}, transportwire.RDMA); why != "" {
		t.Errorf("nil finder: %s", why)
	}
}
