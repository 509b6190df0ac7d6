//go:build unix

package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/server/resp"
)

// SIGTERM stops `dpulab server` within about a second even while a
// command holds the server (DEBUG SLEEP 60, as a long SORT or KEYS would),
// with the cleanup of a normal shutdown: the pid file and Unix socket are
// removed and the log says goodbye. Before, the process waited for the
// command to end (forever for a pathological KEYS).
func TestServerSIGTERMDuringLongCommand(t *testing.T) {
	bin := testpeer.Dpulab(t)
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	conf := filepath.Join(dir, "redis.conf")
	if err := os.WriteFile(conf, []byte("enable-debug-command yes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pid, sock, logf := filepath.Join(dir, "dpulab.pid"), filepath.Join(dir, "dpulab.sock"), filepath.Join(dir, "dpulab.log")
	cmd := exec.Command(bin, "server", "--config", conf, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--pidfile", pid, "--unixsocket", sock, "--logfile", logf)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	var conn net.Conn
	for deadline := time.Now().Add(10 * time.Second); ; {
		conn, err = net.Dial("tcp", ln.Addr().String())
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not listen: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	defer conn.Close()
	r := resp.NewReader(conn)
	conn.Write(resp.AppendCommand(nil, "PING"))
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if v, err := r.ReadReply(); err != nil || v.String() != `"PONG"` {
		t.Fatalf("PING: %v %v", v, err)
	}
	conn.Write(resp.AppendCommand(nil, "DEBUG", "SLEEP", "60"))
	time.Sleep(300 * time.Millisecond) // the command is running
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err // for Cleanup
		if err != nil {
			t.Errorf("exit: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("dpulab server still running 5s after SIGTERM")
	}
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("exited %v after SIGTERM, want about a second at most", d)
	}
	for _, f := range []string{pid, sock} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s left behind (%v)", f, err)
		}
	}
	log, _ := os.ReadFile(logf)
	for _, want := range []string{"Received shutdown request", "ready to exit"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}
