package serverwire

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// RDMAConfig holds the RDMA transport's settings (Valkey's rdma-* names).
type RDMAConfig struct {
	// Port is the RDMA listening port (0 = off; Valkey's rdma-port).
	Port int
	// Bind lists the RDMA listening addresses.
	Bind []string
	// RxSize is the per-connection receive buffer (64 KiB..16 MiB).
	RxSize int64
	// CompletionVector picks the completion vector (-1 = automatic).
	CompletionVector int
	// Enabled turns RDMA on (the article's rdma-enabled).
	Enabled bool
	// TransportMode is reliable-connected (RC) or unreliable-connected (UC).
	TransportMode string
	// InlineSize is the max inline data of a send work request in bytes.
	InlineSize int
	// SQSize and RQSize are the send and receive queue depths.
	SQSize, RQSize int
	// PollUS is how long to busy-poll the completion queue (0 = events only).
	PollUS int
	// RetryCount is the RC retry count (0..7).
	RetryCount int
}

// DefaultRDMA is the server's RDMA defaults: 1 MiB receive buffers,
// automatic completion vector, reliable-connected, 1024-deep queues,
// retry count 7, no busy polling.
func DefaultRDMA() RDMAConfig {
	return RDMAConfig{
		RxSize:           1 << 20,
		CompletionVector: -1,
		TransportMode:    "reliable-connected",
		InlineSize:       0,
		SQSize:           1024,
		RQSize:           1024,
		RetryCount:       7,
	}
}

// ErrBadArgs is Redis's answer to a setting given the wrong number of
// values.
var ErrBadArgs = errors.New("wrong number of arguments")

// RDMANames are the rdma-* settings Set and Get know, in the order the
// server lists them.
var RDMANames = []string{
	"rdma-port", "rdma-bind", "rdma-rx-size", "rdma-completion-vector", "rdma-enabled",
	"rdma-transport-mode", "rdma-inline-size", "rdma-sq-size", "rdma-rq-size", "rdma-poll-us",
	"rdma-retry-count",
}

// Set applies the rdma-* setting name (lower case) with args as redis.conf
// or CONFIG SET gives them, with Redis's messages for bad values; ok is
// false for a name that is not one of RDMANames.
func (r *RDMAConfig) Set(name string, args []string) (ok bool, err error) {
	switch name {
	case "rdma-port":
		return true, intArg(&r.Port, 0, 65535, args)
	case "rdma-bind":
		if len(args) == 0 {
			return true, ErrBadArgs
		}
		r.Bind = append([]string(nil), args...)
		return true, nil
	case "rdma-rx-size":
		if len(args) != 1 {
			return true, ErrBadArgs
		}
		v, err := ParseMemory(args[0])
		if err != nil {
			return true, err
		}
		if v < 64<<10 || v > 16<<20 {
			return true, errors.New("argument must be between 64kb and 16mb")
		}
		r.RxSize = v
		return true, nil
	case "rdma-completion-vector":
		return true, intArg(&r.CompletionVector, -1, 1023, args)
	case "rdma-enabled":
		if len(args) != 1 {
			return true, ErrBadArgs
		}
		v, err := ParseBool(args[0])
		if err != nil {
			return true, err
		}
		r.Enabled = v
		return true, nil
	case "rdma-transport-mode":
		if len(args) != 1 {
			return true, ErrBadArgs
		}
		m := strings.ToLower(args[0])
		if m != "reliable-connected" && m != "unreliable-connected" {
			return true, errors.New("argument must be reliable-connected or unreliable-connected")
		}
		r.TransportMode = m
		return true, nil
	case "rdma-inline-size":
		return true, intArg(&r.InlineSize, 0, 1024, args)
	case "rdma-sq-size":
		return true, intArg(&r.SQSize, 1, 65536, args)
	case "rdma-rq-size":
		return true, intArg(&r.RQSize, 1, 65536, args)
	case "rdma-poll-us":
		return true, intArg(&r.PollUS, 0, 1_000_000, args)
	case "rdma-retry-count":
		return true, intArg(&r.RetryCount, 0, 7, args)
	}
	return false, nil
}

// Get is the value of the rdma-* setting name as CONFIG GET shows it; ok is
// false for a name that is not one of RDMANames.
func (r *RDMAConfig) Get(name string) (string, bool) {
	switch name {
	case "rdma-port":
		return strconv.Itoa(r.Port), true
	case "rdma-bind":
		return strings.Join(r.Bind, " "), true
	case "rdma-rx-size":
		return strconv.FormatInt(r.RxSize, 10), true
	case "rdma-completion-vector":
		return strconv.Itoa(r.CompletionVector), true
	case "rdma-enabled":
		if r.Enabled {
			return "yes", true
		}
		return "no", true
	case "rdma-transport-mode":
		return r.TransportMode, true
	case "rdma-inline-size":
		return strconv.Itoa(r.InlineSize), true
	case "rdma-sq-size":
		return strconv.Itoa(r.SQSize), true
	case "rdma-rq-size":
		return strconv.Itoa(r.RQSize), true
	case "rdma-poll-us":
		return strconv.Itoa(r.PollUS), true
	case "rdma-retry-count":
		return strconv.Itoa(r.RetryCount), true
	}
	return "", false
}

// Validate checks every setting's range (a config built in code, not
// parsed, can hold anything).
func (r *RDMAConfig) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if r.Port < 0 || r.Port > 65535 {
		bad("rdma-port %d: must be 0..65535", r.Port)
	}
	for _, b := range r.Bind {
		if net.ParseIP(b) == nil {
			bad("rdma-bind %q: not an IP address", b)
		}
	}
	if r.RxSize < 64<<10 || r.RxSize > 16<<20 {
		bad("rdma-rx-size %d: must be 64kb..16mb", r.RxSize)
	}
	if r.CompletionVector < -1 || r.CompletionVector > 1023 {
		bad("rdma-completion-vector %d: must be -1 (automatic) or 0..1023", r.CompletionVector)
	}
	if r.TransportMode != "reliable-connected" && r.TransportMode != "unreliable-connected" {
		bad("rdma-transport-mode %q: must be reliable-connected or unreliable-connected", r.TransportMode)
	}
	if r.InlineSize < 0 || r.InlineSize > 1024 {
		bad("rdma-inline-size %d: must be 0..1024", r.InlineSize)
	}
	if r.SQSize < 1 || r.SQSize > 65536 {
		bad("rdma-sq-size %d: must be 1..65536", r.SQSize)
	}
	if r.RQSize < 1 || r.RQSize > 65536 {
		bad("rdma-rq-size %d: must be 1..65536", r.RQSize)
	}
	if r.PollUS < 0 || r.PollUS > 1_000_000 {
		bad("rdma-poll-us %d: must be 0..1000000", r.PollUS)
	}
	if r.RetryCount < 0 || r.RetryCount > 7 {
		bad("rdma-retry-count %d: must be 0..7", r.RetryCount)
	}
	return errors.Join(errs...)
}

// RDMARequested reports whether the configuration asks for the RDMA
// transport.
func (r *RDMAConfig) RDMARequested() bool { return r.Enabled || r.Port != 0 }

func intArg(dst *int, lo, hi int, a []string) error {
	if len(a) != 1 {
		return ErrBadArgs
	}
	v, err := strconv.Atoi(a[0])
	if err != nil {
		return errors.New("argument couldn't be parsed into an integer")
	}
	if v < lo || v > hi {
		return fmt.Errorf("argument must be between %d and %d inclusive", lo, hi)
	}
	*dst = v
	return nil
}

// ParseMemory parses Redis memory values: 1k=1000, 1kb=1024, m/mb, g/gb.
func ParseMemory(s string) (int64, error) {
	l := strings.ToLower(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1000}, {"m", 1000 * 1000}, {"g", 1000 * 1000 * 1000}, {"b", 1}} {
		if strings.HasSuffix(l, u.suffix) {
			mult = u.mult
			l = strings.TrimSuffix(l, u.suffix)
			break
		}
	}
	v, err := strconv.ParseInt(l, 10, 64)
	if err != nil || v < 0 {
		return 0, errors.New("argument must be a memory value")
	}
	if v > 0 && mult > (1<<63-1)/v {
		return 0, errors.New("argument must be a memory value")
	}
	return v * mult, nil
}

// ParseBool parses redis.conf's yes and no.
func ParseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "yes":
		return true, nil
	case "no":
		return false, nil
	}
	return false, errors.New("argument must be 'yes' or 'no'")
}
