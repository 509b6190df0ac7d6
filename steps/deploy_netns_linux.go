package steps

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// dialInNetns opens a TCP connection from inside network namespace ns of
// this machine (ip netns's /run/netns/NS): a thread of this process joins
// the namespace and makes the socket, which stays in it. It spares deploy's
// wait a `ip netns exec ... dpulab bench` per PING, which on a saturated
// host took longer to start than a try may last. It needs root (setns),
// as making the namespace did.
func dialInNetns(ctx context.Context, ns, addr string) (net.Conn, error) {
	if os.Geteuid() != 0 {
		return nil, errNoNetnsDial
	}
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		// The thread is never unlocked: it has left the process's
		// namespace, so it ends with this goroutine.
		runtime.LockOSThread()
		f, err := os.Open(filepath.Join("/run/netns", ns))
		if err != nil {
			ch <- result{err: fmt.Errorf("namespace %s: %w", ns, err)}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{err: fmt.Errorf("enter namespace %s: %w", ns, err)}
			return
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}
