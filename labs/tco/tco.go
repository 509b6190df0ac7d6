// Package tco is the fleet-savings model behind a lab's tco step: the names
// of its inputs (the only ones lab.yaml may declare), their units and
// defaults, where each value came from, and the arithmetic, written out once
// in Formula and computed by Make.
//
// labs checks a tco step's inputs against InputNames; the engine measures
// the share of servers saved (steps/results' MeasuredSaving, a Basis here)
// and computes the estimate, and results.json carries it as an Estimate.
package tco

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The inputs, by the names lab.yaml and --set use.
const (
	// Servers is the fleet size before acceleration.
	Servers = "servers"
	// SavedPct is the share of servers no longer needed, in percent:
	// measured from a compare, or entered.
	SavedPct = "servers_saved_pct"
	// Instances is the Redis instances per host at which the saving is
	// read from the compare's sweep. It selects; it is not in the formula.
	Instances = "instances"
	// ServerPrice is the purchase price of one server, in dollars.
	ServerPrice = "server_price"
	// InfraPerServer is the data-center infrastructure cost per server
	// (rack space, switch ports, cabling), in dollars, paid once.
	InfraPerServer = "infra_per_server"
	// DPUPremium is what a BlueField DPU costs a server over the standard
	// NIC it replaces, in dollars, paid for every server kept.
	DPUPremium = "dpu_premium"
	// ServerWatts is the average power draw of one server, in watts.
	ServerWatts = "server_watts"
	// PricePerKWh is the electricity price in dollars per kWh.
	PricePerKWh = "price_per_kwh"
	// PUE is the power usage effectiveness (total facility power divided
	// by IT power; covers cooling and power distribution).
	PUE = "pue"
	// Years is the period the savings are counted over.
	Years = "years"
)

// InputNames lists every input, in the order the docs explain them.
var InputNames = []string{Servers, SavedPct, Instances, ServerPrice, InfraPerServer, DPUPremium, ServerWatts, PricePerKWh, PUE, Years}

// Units are the inputs' units, as every view shows them.
var Units = map[string]string{
	Servers: "servers", SavedPct: "%", Instances: "instances per host", ServerPrice: "$ per server",
	InfraPerServer: "$ per server", DPUPremium: "$ per server", ServerWatts: "W per server",
	PricePerKWh: "$/kWh", PUE: "ratio", Years: "years",
}

// Where an input's value came from.
const (
	// Assumed: a default, the lab's or this package's, not a fact about
	// the person's fleet.
	Assumed = "assumed"
	// Measured: derived from this run's compare (servers_saved_pct).
	Measured = "measured"
	// Entered: the person gave it (--set, the variables form, the TUI's
	// TCO view).
	Entered = "entered"
)

// The outputs (keys of Estimate.Outputs).
const (
	ServersSaved = "servers_saved"
	CapexUSD     = "capex_savings_usd"
	DPUCostUSD   = "dpu_cost_usd"
	OpexUSD      = "opex_savings_usd"
	TotalUSD     = "total_savings_usd"
	OpexPerYear  = "opex_savings_usd_per_year"
)

// Formula is Make's arithmetic, as the lab docs write it.
const Formula = `servers_saved = round(servers × servers_saved_pct / 100)
capex    = servers_saved × (server_price + infra_per_server)
dpu_cost = (servers − servers_saved) × dpu_premium
opex     = servers_saved × server_watts / 1000 × 8760 h × years × price_per_kwh × pue
total    = capex − dpu_cost + opex`

// Defaults are our assumptions for a vSphere host, fitted to the
// whitepaper ("Accelerating Redis Performance Using VMware vSphere 8 and
// NVIDIA BlueField DPUs", "Maximizing the ROI": 10,000 servers, 14–18%
// fewer, $8.3M–$10.6M over 3 years). The whitepaper publishes no prices.
// A two-socket host at $15,000 plus $1,500 of rack, switch port and
// cabling, 600 W, $0.12 per kWh and a PUE of 1.5 come to $16,500 CapEx and
// $2,838.24 OpEx per server saved over 3 years. The one fitted value is the
// DPU premium: the middle of the whitepaper's range, $9.45M at 16%, gives
// (1,600 × $19,338.24 − $9.45M) / 8,400 kept servers = $2,558.47, rounded to
// $2,560 ($9.44M at 16%). The whitepaper's own range cannot be reproduced
// with any positive DPU price: its ends ($8.3M at 1,400 servers, $10.6M at
// 1,800) imply $5,750 per further server saved and nothing paid for DPUs.
// labs/redis-dpu-uptv2/tco.md shows the arithmetic. servers_saved_pct has
// no default: it is measured or entered, never assumed.
var Defaults = map[string]float64{
	Servers:        10000,
	ServerPrice:    15000,
	InfraPerServer: 1500,
	DPUPremium:     2560,
	ServerWatts:    600,
	PricePerKWh:    0.12,
	PUE:            1.5,
	Years:          3,
}

// Basis is how servers_saved_pct was measured: the whitepaper's way, cores
// freed for the same work mean fewer servers for a fleet sized by cores.
// At a sweep point the standard host needs B cores per million TPS and the
// accelerated host A; serving the accelerated host's load L frees
// (B − A) × L cores, a share 1 − A/B of what the standard host would need.
type Basis struct {
	// Step is the compare it came from; Baseline and Accelerated are the
	// variants compared (its first and last).
	Step        string `json:"step"`
	Baseline    string `json:"baseline"`
	Accelerated string `json:"accelerated"`
	// CPU says whose CPU: "host (ESXi)" when vSphere's counters were read,
	// else "server hosts" (the servers' own /proc/stat, which on vSphere
	// cannot see the hypervisor's networking work).
	CPU string `json:"cpu"`
	// Metric is the metric it was read from (esxi_cores_per_million_ops
	// or ops_per_busy_core).
	Metric string `json:"metric"`
	// Sweep names the swept variable; Chosen is the point used.
	Sweep  string       `json:"sweep,omitempty"`
	Chosen string       `json:"chosen"`
	Points []BasisPoint `json:"points"`
	// Note says how Chosen was picked when it is not the count asked for.
	Note string `json:"note,omitempty"`
}

// BasisPoint is the measured saving at one sweep point.
type BasisPoint struct {
	// Value is the sweep variable's value ("" without a sweep).
	Value string `json:"value"`
	// BaselineCoresPerMOps and AcceleratedCoresPerMOps are the cores each
	// host used per million TPS (means over the runs).
	BaselineCoresPerMOps    float64 `json:"baseline_cores_per_million_ops"`
	AcceleratedCoresPerMOps float64 `json:"accelerated_cores_per_million_ops"`
	// AcceleratedMOps is the accelerated host's TPS, in millions.
	AcceleratedMOps float64 `json:"accelerated_million_ops"`
	// CoresFreed is (B − A) × L: cores freed per host at that load.
	CoresFreed float64 `json:"cores_freed"`
	// SavedPct is 1 − A/B, in percent.
	SavedPct float64 `json:"saved_pct"`
	// P is Welch's p-value for the difference (HasP false: one run a
	// side, the noise was not measured); Runs the fewer runs of the two.
	P    float64 `json:"p,omitempty"`
	HasP bool    `json:"has_p"`
	Runs int     `json:"runs"`
	// Saving is true when the saving is > 0 and beyond the runs' noise
	// (p < 0.05): only then does the estimate use it.
	Saving bool `json:"saving"`
	// Why says why it is not a saving, when it is not.
	Why string `json:"why,omitempty"`
}

// Pct is the saving as the estimate uses it, to a tenth of a percent.
func (p BasisPoint) Pct() float64 { return math.Round(p.SavedPct*10) / 10 }

// Point returns the basis point at value v.
func (b *Basis) Point(v string) (BasisPoint, bool) {
	for _, p := range b.Points {
		if p.Value == v {
			return p, true
		}
	}
	return BasisPoint{}, false
}

// Pick chooses the point for instances (a sweep over instances): the one
// measured at that count, else the nearest measured one, saying so in Note.
// Without a sweep over instances it is the last point (the most load).
func (b *Basis) Pick(instances float64, have bool) {
	b.Note = ""
	if len(b.Points) == 0 {
		return
	}
	if b.Sweep != Instances || !have {
		b.Chosen = b.Points[len(b.Points)-1].Value
		if b.Sweep != "" {
			b.Note = fmt.Sprintf("the compare sweeps %s: its last point, %s", b.Sweep, b.Chosen)
		}
		return
	}
	best, bestD := "", math.Inf(1)
	for _, p := range b.Points {
		v, err := strconv.ParseFloat(p.Value, 64)
		if err != nil {
			continue
		}
		if d := math.Abs(v - instances); d < bestD {
			best, bestD = p.Value, d
		}
	}
	if best == "" {
		best = b.Points[len(b.Points)-1].Value
	}
	b.Chosen = best
	if bestD != 0 {
		b.Note = fmt.Sprintf("%g instances per host were not measured; the nearest point measured is %s", instances, best)
	}
}

// Provenance is what an estimate says beyond its numbers.
type Provenance struct {
	// Sources says, per input, Assumed, Measured or Entered (missing:
	// Assumed). Units override the package's Units (the lab's own).
	Sources map[string]string
	Units   map[string]string
	// Basis is how the saving was measured, when it was.
	Basis *Basis
	// NoSaving, when set, says why no saving is shown (none measured, ≤ 0,
	// within the noise): the estimate then has no outputs.
	NoSaving string
	// Rehearsal, when set, says the run was a rehearsal (why): an estimate
	// shown from it was asked for and carries this label.
	Rehearsal string
}

// Estimate is the fleet-savings estimate of a tco step: its inputs (as the
// person left them), where each came from, and what follows from them.
type Estimate struct {
	Inputs map[string]float64 `json:"inputs"`
	// Sources and Units say, per input, where its value came from
	// (assumed, measured, entered) and what it counts.
	Sources map[string]string `json:"input_sources,omitempty"`
	Units   map[string]string `json:"input_units,omitempty"`
	// Outputs are empty when NoSaving says why there is no saving.
	Outputs map[string]float64 `json:"outputs"`
	// Formula is the arithmetic, written out, as shown in the lab doc.
	Formula   string `json:"formula"`
	Basis     *Basis `json:"basis,omitempty"`
	NoSaving  string `json:"no_saving,omitempty"`
	Rehearsal string `json:"rehearsal,omitempty"`
}

// Compute is Make with every input assumed.
func Compute(inputs map[string]float64) (*Estimate, error) { return Make(inputs, Provenance{}) }

// Make applies Formula to inputs (missing ones take Defaults). An unknown
// input, or a negative or non-finite one, is an error. Without a
// servers_saved_pct, or with p.NoSaving set, the estimate has no outputs
// and says why; in a rehearsal only an entered servers_saved_pct counts.
func Make(inputs map[string]float64, p Provenance) (*Estimate, error) {
	in := maps.Clone(Defaults)
	for k, v := range inputs {
		if !slices.Contains(InputNames, k) {
			return nil, fmt.Errorf("tco: unknown input %q (known: %s)", k, strings.Join(sorted(), ", "))
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return nil, fmt.Errorf("tco: input %s = %v must be a number ≥ 0", k, v)
		}
		in[k] = v
	}
	if in[SavedPct] > 100 {
		return nil, fmt.Errorf("tco: %s = %v is more than 100%%", SavedPct, in[SavedPct])
	}
	t := &Estimate{Inputs: in, Sources: map[string]string{}, Units: map[string]string{}, Outputs: map[string]float64{},
		Formula: Formula, Basis: p.Basis, NoSaving: p.NoSaving, Rehearsal: p.Rehearsal}
	for k := range in {
		t.Sources[k] = Assumed
		if s := p.Sources[k]; s != "" {
			t.Sources[k] = s
		}
		t.Units[k] = Units[k]
		if u := p.Units[k]; u != "" {
			t.Units[k] = u
		}
	}
	_, hasPct := inputs[SavedPct]
	switch {
	case t.NoSaving != "":
	case !hasPct:
		t.NoSaving = "no share of servers saved: none was measured or entered"
	case t.Rehearsal != "" && t.Sources[SavedPct] != Entered:
		t.NoSaving = "REHEARSAL: no DPU in this run, so no saving from its numbers; enter servers_saved_pct for an estimate of your own"
	case in[SavedPct] <= 0:
		t.NoSaving = "servers_saved_pct is 0: no servers saved"
	}
	if t.NoSaving != "" {
		return t, nil
	}
	saved := math.Round(in[Servers] * in[SavedPct] / 100)
	capex := saved * (in[ServerPrice] + in[InfraPerServer])
	dpu := (in[Servers] - saved) * in[DPUPremium]
	opexYear := saved * in[ServerWatts] / 1000 * 8760 * in[PricePerKWh] * in[PUE]
	opex := opexYear * in[Years]
	t.Outputs = map[string]float64{
		ServersSaved: saved,
		CapexUSD:     capex,
		DPUCostUSD:   dpu,
		OpexUSD:      opex,
		OpexPerYear:  opexYear,
		TotalUSD:     capex - dpu + opex,
	}
	return t, nil
}

// Edit recomputes t with inputs the person changed: a value that differs
// from t's is entered; one not given keeps t's. An entered servers_saved_pct replaces the measured
// one (and lifts a no-saving verdict, as it no longer depends on the
// measurement); a changed instance count re-reads the measured saving at
// that point of the basis.
func (t *Estimate) Edit(inputs map[string]float64) (*Estimate, error) {
	p := Provenance{Sources: maps.Clone(t.Sources), Units: t.Units, Rehearsal: t.Rehearsal}
	if p.Sources == nil {
		p.Sources = map[string]string{}
	}
	in := map[string]float64{}
	for k, v := range inputs {
		if old, ok := t.Inputs[k]; !ok || old != v {
			p.Sources[k] = Entered
		}
		in[k] = v
	}
	// Inputs not given keep their values (servers_saved_pct aside: left
	// out, it is measured again or not there).
	for k, v := range t.Inputs {
		if _, ok := inputs[k]; !ok && k != SavedPct {
			in[k] = v
		}
	}
	if _, ok := t.Inputs[DPUPremium]; !ok && t.Sources == nil {
		// An estimate written before the model priced the DPU.
		in[DPUPremium] = 0
	}
	if t.Basis != nil {
		b := *t.Basis
		p.Basis = &b
	}
	if p.Sources[SavedPct] == Entered {
		return Make(in, p)
	}
	if p.Basis == nil {
		if _, has := inputs[SavedPct]; !has || t.NoSaving != "" {
			delete(in, SavedPct)
			p.NoSaving = t.NoSaving
		}
		return Make(in, p)
	}
	n, have := in[Instances]
	p.Basis.Pick(n, have)
	delete(in, SavedPct)
	pt, _ := p.Basis.Point(p.Basis.Chosen)
	if have {
		if v, err := strconv.ParseFloat(pt.Value, 64); err == nil {
			in[Instances] = v
		}
	}
	if !pt.Saving {
		p.NoSaving = "no saving measured: " + pt.Why
		return Make(in, p)
	}
	in[SavedPct] = pt.Pct()
	p.Sources[SavedPct] = Measured
	return Make(in, p)
}

// InputsFromVars picks the inputs out of a lab's variables (those named like
// an input); a value that is not a number is an error.
func InputsFromVars(vars map[string]string) (map[string]float64, error) {
	in := map[string]float64{}
	for _, k := range InputNames {
		s, ok := vars[k]
		if !ok || s == "" {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("tco: variable %s = %q is not a number", k, s)
		}
		in[k] = v
	}
	return in, nil
}

func sorted() []string {
	s := slices.Clone(InputNames)
	slices.Sort(s)
	return s
}
