package testpeer

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// throttle is a TCP proxy in front of a server that forwards one command
// per gap across all its connections: a server of known capacity. Slots
// are reserved on an absolute schedule and up to ThrottleBank of missed
// slots are made up, so that the proxy's goroutines being scheduled late
// on a loaded machine lower its capacity less; over any span W it forwards
// at most (W + ThrottleBank) / gap commands. A command waits for its slot, so above the
// capacity the queue, and the latency, grow without bound.
type throttle struct {
	gap  time.Duration
	mu   sync.Mutex
	next time.Time
}

// ThrottleBank is how much of missed slots the proxy makes up.
const ThrottleBank = 60 * time.Millisecond

func (th *throttle) slot() time.Time {
	th.mu.Lock()
	defer th.mu.Unlock()
	s := time.Now().Add(-ThrottleBank)
	if th.next.After(s) {
		s = th.next
	}
	th.next = s.Add(th.gap)
	return s
}

// Throttle starts a TCP proxy to backend (a Redis-compatible server) that
// forwards at most perSec commands per second, and returns its address;
// it stops with the test.
func Throttle(t testing.TB, backend string, perSec int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	th := &throttle{gap: time.Second / time.Duration(perSec)}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b, err := net.Dial("tcp", backend)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, b)
			mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); _, _ = io.Copy(c, b); c.Close() }()
			go func() { defer wg.Done(); th.forward(c, b) }()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

func (th *throttle) forward(c, b net.Conn) {
	defer b.Close()
	r := bufio.NewReader(c)
	for {
		cmd, err := readRESPCommand(r)
		if err != nil {
			return
		}
		time.Sleep(time.Until(th.slot()))
		if _, err := b.Write(cmd); err != nil {
			return
		}
	}
}

// readRESPCommand reads one command (an array of bulk strings) whole.
func readRESPCommand(r *bufio.Reader) ([]byte, error) {
	var buf bytes.Buffer
	line := func(prefix byte) (int, error) {
		l, err := r.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		buf.Write(l)
		if len(l) < 3 || l[0] != prefix {
			return 0, fmt.Errorf("unexpected %q", l)
		}
		return strconv.Atoi(strings.TrimSpace(string(l[1:])))
	}
	n, err := line('*')
	if err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		size, err := line('$')
		if err != nil {
			return nil, err
		}
		if _, err := io.CopyN(&buf, r, int64(size)+2); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}
