//go:build linux

package server

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/server/resp"
)

// fdHelperEnv makes the test binary a helper process (TestFDLimitHelper)
// that sets RLIMIT_NOFILE to "soft:hard" and then either serves (reading
// "exhaust" and "release" on stdin: use up every descriptor it has left,
// give them back) or, given a program after "--", execs it.
const fdHelperEnv = "DPULAB_FDLIMIT_HELPER"

// The limit both servers get: below what maxclients 10000 needs, with a
// hard limit above the soft one to raise toward. Redis keeps 32 descriptors
// beyond one per client (CONFIG_MIN_RESERVED_FDS), so maxclients becomes
// fdFits.
const (
	fdSoft, fdHard = 40, 64
	fdFits         = fdHard - 32
)

// TestFDLimitHelper is not a test: see fdHelperEnv.
func TestFDLimitHelper(t *testing.T) {
	spec := os.Getenv(fdHelperEnv)
	if spec == "" {
		t.Skip("helper process for TestFDLimit")
	}
	var soft, hard uint64
	if _, err := fmt.Sscanf(spec, "%d:%d", &soft, &hard); err != nil {
		fmt.Printf("ERROR %s=%q: %v\n", fdHelperEnv, spec, err)
		return
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: soft, Max: hard}); err != nil {
		fmt.Printf("ERROR setrlimit: %v\n", err)
		return
	}
	if prog := flag.Args(); len(prog) > 0 {
		err := syscall.Exec(prog[0], prog, os.Environ())
		fmt.Printf("ERROR exec %s: %v\n", prog[0], err)
		return
	}
	cfg := DefaultConfig()
	cfg.LogLevel = "verbose"
	srv, err := New(cfg.WithLog(os.Stderr))
	if err != nil {
		fmt.Printf("ERROR %v\n", err)
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Printf("ERROR %v\n", err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	var lim syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	fmt.Printf("ADDR %s NOFILE %d %d\n", ln.Addr(), lim.Cur, lim.Max)
	var held []*os.File
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		switch sc.Text() {
		case "exhaust":
			for {
				f, err := os.Open(os.DevNull)
				if err != nil {
					break
				}
				held = append(held, f)
			}
			fmt.Printf("EXHAUSTED %d\n", len(held))
		case "release":
			for _, f := range held {
				f.Close()
			}
			held = nil
			fmt.Println("RELEASED")
		}
	}
	cancel()
	<-done
}

// limitedProc is a helper process run with the low descriptor limit.
type limitedProc struct {
	stdin io.Writer
	lines chan string // its stdout, line by line
}

// startLimited runs the test binary as a helper with the low limit, exec'ing
// prog when given, and stops it at cleanup. stderr receives its stderr.
func startLimited(t *testing.T, soft, hard int, stderr io.Writer, prog ...string) *limitedProc {
	t.Helper()
	args := []string{"-test.run=^TestFDLimitHelper$"}
	if len(prog) > 0 {
		args = append(append(args, "--"), prog...)
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d:%d", fdHelperEnv, soft, hard))
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start helper: %v", err)
	}
	p := &limitedProc{stdin: stdin, lines: make(chan string, 64)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	return p
}

// expect returns the helper's next stdout line starting with prefix,
// skipping the test framework's own lines.
func (p *limitedProc) expect(t *testing.T, prefix string) string {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("helper exited before printing %q", prefix)
			}
			if strings.HasPrefix(l, "ERROR") && prefix != "ERROR" {
				t.Fatalf("helper: %s", l)
			}
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case <-timeout:
			t.Fatalf("helper printed no %q line", prefix)
		}
	}
}

// fitLines are the lines Redis logs when maxclients does not fit the
// descriptor limit, for a soft limit of fdSoft under a hard one of fdHard.
var fitLines = []string{
	"You requested maxclients of 10000 requiring at least 10032 max file descriptors.",
	"Server can't set maximum open files to 10032 because of OS error: Operation not permitted.",
	fmt.Sprintf("Current maximum open files is %d. maxclients has been reduced to %d to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.", fdHard, fdFits),
}

// waitLog waits until every line of want is in the log read by log.
func waitLog(t *testing.T, who string, log func() string, want []string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		l := log()
		if strings.Contains(l, "Increased maximum number of open files to 10032") {
			t.Skipf("%s could raise its hard descriptor limit (CAP_SYS_RESOURCE): nothing to fit; run unprivileged", who)
		}
		missing := ""
		for _, w := range want {
			if !strings.Contains(l, " # "+w+"\n") {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s's log lacks the warning %q:\n%s", who, missing, l)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func dialLimited(t *testing.T, network, addr string) *testConn {
	t.Helper()
	c, err := net.DialTimeout(network, addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &testConn{t: t, conn: c, r: resp.NewReader(c)}
}

// refused checks that a new client gets the max-clients error and is closed.
func refused(t *testing.T, network, addr string) string {
	t.Helper()
	c := dialLimited(t, network, addr)
	c.conn.SetDeadline(time.Now().Add(20 * time.Second))
	got := c.read()
	if _, err := c.conn.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("connection not closed after %s: %v", got, err)
	}
	return got
}

// fillUp connects clients until the server's maxclients (32 under the
// limit) and returns them with what the first client past it and CONFIG
// SET maxclients beyond the limit got.
func fillUp(t *testing.T, network, addr string) (clients []*testConn, replies []string) {
	t.Helper()
	first := dialLimited(t, network, addr)
	replies = append(replies, first.do("CONFIG", "GET", "maxclients"))
	clients = append(clients, first)
	for len(clients) < fdFits {
		c := dialLimited(t, network, addr)
		c.must(`"PONG"`, "PING")
		clients = append(clients, c)
	}
	replies = append(replies, refused(t, network, addr))
	replies = append(replies, first.do("CONFIG", "SET", "maxclients", "100"))
	replies = append(replies, first.do("CONFIG", "GET", "maxclients"))
	return clients, replies
}

// TestFDLimit: with a descriptor limit below what maxclients needs, the
// server raises its soft limit to the hard one, fits maxclients to it with
// Redis's warnings, refuses clients past it with Redis's error, and when
// accept fails for lack of descriptors tells the waiting client so instead
// of leaving it hanging, while serving the others; once descriptors are
// back, new clients are served. The same is checked of Debian's
// redis-server under the same limit, and the replies compared.
func TestFDLimit(t *testing.T) {
	var ourLog syncBuffer
	ours := startLimited(t, fdSoft, fdHard, &ourLog)
	var addr string
	var soft, hard int
	fmt.Sscanf(ours.expect(t, "ADDR "), "ADDR %s NOFILE %d %d", &addr, &soft, &hard)
	waitLog(t, "ours", ourLog.String, fitLines)
	if soft != fdHard || hard != fdHard {
		t.Errorf("descriptor limit after start: %d:%d, want the soft limit raised to the hard one (%d:%d)", soft, hard, fdHard, fdHard)
	}
	clients, got := fillUp(t, "tcp", addr)

	want := []string{
		fmt.Sprintf(`*["maxclients" "%d"]`, fdFits),
		"(error) ERR max number of clients reached",
		fmt.Sprintf("(error) ERR CONFIG SET failed (possibly related to argument 'maxclients') - The operating system is not able to handle the specified number of clients, try with %d", fdFits),
		fmt.Sprintf(`*["maxclients" "%d"]`, fdFits),
	}
	if _, err := exec.LookPath("redis-server"); err == nil || testpeer.Required() {
		bin := testpeer.Require(t, "redis-server")
		dir := t.TempDir()
		sock, logPath := filepath.Join(dir, "redis.sock"), filepath.Join(dir, "redis.log")
		startLimited(t, fdSoft, fdHard, io.Discard, bin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no",
			"--dir", dir, "--daemonize", "no", "--logfile", logPath)
		redisLog := func() string { b, _ := os.ReadFile(logPath); return string(b) }
		waitLog(t, "redis-server", redisLog, fitLines)
		waitFor(t, "redis-server to listen", func() bool {
			c, err := net.Dial("unix", sock)
			if err == nil {
				c.Close()
			}
			return err == nil
		})
		_, want = fillUp(t, "unix", sock)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("reply %d:\n  ours:         %s\n  redis-server: %s", i, got[i], want[i])
		}
	}

	// Under maxclients but out of descriptors: the waiting client is told,
	// the others are served.
	for _, c := range clients[len(clients)-10:] {
		c.conn.Close()
	}
	clients = clients[:len(clients)-10]
	waitFor(t, "the server to see 10 clients leave", func() bool {
		return strings.Contains(clients[0].do("INFO", "clients"), fmt.Sprintf(`connected_clients:%d\r\n`, len(clients)))
	})
	fmt.Fprintln(ours.stdin, "exhaust")
	ours.expect(t, "EXHAUSTED ")
	if got := refused(t, "tcp", addr); got != "(error) ERR max number of clients reached" {
		t.Errorf("client past the descriptor limit got %s", got)
	}
	for _, c := range clients {
		c.must(`"PONG"`, "PING")
	}
	fmt.Fprintln(ours.stdin, "release")
	ours.expect(t, "RELEASED")
	late := dialLimited(t, "tcp", addr)
	late.must(`"PONG"`, "PING")
	if t.Failed() {
		t.Logf("server log:\n%s", ourLog.String())
	}
}

// TestFDLimitTooLow: a limit that leaves no descriptor for a client stops
// the server at start with Redis's message.
func TestFDLimitTooLow(t *testing.T) {
	const msg = "Your current 'ulimit -n' of 32 is not enough for the server to start. Please increase your open file limit to at least 10032. Exiting."
	var log syncBuffer
	ours := startLimited(t, 32, 32, &log)
	if got := ours.expect(t, "ERROR"); !strings.HasSuffix(got, msg) {
		t.Errorf("start with a limit of 32: %s\nwant the error to end with %q", got, msg)
	}
	waitLog(t, "ours", log.String, []string{msg})
}
