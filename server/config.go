package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/dpulab/dpulab/internal/wire/serverwire"
)

// Config is one server instance's configuration. Start from DefaultConfig,
// then apply a redis.conf (LoadFile), then flags, then call Validate.
type Config struct {
	// Bind lists the addresses to listen on. Default 127.0.0.1 and ::1 (a
	// missing ::1 is tolerated, as Redis's "-::1" does).
	Bind []string
	// Port is the TCP port; 0 disables TCP (as in Redis).
	Port int
	// UnixSocket is a Unix socket path to listen on as well ("" = none).
	UnixSocket string
	// UnixSocketPerm is the socket file's permission bits (0 = umask).
	UnixSocketPerm uint32
	// ProtectedMode refuses non-loopback clients while no password is set.
	ProtectedMode bool
	// RequirePass makes clients AUTH first ("" = no password).
	RequirePass string
	// Databases is the number of numbered databases (SELECT 0..N-1).
	Databases int
	// MaxClients caps connected clients; more get "ERR max number of
	// clients reached".
	MaxClients int
	// Timeout closes clients idle this long (0 = never).
	Timeout time.Duration
	// TCPKeepAlive is the keep-alive period for client sockets (0 = off).
	TCPKeepAlive time.Duration
	// ProtoMaxBulkLen is the largest bulk string a client may send. Values
	// past maxStringLen are accepted, as Redis accepts up to 2^63-1, but
	// strings stay below maxStringLen.
	ProtoMaxBulkLen int64
	// ClientQueryBufferLimit closes clients whose unparsed input exceeds it.
	ClientQueryBufferLimit int64
	// OutputBufferLimits (client-output-buffer-limit) bound the output
	// waiting for a client, per class (normal, replica, pubsub): past
	// Hard, or past Soft for more than SoftSeconds, the client is closed
	// (pubsub_limits.go).
	OutputBufferLimits [obufClasses]OutputBufferLimit
	// MaxMemory is the dataset size limit in bytes (0 = none).
	MaxMemory int64
	// MaxMemoryPolicy is what happens at MaxMemory: noeviction (writes get
	// OOM errors), allkeys-lru, allkeys-random, volatile-lru,
	// volatile-random, volatile-ttl.
	MaxMemoryPolicy string
	// MaxMemorySamples is how many keys eviction samples per victim.
	MaxMemorySamples int
	// Hz is how often per second background tasks (active expiry) run.
	Hz int
	// PidFile is written with the process id at start and removed at stop.
	PidFile string
	// LogFile receives the log ("" = standard output).
	LogFile string
	// LogLevel is debug, verbose, notice or warning.
	LogLevel string
	// RDMA configures the RDMA transport (a later addition; enabling it
	// fails start-up until then).
	RDMA RDMAConfig
	// Tuning holds the encoding thresholds (honoured) and the slowlog and
	// latency settings (reported); see config_encoding.go.
	Tuning Tuning
	// Protected holds Redis 7.0's enable-debug-command,
	// enable-module-command and enable-protected-configs (no, yes or
	// local); see config_protected.go.
	Protected ProtectedCommands
	// Extra holds the rest of Redis 7.0's parameters (config_redis70.go):
	// validated and reported, honoured where the server has the notion.
	Extra ExtraParams

	// Ignored lists the directives that were accepted from a config file but
	// have no effect here (save, appendonly, ...), for the start-up log.
	Ignored []string

	logWriter io.Writer // set by WithLog
}

// RDMAConfig holds the RDMA transport's settings (Valkey's rdma-* names),
// declared in internal/wire/serverwire with their parser, which the step
// engine reads without linking the server.
type RDMAConfig = serverwire.RDMAConfig

// DefaultConfig returns Redis's defaults (bind loopback, port 6379, 16
// databases, protected mode on).
func DefaultConfig() Config {
	return Config{
		Bind:                   []string{"127.0.0.1", "-::1"},
		Port:                   6379,
		ProtectedMode:          true,
		Databases:              16,
		MaxClients:             10000,
		TCPKeepAlive:           300 * time.Second,
		ProtoMaxBulkLen:        512 << 20,
		ClientQueryBufferLimit: 1 << 30,
		OutputBufferLimits:     defaultOutputBufferLimits,
		MaxMemoryPolicy:        "noeviction",
		MaxMemorySamples:       5,
		Hz:                     10,
		LogLevel:               "notice",
		Tuning:                 DefaultTuning(),
		Protected:              ProtectedCommands{Debug: "no", Module: "no", Configs: "no"},
		RDMA:                   serverwire.DefaultRDMA(),
	}
}

// policies are maxmemory-policy's values, in Redis's order (its error
// message lists them so). The LFU policies keep Redis's logarithmic
// access counters (keyspace.go) and evict by them.
var policies = []string{"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"}

// Validate checks every field and says what to change.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if c.Port < 0 || c.Port > 65535 {
		bad("port %d: must be 0..65535", c.Port)
	}
	if c.Port == 0 && c.UnixSocket == "" {
		bad("port 0 and no unixsocket: nothing to listen on; set a port or a unixsocket")
	}
	if c.RDMA.Enabled && c.RDMA.Port == 0 && c.Port == 0 {
		bad("rdma-enabled with port 0 and no rdma-port: RDMA serves on rdma-port, or on the TCP port when that is unset; set one of them")
	}
	for _, b := range c.Bind {
		if net.ParseIP(strings.TrimPrefix(b, "-")) == nil && strings.TrimPrefix(b, "-") != "*" {
			bad("bind %q: not an IP address (use e.g. 127.0.0.1, ::1, 0.0.0.0 or *)", b)
		}
	}
	if c.Databases < 1 || c.Databases > 1<<20 {
		bad("databases %d: must be 1..1048576", c.Databases)
	}
	if c.MaxClients < 1 {
		bad("maxclients %d: must be at least 1", c.MaxClients)
	}
	if c.Timeout < 0 {
		bad("timeout %v: must not be negative", c.Timeout)
	}
	if c.ProtoMaxBulkLen < 1<<20 {
		bad("proto-max-bulk-len %d: must be at least 1mb", c.ProtoMaxBulkLen)
	}
	if c.ClientQueryBufferLimit < 1<<20 {
		bad("client-query-buffer-limit %d: must be at least 1mb", c.ClientQueryBufferLimit)
	}
	if c.MaxMemory < 0 {
		bad("maxmemory %d: must not be negative", c.MaxMemory)
	}
	if !contains(policies, c.MaxMemoryPolicy) {
		bad("maxmemory-policy %q: must be one of %s", c.MaxMemoryPolicy, strings.Join(policies, ", "))
	}
	if c.MaxMemorySamples < 1 || c.MaxMemorySamples > 64 {
		bad("maxmemory-samples %d: must be 1..64", c.MaxMemorySamples)
	}
	if c.Hz < 1 || c.Hz > 500 {
		bad("hz %d: must be 1..500", c.Hz)
	}
	if !contains([]string{"debug", "verbose", "notice", "warning", "nothing"}, c.LogLevel) {
		bad("loglevel %q: must be debug, verbose, notice, warning or nothing", c.LogLevel)
	}
	if err := c.RDMA.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
