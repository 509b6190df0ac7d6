package server

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestInfoRDMASection: INFO rdma answers the section; INFO's default and
// everything stay as redis-server's, without it.
func TestInfoRDMASection(t *testing.T) {
	addr, stop, err := StartLocal(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer c.Close()
	ctx := context.Background()
	got, err := c.Info(ctx, "rdma").Result()
	if err != nil || !strings.Contains(got, "# Rdma\r\nrdma_enabled:0") {
		t.Errorf("INFO rdma = %q, %v", got, err)
	}
	for _, sec := range []string{"", "everything"} {
		args := []string{}
		if sec != "" {
			args = append(args, sec)
		}
		got, err := c.Info(ctx, args...).Result()
		if err != nil || strings.Contains(got, "rdma_enabled") {
			t.Errorf("INFO %s has the rdma section (%v)", sec, err)
		}
	}
}
