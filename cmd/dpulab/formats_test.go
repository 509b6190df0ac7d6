//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/server"
)

const (
	tinyLab   = "id: tiny\ntitle: Tiny\nsummary: s\nduration: 1m\nroles: [local]\nsteps:\n  - {id: a, title: A, kind: run, run: \"true\"}\n"
	brokenLab = "id: broken\ntitle: Broken\nsummary: s\nduration: 1m\nroles: [local]\nsteps:\n  - {id: a, title: A, kind: run, run: \"false\"}\n"
)

func startServer(t *testing.T) string {
	t.Helper()
	addr, stop, err := server.StartLocal(server.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr
}

// TestExitCodes holds the exit statuses --help and FORMATS.md promise: 0
// done, 1 failed, 2 usage error, for every kind of usage error named there.
func TestExitCodes(t *testing.T) {
	tiny := writeLabDir(t, "tiny", tinyLab)
	broken := writeLabDir(t, "broken", brokenLab)
	state := t.TempDir()
	addr := startServer(t)
	closed := func() string {
		// A loopback port nobody listens on: one we bound and released.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		a := l.Addr().String()
		l.Close()
		return a
	}()
	run := func(extra ...string) []string {
		return append([]string{"run", "--state-dir", state, "--results", t.TempDir(), "--yes"}, extra...)
	}
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"run done", run("tiny", "--lab-dir", tiny), 0},
		{"bench done", []string{"bench", "--target", addr, "-c", "2", "-n", "5"}, 0},
		{"labs done", []string{"labs"}, 0},
		{"step failed", run("broken", "--lab-dir", broken), 1},
		{"bench failed: nothing listens", []string{"bench", "--target", closed, "-n", "5", "--connect-timeout", "2s"}, 1},
		{"unknown command", []string{"frobnicate"}, 2},
		{"extra argument", []string{"labs", "extra"}, 2},
		{"run without a lab", []string{"run"}, 2},
		{"bad flag", []string{"bench", "--no-such-flag"}, 2},
		{"bad flag value", []string{"bench", "--target", addr, "-c", "many"}, 2},
		{"bad bench value", []string{"bench", "--target", addr, "--ratio", "x"}, 2},
		{"redis-benchmark's -P", []string{"bench", "--target", addr, "-P", "16"}, 2},
		{"bad --set", run("tiny", "--lab-dir", tiny, "--set", "novalue"), 2},
		{"unknown lab", run("no-such-lab", "--lab-dir", tiny), 2},
		{"unknown step", run("tiny", "--lab-dir", tiny, "--from", "nope"), 2},
		{"bad inventory path", run("tiny", "--lab-dir", tiny, "--inventory", filepath.Join(t.TempDir(), "missing.yaml")), 2},
		{"labs: bad inventory path", []string{"labs", "--inventory", filepath.Join(t.TempDir(), "missing.yaml")}, 2},
		{"sample: bad interval", []string{"sample", "--interval", "1ms"}, 2},
		{"sample: unknown interface", []string{"sample", "--iface", "no-such-if0"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, err := runCmd(t, tt.args...)
			code, msg := exitStatus(err)
			if code != tt.want {
				t.Errorf("dpulab %s: exit status %d (%v), want %d\n%s", strings.Join(tt.args, " "), code, err, tt.want, stderr)
			}
			if code == exitUsage && !strings.Contains(msg, "--help") {
				t.Errorf("usage error %q does not point at --help", msg)
			}
		})
	}
}

// TestBenchInterruptExitCodes runs the dpulab binary: Ctrl-C ends a bench
// with 130 and SIGTERM with 143, after printing what was measured.
func TestBenchInterruptExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dpulab: not in -short")
	}
	bin := testpeer.Dpulab(t)
	addr := startServer(t)
	for sig, want := range map[syscall.Signal]int{syscall.SIGINT: 130, syscall.SIGTERM: 143} {
		t.Run(sig.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "bench", "--target", addr, "-c", "2", "--test-time", "60", "--rate-limiting", "50", "--json")
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(out)
			var seen []string
			for sc.Scan() {
				seen = append(seen, sc.Text())
				if strings.Contains(sc.Text(), `"type":"sample"`) {
					break // measuring: now interrupt it
				}
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			for sc.Scan() {
				seen = append(seen, sc.Text())
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != want {
				t.Fatalf("exit: %v, want status %d", err, want)
			}
			if last := seen[len(seen)-1]; !strings.Contains(last, `"type":"summary"`) {
				t.Errorf("last line %q, want the summary of what was measured", last)
			}
		})
	}
}

// unitless are field names that would be a duration or size without a
// unit; a stream line may not use them.
var unitless = map[string]bool{
	"duration": true, "elapsed": true, "remaining": true, "seconds": true, "t": true,
	"timeout": true, "interval": true, "warmup": true, "size": true, "data_size": true, "rate": true,
}

// checkStream checks the convention on one stream: JSON objects, one a
// line, each with "type"; a header first with the stream's name and a
// schema version; no duration or size without its unit in the name.
func checkStream(t *testing.T, stream, out string) map[string]int {
	t.Helper()
	types := map[string]int{}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) < 2 {
		t.Fatalf("%s: %d lines:\n%s", stream, len(lines), out)
	}
	for i, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%s line %d is not a JSON object: %v\n%s", stream, i+1, err, line)
		}
		typ, _ := m["type"].(string)
		if typ == "" {
			t.Errorf("%s line %d has no \"type\": %s", stream, i+1, line)
		}
		types[typ]++
		if i == 0 {
			v, _ := m["schema_version"].(float64)
			if typ != "header" || m["stream"] != stream || v < 1 {
				t.Errorf("%s: first line %s; want {\"type\":\"header\",\"stream\":%q,\"schema_version\":N}", stream, line, stream)
			}
		} else if typ == "header" {
			t.Errorf("%s line %d: a second header", stream, i+1)
		}
		walkKeys(m, stream+"/"+typ, func(path, key string, v any) {
			if !unitless[key] {
				return
			}
			if _, isTime := v.(string); isTime && key == "t" {
				return // a timestamp (RFC 3339), not a duration
			}
			t.Errorf("%s: %q has no unit in its name (%s)", stream, path, line)
		})
	}
	return types
}

func walkKeys(v any, path string, fn func(path, key string, v any)) {
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			fn(path+"/"+k, k, c)
			walkKeys(c, path+"/"+k, fn)
		}
	case []any:
		for _, c := range v {
			walkKeys(c, path, fn)
		}
	}
}

// TestJSONStreams walks every JSON stream dpulab writes: run --json on a
// tiny lab, bench --json against the bundled server, sample, labs --json.
func TestJSONStreams(t *testing.T) {
	addr := startServer(t)
	tiny := writeLabDir(t, "tiny", tinyLab)
	streams := []struct {
		stream string
		args   []string
		want   []string // types that must appear
	}{
		{"run", []string{"run", "tiny", "--lab-dir", tiny, "--json", "--state-dir", t.TempDir(), "--results", t.TempDir(), "--yes"}, []string{"lab_started", "step_finished", "lab_finished"}},
		{"bench", []string{"bench", "--target", addr, "-c", "2", "-n", "20", "-x", "2", "--prefill", "--key-maximum", "99", "--json", "--target-samples"}, []string{"start", "prefill", "run", "summary"}},
		{"sample", []string{"sample", "--count", "2", "--interval", "20ms", "--iface", "lo"}, []string{"sample"}},
		{"labs", []string{"labs", "--json"}, []string{"lab"}},
	}
	for _, s := range streams {
		t.Run(s.stream, func(t *testing.T) {
			out, stderr, err := runCmd(t, s.args...)
			if err != nil {
				t.Fatalf("dpulab %s: %v\n%s", strings.Join(s.args, " "), err, stderr)
			}
			types := checkStream(t, s.stream, out)
			for _, w := range s.want {
				if types[w] == 0 {
					t.Errorf("%s: no %q line (types %v)", s.stream, w, types)
				}
			}
		})
	}
}

// TestBenchHumanOutput: the table names threads × clients and prints the
// --print-percentiles.
func TestBenchHumanOutput(t *testing.T) {
	addr := startServer(t)
	out, stderr, err := runCmd(t, "bench", "--target", addr, "-t", "2", "-c", "2", "-n", "25", "--print-percentiles", "50,99.99")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, want := range []string{"1 target(s) × 2 threads × 2 clients = 4 connections", "25 requests per client", "percentiles: p50 ", "p99.99 ", "requests answered: 100"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
