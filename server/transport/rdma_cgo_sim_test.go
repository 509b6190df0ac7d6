//go:build rdma && rdmasim && cgo

package transport_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/server/rdma"
	"github.com/dpulab/dpulab/server/resp"
	"github.com/dpulab/dpulab/server/transport"
)

// These tests run `dpulab server` and `dpulab bench` of a rdma,rdmasim
// build as two processes: Valkey's protocol through the real cgo provider
// (provider.go and the C layer), whose simulated implementation carries
// the verbs over Unix sockets (go test -tags rdma,rdmasim ./server/...).
// This test binary's own client is the same cgo code.

// buildTags is what the binary under test is built with.
const buildTags = "rdma,rdmasim"

// TestRDMACgoSimRepliesMatchTCP: the same 16-deep script, values from 1
// byte to 1 MiB (far more bytes than the receive buffer), gets
// byte-identical replies over TCP and over RDMA through the cgo provider,
// RC and UC; the tuning keys the provider honours are set on the server.
func TestRDMACgoSimRepliesMatchTCP(t *testing.T) {
	bin := cgoDpulab(t)
	t.Setenv(rdma.SimDirEnv, t.TempDir())
	var cmds [][]string
	for i, size := range []int{1, 100, 4096, 65536, 1 << 20} {
		v := strings.Repeat(string(rune('a'+i)), size)
		for j := range 8 {
			k := fmt.Sprintf("k%d-%d", i, j)
			cmds = append(cmds, []string{"SET", k, v}, []string{"GET", k}, []string{"STRLEN", k}, []string{"GET", "missing"})
		}
	}
	cmds = append(cmds, []string{"DBSIZE"}, []string{"NOSUCHCOMMAND"})
	for _, mode := range []string{"reliable-connected", "unreliable-connected"} {
		t.Run(mode, func(t *testing.T) {
			tcp, ep := cgoServer(t, bin, "127.0.0.1", mode, "rdma-inline-size 64\nrdma-poll-us 20\nrdma-sq-size 2048\nrdma-rq-size 2048\nrdma-retry-count 5\nrdma-completion-vector 0\n")
			want := script(t, tcp, mode, cmds)
			script(t, tcp, mode, [][]string{{"FLUSHALL"}})
			got := script(t, ep, mode, cmds)
			if !bytes.Equal(got, want) {
				t.Fatalf("replies over %s differ from TCP's (%d bytes against %d)", ep, len(got), len(want))
			}
		})
	}
}

// TestRDMACgoSimBench: `dpulab bench --target rdma://` against `dpulab
// server`, both of a rdma,rdmasim build, RC and UC, 16-deep pipelines of
// 32-byte and of 1 MiB values: every request answered, no error, and the
// figures labelled with the C simulation's note.
func TestRDMACgoSimBench(t *testing.T) {
	bin := cgoDpulab(t)
	t.Setenv(rdma.SimDirEnv, t.TempDir())
	for _, mode := range []string{"reliable-connected", "unreliable-connected"} {
		t.Run(mode, func(t *testing.T) {
			_, ep := cgoServer(t, bin, "127.0.0.1", mode, "")
			qp := "rc"
			if mode == "unreliable-connected" {
				qp = "uc"
			}
			for _, tc := range []struct {
				name string
				args []string
				ops  int64
			}{
				{"32 B", []string{"-c", "4", "-n", "2000"}, 8000},
				{"1 MiB", []string{"-c", "2", "-n", "32", "-d", "1048576", "--ratio", "1:1"}, 64},
			} {
				start, sum := benchRun(t, bin, ep, qp, tc.args...)
				if !strings.HasSuffix(start.Simulation, rdma.ProviderSimulation) || start.Targets[0] != ep.String() || start.Config.RDMA.UC != (qp == "uc") {
					t.Errorf("%s: start %+v", tc.name, start)
				}
				if sum.Ops != tc.ops || sum.Errors != 0 {
					t.Errorf("%s: %d replies, %d errors (%v); want %d, 0", tc.name, sum.Ops, sum.Errors, sum.ErrorsByKind, tc.ops)
				}
			}
		})
	}
}

// TestRDMACgoSimVersion: `dpulab version` of this build lists rdma as
// simulated, through the C layer.
func TestRDMACgoSimVersion(t *testing.T) {
	out, err := exec.Command(cgoDpulab(t), "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "rdma (simulated; "+rdma.ProviderName+")") || !strings.Contains(string(out), "tcp") {
		t.Errorf("dpulab version: %v\n%s", err, out)
	}
}

// script runs cmds 16 deep over ep and returns the replies as text.
func script(t *testing.T, ep transport.Endpoint, mode string, cmds [][]string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := transport.Dial(ctx, ep, rdmaOpts(mode))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(120 * time.Second))
	rd := resp.NewReader(c)
	var out []byte
	for i := 0; i < len(cmds); i += 16 {
		var req []byte
		n := 0
		for _, cmd := range cmds[i:min(i+16, len(cmds))] {
			req = resp.AppendCommand(req, cmd...)
			n++
		}
		// Written beside the reading: a server whose replies do not fit
		// stops reading the pipeline's rest.
		werr := make(chan error, 1)
		go func() { _, err := c.Write(req); werr <- err }()
		for range n {
			v, err := rd.ReadReply()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, v.String()...)
			out = append(out, '\n')
		}
		if err := <-werr; err != nil {
			t.Fatal(err)
		}
	}
	return out
}
