// Package tco is the fleet-savings model behind a lab's tco step: the names
// of its inputs (the only ones lab.yaml may declare), their defaults, and the
// arithmetic, written out once in Formula and computed by Compute.
//
// labs checks a tco step's inputs against InputNames; the engine computes
// the estimate, and results.json carries it as an Estimate.
package tco

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The inputs, by the names lab.yaml and --set use.
const (
	// Servers is the fleet size before acceleration.
	Servers = "servers"
	// SavedPct is the share of servers no longer needed, in percent.
	SavedPct = "servers_saved_pct"
	// ServerPrice is the purchase price of one server, in dollars.
	ServerPrice = "server_price"
	// InfraPerServer is the data-center infrastructure cost per server
	// (rack space, switch ports, cabling), in dollars, paid once.
	InfraPerServer = "infra_per_server"
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
var InputNames = []string{Servers, SavedPct, ServerPrice, InfraPerServer, ServerWatts, PricePerKWh, PUE, Years}

// The outputs (keys of Estimate.Outputs).
const (
	ServersSaved = "servers_saved"
	CapexUSD     = "capex_savings_usd"
	OpexUSD      = "opex_savings_usd"
	TotalUSD     = "total_savings_usd"
	OpexPerYear  = "opex_savings_usd_per_year"
)

// Formula is Compute's arithmetic, as the lab docs write it.
const Formula = `servers_saved = round(servers × servers_saved_pct / 100)
capex = servers_saved × (server_price + infra_per_server)
opex  = servers_saved × server_watts / 1000 × 8760 h × years × price_per_kwh × pue
total = capex + opex`

// Defaults are the inputs we assume to reproduce the whitepaper's order of
// magnitude (seed 002: 10,000 servers, 14–18% fewer, $8.3M–$10.6M over 3
// years, about half CapEx, half OpEx). The whitepaper does not publish its
// price and power inputs; these are our assumptions: a $2,400 server plus
// $600 of rack, switch port and cabling, 500 W average draw, $0.15 per kWh
// and a PUE of 1.5. They give $3,000 CapEx and $2,957 OpEx per server saved
// over 3 years (half and half, as the whitepaper says), so 1,400–1,800
// servers saved come to $8.3M–$10.7M.
var Defaults = map[string]float64{
	Servers:        10000,
	SavedPct:       16,
	ServerPrice:    2400,
	InfraPerServer: 600,
	ServerWatts:    500,
	PricePerKWh:    0.15,
	PUE:            1.5,
	Years:          3,
}

// Estimate is the fleet-savings estimate of a tco step: its inputs (as the
// person left them) and what follows from them.
type Estimate struct {
	Inputs  map[string]float64 `json:"inputs"`
	Outputs map[string]float64 `json:"outputs"`
	// Formula is the arithmetic, written out, as shown in the lab doc.
	Formula string `json:"formula"`
}

// Compute applies Formula to inputs (missing ones take Defaults). An
// unknown input, or a negative or non-finite one, is an error.
func Compute(inputs map[string]float64) (*Estimate, error) {
	in := map[string]float64{}
	for k, v := range Defaults {
		in[k] = v
	}
	for k, v := range inputs {
		if _, known := Defaults[k]; !known {
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
	saved := math.Round(in[Servers] * in[SavedPct] / 100)
	capex := saved * (in[ServerPrice] + in[InfraPerServer])
	opexYear := saved * in[ServerWatts] / 1000 * 8760 * in[PricePerKWh] * in[PUE]
	opex := opexYear * in[Years]
	return &Estimate{
		Inputs: in,
		Outputs: map[string]float64{
			ServersSaved: saved,
			CapexUSD:     capex,
			OpexUSD:      opex,
			OpexPerYear:  opexYear,
			TotalUSD:     capex + opex,
		},
		Formula: Formula,
	}, nil
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
