package server

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dpulab/dpulab/internal/wire/serverwire"
	"github.com/dpulab/dpulab/server/resp"
)

// directive is one redis.conf setting: how to apply it from a file or
// CONFIG SET, and how CONFIG GET shows it.
type directive struct {
	name    string
	set     func(c *Config, args []string) error
	get     func(c *Config) string
	runtime bool // CONFIG SET may change it
	// multiArg: CONFIG SET splits the value into arguments (Redis's
	// MULTI_ARG_CONFIG); protected: CONFIG SET refuses it unless
	// enable-protected-configs allows the client (PROTECTED_CONFIG).
	multiArg, protected bool
}

func intArg(dst *int, lo, hi int) func(*Config, []string) error {
	return func(_ *Config, a []string) error {
		if len(a) != 1 {
			return errBadArgs
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
}

var errBadArgs = serverwire.ErrBadArgs

// parseMemory parses Redis memory values: 1k=1000, 1kb=1024, m/mb, g/gb
// (serverwire's, which the RDMA settings share with the engine).
func parseMemory(s string) (int64, error) { return serverwire.ParseMemory(s) }

func memArg(get func(*Config) *int64) func(*Config, []string) error {
	return func(c *Config, a []string) error {
		if len(a) != 1 {
			return errBadArgs
		}
		v, err := parseMemory(a[0])
		if err != nil {
			return err
		}
		*get(c) = v
		return nil
	}
}

// memRangeArg is memArg for a setting with bounds, refused out of them
// with Redis's message.
func memRangeArg(get func(*Config) *int64, lo, hi int64) func(*Config, []string) error {
	return func(c *Config, a []string) error {
		var v int64
		if err := memArg(func(*Config) *int64 { return &v })(c, a); err != nil {
			return err
		}
		if v < lo || v > hi {
			return fmt.Errorf("argument must be between %d and %d inclusive", lo, hi)
		}
		*get(c) = v
		return nil
	}
}

func parseBool(s string) (bool, error) { return serverwire.ParseBool(s) }

func boolStr(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// directives is the table of implemented settings.
func directives() []directive {
	return append(baseDirectives(), rdmaDirectives()...)
}

// baseDirectives are the settings other than RDMA's.
func baseDirectives() []directive {
	return append(append(append(tuningDirectives(), protectedDirectives()...), redis70Directives()...), []directive{
		{name: "bind", runtime: false,
			set: func(c *Config, a []string) error {
				if len(a) == 0 {
					return errBadArgs
				}
				c.Bind = append([]string(nil), a...)
				return nil
			},
			get: func(c *Config) string { return strings.Join(c.Bind, " ") }},
		{name: "port",
			set: func(c *Config, a []string) error { return intArg(&c.Port, 0, 65535)(c, a) },
			get: func(c *Config) string { return strconv.Itoa(c.Port) }},
		{name: "unixsocket",
			set: func(c *Config, a []string) error {
				if len(a) != 1 {
					return errBadArgs
				}
				c.UnixSocket = a[0]
				return nil
			},
			get: func(c *Config) string { return c.UnixSocket }},
		{name: "unixsocketperm",
			set: func(c *Config, a []string) error {
				if len(a) != 1 {
					return errBadArgs
				}
				v, err := strconv.ParseUint(a[0], 8, 32)
				if err != nil || v > 0o777 {
					return errors.New("invalid socket file permissions")
				}
				c.UnixSocketPerm = uint32(v)
				return nil
			},
			get: func(c *Config) string { return strconv.FormatUint(uint64(c.UnixSocketPerm), 8) }},
		{name: "protected-mode", runtime: true,
			set: func(c *Config, a []string) error { return boolArg(&c.ProtectedMode, a) },
			get: func(c *Config) string { return boolStr(c.ProtectedMode) }},
		{name: "requirepass", runtime: true,
			set: func(c *Config, a []string) error {
				if len(a) != 1 {
					return errBadArgs
				}
				c.RequirePass = a[0]
				return nil
			},
			get: func(c *Config) string { return c.RequirePass }},
		{name: "databases",
			set: func(c *Config, a []string) error { return intArg(&c.Databases, 1, 1<<20)(c, a) },
			get: func(c *Config) string { return strconv.Itoa(c.Databases) }},
		{name: "maxclients", runtime: true,
			set: func(c *Config, a []string) error { return intArg(&c.MaxClients, 1, 1<<30)(c, a) },
			get: func(c *Config) string { return strconv.Itoa(c.MaxClients) }},
		{name: "timeout", runtime: true,
			set: func(c *Config, a []string) error {
				var s int
				if err := intArg(&s, 0, 1<<31-1)(c, a); err != nil {
					return err
				}
				c.Timeout = time.Duration(s) * time.Second
				return nil
			},
			get: func(c *Config) string { return strconv.Itoa(int(c.Timeout / time.Second)) }},
		{name: "tcp-keepalive", runtime: true,
			set: func(c *Config, a []string) error {
				var s int
				if err := intArg(&s, 0, 1<<31-1)(c, a); err != nil {
					return err
				}
				c.TCPKeepAlive = time.Duration(s) * time.Second
				return nil
			},
			get: func(c *Config) string { return strconv.Itoa(int(c.TCPKeepAlive / time.Second)) }},
		{name: "proto-max-bulk-len", runtime: true,
			set: memRangeArg(func(c *Config) *int64 { return &c.ProtoMaxBulkLen }, 1<<20, 1<<63-1),
			get: func(c *Config) string { return strconv.FormatInt(c.ProtoMaxBulkLen, 10) }},
		{name: "client-output-buffer-limit", runtime: true,
			set: func(c *Config, a []string) error { return parseOutputBufferLimits(&c.OutputBufferLimits, a) },
			get: func(c *Config) string { return formatOutputBufferLimits(c.OutputBufferLimits) }},
		{name: "client-query-buffer-limit", runtime: true,
			set: memRangeArg(func(c *Config) *int64 { return &c.ClientQueryBufferLimit }, 1<<20, 1<<63-1),
			get: func(c *Config) string { return strconv.FormatInt(c.ClientQueryBufferLimit, 10) }},
		{name: "maxmemory", runtime: true,
			set: memArg(func(c *Config) *int64 { return &c.MaxMemory }),
			get: func(c *Config) string { return strconv.FormatInt(c.MaxMemory, 10) }},
		{name: "maxmemory-policy", runtime: true,
			set: func(c *Config, a []string) error {
				if len(a) != 1 {
					return errBadArgs
				}
				p := strings.ToLower(a[0])
				if !contains(policies, p) {
					return errors.New("argument(s) must be one of the following: " + strings.Join(policies, ", "))
				}
				c.MaxMemoryPolicy = p
				return nil
			},
			get: func(c *Config) string { return c.MaxMemoryPolicy }},
		{name: "maxmemory-samples", runtime: true,
			set: func(c *Config, a []string) error { return intArg(&c.MaxMemorySamples, 1, 64)(c, a) },
			get: func(c *Config) string { return strconv.Itoa(c.MaxMemorySamples) }},
		{name: "hz", runtime: true,
			set: func(c *Config, a []string) error {
				// Redis accepts any non-negative hz and clamps it to 1..500.
				var hz int
				if err := intArg(&hz, 0, 1<<31-1)(c, a); err != nil {
					return err
				}
				c.Hz = min(max(hz, 1), 500)
				return nil
			},
			get: func(c *Config) string { return strconv.Itoa(c.Hz) }},
		{name: "pidfile",
			set: func(c *Config, a []string) error { return strArg(&c.PidFile, a) },
			get: func(c *Config) string { return c.PidFile }},
		{name: "logfile",
			set: func(c *Config, a []string) error { return strArg(&c.LogFile, a) },
			get: func(c *Config) string { return c.LogFile }},
		{name: "loglevel", runtime: true,
			set: func(c *Config, a []string) error {
				if len(a) != 1 {
					return errBadArgs
				}
				l := strings.ToLower(a[0])
				if !contains([]string{"debug", "verbose", "notice", "warning", "nothing"}, l) {
					return errors.New("argument(s) must be one of the following: debug, verbose, notice, warning, nothing")
				}
				c.LogLevel = l
				return nil
			},
			get: func(c *Config) string { return c.LogLevel }},
	}...)
}

func boolArg(dst *bool, a []string) error {
	if len(a) != 1 {
		return errBadArgs
	}
	v, err := parseBool(a[0])
	if err != nil {
		return err
	}
	*dst = v
	return nil
}

func strArg(dst *string, a []string) error {
	if len(a) != 1 {
		return errBadArgs
	}
	*dst = a[0]
	return nil
}

// ignoredDirectives are Redis settings dpulab server accepts and ignores
// (persistence, replication, encodings, ...): a redis.conf written for
// Redis must load. Entries ending in '*' are prefixes.
var ignoredDirectives = []string{
	"daemonize", "supervised", "save", "appendonly", "appendfilename", "appenddirname", "appendfsync",
	"dir", "dbfilename", "rdbcompression", "rdbchecksum", "stop-writes-on-bgsave-error", "tcp-backlog",
	"repl-*", "replica-*", "slave-*", "replicaof", "slaveof", "masterauth", "masteruser", "min-replicas-*", "min-slaves-*",
	"lazyfree-*", "io-threads", "io-threads-do-reads", "activerehashing", "hash-max-*", "list-max-*",
	"list-compress-depth", "set-max-*", "zset-max-*", "stream-node-*", "hll-sparse-max-bytes",
	"notify-keyspace-events", "slowlog-*", "latency-*",
	"always-show-logo", "set-proc-title", "proc-title-template", "no-appendfsync-on-rewrite",
	"auto-aof-rewrite-*", "aof-*", "dynamic-hz", "jemalloc-bg-thread", "activedefrag", "active-defrag-*",
	"tls-*", "syslog-*", "crash-log-enabled", "crash-memcheck-enabled",
	"oom-score-adj", "oom-score-adj-values", "disable-thp", "locale-collate",
	"acllog-max-len", "aclfile", "maxmemory-clients",
	"maxmemory-eviction-tenacity", "lfu-log-factor", "lfu-decay-time", "rdb-del-sync-files",
	"rdb-save-incremental-fsync", "aof-rewrite-incremental-fsync", "cluster-*", "sanitize-dump-payload",
	"active-expire-effort", "shutdown-timeout", "shutdown-on-sigint", "shutdown-on-sigterm",
	"tracking-table-max-keys", "socket-mark-id", "propagation-error-behavior", "bind-source-addr",
	"rename-command", "loadmodule", "user", "tls-port", "ignore-warnings", "lua-replicate-commands",
	"gopher-enabled", "close-on-replica-write", "protected-configs",
}

func isIgnored(name string) bool {
	for _, d := range ignoredDirectives {
		if strings.HasSuffix(d, "*") && strings.HasPrefix(name, d[:len(d)-1]) || d == name {
			return true
		}
	}
	return false
}

func findDirective(name string) *directive {
	for _, d := range directives() {
		if d.name == name {
			return &d
		}
	}
	return nil
}

// Set applies one directive (as in redis.conf or after --name on the
// command line). Ignored Redis directives are recorded in c.Ignored.
func (c *Config) Set(name string, args []string) error {
	name = strings.ToLower(name)
	if d := findDirective(name); d != nil {
		if name == "save" {
			args = c.Extra.saveLine(args)
		}
		if err := d.set(c, args); err != nil {
			return err
		}
		if !paramHonoured(name) && !contains(c.Ignored, name) {
			c.Ignored = append(c.Ignored, name) // kept and reported only (config_redis70.go)
		}
		return nil
	}
	if isIgnored(name) {
		if !contains(c.Ignored, name) {
			c.Ignored = append(c.Ignored, name)
		}
		return nil
	}
	//lint:ignore ST1005 Redis's text, shown as it shows it
	return errors.New("Bad directive or wrong number of arguments")
}

// ConfigError is a redis.conf error at a file and line.
type ConfigError struct {
	File string
	Line int
	Text string // the offending line
	Err  error
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("%s:%d: >>> '%s': %v", e.File, e.Line, e.Text, e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// LoadFile applies a redis.conf file: one directive per line, arguments
// split like redis-server does (quotes and escapes), '#' comments, and
// "include path" (relative to the including file's directory's working
// directory, as Redis resolves it against the current directory).
func (c *Config) LoadFile(path string) error {
	return c.loadFile(path, 0)
}

func (c *Config) loadFile(path string, depth int) error {
	if depth > 16 {
		return fmt.Errorf("%s: include nested too deeply (loop?)", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open config file: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		raw := sc.Text()
		line := strings.TrimSpace(raw)
		if line == "" || line[0] == '#' {
			continue
		}
		args, ok := resp.SplitArgs([]byte(line), nil)
		if !ok {
			//lint:ignore ST1005 Redis's text, shown as it shows it
			return &ConfigError{File: path, Line: n, Text: line, Err: errors.New("Unbalanced quotes in configuration line")}
		}
		if len(args) == 0 {
			continue
		}
		name := strings.ToLower(string(args[0]))
		strs := make([]string, len(args)-1)
		for i, a := range args[1:] {
			strs[i] = string(a)
		}
		if name == "include" {
			if len(strs) != 1 {
				return &ConfigError{File: path, Line: n, Text: line, Err: errBadArgs}
			}
			inc := strs[0]
			if !filepath.IsAbs(inc) {
				if _, err := os.Stat(inc); err != nil {
					inc = filepath.Join(filepath.Dir(path), inc)
				}
			}
			if err := c.loadFile(inc, depth+1); err != nil {
				return &ConfigError{File: path, Line: n, Text: line, Err: err}
			}
			continue
		}
		if err := c.Set(name, strs); err != nil {
			return &ConfigError{File: path, Line: n, Text: line, Err: err}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read config file %s: %w", path, err)
	}
	return nil
}

// rdmaDirectives are the rdma-* settings, parsed and shown by serverwire
// (the step engine reads them with the same code).
func rdmaDirectives() []directive {
	ds := make([]directive, len(serverwire.RDMANames))
	for i, name := range serverwire.RDMANames {
		ds[i] = directive{name: name,
			set: func(c *Config, a []string) error {
				_, err := c.RDMA.Set(name, a)
				return err
			},
			get: func(c *Config) string {
				v, _ := c.RDMA.Get(name)
				return v
			}}
	}
	return ds
}
