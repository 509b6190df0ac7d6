package results

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/dpulab/dpulab/labs/tco"
)

var update = flag.Bool("update", false, "rewrite the generated fixtures in testdata/ (see fixtures_test.go)")

// The report fixtures below are generated, so that their numbers hang
// together (each run's summary is its series' mean, each point's stats and
// deltas come from Summarize and ComputeDeltas) and can be regenerated when
// the schema changes: go test ./steps/results -run TestFixturesUpToDate
// -update. Every number in them is MADE UP for the tests, from a seeded
// generator; their titles say so, so a screenshot of one cannot pass for a
// measurement.
var reportFixtures = []struct {
	name string
	gen  func() *Results
}{
	// A redis-dpu-uptv2-shaped rehearsal on one machine: three variants,
	// instances swept 10..80, three 30-second runs a point, the lab's
	// published figures (two of them at a point of the sweep), a TCO.
	{"rehearsal-uptv2", rehearsalUPTv2},
	// A run on three hosts that failed in its compare step: the second
	// variant has two of three sweep points, one of its runs ended early.
	{"failed-compare", failedCompare},
	// A complete run swept over clients, with a published figure for each
	// variant at each point of the sweep.
	{"sweep-refs", sweepRefs},
	// The same run over Soft-RoCE: the devices of both hosts are the
	// kernel's rxe, so every figure says SOFTWARE RDMA and the article's
	// hardware figures are not comparable.
	{"software-rdma", softwareRDMA},
}

const fixtureNote = " [test fixture: made-up numbers]"

func TestFixturesUpToDate(t *testing.T) {
	if runtime.GOARCH != "amd64" && !*update {
		// Go may fuse x*y+z into one instruction on other architectures
		// (arm64, ppc64le, s390x), and the statistics differ in their
		// last bits from the checked-in files, written on amd64.
		t.Skipf("the fixtures are generated on amd64; %s may round their statistics differently", runtime.GOARCH)
	}
	for _, f := range reportFixtures {
		b, err := json.MarshalIndent(f.gen(), "", " ")
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, '\n')
		p := filepath.Join("testdata", f.name, ResultsFile)
		if *update {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%v (write it with -update)", err)
		}
		if !bytes.Equal(old, b) {
			t.Errorf("%s differs from what its generator writes: run go test -run TestFixturesUpToDate -update and review the diff", p)
		}
	}
}

// shape is how a made-up run behaves: its TPS, the connections it keeps
// busy (for the latency, by Little's law), its server CPU.
type shape struct {
	ops, inflight, cpu, cores, valueBytes float64
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// genRun makes one run of secs seconds around s, with a few percent of
// noise a second.
func genRun(rng *rand.Rand, n, secs int, s shape) RunResult {
	r := RunResult{Run: n}
	noise := func(sd float64) float64 { return 1 + sd*rng.NormFloat64() }
	var ops, lat, p50, p90, p99, p999, mx float64
	for i := 1; i <= secs; i++ {
		o := round(s.ops*noise(0.02), 1)
		avg := round(s.inflight/o*1000*noise(0.02), 4)
		cpu := round(math.Min(100, s.cpu*noise(0.015)), 2)
		net := round(cpu*0.3*noise(0.05), 2)
		gbps := round(o*(s.valueBytes+90)*8/1e9, 4)
		pt := Point{T: float64(i), OpsPerSec: o, LatencyMs: Latency{Avg: avg, P50: round(avg*0.85, 4), P90: round(avg*1.6, 4),
			P99: round(avg*2.6*noise(0.05), 4), P999: round(avg*4.1*noise(0.1), 4), Max: round(avg*9*noise(0.2), 4)},
			ServerCPU: &cpu, NetworkCPU: &net, NetGbps: &gbps}
		r.Series = append(r.Series, pt)
		ops += o
		lat += avg
		p50 += pt.LatencyMs.P50
		p90 += pt.LatencyMs.P90
		p99 = math.Max(p99, pt.LatencyMs.P99)
		p999 = math.Max(p999, pt.LatencyMs.P999)
		mx = math.Max(mx, pt.LatencyMs.Max)
	}
	k := float64(secs)
	r.OpsPerSec = round(ops/k, 1)
	r.LatencyMs = Latency{Avg: round(lat/k, 4), P50: round(p50/k, 4), P90: round(p90/k, 4), P99: p99, P999: p999, Max: mx}
	r.SummarizeSeries(s.cores)
	return r
}

// genCompare fills c's variants' points from at(variant, value) and sums
// them up as the engine does.
func genCompare(rng *rand.Rand, c *Compare, values []string, runs, secs int, at func(vi int, value string) (shape, bool)) {
	for vi := range c.Variants {
		for _, v := range values {
			s, ok := at(vi, v)
			if !ok {
				break
			}
			p := SweepPoint{Value: v}
			for n := 1; n <= runs; n++ {
				p.Runs = append(p.Runs, genRun(rng, n, secs, s))
			}
			c.Variants[vi].Points = append(c.Variants[vi].Points, p)
		}
	}
	for vi := range c.Variants {
		for pi := range c.Variants[vi].Points {
			c.Variants[vi].Points[pi].Stats = Summarize(c.Variants[vi].Points[pi].Runs)
		}
	}
	ComputeDeltas(c)
}

var fixtureStart = time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)

func atoi(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

func steps(outcomes ...StepOutcome) []StepOutcome { return outcomes }

func done(id, title, kind string, secs float64) StepOutcome {
	return StepOutcome{ID: id, Title: title, Kind: kind, Status: Done, DurationSeconds: secs}
}

// The lab's published figures as assets/figures.yaml words them.
var (
	wpTPSUPTv2  = Reference{Label: "Peak TPS, EDP standard with UPTv2 (full DPU acceleration), 80 instances", Value: "almost 20M", Source: `NVIDIA/VMware whitepaper "Accelerating Redis Performance Using VMware vSphere 8 and NVIDIA BlueField DPUs", summary (seed 002), "Benchmark results", Figure 3`, Step: "compare"}
	wpTPSOff    = Reference{Label: "Peak TPS, EDP standard with partial DPU offload (default mode)", Value: "17.74M", Source: `Same whitepaper summary (seed 002), "Benchmark results", Figure 3`, Step: "compare"}
	wpTPSCX5    = Reference{Label: "Peak TPS, standard ConnectX-5 NIC without offload (reached at 30 instances)", Value: "about 12.75M", Source: `Same whitepaper summary (seed 002), "Benchmark results", Figure 3`, Step: "compare"}
	wpValue     = Reference{Label: "DPU host against non-DPU host", Value: ">30% more throughput, >25% lower latency, 20% fewer CPU cores", Source: `Same whitepaper summary (seed 002), "Value proposition"`, Step: "compare"}
	wpLineRate  = Reference{Label: "Limit at the largest scale tested, accelerated mode", Value: "the 25G DPU's line rate", Source: `Same whitepaper summary (seed 002), "Maximizing the ROI"`, Step: "compare"}
	wpServers   = Reference{Label: "Redis servers needed (30–80 instances per ESX host)", Value: "14–18% fewer", Source: `Same whitepaper summary (seed 002), "Maximizing the ROI"`, Step: "tco"}
	wpTCO       = Reference{Label: "TCO savings, fleet of 10,000 servers, 3 years", Value: "$8.3M–$10.6M (about half CapEx, half OpEx)", Source: `Same whitepaper summary (seed 002), "Maximizing the ROI"`, Step: "tco"}
	uptv2Values = []string{"10", "20", "30", "40", "50", "60", "70", "80"}
	uptv2Vars   = map[string]string{"platform": "esxi-vm", "iface": "ens192", "mtu": "1500", "instances": "30", "clients": "4", "pipeline": "8",
		"data_size": "32", "ratio": "1:10", "key_maximum": "100000", "warmup": "5s", "duration": "30s", "runs": "3"}
)

func uptv2Steps(compare StepOutcome, tail ...StepOutcome) []StepOutcome {
	s := steps(done("overview", "What the whitepaper measured", "read", 4), done("topology", "Hosts, roles and the inventory", "read", 3),
		done("os", "Check that every host runs Linux", "check", 0.4), done("nic-driver", "Check the network interface and its driver", "check", 0.5),
		done("mtu", "Check the MTU", "check", 0.3),
		StepOutcome{ID: "rdma-device", Title: "Check that the BlueField card is visible (bare metal)", Kind: "check", Status: Skipped},
		StepOutcome{ID: "dpu-mode", Title: "Check that the BlueField runs in DPU mode (bare metal)", Kind: "check", Status: Skipped},
		done("host-info", "Record each host's CPU and NIC", "run", 1.2), done("deploy-baseline", "Start the servers behind the standard NIC", "deploy", 6.1),
		done("deploy-accelerated", "Start the servers behind the BlueField DPU", "deploy", 6.4), done("smoke", "A short benchmark against the accelerated servers", "bench", 12),
		compare)
	return append(s, tail...)
}

func rehearsalUPTv2() *Results {
	rng := rand.New(rand.NewPCG(1, 2))
	c := Compare{Step: "compare", Title: "Standard NIC against BlueField UPTv2, 10 to 80 instances", Sweep: "instances", Client: "local",
		Variants: []VariantResult{
			{Label: "Standard NIC", Description: "EDP standard on a regular NIC, no DPU offload (the whitepaper used a ConnectX-5).", Hosts: []string{"local"}},
			{Label: "BlueField default offload", Description: "EDP standard with partial DPU offload (the default mode).", Hosts: []string{"local"}},
			{Label: "BlueField UPTv2", Description: "EDP standard with full DPU offload and acceleration (UPTv2).", Hosts: []string{"local"}},
		}}
	// One 2-core machine serves all three "variants" the same way: the
	// differences are noise, the plateau is the machine's.
	genCompare(rng, &c, uptv2Values, 3, 30, func(vi int, v string) (shape, bool) {
		n := atoi(v)
		ops := 210000 * (1 - 0.0012*n)
		return shape{ops: ops, inflight: n * 4 * 8, cpu: math.Min(97, 88+n/10), cores: 2, valueBytes: 32}, true
	})
	r := &Results{Version: ResultsVersion, Lab: "redis-dpu-uptv2", Title: "Redis on vSphere 8: standard NIC against BlueField DPU acceleration (UPTv2)" + fixtureNote,
		RunID: "20261203T090000Z", Started: fixtureStart, Finished: fixtureStart.Add(41 * time.Minute),
		Hosts:     []HostInfo{{Name: "local", Address: "local", Roles: []string{"client", "baseline", "accelerated"}, OS: "linux", Arch: "amd64"}},
		Variables: uptv2Vars, Benches: []Compare{c},
		References: []Reference{wpTPSUPTv2, wpTPSOff, wpTPSCX5, wpValue, wpLineRate, wpServers, wpTCO},
		Status:     RunComplete, Rehearsal: true,
		RehearsalReason: "the baseline and accelerated roles ran on one host, local, which has no BlueField DPU",
		Steps: uptv2Steps(done("compare", c.Title, "compare", 2350), done("results", "Read the comparison", "read", 20),
			done("tco", "What a fleet would save", "tco", 9), done("cleanup", "Stop the servers and remove the files", "cleanup", 2.2)),
	}
	// A rehearsal gets a TCO only when asked for, by entering the share
	// of servers saved (here the whitepaper's middle), and says so.
	est, err := tco.Make(map[string]float64{tco.SavedPct: 16},
		tco.Provenance{Rehearsal: r.RehearsalReason, Sources: map[string]string{tco.SavedPct: tco.Entered}})
	if err != nil {
		panic(err)
	}
	r.TCO = est
	return r
}

func failedCompare() *Results {
	rng := rand.New(rand.NewPCG(3, 4))
	c := Compare{Step: "compare", Title: "Standard NIC against BlueField UPTv2, 10 to 80 instances", Sweep: "instances", Client: "client1",
		Variants: []VariantResult{
			{Label: "Standard NIC", Description: "EDP standard on a regular NIC, no DPU offload (the whitepaper used a ConnectX-5).", Hosts: []string{"esx-std-vm"}},
			{Label: "BlueField UPTv2", Description: "EDP standard with full DPU offload and acceleration (UPTv2).", Hosts: []string{"esx-dpu-vm"}},
		}}
	genCompare(rng, &c, []string{"10", "20", "30"}, 3, 30, func(vi int, v string) (shape, bool) {
		n := atoi(v)
		if vi == 1 && n > 20 {
			return shape{}, false
		}
		ops := []float64{420000, 465000}[vi] * n
		return shape{ops: ops, inflight: n * 4 * 8, cpu: []float64{2.6, 2.1}[vi] * n, cores: 32, valueBytes: 32}, true
	})
	// The accelerated variant's third run at 20 instances lost its
	// connections 12 s in: its partial numbers are kept.
	p := &c.Variants[1].Points[1]
	run := &p.Runs[2]
	run.Series = run.Series[:12]
	run.Err = "bench: 3 of 80 connections reset by peer after 12s"
	run.SummarizeSeries(32)
	p.Stats = Summarize(p.Runs)
	ComputeDeltas(&c)
	const failure = "variant BlueField UPTv2, instances=30: deploy: 4 of 30 servers on esx-dpu-vm did not answer PING within 10s"
	return &Results{Version: ResultsVersion, Lab: "redis-dpu-uptv2", Title: "Redis on vSphere 8: standard NIC against BlueField DPU acceleration (UPTv2)" + fixtureNote,
		RunID: "20261203T110000Z", Started: fixtureStart.Add(2 * time.Hour), Finished: fixtureStart.Add(2*time.Hour + 19*time.Minute),
		Hosts: []HostInfo{
			{Name: "client1", Address: "10.0.0.5", Roles: []string{"client"}, OS: "linux", Arch: "amd64"},
			{Name: "esx-std-vm", Address: "10.0.0.6", Roles: []string{"baseline"}, Labels: map[string]string{"nic": "ConnectX-5"}, OS: "linux", Arch: "amd64"},
			{Name: "esx-dpu-vm", Address: "10.0.0.7", Roles: []string{"accelerated"}, Labels: map[string]string{"nic": "BlueField-2", "mode": "UPTv2"}, OS: "linux", Arch: "amd64"},
		},
		Variables: uptv2Vars, Benches: []Compare{c},
		References: []Reference{wpTPSUPTv2, wpTPSCX5, wpValue},
		Status:     RunFailed, FailedStep: "compare", Error: failure,
		Steps: uptv2Steps(StepOutcome{ID: "compare", Title: c.Title, Kind: "compare", Status: Failed, Error: failure, Host: "esx-dpu-vm", DurationSeconds: 1105},
			StepOutcome{ID: "results", Title: "Read the comparison", Kind: "read", Status: Pending},
			StepOutcome{ID: "tco", Title: "What a fleet would save", Kind: "tco", Status: Pending},
			done("cleanup", "Stop the servers and remove the files", "cleanup", 3.1)),
	}
}

func sweepRefs() *Results {
	rng := rand.New(rand.NewPCG(5, 6))
	c := Compare{Step: "connections", Title: "RC against UC as connections grow", Sweep: "clients", Client: "client1",
		Variants: []VariantResult{
			{Label: "TCP", Description: "the same server over TCP (IPoIB)", Hosts: []string{"server1"}, Settings: map[string]string{"transport": "tcp"}},
			{Label: "RDMA RC", Description: "reliable connected queue pairs", Hosts: []string{"server1"}, Settings: map[string]string{"transport": "rdma", "rdma-transport-mode": "reliable-connected"}},
			{Label: "RDMA UC", Description: "unreliable connected queue pairs", Hosts: []string{"server1"}, Settings: map[string]string{"transport": "rdma", "rdma-transport-mode": "unreliable-connected"}},
		}}
	values := []string{"16", "32", "64", "128"}
	genCompare(rng, &c, values, 3, 10, func(vi int, v string) (shape, bool) {
		n := atoi(v)
		ops := []float64{5200, 7400, 8900}[vi] * n * (1 - 0.0035*n)
		return shape{ops: ops, inflight: n, cpu: []float64{30, 22, 19}[vi] + n/4, cores: 16, valueBytes: 64}, true
	})
	src := `Article "实战对比Mellanox ConnectX-3网卡与InfiniBand加速Redis的性能差异分析" (seed 001), section 4, throughput table`
	var refs []Reference
	for i, v := range values {
		rc := []string{"125,000", "231,000", "412,000", "523,000"}[i]
		uc := []string{"158,000", "287,000", "495,000", "586,000"}[i]
		refs = append(refs, Reference{Label: "Throughput RC, clients=" + v, Value: rc + " ops/s", Source: src, Step: "connections"},
			Reference{Label: "Throughput UC, clients=" + v, Value: uc + " ops/s", Source: src, Step: "connections"})
	}
	refs = append(refs, Reference{Label: "Packet loss observed with UC during the tests", Value: "0.01%", Source: "Same article (seed 001), section 4, key findings"})
	return &Results{Version: ResultsVersion, Lab: "redis-rdma-rc-uc", Title: "Redis over InfiniBand: RC against UC" + fixtureNote,
		RunID: "20261203T140000Z", Started: fixtureStart.Add(5 * time.Hour), Finished: fixtureStart.Add(5*time.Hour + 12*time.Minute),
		Hosts: []HostInfo{
			{Name: "client1", Address: "10.0.1.5", Roles: []string{"client"}, Labels: map[string]string{"nic": "ConnectX-3"}, OS: "linux", Arch: "amd64"},
			{Name: "server1", Address: "10.0.1.6", Roles: []string{"server"}, Labels: map[string]string{"nic": "ConnectX-3", "link": "InfiniBand FDR"}, OS: "linux", Arch: "amd64"},
		},
		Variables:  map[string]string{"duration": "10s", "runs": "3", "data_size": "64"},
		Benches:    []Compare{c},
		References: refs,
		Status:     RunComplete,
		Steps: steps(done("overview", "What the article compared", "read", 3), done("deploy", "Start the server", "deploy", 4.2),
			done("connections", c.Title, "compare", 168), done("cleanup", "Stop the server", "cleanup", 1.1)),
	}
}

func softwareRDMA() *Results {
	r := sweepRefs()
	r.Title = "Redis over Soft-RoCE: RC against UC" + fixtureNote
	r.SoftwareRDMA = "rxe0 on server1, rxe1 on client1"
	for i := range r.Hosts {
		r.Hosts[i].Labels = map[string]string{"nic": "virtio-net (Soft-RoCE)"}
	}
	return r
}
