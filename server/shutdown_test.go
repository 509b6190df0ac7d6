package server

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dpulab/dpulab/server/resp"
)

// Told to stop while a command runs (DEBUG SLEEP 30 holds the server
// lock), Serve does its whole cleanup and returns within a second instead
// of waiting for the command, on both connection paths.
func TestShutdownDuringLongCommand(t *testing.T) {
	for _, path := range []string{"loop", "goroutine"} {
		t.Run(path, func(t *testing.T) {
			if path == "goroutine" {
				t.Setenv(loopEnv, "goroutine")
			}
			cfg := DefaultConfig().WithLog(&syncBuffer{})
			cfg.Port, cfg.Bind = 6379, []string{"127.0.0.1"}
			cfg.Protected.Debug = "yes"
			cfg.PidFile = filepath.Join(t.TempDir(), "dpulab.pid")
			srv, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- srv.Serve(ctx, ln) }()
			tc := dialTest(t, ln.Addr().String())
			tc.must(`"PONG"`, "PING")
			if _, err := tc.conn.Write(resp.AppendCommand(nil, "DEBUG", "SLEEP", "30")); err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond) // the sleep has begun
			start := time.Now()
			cancel() // what SIGTERM does in dpulab server
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("Serve still waiting for the command after 5s")
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("Serve returned after %v, want within a second", d)
			}
			if _, err := os.Stat(cfg.PidFile); !os.IsNotExist(err) {
				t.Errorf("pid file left behind: %v", err)
			}
		})
	}
}

// DEBUG SLEEP answers as Redis's does for what is not a positive number.
func TestDebugSleep(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Protected.Debug = "yes"
	tc := dialTest(t, StartTest(t, cfg))
	for _, a := range []string{"0", "x", "-1", "nan", "1e-400", "0.01"} {
		tc.must(`"OK"`, "DEBUG", "SLEEP", a)
	}
}
