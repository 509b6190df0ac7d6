package results

import (
	"fmt"
	"time"

	"github.com/dpulab/dpulab/labs/tco"
)

// ResultsVersion is the schema version of results.json. Bump it when a field
// changes meaning; readers refuse versions newer than theirs. Version 2 added
// the run's status and each step's outcome (version 1 files read as status
// "unknown"); version 3 names a point's time "t_seconds" (older files'
// "t" is still read); version 4 adds the metrics carried by name
// (Point.Metrics, RunResult.Metrics, Stats.Metrics), which a reader of
// version 3 would drop without a word; version 5 adds what the numbers are
// (rehearsal with its reason, emulation, per variant too), which an older
// reader would drop and so show a rehearsal as a measurement; version 6
// adds several client hosts to a run (clients, clock spread, start skew),
// client-bound runs, capacity searches beside the flat-out figures and the
// TCO's inputs marked measured, assumed or entered, which an older reader
// would drop, showing a saturated client's figure as the server's;
// version 7 adds software RDMA (software_rdma), which an older reader would
// drop and so show Soft-RoCE's figures as those of RDMA hardware; version
// 8 adds how a run ended beyond its status (interrupted_by, killed, the
// writer's pid and host) and a resumed run's earlier attempts (attempts,
// attempt_started, benches[].attempt), which an older reader would drop
// and so show an earlier attempt's figures as the current run's, and
// where host (ESXi) figures came from (host_metrics_from: SIMULATED for a
// simulator), without which a simulator's figures pass for a vCenter's.
const ResultsVersion = 8

// Results is what a run of a lab leaves in results/LAB/TIMESTAMP/results.json:
// enough to re-render the report and to replay the run in the dashboard.
type Results struct {
	Version  int       `json:"version"`
	Lab      string    `json:"lab"`
	Title    string    `json:"title"`
	RunID    string    `json:"run_id"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Hosts are the inventory's hosts that took part, with their labels
	// (nic, mode, ...), so a replay can say where it was recorded.
	Hosts     []HostInfo        `json:"hosts"`
	Variables map[string]string `json:"variables"`
	// Benches holds one entry per bench or compare step.
	Benches []Compare `json:"benches"`
	// TCO holds the tco step's inputs and outputs, when the lab has one.
	TCO *tco.Estimate `json:"tco,omitempty"`
	// References are published figures shown beside ours, with sources.
	References []Reference `json:"references,omitempty"`
	// HostFigures are figures a tool of the lab measured on its hosts
	// (a run step's record:, e.g. perftest's latency floor), set beside
	// the benchmarks in the reports.
	HostFigures []HostFigure `json:"host_figures,omitempty"`
	// HostMetricsFrom says where the host (ESXi) figures came from, per
	// bench step: vCenter's url and version, SIMULATED for a simulator,
	// the ESXi hosts and VMs read (hostsource.go).
	HostMetricsFrom []HostMetricsSource `json:"host_metrics_from,omitempty"`

	// Status says how the run ended; FailedStep and Error say where and why
	// when it did not complete. A file written mid-run says "running", so a
	// run killed before it could write again is never taken for a finished
	// one.
	Status     RunStatus `json:"status"`
	FailedStep string    `json:"failed_step,omitempty"`
	Error      string    `json:"error,omitempty"`
	// InterruptedBy says what stopped an interrupted run, as a person
	// reads it: "SIGINT (Ctrl-C)", "SIGTERM", "SIGHUP (the terminal
	// closed)", "q in the TUI".
	InterruptedBy string `json:"interrupted_by,omitempty"`
	// WriterPID and WriterHost name the process that wrote a file saying
	// "running" (cleared at the end): a reader finding that process gone
	// knows the run was killed (Live).
	WriterPID  int    `json:"writer_pid,omitempty"`
	WriterHost string `json:"writer_host,omitempty"`
	// Attempts are a resumed run's earlier attempts, oldest first: each
	// ended (failed, interrupted, killed) and the run was resumed from its
	// saved progress. The current attempt is the file's own Started,
	// Status and so on; its number is len(Attempts)+1.
	Attempts []Attempt `json:"attempts,omitempty"`
	// AttemptStarted is when the current attempt started, when it is not
	// the first (Started is the first attempt's start).
	AttemptStarted time.Time `json:"attempt_started,omitzero"`
	// Steps is every step's outcome in this run, in the lab's order.
	Steps []StepOutcome `json:"steps,omitempty"`

	// Rehearsal is set when the run could not measure what its lab is
	// about (the roles it compares ran on one host, or on hosts without
	// the hardware), with the reason: every output of the run says so.
	Rehearsal       bool   `json:"rehearsal,omitempty"`
	RehearsalReason string `json:"rehearsal_reason,omitempty"`
	// Emulation is set when some variants ran over paths that stand in
	// for hardware (network namespaces, an overlay and a firewall in this
	// machine's kernel), saying what was emulated; each such variant says
	// what its path stands for in VariantResult.Emulation.
	Emulation string `json:"emulation,omitempty"`
	// SoftwareRDMA is set when the RDMA devices of the hosts that ran an
	// RDMA bench are software ones (Soft-RoCE's rxe, soft-iWARP's siw: the
	// kernel's RDMA stack over an ordinary interface), naming them by host:
	// "rxe0 on server, rxe1 on client". Every output then labels the run
	// SOFTWARE RDMA (RunKind).
	SoftwareRDMA string `json:"software_rdma,omitempty"`
}

// RunStatus is how a run of a lab ended.
type RunStatus string

// The run statuses results.json and report.md carry.
const (
	// RunRunning: written while the run went on; if the file still says so,
	// the run was killed before it could finish.
	RunRunning RunStatus = "running"
	// RunComplete: every step done or skipped, cleanup included.
	RunComplete RunStatus = "complete"
	// RunFailed: a step failed (FailedStep, Error).
	RunFailed RunStatus = "failed"
	// RunInterrupted: a signal or the person stopped it mid-step.
	RunInterrupted RunStatus = "interrupted"
	// RunIncomplete: it ended before its last step without anything
	// stopping it (--only or --from ran part of the lab).
	RunIncomplete RunStatus = "incomplete"
	// RunKilled: the run's process ended without recording how (SIGKILL,
	// a crash, the machine went down): the file said "running" and its
	// writer is gone. Written by the next run of the lab; a reader says it
	// of a "running" file whose writer is gone (Results.State).
	RunKilled RunStatus = "killed"
)

// Attempt is one earlier attempt of a resumed run: when it ran and how it
// ended.
type Attempt struct {
	Started       time.Time `json:"started"`
	Finished      time.Time `json:"finished,omitzero"`
	Status        RunStatus `json:"status"`
	FailedStep    string    `json:"failed_step,omitempty"`
	Error         string    `json:"error,omitempty"`
	InterruptedBy string    `json:"interrupted_by,omitempty"`
}

// Describe is how the attempt ended, in a few words.
func (a Attempt) Describe() string {
	switch a.Status {
	case RunFailed:
		return "failed at step " + a.FailedStep
	case RunInterrupted:
		s := "interrupted"
		if a.InterruptedBy != "" {
			s += " (" + a.InterruptedBy + ")"
		}
		if a.FailedStep != "" {
			s += " during step " + a.FailedStep
		}
		return s
	case RunKilled, RunRunning:
		return "killed (it never finished)"
	}
	return string(a.Status)
}

// Attempt is the number of the current attempt: 1 unless the run was
// resumed.
func (r *Results) Attempt() int { return len(r.Attempts) + 1 }

// EarlierAttempt says, for a bench measured by an earlier attempt than the
// current one, which and how it ended ("measured by attempt 1 of 2, which
// was interrupted (SIGINT (Ctrl-C)) during step long"); "" for the current
// attempt's figures.
func (r *Results) EarlierAttempt(c *Compare) string {
	n := c.Attempt
	if n <= 0 || n > len(r.Attempts) {
		return ""
	}
	return earlierAttemptTitle + ": " + r.earlierAttemptText(c)
}

// earlierAttemptTitle heads EarlierAttempt and its warning.
const earlierAttemptTitle = "EARLIER ATTEMPT"

func (r *Results) earlierAttemptText(c *Compare) string {
	n := c.Attempt
	return fmt.Sprintf("measured by attempt %d of %d (started %s), which was %s; this run was resumed after it",
		n, r.Attempt(), r.Attempts[n-1].Started.UTC().Format("2006-01-02 15:04:05 UTC"), r.Attempts[n-1].Describe())
}

// State is the run's status as a reader should take it: a file saying
// "running" whose writer is gone is RunKilled.
func (r *Results) State() RunStatus {
	if live, known := r.liveness(); r.Status == RunRunning && known && !live {
		return RunKilled
	}
	return r.Status
}

// Describe is the status as a person reads it at the top of a report.
func (r *Results) Describe() string {
	switch r.State() {
	case RunComplete:
		return "complete: every step finished"
	case RunFailed:
		return fmt.Sprintf("FAILED at step %s: %s", r.FailedStep, r.Error)
	case RunInterrupted:
		by := ""
		if r.InterruptedBy != "" {
			by = " by " + r.InterruptedBy
		}
		if r.FailedStep != "" {
			return fmt.Sprintf("INTERRUPTED%s during step %s: the numbers below are what it measured before it was stopped", by, r.FailedStep)
		}
		return fmt.Sprintf("INTERRUPTED%s before its last step: the numbers below are what it measured before it was stopped", by)
	case RunIncomplete:
		return "INCOMPLETE: the run ended before its last step"
	case RunKilled:
		return "KILLED: the run never finished (its process ended without recording how: killed, crashed, or the machine went down); the numbers below are what it measured before"
	case RunRunning:
		// Written into report.md by the run itself, which cannot know
		// whether it will be killed: a reader that finds its writer gone
		// says KILLED instead (State), and so does `dpulab report`.
		return "NOT FINISHED: the run was still going when this was written (or it was killed)"
	}
	return "unknown (written by a dpulab that did not record it)"
}

// StepOutcome is one step's outcome in a run.
type StepOutcome struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Kind   string `json:"kind"`
	Status Status `json:"status"`
	Error  string `json:"error,omitempty"`
	// Host is where it failed, when it failed on one host.
	Host            string  `json:"host,omitempty"`
	DurationSeconds float64 `json:"duration_seconds,omitempty"`
}

// HostInfo is one host of the inventory as it took part in a run.
type HostInfo struct {
	Name    string            `json:"name"`
	Address string            `json:"address"`
	Roles   []string          `json:"roles"`
	Labels  map[string]string `json:"labels,omitempty"`
	OS      string            `json:"os,omitempty"`
	Arch    string            `json:"arch,omitempty"`
	// Agent is what the dpulab agent uploaded to the host said of itself
	// (`dpulab-agent version`: "dpulab agent", version, revision, platform, Go, transports),
	// AgentSHA256 the sha256 of the file uploaded: what ran the server,
	// bench and sampler there. Absent for this machine and in older files.
	Agent       string `json:"agent,omitempty"`
	AgentSHA256 string `json:"agent_sha256,omitempty"`
}

// Compare is the result of a bench step (one variant) or a compare step
// (several variants, optionally swept over one variable).
type Compare struct {
	Step  string `json:"step"`
	Title string `json:"title"`
	// Sweep names the swept variable ("instances"); empty when not swept.
	Sweep string `json:"sweep,omitempty"`
	// Client is the host the load generator ran on (the first of them when
	// several client hosts shared the load).
	Client string `json:"client,omitempty"`
	// Clients lists every client host that ran a share of the load, when
	// there were several (RunResult.Clients holds each one's series).
	Clients []string `json:"clients,omitempty"`
	// Attempt is the number of the run's attempt that measured this
	// bench (Results.Attempts); 0 in files older than version 8.
	Attempt  int             `json:"attempt,omitempty"`
	Variants []VariantResult `json:"variants"`
	// Unavailable are the variants this run could not make, with why
	// (an emulated path on a host that is not root, has no nft, ...): they
	// are listed, not measured.
	Unavailable []Unavailable `json:"unavailable,omitempty"`
}

// Unavailable is a variant that could not run here, and the reason.
type Unavailable struct {
	Label  string `json:"label"`
	Reason string `json:"reason"`
}

// VariantResult is one variant's results at every sweep point. The first
// variant of a compare is the baseline that deltas are taken against.
type VariantResult struct {
	Label       string            `json:"label"`
	Description string            `json:"description,omitempty"`
	Hosts       []string          `json:"hosts,omitempty"`
	Settings    map[string]string `json:"settings,omitempty"`
	// Emulation, when set, says what this variant's path stands for and
	// that it is an emulation ("host does it all: VXLAN overlay and a
	// 1000-rule stateful firewall in this machine's kernel").
	Emulation string `json:"emulation,omitempty"`
	// Figures is what this variant's figures are, in results.Figures'
	// Short words ("EMULATION", "REHEARSAL+EMULATION", "SOFTWARE RDMA";
	// absent for a measurement): written from VariantFigures for readers
	// of the file, never read back (the fields above decide it).
	Figures string       `json:"figures,omitempty"`
	Points  []SweepPoint `json:"points"`
}

// SweepPoint is the runs of one variant at one value of the swept variable
// (a single point with an empty Value when there is no sweep).
type SweepPoint struct {
	Value string      `json:"value,omitempty"`
	Runs  []RunResult `json:"runs"`
	Stats Stats       `json:"stats"`
	// DeltaPct holds, per metric name (ops_per_sec, latency_avg_ms, ...),
	// the change in percent against the first variant at the same point.
	DeltaPct map[string]float64 `json:"delta_pct,omitempty"`
	// DeltaP holds, per metric, the p-value of Welch's t-test between
	// this point's runs and the first variant's: the delta is beyond the
	// run-to-run noise when it is under Alpha. Absent when either side ran
	// once (the noise was not measured).
	DeltaP map[string]float64 `json:"delta_p,omitempty"`
	// Path holds an emulated network path's counters over this point's
	// bench (warmups included): they show which way the traffic went.
	Path *PathCounters `json:"path,omitempty"`
	// Capacity is the point's capacity search, when the step asked for one
	// (capacity.go): TPS at a latency cap, beside the runs' flat-out TPS.
	Capacity *Capacity `json:"capacity,omitempty"`
}

// PathCounters are an emulated path's packet counts over one bench, read
// in the server's namespace: its veth end (every path), its overlay device
// (with an overlay) and its firewall chain (with a firewall).
type PathCounters struct {
	// Path is the emulated path (direct, firewall, overlay+firewall).
	Path string `json:"path"`
	// Encap is the overlay's encapsulation (geneve, vxlan), if any.
	Encap         string `json:"encap,omitempty"`
	FirewallRules int    `json:"firewall_rules,omitempty"`
	// LinkPackets is what crossed the veth, both ways.
	LinkPackets uint64 `json:"link_packets"`
	// EncapPackets is what the overlay device carried; nil without one.
	EncapPackets *uint64 `json:"encap_packets,omitempty"`
	// FirewallPackets is what walked the firewall's chain; nil without one.
	FirewallPackets *uint64 `json:"firewall_packets,omitempty"`
}

// RunResult is one repetition: its summary and its per-second series.
type RunResult struct {
	Run        int      `json:"run"`
	OpsPerSec  float64  `json:"ops_per_sec"`
	LatencyMs  Latency  `json:"latency_ms"`
	Errors     int64    `json:"errors"`
	ServerCPU  *float64 `json:"server_cpu_pct,omitempty"`
	NetworkCPU *float64 `json:"network_cpu_pct,omitempty"`
	NetGbps    *float64 `json:"net_gbps,omitempty"`
	PowerWatts *float64 `json:"power_watts,omitempty"`
	// BusyCores is ServerCPU expressed in cores (for TPS per busy core).
	BusyCores *float64 `json:"busy_cores,omitempty"`
	Series    []Point  `json:"series"`
	// Metrics holds the means over the series of the metrics carried by
	// name (Point.Metrics).
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// Err says why a run ended early; its partial numbers are kept.
	Err string `json:"error,omitempty"`
	// ClientBound is set when a client host was at least 90% busy over
	// the run (the bench's client_bound): the load generator, not only the
	// server, limited the figures. ClientHostBusyPct is the busiest client
	// host's CPU busy share over the run, percent of its CPUs.
	ClientBound       bool     `json:"client_bound,omitempty"`
	ClientHostBusyPct *float64 `json:"client_host_busy_pct,omitempty"`
	// Clients holds, when several client hosts shared the load, each
	// one's own numbers and series; the run's figures above are theirs
	// merged (rates summed, latencies from the merged histograms).
	Clients []ClientSeries `json:"clients,omitempty"`
	// ClockSpreadMs is how far apart the client hosts' clocks were
	// measured before the run (largest offset minus smallest, against
	// this machine's clock over SSH); ClockWarning says what to do when it
	// exceeded what a merged second tolerates.
	ClockSpreadMs *float64 `json:"clock_spread_ms,omitempty"`
	ClockWarning  string   `json:"clock_warning,omitempty"`
	// StartSkewMs is how far apart the client hosts' measured parts began,
	// as seen from this machine (each host's first sample's arrival minus
	// its time into the run): the seconds merged into one are this far
	// apart at most, plus the SSH delivery jitter.
	StartSkewMs *float64 `json:"start_skew_ms,omitempty"`
}

// ClientSeries is one client host's share of a run measured by several.
type ClientSeries struct {
	Host      string  `json:"host"`
	OpsPerSec float64 `json:"ops_per_sec"`
	LatencyMs Latency `json:"latency_ms"`
	Errors    int64   `json:"errors"`
	// ClientCPUPct is the bench process's CPU, percent of one core;
	// ClientHostBusyPct the host's, percent of all its CPUs; ClientBound
	// is set when the host was at least 90% busy.
	ClientCPUPct      *float64 `json:"client_cpu_pct,omitempty"`
	ClientHostBusyPct *float64 `json:"client_host_busy_pct,omitempty"`
	ClientBound       bool     `json:"client_bound,omitempty"`
	// ClockOffsetMs is the host's clock minus this machine's, measured
	// over SSH before the run, ± ClockUncertaintyMs (half the round trip).
	ClockOffsetMs      *float64 `json:"clock_offset_ms,omitempty"`
	ClockUncertaintyMs *float64 `json:"clock_uncertainty_ms,omitempty"`
	// LatencyHDR is the run's latency histogram on this host
	// (microseconds, HdrHistogram V2 compressed, base64), as the bench
	// reported it: what the run's merged latencies were read from.
	LatencyHDR string        `json:"latency_hdr_us,omitempty"`
	Series     []ClientPoint `json:"series"`
	// Err says why this host's run ended early, if it did.
	Err string `json:"error,omitempty"`
}

// ClientPoint is one second of one client host's share of a run.
type ClientPoint struct {
	T                 float64  `json:"t_seconds"`
	OpsPerSec         float64  `json:"ops_per_sec"`
	LatencyMs         Latency  `json:"latency_ms"`
	Errors            int64    `json:"errors"`
	ClientCPUPct      *float64 `json:"client_cpu_pct,omitempty"`
	ClientHostBusyPct *float64 `json:"client_host_busy_pct,omitempty"`
	// LatencyHDR is the second's latency histogram, encoded as in
	// ClientSeries.
	LatencyHDR string `json:"latency_hdr_us,omitempty"`
}

// MeanStd is a mean with its sample standard deviation over N runs.
type MeanStd struct {
	Mean   float64 `json:"mean"`
	Stddev float64 `json:"stddev"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

// Stats summarises the runs of a sweep point. Metrics that could not be
// measured (no sampler, no RAPL) are nil, never zero.
type Stats struct {
	OpsPerSec      MeanStd  `json:"ops_per_sec"`
	LatencyAvgMs   MeanStd  `json:"latency_avg_ms"`
	LatencyP99Ms   MeanStd  `json:"latency_p99_ms"`
	ServerCPU      *MeanStd `json:"server_cpu_pct,omitempty"`
	NetworkCPU     *MeanStd `json:"network_cpu_pct,omitempty"`
	OpsPerBusyCore *MeanStd `json:"ops_per_busy_core,omitempty"`
	NetGbps        *MeanStd `json:"net_gbps,omitempty"`
	WattsPerMOps   *MeanStd `json:"watts_per_million_ops,omitempty"`
	// Metrics summarises, by name, the metrics without a field of their
	// own (RunResult.Metrics); read through StatsMetric.
	Metrics map[string]MeanStd `json:"metrics,omitempty"`
}

// Reference is a published figure shown beside ours, always with its source.
// HostFigure is one figure a lab's tool printed on a host of this run:
// measured here, by that tool, not by dpulab's bench.
type HostFigure struct {
	// Step is the run step whose commands printed it.
	Step string `json:"step"`
	// Host is the inventory host that ran the tool.
	Host string `json:"host"`
	// Tool names the program and test ("perftest ib_send_lat").
	Tool string `json:"tool"`
	// Label says what the figure is ("typical latency, 256 B").
	Label string  `json:"label"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

type Reference struct {
	Label  string `json:"label"`
	Value  string `json:"value"`
	Source string `json:"source"`
	// Step ties the figure to a bench or compare step, shown beside it.
	Step string `json:"step,omitempty"`
}
