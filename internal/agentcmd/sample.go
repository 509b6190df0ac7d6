package agentcmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/dpulab/dpulab/server/sample"
	"github.com/spf13/cobra"
)

// NewSampleCmd is `dpulab sample`: the host sampler the labs run on every
// server host during a benchmark, streaming JSON lines back over SSH.
func NewSampleCmd() *cobra.Command {
	var (
		interval time.Duration
		ifaces   []string
		count    int
		host     string
	)
	cmd := &cobra.Command{
		Use:   "sample",
		Short: "Sample host CPU, network and power as JSON lines",
		Long: `Print one JSON line per interval with this host's CPU time split (user,
system, softirq, irq, iowait, steal, idle, and network = softirq + irq, in %
of all CPUs), network bytes/s per interface (/proc/net/dev) and package power
in watts from RAPL (/sys/class/powercap), or null when RAPL is not readable.
Runs until interrupted (its normal end: exit status 0), or for --count samples.
The first line is {"type":"header","stream":"sample","schema_version":2}, every
sample line carries "type":"sample"; see FORMATS.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if interval < 10*time.Millisecond {
				return UsageError{fmt.Errorf("--interval %s is too short: use 10ms or more (default 1s)", interval)}
			}
			if count < 0 {
				return UsageError{fmt.Errorf("--count %d: use 0 (run until interrupted) or a positive number", count)}
			}
			s := &sample.Sampler{Host: host, Ifaces: ifaces}
			if err := s.CheckIfaces(); err != nil {
				return UsageError{err}
			}
			out := &typedLines{w: cmd.OutOrStdout(), typ: "sample"}
			WriteHeader(cmd.OutOrStdout(), StreamSample, SampleSchemaVersion)
			return s.Run(cmd.Context(), out, interval, count)
		},
	}
	f := cmd.Flags()
	f.DurationVar(&interval, "interval", time.Second, "time between samples")
	f.StringSliceVar(&ifaces, "iface", nil, "network interface to report (repeatable; default all but lo)")
	f.IntVar(&count, "count", 0, "stop after this many samples (0 = until interrupted)")
	f.StringVar(&host, "host", "", "host name to put in each sample (default: the system's host name)")
	return cmd
}

// typedLines adds "type" to every JSON-object line written through it that
// lacks one: server/sample's encoder writes the samples without it.
// Lines are passed on whole, one Write each, so a reader never sees half.
type typedLines struct {
	w   io.Writer
	typ string
	buf []byte
}

func (t *typedLines) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	for {
		i := bytes.IndexByte(t.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := t.buf[:i+1]
		if _, err := t.w.Write(addType(line, t.typ)); err != nil {
			return len(p), err
		}
		t.buf = t.buf[i+1:]
	}
}

// addType returns line with "type":typ as its first member, unless it is
// not a JSON object or already has a "type".
func addType(line []byte, typ string) []byte {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) < 2 || trimmed[0] != '{' {
		return line
	}
	var head struct {
		Type *string `json:"type"`
	}
	if json.Unmarshal(trimmed, &head) != nil || head.Type != nil {
		return line
	}
	tb, _ := json.Marshal(typ)
	out := make([]byte, 0, len(line)+len(tb)+9)
	out = append(out, `{"type":`...)
	out = append(out, tb...)
	if rest := bytes.TrimSpace(trimmed[1:]); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	out = append(out, trimmed[1:]...)
	return append(out, '\n')
}
