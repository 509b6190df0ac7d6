package main

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/server/resp"
)

// TestArm64AgentUnderQEMU cross-builds the agent for linux/arm64 (a
// BlueField's Arm cores) the way the controller does for such a host
// (runner.AgentFinder from this checkout, CGO_ENABLED=0), and runs it under
// Debian's qemu-user-static: `version` says linux/arm64, `server` answers
// PING on loopback, and `bench --json` against it completes a run with
// every request answered. It is built with -tags nordma (NoRDMA): the
// agent an arm64 host is sent has the RDMA provider, which links the
// dynamic loader, and qemu-user here has no arm64 sysroot to find it in;
// that build's RDMA is judged on amd64 in the Soft-RoCE guest, the same
// Go code for both architectures.
func TestArm64AgentUnderQEMU(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-builds the agent and runs it under qemu-user")
	}
	qemu := testpeer.Require(t, "qemu-aarch64-static")
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain on PATH to cross-build the agent")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var notices []string
	f := &runner.AgentFinder{Exe: filepath.Join(t.TempDir(), "dpulab"), CacheDir: t.TempDir(), NoRDMA: true, Notice: func(s string) { notices = append(notices, s) }}
	agent, err := f.Find(ctx, runner.Platform{OS: "linux", Arch: "arm64"})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(agent) != "dpulab-agent-linux-arm64" || len(notices) != 1 {
		t.Errorf("agent %s, notices %q", agent, notices)
	}
	ef, err := elf.Open(agent)
	if err != nil {
		t.Fatal(err)
	}
	machine := ef.Machine
	ef.Close()
	if machine != elf.EM_AARCH64 {
		t.Fatalf("%s is built for %v, want AArch64", agent, machine)
	}

	out, err := exec.CommandContext(ctx, qemu, agent, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "dpulab agent ") || !strings.Contains(string(out), " linux/arm64 ") {
		t.Fatalf("qemu-aarch64-static %s version: %v\n%s", agent, err, out)
	}

	port := testpeer.FreePorts(t, 1)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	srv := exec.Command(qemu, agent, "server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1")
	var srvOut bytes.Buffer
	srv.Stdout, srv.Stderr = &srvOut, &srvOut
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	t.Cleanup(func() {
		srv.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			srv.Process.Kill()
			<-exited
		}
	})

	// PING until the emulated server is up (emulation is slow to start;
	// the bound is generous, not a measurement).
	var reply string
	deadline := time.Now().Add(2 * time.Minute)
	for {
		reply, err = ping(addr)
		if err == nil {
			break
		}
		select {
		case e := <-exited:
			t.Fatalf("the arm64 server exited before answering: %v\n%s", e, srvOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the arm64 server never answered PING on %s: %v\n%s", addr, err, srvOut.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if reply != "PONG" {
		t.Fatalf("PING answered %q", reply)
	}

	bench := exec.CommandContext(ctx, qemu, agent, "bench", "--json", "--target", addr, "-c", "2", "-n", "200", "--ratio", "1:1")
	bout, err := bench.Output()
	if err != nil {
		t.Fatalf("arm64 bench: %v\n%s", err, bout)
	}
	var runs int
	sc := bufio.NewScanner(bytes.NewReader(bout))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var line struct {
			Type   string  `json:"type"`
			Ops    int64   `json:"ops"`
			Errors int64   `json:"errors"`
			OpsPS  float64 `json:"ops_per_sec"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Type != "run" {
			continue
		}
		runs++
		if line.Ops != 400 || line.Errors != 0 || line.OpsPS <= 0 {
			t.Errorf("arm64 bench run: ops %d (want 2 clients × 200 = 400), errors %d, ops/s %g\n%s", line.Ops, line.Errors, line.OpsPS, sc.Text())
		}
	}
	if runs != 1 {
		t.Errorf("arm64 bench printed %d run lines, want 1:\n%s", runs, bout)
	}
}

// ping sends PING over RESP to addr and returns the reply's text.
func ping(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write(resp.AppendCommand(nil, "PING")); err != nil {
		return "", err
	}
	v, err := resp.NewReader(c).ReadReply()
	if err != nil {
		return "", fmt.Errorf("read PING's reply: %w", err)
	}
	return strings.Trim(v.String(), `"`), nil
}
