package steps

import (
	"fmt"
	"math"
	"strconv"

	"github.com/dpulab/dpulab/labs"
)

// TCO input names (keys of TCO.Inputs): package labs defines them, once,
// for the lab format (labs.TCOInputNames); these are the same names.
const (
	TCOFleet          = labs.TCOServers        // servers in the fleet without the DPU
	TCOSavedPct       = labs.TCOSavedPct       // % fewer servers needed with it
	TCOServerPrice    = labs.TCOServerPrice    // purchase price per server, $ (CapEx)
	TCOInfraPerServer = labs.TCOInfraPerServer // rack, switch port, cabling per server, $ (CapEx)
	TCOServerWatts    = labs.TCOServerWatts    // average power draw per server, W
	TCOElectricityKWh = labs.TCOPricePerKWh    // price of a kWh, $
	TCOPUE            = labs.TCOPUE            // power usage effectiveness (cooling, distribution)
	TCOYears          = labs.TCOYears          // period of the estimate
)

// TCO output names (keys of TCO.Outputs).
const (
	TCOServersSaved = "servers_saved"
	TCOCapexUSD     = "capex_savings_usd"
	TCOOpexUSD      = "opex_savings_usd"
	TCOTotalUSD     = "total_savings_usd"
	TCOOpexPerYear  = "opex_savings_usd_per_year"
)

// TCOFormula is the arithmetic of ComputeTCO, as written in the lab docs.
const TCOFormula = `servers_saved = round(servers × servers_saved_pct / 100)
capex = servers_saved × (server_price + infra_per_server)
opex  = servers_saved × server_watts / 1000 × 8760 h × years × price_per_kwh × pue
total = capex + opex`

// TCODefaults are the inputs we assume to reproduce the whitepaper's order
// of magnitude (seed 002: 10,000 servers, 14–18% fewer, $8.3M–$10.6M over 3
// years, about half CapEx, half OpEx). The whitepaper does not publish its
// price and power inputs; these are our assumptions: a $2,400 server plus
// $600 of rack, switch port and cabling, 500 W average draw, $0.15 per kWh
// and a PUE of 1.5. They give $3,000 CapEx and $2,957 OpEx per server saved
// over 3 years (half and half, as the whitepaper says), so 1,400–1,800
// servers saved come to $8.3M–$10.7M.
var TCODefaults = map[string]float64{
	TCOFleet:          10000,
	TCOSavedPct:       16,
	TCOServerPrice:    2400,
	TCOInfraPerServer: 600,
	TCOServerWatts:    500,
	TCOElectricityKWh: 0.15,
	TCOPUE:            1.5,
	TCOYears:          3,
}

// ComputeTCO applies TCOFormula to inputs (missing ones take TCODefaults)
// and returns the filled TCO. Negative or non-finite inputs are errors.
func ComputeTCO(inputs map[string]float64) (*TCO, error) {
	in := map[string]float64{}
	for k, v := range TCODefaults {
		in[k] = v
	}
	for k, v := range inputs {
		if _, known := TCODefaults[k]; !known {
			return nil, fmt.Errorf("tco: unknown input %q (known: %v)", k, sortedKeys(TCODefaults))
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return nil, fmt.Errorf("tco: input %s = %v must be a number ≥ 0", k, v)
		}
		in[k] = v
	}
	if in[TCOSavedPct] > 100 {
		return nil, fmt.Errorf("tco: %s = %v is more than 100%%", TCOSavedPct, in[TCOSavedPct])
	}
	saved := math.Round(in[TCOFleet] * in[TCOSavedPct] / 100)
	capex := saved * (in[TCOServerPrice] + in[TCOInfraPerServer])
	opexYear := saved * in[TCOServerWatts] / 1000 * 8760 * in[TCOElectricityKWh] * in[TCOPUE]
	opex := opexYear * in[TCOYears]
	return &TCO{
		Inputs: in,
		Outputs: map[string]float64{
			TCOServersSaved: saved,
			TCOCapexUSD:     capex,
			TCOOpexUSD:      opex,
			TCOOpexPerYear:  opexYear,
			TCOTotalUSD:     capex + opex,
		},
		Formula: TCOFormula,
	}, nil
}

// TCOInputsFromVars picks the TCO inputs out of a lab's variables (the ones
// named like the TCO inputs); a value that is not a number is an error.
func TCOInputsFromVars(vars map[string]string) (map[string]float64, error) {
	in := map[string]float64{}
	for k := range TCODefaults {
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

// SavedPctFromCompare derives the share of servers saved from a compare:
// if the accelerated variant serves the same load with fewer busy cores,
// a fleet sized by cores needs 1 − base/accel (ops per busy core) fewer
// servers. It uses the last variant against the first, at the sweep point
// with the most load; ok is false without CPU figures.
func SavedPctFromCompare(c *Compare) (pct float64, ok bool) {
	if c == nil || len(c.Variants) < 2 {
		return 0, false
	}
	first, last := c.Variants[0], c.Variants[len(c.Variants)-1]
	if len(first.Points) == 0 || len(last.Points) == 0 {
		return 0, false
	}
	b, ok1 := first.Points[len(first.Points)-1].Stats.Metric(MetricOpsPerCore)
	a, ok2 := last.Points[len(last.Points)-1].Stats.Metric(MetricOpsPerCore)
	if !ok1 || !ok2 || a.Mean <= 0 || b.Mean <= 0 {
		return 0, false
	}
	pct = (1 - b.Mean/a.Mean) * 100
	if pct < 0 {
		pct = 0
	}
	return pct, true
}
