package vsphere

import (
	"strings"
	"testing"
)

func TestPlanNamesEveryQuery(t *testing.T) {
	lines := Plan("https://lab:"+simPassword+"@VC.lab.example/sdk", []Target{{Host: "esx01", VM: "redis-std"}, {Host: "esx01", VM: "redis-dpu"}}, []string{"esx01"}, []string{"redis-std", "redis-dpu"})
	all := strings.Join(lines, "\n")
	for _, want := range []string{"check dpu: ESXi host esx01", "check uptv2: VM redis-std", "check uptv2: VM redis-dpu", "check network-offload: VM redis-dpu",
		"QueryPerf on ESXi esx01", "cpu.ready.summation", "QueryPerf on VM redis-std, redis-dpu: net.usage.average", "log out"} {
		if !strings.Contains(all, want) {
			t.Errorf("plan lacks %q:\n%s", want, all)
		}
	}
	if strings.Count(all, "check dpu:") != 1 {
		t.Errorf("DPUs of one host checked more than once:\n%s", all)
	}
	if strings.Contains(all, simPassword) {
		t.Fatalf("password in the plan:\n%s", all)
	}
}
