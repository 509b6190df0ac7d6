package vsphere

import (
	"fmt"
	neturl "net/url"
	"strings"

	"github.com/dpulab/dpulab/internal/termtext"
)

// Plan lists, without connecting, every vSphere query a run would make for
// these targets: what a --dry-run shows. rawURL is the vCenter URL (any
// user information in it is dropped).
func Plan(rawURL string, targets []Target, sampleHosts, sampleVMs []string) []string {
	addr := "(unparsable url)"
	if u, err := neturl.Parse(rawURL); err == nil {
		u.User = nil
		if _, a, err := parseURL(u.String()); err == nil {
			addr = a
		}
	}
	on := "vCenter " + addr + ": "
	out := []string{on + "TLS: check the certificate's SHA-256 thumbprint against the pin, then log in (SessionManager.Login; the password is asked for then)"}
	seen := map[string]bool{}
	for _, t := range targets {
		if t.Host != "" && !seen[t.Host] {
			seen[t.Host] = true
			out = append(out, on+fmt.Sprintf("check %s: ESXi host %s: read config.network.pnic[].dpuId, runtime.healthSystemRuntime.hardwareStatusInfo.dpuStatusInfo", CheckDPU, termtext.Line(t.Host)))
		}
		if t.VM != "" {
			vm := termtext.Line(t.VM)
			out = append(out,
				on+fmt.Sprintf("check %s: VM %s: read config.hardware.device (VirtualVmxnet3.uptv2Enabled), runtime.device (uptv2Active and its reasons)", CheckUPTv2, vm),
				on+fmt.Sprintf("check %s: VM %s: read config.hardware.device (VirtualVmxnet3.uptv2Enabled), runtime.device (uptv2Active): no adapter may have UPT active", CheckUPTv2Off, vm),
				on+fmt.Sprintf("check %s: VM %s: follow each adapter to its distributed switch, read its config.networkOffloadSpecId and the host's config.network.proxySwitch[].networkOffloadingEnabled", CheckNetworkOffload, vm))
		}
	}
	if len(sampleHosts) > 0 {
		var hs []string
		for _, h := range sampleHosts {
			hs = append(hs, termtext.Line(h))
		}
		out = append(out, on+fmt.Sprintf("while a bench runs: PerformanceManager.QueryPerf on ESXi %s at the real-time interval (20 s): %s (per vmnic), %s, %s, %s, %s, polled every quarter interval",
			strings.Join(hs, ", "), cNet, cUsage, cUsed, cReady, cPower))
	}
	if len(sampleVMs) > 0 {
		var vs []string
		for _, v := range sampleVMs {
			vs = append(vs, termtext.Line(v))
		}
		out = append(out, on+fmt.Sprintf("while a bench runs: PerformanceManager.QueryPerf on VM %s: %s", strings.Join(vs, ", "), cNet))
	}
	out = append(out, on+"log out when the run ends")
	return out
}
