package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"
)

// StartLocal starts an instance with cfg on a free port on 127.0.0.1 (cfg's
// Port, Bind and UnixSocket are ignored) and returns its address and a stop
// function that shuts it down and waits for it. Its log is discarded unless
// cfg.WithLog set one. It is for tests, here and in other packages.
func StartLocal(cfg Config) (addr string, stop func(), err error) {
	cfg.Port = 6379 // placeholder for Validate; the listener is ours
	cfg.UnixSocket = ""
	cfg.Bind = []string{"127.0.0.1"}
	if cfg.logWriter == nil {
		cfg.logWriter = io.Discard
	}
	srv, err := New(cfg)
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("listen on a free loopback port: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	stop = func() {
		cancel()
		select {
		case err := <-done:
			_ = err
		case <-time.After(10 * time.Second):
		}
	}
	return ln.Addr().String(), stop, nil
}
