package server

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/server/transport"
)

func writeConf(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	writeConf(t, dir, "extra.conf", "maxmemory 12gb\nmaxmemory-policy allkeys-lru\n")
	p := writeConf(t, dir, "redis.conf", `# comment
port 7000
bind 127.0.0.1 ::1
requirepass "pa ss"
timeout 30
save 900 1
appendonly no
tcp-backlog 511
include `+filepath.Join(dir, "extra.conf")+`
rdma-port 6380
rdma-rx-size 2mb
rdma-transport-mode unreliable-connected
`)
	cfg := DefaultConfig()
	if err := cfg.LoadFile(p); err != nil {
		t.Fatal(err)
	}
	if cfg.Port != 7000 || cfg.RequirePass != "pa ss" || cfg.Timeout != 30*time.Second {
		t.Errorf("port/pass/timeout = %d %q %v", cfg.Port, cfg.RequirePass, cfg.Timeout)
	}
	if cfg.MaxMemory != 12<<30 || cfg.MaxMemoryPolicy != "allkeys-lru" {
		t.Errorf("include not applied: maxmemory %d policy %s", cfg.MaxMemory, cfg.MaxMemoryPolicy)
	}
	if strings.Join(cfg.Bind, ",") != "127.0.0.1,::1" {
		t.Errorf("bind = %v", cfg.Bind)
	}
	if cfg.RDMA.Port != 6380 || cfg.RDMA.RxSize != 2<<20 || cfg.RDMA.TransportMode != "unreliable-connected" {
		t.Errorf("rdma = %+v", cfg.RDMA)
	}
	if strings.Join(cfg.Ignored, ",") != "save,appendonly,tcp-backlog" {
		t.Errorf("ignored = %v", cfg.Ignored)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("validate: %v", err)
	}
	if _, err := New(cfg); transport.Available(transport.RDMA) != nil && (err == nil || !strings.Contains(err.Error(), "RDMA is not in this build")) {
		t.Errorf("New with rdma-port set: err = %v, want a clear RDMA refusal", err)
	}
}

func TestLoadFileErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"unknown directive", "port 7000\nfoo bar\n", "redis.conf:2: >>> 'foo bar': Bad directive or wrong number of arguments"},
		{"bad int", "\n\nport seven\n", "redis.conf:3: >>> 'port seven': argument couldn't be parsed into an integer"},
		{"port range", "port 70000\n", "redis.conf:1: >>> 'port 70000': argument must be between 0 and 65535 inclusive"},
		{"unbalanced quotes", "requirepass \"abc\n", "redis.conf:1: >>> 'requirepass \"abc': Unbalanced quotes in configuration line"},
		{"policy", "maxmemory-policy sometimes\n", "redis.conf:1: >>> 'maxmemory-policy sometimes': argument(s) must be one of the following"},
		{"rdma rx too small", "rdma-rx-size 1kb\n", "redis.conf:1: >>> 'rdma-rx-size 1kb': argument must be between 64kb and 16mb"},
		{"rdma mode", "rdma-transport-mode datagram\n", "argument must be reliable-connected or unreliable-connected"},
		{"rdma retry", "rdma-retry-count 9\n", "argument must be between 0 and 7 inclusive"},
		{"rdma enabled bool", "rdma-enabled maybe\n", "argument must be 'yes' or 'no'"},
		{"memory value", "maxmemory lots\n", "argument must be a memory value"},
		{"debug command", "enable-debug-command sometimes\n", "argument(s) must be one of the following: no, yes, local"},
		{"include missing", "include /nonexistent/x.conf\n", "redis.conf:1: >>> 'include /nonexistent/x.conf': open config file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := writeConf(t, dir, "redis.conf", tt.text)
			cfg := DefaultConfig()
			err := cfg.LoadFile(p)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not contain %q", err, tt.want)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) && tt.name != "include missing" {
				t.Fatalf("error %T is not a *ConfigError", err)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Config)
		want   string
	}{
		{"defaults", func(*Config) {}, ""},
		{"bad bind", func(c *Config) { c.Bind = []string{"localhost"} }, "not an IP address"},
		{"no listener", func(c *Config) { c.Port = 0 }, "nothing to listen on"},
		{"databases", func(c *Config) { c.Databases = 0 }, "databases 0"},
		{"policy", func(c *Config) { c.MaxMemoryPolicy = "lru" }, "maxmemory-policy"},
		{"rdma vector", func(c *Config) { c.RDMA.CompletionVector = -2 }, "rdma-completion-vector"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.modify(&c)
			err := c.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestParseMemory(t *testing.T) {
	for in, want := range map[string]int64{"12gb": 12 << 30, "1k": 1000, "1KB": 1024, "5mb": 5 << 20, "100": 100, "2g": 2e9} {
		if got, err := parseMemory(in); err != nil || got != want {
			t.Errorf("parseMemory(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}
