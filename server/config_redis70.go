package server

import (
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/dpulab/dpulab/server/resp"
)

// Redis 7.0's parameters that config.go and config_encoding.go do not
// declare: every name CONFIG GET * lists on redis-server 7.0.15 is
// accepted by CONFIG GET and CONFIG SET (and in a config file) with
// Redis's validation and error texts. Most are kept and reported only;
// the ones this server honours say so in honouredParams.
//
// One table row per parameter (and its alias, as Redis's standardConfig
// has), values kept as their CONFIG GET text in Config.Extra.

// paramKind is how a parameter's value is parsed.
type paramKind uint8

const (
	pBool       paramKind = iota
	pInt                  // string2ll, then [lo, hi]
	pMem                  // memtoull (b, k, kb, m, mb, g, gb), then [lo, hi]
	pMemPercent           // pMem or "N%" (0..100, kept as -N)
	pEnum                 // one of enum, case-insensitive
	pFlags                // one or more of enum (shutdown-on-sig*)
	pString
	pSpecial // parse does everything
)

// param70 declares one parameter.
type param70 struct {
	name, alias string
	kind        paramKind
	def         string
	lo, hi      int64
	enum        []string
	immutable   bool // "can't set immutable config"
	protected   bool // refused unless enable-protected-configs allows it
	multi       bool // CONFIG SET splits the value into arguments
	// check validates a pString value (Redis's is_valid_fn); parse
	// validates and normalises a pSpecial one.
	check func(v string) error
	parse func(args []string) (string, error)
}

const (
	maxInt32  = math.MaxInt32
	maxUint32 = math.MaxUint32
)

func pb(name, alias, def string) param70 {
	return param70{name: name, alias: alias, kind: pBool, def: def}
}
func pi(name, alias string, lo, hi int64, def string) param70 {
	return param70{name: name, alias: alias, kind: pInt, lo: lo, hi: hi, def: def}
}
func pm(name string, lo, hi int64, def string) param70 {
	return param70{name: name, kind: pMem, lo: lo, hi: hi, def: def}
}
func pe(name, def string, values ...string) param70 {
	return param70{name: name, kind: pEnum, def: def, enum: values}
}
func ps(name, alias, def string) param70 {
	return param70{name: name, alias: alias, kind: pString, def: def}
}

func immutable(p param70) param70 { p.immutable = true; return p }

// params70 is the table. Its order does not matter: CONFIG GET sorts.
var params70 = []param70{
	// Booleans.
	immutable(pb("rdbchecksum", "", "yes")),
	immutable(pb("daemonize", "", "no")),
	immutable(pb("io-threads-do-reads", "", "no")),
	immutable(pb("always-show-logo", "", "no")),
	pb("rdbcompression", "", "yes"),
	pb("rdb-del-sync-files", "", "no"),
	pb("activerehashing", "", "yes"),
	pb("stop-writes-on-bgsave-error", "", "yes"),
	immutable(pb("set-proc-title", "", "yes")),
	pb("dynamic-hz", "", "yes"),
	pb("lazyfree-lazy-eviction", "", "no"),
	pb("lazyfree-lazy-expire", "", "no"),
	pb("lazyfree-lazy-server-del", "", "no"),
	pb("lazyfree-lazy-user-del", "", "no"),
	pb("lazyfree-lazy-user-flush", "", "no"),
	pb("repl-disable-tcp-nodelay", "", "no"),
	pb("repl-diskless-sync", "", "yes"),
	pb("aof-rewrite-incremental-fsync", "", "yes"),
	pb("no-appendfsync-on-rewrite", "", "no"),
	pb("cluster-require-full-coverage", "", "yes"),
	pb("rdb-save-incremental-fsync", "", "yes"),
	pb("aof-load-truncated", "", "yes"),
	pb("aof-use-rdb-preamble", "", "yes"),
	pb("aof-timestamp-enabled", "", "no"),
	pb("cluster-replica-no-failover", "cluster-slave-no-failover", "no"),
	pb("replica-lazy-flush", "slave-lazy-flush", "no"),
	pb("replica-serve-stale-data", "slave-serve-stale-data", "yes"),
	pb("replica-read-only", "slave-read-only", "yes"),
	pb("replica-ignore-maxmemory", "slave-ignore-maxmemory", "yes"),
	pb("replica-ignore-disk-write-errors", "", "no"),
	pb("jemalloc-bg-thread", "", "yes"),
	{name: "activedefrag", kind: pSpecial, def: "no", parse: func(a []string) (string, error) {
		v, err := parseBool(a[0])
		if err != nil {
			return "", err
		}
		if v {
			// Debian's build has no defrag-capable allocator either.
			return "", configErr("Active defragmentation cannot be enabled: it requires a Redis server compiled with a modified Jemalloc like the one shipped by default with the Redis source distribution")
		}
		return "no", nil
	}},
	immutable(pb("syslog-enabled", "", "no")),
	immutable(pb("cluster-enabled", "", "no")),
	pb("appendonly", "", "no"),
	pb("cluster-allow-reads-when-down", "", "no"),
	pb("cluster-allow-pubsubshard-when-down", "", "yes"),
	pb("crash-log-enabled", "", "yes"),
	pb("crash-memcheck-enabled", "", "yes"),
	immutable(pb("disable-thp", "", "yes")),
	pb("cluster-allow-replica-migration", "", "yes"),
	pb("replica-announced", "", "yes"),
	pb("latency-tracking", "", "yes"),
	pb("aof-disable-auto-gc", "", "no"),

	// Strings.
	immutable(ps("aclfile", "", "")),
	ps("replica-announce-ip", "slave-announce-ip", ""),
	ps("masteruser", "", ""),
	ps("masterauth", "", ""),
	ps("cluster-announce-ip", "", ""),
	immutable(ps("cluster-config-file", "", "nodes.conf")),
	{name: "cluster-announce-hostname", kind: pString, check: func(v string) error {
		for i := 0; i < len(v); i++ {
			b := v[i]
			if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '.') {
				return configErr("Hostnames may only contain alphanumeric characters, hyphens or dots")
			}
		}
		return nil
	}},
	immutable(ps("syslog-ident", "", "redis")),
	{name: "dbfilename", kind: pString, def: "dump.rdb", protected: true, check: func(v string) error {
		if strings.ContainsRune(v, '/') {
			return errors.New("dbfilename can't be a path, just a filename")
		}
		return nil
	}},
	immutable(ps("appendfilename", "", "appendonly.aof")),
	immutable(ps("appenddirname", "", "appendonlydir")),
	immutable(ps("server_cpulist", "", "")),
	immutable(ps("bio_cpulist", "", "")),
	immutable(ps("aof_rewrite_cpulist", "", "")),
	immutable(ps("bgsave_cpulist", "", "")),
	ps("ignore-warnings", "", ""),
	{name: "proc-title-template", kind: pString, def: "{title} {listen-addr} {server-mode}", check: validProcTitle},
	ps("bind-source-addr", "", ""),

	// Enums.
	immutable(pe("supervised", "no", "upstart", "systemd", "auto", "no")),
	immutable(pe("syslog-facility", "local0", "user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7")),
	pe("repl-diskless-load", "disabled", "disabled", "on-empty-db", "swapdb"),
	pe("appendfsync", "everysec", "everysec", "always", "no"),
	pe("oom-score-adj", "no", "no", "yes", "relative", "absolute"),
	pe("acl-pubsub-default", "resetchannels", "allchannels", "resetchannels"),
	pe("sanitize-dump-payload", "no", "no", "yes", "clients"),
	pe("cluster-preferred-endpoint-type", "ip", "ip", "hostname", "unknown-endpoint"),
	pe("propagation-error-behavior", "ignore", "ignore", "panic", "panic-on-replicas"),
	{name: "shutdown-on-sigint", kind: pFlags, def: "default", enum: []string{"default", "save", "nosave", "now", "force"}, multi: true},
	{name: "shutdown-on-sigterm", kind: pFlags, def: "default", enum: []string{"default", "save", "nosave", "now", "force"}, multi: true},

	// Integers.
	immutable(pi("io-threads", "", 1, 128, "1")),
	pi("auto-aof-rewrite-percentage", "", 0, maxInt32, "100"),
	pi("cluster-replica-validity-factor", "cluster-slave-validity-factor", 0, maxInt32, "10"),
	pi("cluster-migration-barrier", "", 0, maxInt32, "1"),
	pi("active-defrag-cycle-min", "", 1, 99, "1"),
	pi("active-defrag-cycle-max", "", 1, 99, "25"),
	pi("active-defrag-threshold-lower", "", 0, 1000, "10"),
	pi("active-defrag-threshold-upper", "", 0, 1000, "100"),
	pi("lfu-log-factor", "", 0, maxInt32, "10"),
	pi("lfu-decay-time", "", 0, maxInt32, "1"),
	pi("replica-priority", "slave-priority", 0, maxInt32, "100"),
	pi("repl-diskless-sync-delay", "", 0, maxInt32, "5"),
	pi("maxmemory-eviction-tenacity", "", 0, 100, "10"),
	pi("replica-announce-port", "slave-announce-port", 0, 65535, "0"),
	immutable(pi("tcp-backlog", "", 0, maxInt32, "511")),
	immutable(pi("cluster-port", "", 0, 65535, "0")),
	pi("cluster-announce-bus-port", "", 0, 65535, "0"),
	pi("cluster-announce-port", "", 0, 65535, "0"),
	pi("cluster-announce-tls-port", "", 0, 65535, "0"),
	pi("repl-timeout", "", 1, maxInt32, "60"),
	pi("repl-ping-replica-period", "repl-ping-slave-period", 1, maxInt32, "10"),
	pi("active-expire-effort", "", 1, 10, "1"),
	pi("min-replicas-to-write", "min-slaves-to-write", 0, maxInt32, "0"),
	pi("min-replicas-max-lag", "min-slaves-max-lag", 0, maxInt32, "10"),
	pi("shutdown-timeout", "", 0, maxInt32, "10"),
	pi("repl-diskless-sync-max-replicas", "", 0, maxInt32, "0"),
	immutable(pi("socket-mark-id", "", 0, maxUint32, "0")),
	pi("active-defrag-max-scan-fields", "", 1, maxInt64, "1000"),
	pi("acllog-max-len", "", 0, maxInt64, "128"),
	pi("cluster-node-timeout", "", 0, maxInt64, "15000"),
	pi("tracking-table-max-keys", "", 0, maxInt64, "1000000"),
	pi("repl-backlog-ttl", "", 0, maxInt64, "3600"),
	pm("repl-backlog-size", 1, maxInt64, "1048576"),
	pm("cluster-link-sendbuf-limit", 0, maxInt64, "0"),
	pm("active-defrag-ignore-bytes", 1, maxInt64, "104857600"),
	pm("hll-sparse-max-bytes", 0, maxInt64, "3000"),
	pm("auto-aof-rewrite-min-size", 0, maxInt64, "67108864"),
	{name: "maxmemory-clients", kind: pMemPercent, lo: -100, hi: maxInt64, def: "0"},

	// TLS (Debian builds Redis with it; nothing here serves TLS).
	{name: "tls-port", kind: pSpecial, def: "0", parse: func(a []string) (string, error) {
		v, err := parseNumParam(a[0], pInt, 0, 65535)
		if err != nil {
			return "", err
		}
		if v != 0 {
			return "", configErr("Unable to update TLS configuration. Check server logs.")
		}
		return "0", nil
	}},
	pi("tls-session-cache-size", "", 0, maxInt32, "20480"),
	pi("tls-session-cache-timeout", "", 0, maxInt32, "300"),
	pb("tls-cluster", "", "no"),
	pb("tls-replication", "", "no"),
	pe("tls-auth-clients", "yes", "no", "yes", "optional"),
	pb("tls-prefer-server-ciphers", "", "no"),
	pb("tls-session-caching", "", "yes"),
	ps("tls-cert-file", "", ""),
	ps("tls-key-file", "", ""),
	ps("tls-key-file-pass", "", ""),
	ps("tls-client-cert-file", "", ""),
	ps("tls-client-key-file", "", ""),
	ps("tls-client-key-file-pass", "", ""),
	ps("tls-dh-params-file", "", ""),
	ps("tls-ca-cert-file", "", ""),
	ps("tls-ca-cert-dir", "", ""),
	ps("tls-protocols", "", ""),
	ps("tls-ciphers", "", ""),
	ps("tls-ciphersuites", "", ""),

	// Special ones.
	{name: "dir", kind: pSpecial, protected: true, parse: func(a []string) (string, error) {
		// Kept, never applied: tests run several servers in one
		// process, which has one working directory.
		st, err := os.Stat(a[0])
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return "", configErr(capitalize(err.Error()))
		}
		if !st.IsDir() {
			return "", configErr("Not a directory")
		}
		return a[0], nil
	}},
	{name: "save", kind: pSpecial, multi: true, parse: parseSaveParam},
	{name: "oom-score-adj-values", kind: pSpecial, def: "0 200 800", multi: true, parse: parseOOMScoreAdjValues},
	{name: "notify-keyspace-events", kind: pSpecial, parse: func(a []string) (string, error) {
		f, ok := keyspaceEventFlags(a[0])
		if !ok {
			return "", configErr("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")
		}
		return keyspaceEventString(f), nil
	}},
	{name: "replicaof", alias: "slaveof", kind: pSpecial, immutable: true, multi: true, parse: func(a []string) (string, error) {
		if len(a) != 2 {
			return "", errBadArgs
		}
		if strings.EqualFold(a[0], "no") && strings.EqualFold(a[1], "one") {
			return "", nil
		}
		p, err := strconv.Atoi(a[1])
		if err != nil || p < 0 || p > 65535 {
			return "", configErr("Invalid master port")
		}
		return a[0] + " " + strconv.Itoa(p), nil
	}},
	{name: "latency-tracking-info-percentiles", kind: pSpecial, def: "50 99 99.9", multi: true, parse: parsePercentiles},
}

// honouredParams are the table's parameters the server acts on; the
// others are validated, kept and reported only.
var honouredParams = []string{
	"tracking-table-max-keys",                               // tracking.go
	"hll-sparse-max-bytes",                                  // cmd_hll.go
	"latency-tracking", "latency-tracking-info-percentiles", // latency.go
}

// paramHonoured reports whether name is not one of the table's
// report-only parameters.
func paramHonoured(name string) bool {
	_, inTable := paramIndex[name]
	return !inTable || contains(honouredParams, name)
}

// paramIndex finds a parameter by name or alias: the row and whether
// the name is the alias.
var paramIndex = func() map[string]int {
	m := make(map[string]int, 2*len(params70))
	for i, p := range params70 {
		m[p.name] = i
		if p.alias != "" {
			m[p.alias] = i
		}
	}
	return m
}()

// ExtraParams holds the values of params70, as CONFIG GET shows them.
// The slice is copied on write, so a Config copy (CONFIG SET works on
// one, and drops it on error) never changes the original.
type ExtraParams struct {
	v []string // nil: every parameter at its default
	// saveLoaded: a save line was read (config file or command line),
	// so later ones add to it, as in Redis.
	saveLoaded bool
}

// saveLine is the arguments a "save" line of a config file amounts to:
// Redis's first save line replaces the default, later ones append.
func (e *ExtraParams) saveLine(args []string) []string {
	if len(args) == 1 && args[0] == "" {
		e.saveLoaded = true
		return args
	}
	if e.saveLoaded {
		args = append(strings.Fields(e.get(paramIndex["save"])), args...)
	}
	e.saveLoaded = true
	return args
}

func (e *ExtraParams) get(i int) string {
	if e.v == nil {
		return params70[i].def
	}
	return e.v[i]
}

func (e *ExtraParams) set(i int, s string) {
	nv := make([]string, len(params70))
	for j := range nv {
		nv[j] = e.get(j)
	}
	nv[i] = s
	e.v = nv
}

// param returns a parameter's value by name (or alias); "" for no such
// parameter.
func (c *Config) param(name string) string {
	i, ok := paramIndex[name]
	if !ok {
		return ""
	}
	return c.Extra.get(i)
}

// paramInt returns an integer parameter's value (0 if it is not one).
func (c *Config) paramInt(name string) int64 {
	v, _ := strconv.ParseInt(c.param(name), 10, 64)
	return v
}

// redis70Directives turns the table into directives, one per name and
// alias.
func redis70Directives() []directive {
	out := make([]directive, 0, 2*len(params70))
	for i := range params70 {
		p := &params70[i]
		i := i
		set := func(c *Config, a []string) error {
			v, err := p.value(a)
			if err != nil {
				return err
			}
			c.Extra.set(i, v)
			return nil
		}
		get := func(c *Config) string { return c.Extra.get(i) }
		if p.name == "dir" {
			get = func(c *Config) string {
				if v := c.Extra.get(i); v != "" {
					return v
				}
				wd, _ := os.Getwd()
				return wd
			}
		}
		for _, n := range []string{p.name, p.alias} {
			if n != "" {
				out = append(out, directive{name: n, set: set, get: get, runtime: !p.immutable,
					multiArg: p.multi, protected: p.protected})
			}
		}
	}
	return out
}

// value validates args for p and returns the value CONFIG GET will show.
func (p *param70) value(a []string) (string, error) {
	if !p.multi && len(a) != 1 {
		return "", errBadArgs
	}
	switch p.kind {
	case pBool:
		v, err := parseBool(a[0])
		if err != nil {
			return "", err
		}
		return boolStr(v), nil
	case pInt, pMem, pMemPercent:
		v, err := parseNumParam(a[0], p.kind, p.lo, p.hi)
		if err != nil {
			return "", err
		}
		if p.kind == pMemPercent && v < 0 {
			return strconv.FormatInt(-v, 10) + "%", nil
		}
		return strconv.FormatInt(v, 10), nil
	case pEnum:
		for _, e := range p.enum {
			if strings.EqualFold(e, a[0]) {
				if p.name == "oom-score-adj" && e == "relative" {
					e = "yes" // the same value; Redis names it by its first name
				}
				return e, nil
			}
		}
		return "", errors.New("argument(s) must be one of the following: " + strings.Join(p.enum, ", "))
	case pFlags:
		// Redis's multi-valued enum: any of the names, ORed; "default"
		// is zero, shown only alone.
		if len(a) == 0 {
			return "", errBadArgs
		}
		var set []string
		for _, x := range a {
			found := false
			for _, e := range p.enum {
				if strings.EqualFold(e, x) {
					found = true
					if e != "default" && !contains(set, e) {
						set = append(set, e)
					}
				}
			}
			if !found {
				return "", errors.New("argument(s) must be one of the following: " + strings.Join(p.enum, ", "))
			}
		}
		var names []string
		for _, e := range p.enum {
			if contains(set, e) {
				names = append(names, e)
			}
		}
		if len(names) == 0 {
			return "default", nil
		}
		return strings.Join(names, " "), nil
	case pString:
		if p.check != nil {
			if err := p.check(a[0]); err != nil {
				return "", err
			}
		}
		return a[0], nil
	}
	return p.parse(a)
}

// parseNumParam parses a numeric parameter as Redis 7.0's numeric configs
// do: string2ll for integers, memtoull for memory values (with "N%" for a
// percent one, kept negative), then the bounds.
func parseNumParam(s string, kind paramKind, lo, hi int64) (int64, error) {
	var v int64
	switch {
	case kind == pMemPercent && strings.HasSuffix(s, "%"):
		n, ok := parseInt([]byte(s[:len(s)-1]))
		if !ok || n < 0 {
			return 0, errors.New("argument must be a memory or percent value")
		}
		if n > 100 {
			return 0, errors.New("percentage argument must be less or equal to 100")
		}
		v = -n
	case kind == pMem || kind == pMemPercent:
		var m int64
		if err := memValueArg(func(*Config) *int64 { return &m }, maxInt64)(nil, []string{s}); err != nil {
			if kind == pMemPercent && err.Error() == "argument must be a memory value" {
				return 0, errors.New("argument must be a memory or percent value")
			}
			return 0, err
		}
		v = m
	default:
		n, ok := parseInt([]byte(s))
		if !ok {
			return 0, errors.New("argument couldn't be parsed into an integer")
		}
		v = n
	}
	if v < lo || v > hi {
		return 0, fmt.Errorf("argument must be between %d and %d inclusive", lo, hi)
	}
	return v, nil
}

// parseSaveParam is save's "<seconds> <changes> ..." (or "" for none).
func parseSaveParam(a []string) (string, error) {
	if len(a) == 1 && a[0] == "" {
		return "", nil
	}
	if len(a)%2 != 0 {
		return "", configErr("Invalid save parameters")
	}
	out := make([]string, len(a))
	for i, x := range a {
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil || n < 0 {
			return "", configErr("Invalid save parameters")
		}
		out[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join(out, " "), nil
}

// parseOOMScoreAdjValues is oom-score-adj-values' three values.
func parseOOMScoreAdjValues(a []string) (string, error) {
	if len(a) != 3 {
		return "", errBadArgs
	}
	out := make([]string, 3)
	for i, x := range a {
		n, err := strconv.Atoi(x)
		if err != nil || n < -2000 || n > 2000 {
			return "", configErr("Invalid oom-score-adj-values, elements must be between -2000 and 2000.")
		}
		out[i] = strconv.Itoa(n)
	}
	return strings.Join(out, " "), nil
}

// maxPercentiles bounds latency-tracking-info-percentiles' list.
const maxPercentiles = 128

// parsePercentiles is latency-tracking-info-percentiles: doubles in
// [0, 100], shown as Redis's %f trimmed of trailing zeros ("" for none).
func parsePercentiles(a []string) (string, error) {
	if len(a) == 1 && a[0] == "" {
		return "", nil
	}
	if len(a) > maxPercentiles {
		return "", configErr("Invalid latency-tracking-info-percentiles parameters")
	}
	out := make([]string, len(a))
	for i, x := range a {
		f, ok := parseRedisDouble([]byte(x))
		if !ok || math.IsInf(f, 0) || math.IsNaN(f) {
			return "", configErr("Invalid latency-tracking-info-percentiles parameters")
		}
		if f > 100 || f < 0 {
			return "", errors.New("latency-tracking-info-percentiles parameters should sit between [0.0,100.0]")
		}
		s := strconv.FormatFloat(f, 'f', 6, 64)
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
		out[i] = s
	}
	return strings.Join(out, " "), nil
}

// percentiles returns latency-tracking-info-percentiles' values.
func (c *Config) percentiles() []float64 {
	var out []float64
	for _, f := range strings.Fields(c.param("latency-tracking-info-percentiles")) {
		if v, err := strconv.ParseFloat(f, 64); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// validProcTitle is Redis's check of proc-title-template: only known
// {variables}, balanced braces, and {title} present.
func validProcTitle(v string) error {
	bad := errors.New("template format is invalid or contains unknown variables")
	known := []string{"title", "listen-addr", "server-mode", "port", "tls-port", "unixsocket", "config-file"}
	rest := v
	for {
		i := strings.IndexAny(rest, "{}")
		if i < 0 {
			break
		}
		if rest[i] == '}' {
			return bad
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 || !contains(known, rest[i+1:i+j]) {
			return bad
		}
		rest = rest[i+j+1:]
	}
	if !strings.Contains(v, "{title}") {
		return bad
	}
	return nil
}

// Keyspace event classes (notify-keyspace-events), Redis's NOTIFY_* bits.
const (
	notifyKeyspace = 1 << iota
	notifyKeyevent
	notifyGeneric
	notifyString
	notifyList
	notifySet
	notifyHash
	notifyZSet
	notifyExpired
	notifyEvicted
	notifyStream
	notifyKeyMiss
	notifyLoaded
	notifyModule
	notifyNew
	notifyAll = notifyGeneric | notifyString | notifyList | notifySet | notifyHash | notifyZSet | notifyExpired | notifyEvicted | notifyStream | notifyModule
)

var notifyChars = []struct {
	c    byte
	flag int
}{
	{'g', notifyGeneric}, {'$', notifyString}, {'l', notifyList}, {'s', notifySet}, {'h', notifyHash},
	{'z', notifyZSet}, {'x', notifyExpired}, {'e', notifyEvicted}, {'t', notifyStream}, {'d', notifyModule},
	{'n', notifyNew},
}

// keyspaceEventFlags is Redis's keyspaceEventsStringToFlags.
func keyspaceEventFlags(s string) (int, bool) {
	f := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 'A':
			f |= notifyAll
		case 'K':
			f |= notifyKeyspace
		case 'E':
			f |= notifyKeyevent
		case 'm':
			f |= notifyKeyMiss
		default:
			found := false
			for _, n := range notifyChars {
				if n.c == s[i] {
					f |= n.flag
					found = true
				}
			}
			if !found {
				return 0, false
			}
		}
	}
	return f, true
}

// keyspaceEventString is Redis's keyspaceEventsFlagsToString.
func keyspaceEventString(f int) string {
	var b []byte
	if f&notifyAll == notifyAll {
		b = append(b, 'A') // n is then left out, as Redis 7.0 shows it
	} else {
		for _, n := range notifyChars {
			if f&n.flag != 0 {
				b = append(b, n.c)
			}
		}
	}
	if f&notifyKeyspace != 0 {
		b = append(b, 'K')
	}
	if f&notifyKeyevent != 0 {
		b = append(b, 'E')
	}
	if f&notifyKeyMiss != 0 {
		b = append(b, 'm')
	}
	return string(b)
}

// splitConfigValue splits a multi-argument CONFIG SET value as Redis does
// (sdssplitargs); a value that does not split (unbalanced quotes) stays
// whole and fails validation.
func splitConfigValue(v string) []string {
	args, ok := resp.SplitArgs([]byte(v), nil)
	if !ok {
		return []string{v}
	}
	if len(args) == 0 {
		return []string{""}
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = string(a)
	}
	return out
}

// capitalize makes Go's lower-case errno texts read as strerror's.
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// protectedConfigAllowed reports whether enable-protected-configs lets c
// change a protected parameter (dir, dbfilename), as debugAllowed does
// for DEBUG.
func (c *Client) protectedConfigAllowed() bool {
	return c.protectedAllowed(c.srv.cfg.Protected.Configs)
}

// protectedAllowed is Redis's allowProtectedAction for a setting of
// enable-*-command or enable-protected-configs: yes, or local for a
// loopback or Unix socket client.
func (c *Client) protectedAllowed(setting string) bool {
	switch setting {
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

// configErr is a CONFIG SET error in Redis's words, capitals and full
// stops included.
type configErr string

func (e configErr) Error() string { return string(e) }
