package bench

import (
	"github.com/dpulab/dpulab/internal/wire/benchwire"
	"github.com/dpulab/dpulab/server/transport"
)

// The load generator's configuration is declared in
// internal/wire/benchwire, where the step engine builds it (and renders it
// as this command's arguments, Config.Args) without linking the load
// generator; what only the bench itself needs is here.
type (
	Config     = benchwire.Config
	ClientKind = benchwire.ClientKind
	KeyPattern = benchwire.KeyPattern
	Ratio      = benchwire.Ratio
	SizeWeight = benchwire.SizeWeight
	Range      = benchwire.Range
)

const (
	ClientAuto    = benchwire.ClientAuto
	ClientLean    = benchwire.ClientLean
	ClientGoRedis = benchwire.ClientGoRedis

	KeyRandom     = benchwire.KeyRandom
	KeySequential = benchwire.KeySequential
	KeyGaussian   = benchwire.KeyGaussian
	KeyParallel   = benchwire.KeyParallel

	DefaultConnectTimeout = benchwire.DefaultConnectTimeout
	RDMAConnectTimeout    = benchwire.RDMAConnectTimeout

	// PasswordEnv is the environment variable `dpulab bench` reads the
	// password from when --password is not given (benchwire's).
	PasswordEnv = benchwire.PasswordEnv
)

// DefaultConfig returns the defaults documented on Config's fields
// (benchwire.DefaultConfig).
func DefaultConfig() Config { return benchwire.DefaultConfig() }

// ParseKeyPattern, ParseRatio, ParseRange, ParseSizeList and
// FormatSizeList are benchwire's.
func ParseKeyPattern(s string) (KeyPattern, error) { return benchwire.ParseKeyPattern(s) }
func ParseRatio(s string) (Ratio, error)           { return benchwire.ParseRatio(s) }
func ParseRange(s string) (Range, error)           { return benchwire.ParseRange(s) }
func ParseSizeList(s string) ([]SizeWeight, error) { return benchwire.ParseSizeList(s) }
func FormatSizeList(l []SizeWeight) string         { return benchwire.FormatSizeList(l) }

// validate is Config.Validate with the question only the bench can
// answer: whether this binary has each endpoint's transport.
func validate(c *Config) error { return c.ValidateWith(transport.Available) }

// runOpts are a run's settings that are no part of the configuration: no
// command line or engine sets them.
type runOpts struct {
	// firstReplyLatency gives every request of a pipeline the latency of
	// its first reply, as redis-benchmark does: the perf test's like-for-
	// like check of the two tools' latency figures. Never set otherwise.
	firstReplyLatency bool
}

// keySide returns k's pattern letter of SETs (cmdSet) or GETs (cmdGet).
func keySide(k KeyPattern, cmd int) byte {
	s := string(k)
	if len(s) != 3 {
		return 'R'
	}
	if cmd == cmdSet {
		return s[0]
	}
	return s[2]
}

// simulation is what labels figures measured over a simulated transport
// among the endpoints' ("" when none is).
func simulation(c *Config) string {
	for _, ep := range c.Endpoints {
		if s := transport.Simulated(ep.Transport); s != "" {
			return string(ep.Transport) + ": " + s
		}
	}
	return ""
}

// keyCount is the size of the key space.
func keyCount(c *Config) int64 { return c.KeyMaximum - c.KeyMinimum + 1 }
