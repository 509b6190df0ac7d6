//go:build unix

package runner

import (
	"context"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/dpulab/dpulab/internal/testpeer"
)

// TestSSHDialContext: a connection opened from the host's side reaches a
// server on the host's loopback; one to a closed port fails without
// being taken for a refusal of forwarding; an sshd that forbids
// forwarding is told apart (ForwardingRefused), so callers fall back to a
// command.
func TestSSHDialContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	closed := testpeer.FreePorts(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	t.Run("allowed", func(t *testing.T) {
		tg := NewSSH(startSSHD(t).config("dialhost"))
		defer tg.Close()
		c, err := tg.DialContext(ctx, "tcp", ln.Addr().String())
		if err != nil {
			t.Fatalf("dial %s through sshd: %v", ln.Addr(), err)
		}
		defer c.Close()
		if _, err := c.Write([]byte("ping\n")); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 5)
		if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping\n" {
			t.Fatalf("echo: %q, %v", buf, err)
		}
		_, err = tg.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(closed)))
		if err == nil || ForwardingRefused(err) {
			t.Fatalf("dial to a closed port: %v (forwarding refused: %v), want a failure that is not a refusal", err, ForwardingRefused(err))
		}
	})
	t.Run("forbidden", func(t *testing.T) {
		tg := NewSSH((&realSSHD{testpeer.StartSSHD(t, testpeer.SSHDConfig("AllowTcpForwarding no"))}).config("noforward"))
		defer tg.Close()
		_, err := tg.DialContext(ctx, "tcp", ln.Addr().String())
		if !ForwardingRefused(err) {
			t.Fatalf("dial through an sshd with AllowTcpForwarding no: %v, want a refusal ForwardingRefused recognises", err)
		}
	})
}
