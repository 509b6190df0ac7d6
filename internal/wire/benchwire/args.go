package benchwire

import (
	"strconv"
	"strings"
	"time"

	"github.com/dpulab/dpulab/internal/wire/transportwire"
)

// Args renders the configuration as `dpulab bench` arguments (after the
// subcommand), for running it on a lab host: server/bench's ParseArgs
// reads them back into the same Config. The password is never among them: pass it in the
// environment as PasswordEnv. The caller shell-quotes.
func (c *Config) Args() []string {
	a := c.endpointArgs()
	a = append(a,
		"--threads", strconv.Itoa(c.Threads),
		"--clients", strconv.Itoa(c.Clients),
		"--pipeline", strconv.Itoa(c.Pipeline),
		"--ratio", c.Ratio.String(),
	)
	switch {
	case len(c.DataSizeList) > 0:
		a = append(a, "--data-size-list", FormatSizeList(c.DataSizeList))
	case !c.DataSizeRange.IsZero():
		a = append(a, "--data-size-range", c.DataSizeRange.String())
	default:
		a = append(a, "--data-size", strconv.Itoa(c.DataSize))
	}
	if c.DataSizePattern != "" {
		a = append(a, "--data-size-pattern", c.DataSizePattern)
	}
	if !c.ExpirySeconds.IsZero() {
		a = append(a, "--expiry-range", c.ExpirySeconds.String())
	}
	a = append(a,
		"--key-minimum", strconv.FormatInt(c.KeyMinimum, 10),
		"--key-maximum", strconv.FormatInt(c.KeyMaximum, 10),
		"--key-prefix="+c.KeyPrefix,
		"--key-pattern", string(c.KeyPattern),
	)
	switch {
	case c.RequestsPerClient > 0:
		a = append(a, "--requests", strconv.FormatInt(c.RequestsPerClient, 10))
	case c.Requests > 0:
		a = append(a, "--requests-total", strconv.FormatInt(c.Requests, 10))
	default:
		a = append(a, "--duration", c.Duration.String())
	}
	if c.Warmup > 0 {
		a = append(a, "--warmup", c.Warmup.String())
	}
	if c.Rate > 0 {
		a = append(a, "--rate", strconv.FormatFloat(c.Rate, 'g', -1, 64))
	}
	if c.RateLimiting > 0 {
		a = append(a, "--rate-limiting", strconv.Itoa(c.RateLimiting))
	}
	if c.Prefill {
		a = append(a, "--prefill")
	}
	proto := "resp2"
	if c.Protocol == 3 {
		proto = "resp3"
	}
	a = append(a,
		"--run-count", strconv.Itoa(c.Runs),
		"--client", string(c.Client),
		"--protocol", proto,
		"--print-percentiles="+formatPercentiles(c.Percentiles),
	)
	if c.ConnectTimeout != 0 {
		a = append(a, "--connect-timeout", c.ConnectTimeout.String())
	}
	if c.Interval != time.Second {
		a = append(a, "--interval", c.Interval.String())
	}
	if c.TargetSamples {
		a = append(a, "--target-samples")
	}
	if c.StartAtUnixMs != 0 {
		a = append(a, "--start-at", strconv.FormatInt(c.StartAtUnixMs, 10))
	}
	if c.Seed != 0 {
		a = append(a, "--seed", strconv.FormatInt(c.Seed, 10))
	}
	if c.User != "" {
		a = append(a, "--user", c.User)
	}
	if c.SelectDB != 0 {
		a = append(a, "--select-db", strconv.Itoa(c.SelectDB))
	}
	if c.JSONOutFile != "" {
		a = append(a, "--json-out-file", c.JSONOutFile)
	}
	if c.HDRFilePrefix != "" {
		a = append(a, "--hdr-file-prefix", c.HDRFilePrefix)
	}
	if k := c.Capacity; k != nil {
		a = append(a, "--capacity", k.Objective(),
			"--capacity-precision", strconv.FormatFloat(k.Precision, 'g', -1, 64),
			"--capacity-start-rate", strconv.FormatFloat(k.StartRate, 'g', -1, 64))
		if k.MaxRate > 0 {
			a = append(a, "--capacity-max-rate", strconv.FormatFloat(k.MaxRate, 'g', -1, 64))
		}
	}
	return a
}

// endpointArgs renders the endpoints: --target with the TCP ones as
// HOST:PORT (what memtier's users and older dpulab versions read) and the
// others as URLs, --unix-socket with the sockets' paths; all in --target
// when a socket comes before another endpoint, so the order reads back the
// same. Then the RDMA settings that differ from the defaults.
func (c *Config) endpointArgs() []string {
	var targets, sockets []string
	mixed := false
	for _, ep := range c.Endpoints {
		if ep.Transport == transportwire.Unix {
			sockets = append(sockets, ep.Address)
			continue
		}
		mixed = mixed || len(sockets) > 0
		targets = append(targets, ep.Label())
	}
	if mixed {
		targets, sockets = c.Labels(), nil
	}
	var a []string
	if len(targets) > 0 {
		a = append(a, "--target", strings.Join(targets, ","))
	}
	if len(sockets) > 0 {
		a = append(a, "--unix-socket", strings.Join(sockets, ","))
	}
	if c.SourceAddr != "" {
		a = append(a, "--source-address", c.SourceAddr)
	}
	r := &c.RDMA
	if r.UC {
		a = append(a, "--rdma-mode", "uc")
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"--rdma-rx-size", r.RxSize}, {"--rdma-inline-size", r.InlineSize}, {"--rdma-sq-size", r.SQSize},
		{"--rdma-rq-size", r.RQSize}, {"--rdma-poll-us", int(r.Poll / time.Microsecond)},
		{"--rdma-retry-count", r.RetryCount}, {"--rdma-completion-vector", r.CompletionVector},
	} {
		if f.v != 0 {
			a = append(a, f.name, strconv.Itoa(f.v))
		}
	}
	return a
}

// formatPercentiles writes percentiles as --print-percentiles reads them.
func formatPercentiles(ps []float64) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = strconv.FormatFloat(p, 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}
