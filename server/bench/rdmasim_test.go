//go:build rdmasim

package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/server/resp"
	"github.com/dpulab/dpulab/server/transport"
)

// These tests run `dpulab server` and `dpulab bench` as two processes of
// an rdmasim build: Valkey's protocol between them through the transport
// seam, over the simulated provider (go test -tags rdmasim ./server/bench).

// simDpulab builds ./cmd/dpulab with -tags rdmasim once.
func simDpulab(t *testing.T) string {
	t.Helper()
	return testpeer.AgentTags(t, "rdmasim")
}

func TestMain(m *testing.M) {
	code := m.Run()
	testpeer.RemoveBuilds()
	os.Exit(code)
}

// simServer starts `dpulab server` serving TCP and RDMA (mode rc or uc)
// on loopback, and returns both endpoints once RDMA answers PING.
func simServer(t *testing.T, bin, mode string) (tcp, rdma transport.Endpoint, pid int) {
	t.Helper()
	port := testpeer.FreePorts(t, 2)
	dir := t.TempDir()
	conf := filepath.Join(dir, "redis.conf")
	os.WriteFile(conf, fmt.Appendf(nil, "bind 127.0.0.1\nport %d\nrdma-port %d\nrdma-transport-mode %s\n", port, port+1, mode), 0o644)
	cmd := exec.Command(bin, "server", "--config", conf)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", log.String())
		}
	})
	tcp = transport.TCPEndpoint("127.0.0.1:" + strconv.Itoa(port))
	rdma = transport.RDMAEndpoint("127.0.0.1:" + strconv.Itoa(port+1))
	for try := 0; ; try++ {
		c, err := simDial(rdma, mode)
		if err == nil {
			c.Close()
			return tcp, rdma, cmd.Process.Pid
		}
		if try > 500 {
			t.Fatalf("server never answered over %s: %v", rdma, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type simConn struct {
	c  interface{ Close() error }
	rw *resp.Reader
	w  func([]byte) error
}

func simDial(ep transport.Endpoint, mode string) (*simConn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := transport.Dial(ctx, ep, transport.Options{RDMA: transport.RDMAOptions{UC: mode == "unreliable-connected"}})
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(60 * time.Second))
	return &simConn{c: c, rw: resp.NewReader(c), w: func(b []byte) error { _, err := c.Write(b); return err }}, nil
}

func (c *simConn) Close() error { return c.c.Close() }

// TestSimRepliesMatchTCP: the same pipelined script, values from 1 byte to
// 1 MiB and far more bytes than the 1 MiB receive buffer, gets
// byte-identical replies over TCP and over RDMA, RC and UC.
func TestSimRepliesMatchTCP(t *testing.T) {
	bin := simDpulab(t)
	var script [][]string
	for i, size := range []int{1, 100, 4096, 65536, 1 << 20} {
		v := strings.Repeat(string(rune('a'+i)), size)
		for j := range 8 {
			k := fmt.Sprintf("k%d-%d", i, j)
			script = append(script, []string{"SET", k, v}, []string{"GET", k}, []string{"STRLEN", k}, []string{"GET", "missing"})
		}
	}
	script = append(script, []string{"DBSIZE"}, []string{"NOSUCHCOMMAND"})
	run := func(t *testing.T, ep transport.Endpoint, mode string) []byte {
		c, err := simDial(ep, mode)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var out []byte
		// 16 deep: send a pipeline, read its replies.
		for i := 0; i < len(script); i += 16 {
			var req []byte
			n := 0
			for _, cmd := range script[i:min(i+16, len(script))] {
				req = resp.AppendCommand(req, cmd...)
				n++
			}
			// Written beside the reading, as a client must: a server whose
			// replies do not fit stops reading the pipeline's rest.
			werr := make(chan error, 1)
			go func() { werr <- c.w(req) }()
			for range n {
				v, err := c.rw.ReadReply()
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
	for _, mode := range []string{"reliable-connected", "unreliable-connected"} {
		t.Run(mode, func(t *testing.T) {
			tcp, rdma, _ := simServer(t, bin, mode)
			want := run(t, tcp, mode)
			c, _ := simDial(tcp, mode)
			c.w(resp.AppendCommand(nil, "FLUSHALL"))
			c.rw.ReadReply()
			c.Close()
			got := run(t, rdma, mode)
			if !bytes.Equal(got, want) {
				t.Fatalf("replies over %s differ from TCP's (%d bytes against %d)", rdma, len(got), len(want))
			}
		})
	}
}

// TestSimBench: `dpulab bench --target rdma://` against `dpulab server`,
// RC and UC, 16-deep pipelines of small values and of 1 MiB values: every
// request answered, no error, and the figures labelled as a simulation.
func TestSimBench(t *testing.T) {
	bin := simDpulab(t)
	for _, mode := range []string{"reliable-connected", "unreliable-connected"} {
		t.Run(mode, func(t *testing.T) {
			_, rdma, _ := simServer(t, bin, mode)
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
				args := append([]string{"bench", "--json", "--target", rdma.String(), "--rdma-mode", qp, "--pipeline", "16"}, tc.args...)
				out, err := exec.Command(bin, args...).Output()
				if err != nil {
					t.Fatalf("%s: dpulab %s: %v\n%s", tc.name, strings.Join(args, " "), err, out)
				}
				var start *Start
				var sum *Summary
				Decode(bytes.NewReader(out), func(ev Event) error {
					switch e := ev.(type) {
					case *Start:
						start = e
					case *Summary:
						sum = e
					}
					return nil
				})
				if start == nil || sum == nil {
					t.Fatalf("%s: no start or summary in\n%s", tc.name, out)
				}
				if !strings.Contains(start.Simulation, "simulated RDMA") || start.Targets[0] != rdma.String() || start.Config.RDMA.UC != (qp == "uc") {
					t.Errorf("%s: start %+v", tc.name, start)
				}
				if sum.Ops != tc.ops || sum.Errors != 0 {
					t.Errorf("%s: %d replies, %d errors (%v); want %d, 0", tc.name, sum.Ops, sum.Errors, sum.ErrorsByKind, tc.ops)
				}
			}
		})
	}
}

// TestSimLeanPathDoesNotAllocate: the lean hot loop over rdma (the
// protocol's Conn and the simulated provider's queue pair in this process,
// the server in another) allocates nothing per request.
func TestSimLeanPathDoesNotAllocate(t *testing.T) {
	bin := simDpulab(t)
	_, ep, _ := simServer(t, bin, "reliable-connected")
	cfg := DefaultConfig()
	cfg.Endpoints, cfg.Pipeline, cfg.Clients = []transport.Endpoint{ep}, 16, 1
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	set := &connSet{}
	defer set.closeAll()
	c, err := dialLean(context.Background(), &cfg, ep, &ioCounters{}, set, valueBytes(cfg.DataSize))
	if err != nil {
		t.Fatal(err)
	}
	w := newWorker(&cfg, 0, 0, 0, 1, c, 1)
	batch := func() {
		for i := range w.ops {
			w.ops[i] = w.nextOp()
			w.due[i] = nanotime()
		}
		got, err := w.c.do(w.ops, w.res)
		if err != nil {
			t.Fatal(err)
		}
		w.record(len(w.ops), got, nil, true, false)
	}
	batch()
	if allocs := testing.AllocsPerRun(200, batch); allocs > 0 {
		t.Errorf("%.1f allocations per 16-request pipeline over rdma, want 0", allocs)
	}
}
