package sample

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// This file is for checking the sampler against the kernel's own tools: a
// test on a host with RDMA ports reads the cumulative counters the sampler
// reads (ReadRDMAPortCounters) and compares them with what
// `rdma statistic show` prints (ParseRDMAStatistic).

// hwStatsLifespan is the one file of hw_counters that is not a counter:
// how many milliseconds the kernel caches the driver's values for.
// `rdma statistic show` does not print it.
const hwStatsLifespan = "lifespan"

// ReadRDMAPortCounters reads the cumulative counters of every port under
// ROOT/sys/class/infiniband (root "/" on a live host), keyed "DEV/PORT"
// ("rxe0/1") then by the driver's counter name: every counter of
// ports/N/hw_counters (all of them, not just the ones the sampler turns
// into rates; not "lifespan", which is the cache period) and, when the
// port has them, the PMA counters of ports/N/counters under their file
// names (port_xmit_data counts 4-byte words). The hw_counters are what
// `rdma statistic show` prints for the port; counters/ is not in its
// output. A counters/ file the driver refuses to read (some PMA counters
// fail with EINVAL on some devices) is left out; an unreadable or
// non-numeric hw_counters file is an error. A host without
// /sys/class/infiniband, or whose ports have no counters, gives an empty
// map and no error.
func ReadRDMAPortCounters(root string) (map[string]map[string]uint64, error) {
	ports, err := filepath.Glob(filepath.Join(root, "/sys/class/infiniband/*/ports/*"))
	if err != nil {
		return nil, err
	}
	sort.Strings(ports)
	out := map[string]map[string]uint64{}
	for _, portDir := range ports {
		key := filepath.Base(filepath.Dir(filepath.Dir(portDir))) + "/" + filepath.Base(portDir)
		m := map[string]uint64{}
		for _, sub := range []string{"hw_counters", "counters"} {
			entries, err := os.ReadDir(filepath.Join(portDir, sub))
			if err != nil {
				continue
			}
			for _, e := range entries {
				if e.IsDir() || (sub == "hw_counters" && e.Name() == hwStatsLifespan) {
					continue
				}
				p := filepath.Join(portDir, sub, e.Name())
				v, err := readUint(p)
				if err != nil {
					if sub == "counters" {
						continue
					}
					return nil, fmt.Errorf("rdma counters: %s: %w", p, err)
				}
				if _, dup := m[e.Name()]; dup {
					// The same name in both: hw_counters (read
					// first) is the one `rdma statistic` shows.
					continue
				}
				m[e.Name()] = v
			}
		}
		if len(m) > 0 {
			out[key] = m
		}
	}
	return out, nil
}

// ParseRDMAStatistic parses the output of `rdma statistic show` (iproute2):
// one line per port, "link DEV/PORT NAME VALUE NAME VALUE ...", keyed
// "DEV/PORT" then counter name. A line that does not start with "link"
// continues the port before it (pretty-printed output wraps). It also
// takes the JSON of `rdma -j statistic show` (an array of objects with
// "ifname", "port" and the counters). Empty output is an empty map.
func ParseRDMAStatistic(out []byte) (map[string]map[string]uint64, error) {
	res := map[string]map[string]uint64{}
	if t := bytes.TrimSpace(out); len(t) > 0 && t[0] == '[' {
		return parseRDMAStatisticJSON(t)
	}
	var cur map[string]uint64
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if f[0] == "link" {
			if len(f) < 2 || !strings.Contains(f[1], "/") {
				return nil, fmt.Errorf("rdma statistic line %d: %q: want \"link DEV/PORT NAME VALUE ...\"", line, sc.Text())
			}
			if res[f[1]] == nil {
				res[f[1]] = map[string]uint64{}
			}
			cur, f = res[f[1]], f[2:]
		} else if cur == nil {
			return nil, fmt.Errorf("rdma statistic line %d: %q: counters before any \"link DEV/PORT\"", line, sc.Text())
		}
		if len(f)%2 != 0 {
			return nil, fmt.Errorf("rdma statistic line %d: %q: a counter name without a value", line, sc.Text())
		}
		for i := 0; i < len(f); i += 2 {
			v, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("rdma statistic line %d: counter %s: value %q is not a count", line, f[i], f[i+1])
			}
			cur[f[i]] = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

func parseRDMAStatisticJSON(b []byte) (map[string]map[string]uint64, error) {
	var links []map[string]json.RawMessage
	if err := json.Unmarshal(b, &links); err != nil {
		return nil, fmt.Errorf("rdma statistic json: %w", err)
	}
	res := map[string]map[string]uint64{}
	for i, l := range links {
		var dev string
		var port uint64
		if err := json.Unmarshal(l["ifname"], &dev); err != nil || dev == "" {
			return nil, fmt.Errorf("rdma statistic json: entry %d has no \"ifname\"", i)
		}
		if err := json.Unmarshal(l["port"], &port); err != nil {
			return nil, fmt.Errorf("rdma statistic json: entry %d (%s) has no numeric \"port\"", i, dev)
		}
		m := map[string]uint64{}
		for k, raw := range l {
			if k == "ifname" || k == "port" || k == "ifindex" {
				continue
			}
			var v uint64
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, fmt.Errorf("rdma statistic json: %s/%d %s: %s is not a count", dev, port, k, raw)
			}
			m[k] = v
		}
		res[dev+"/"+strconv.FormatUint(port, 10)] = m
	}
	return res, nil
}
