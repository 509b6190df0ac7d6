package server

import (
	"errors"
	"net"
)

// ProtectedCommands are Redis 7.0's settings for its protected commands
// and configs, each "no" (refused to everyone, the default), "yes" or
// "local" (allowed from loopback and Unix socket clients). They can only
// be set at start (config file or command line), as in Redis.
type ProtectedCommands struct {
	// Debug is enable-debug-command. DEBUG is refused with Redis's own
	// error while it does not allow the client; when it does, DEBUG's
	// subcommands are refused as not implemented (cmd_housekeeping.go).
	Debug string
	// Module is enable-module-command: reported only (no MODULE command).
	Module string
	// Configs is enable-protected-configs: reported only.
	Configs string
}

func protectedDirectives() []directive {
	enum := func(get func(*Config) *string) func(*Config, []string) error {
		return func(c *Config, a []string) error {
			if len(a) != 1 {
				return errBadArgs
			}
			switch v := lowerASCII(a[0]); v {
			case "no", "yes", "local":
				*get(c) = v
				return nil
			}
			return errors.New("argument(s) must be one of the following: no, yes, local")
		}
	}
	return []directive{
		{name: "enable-debug-command", set: enum(func(c *Config) *string { return &c.Protected.Debug }),
			get: func(c *Config) string { return c.Protected.Debug }},
		{name: "enable-module-command", set: enum(func(c *Config) *string { return &c.Protected.Module }),
			get: func(c *Config) string { return c.Protected.Module }},
		{name: "enable-protected-configs", set: enum(func(c *Config) *string { return &c.Protected.Configs }),
			get: func(c *Config) string { return c.Protected.Configs }},
	}
}

// lowerASCII lowers A-Z.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, x := range b {
		if x >= 'A' && x <= 'Z' {
			b[i] = x + 'a' - 'A'
		}
	}
	return string(b)
}

// debugAllowed reports whether enable-debug-command lets c run DEBUG
// (Redis's allowProtectedAction).
func (c *Client) debugAllowed() bool {
	switch c.srv.cfg.Protected.Debug {
	case "yes":
		return true
	case "local":
		if c.netw == "unix" {
			return true
		}
		host, _, err := net.SplitHostPort(c.addr)
		if err != nil {
			return false
		}
		ip := net.ParseIP(host)
		return ip != nil && ip.IsLoopback()
	}
	return false
}
