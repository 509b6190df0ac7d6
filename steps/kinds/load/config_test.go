//go:build unix

package load

import (
	"strings"
	"testing"
	"time"
)

// TestRDMAOptionsFollowTheServersSettings: the load generator's queue pairs
// are what the servers' rdma-* settings say, read by the server's parser.
func TestRDMAOptionsFollowTheServersSettings(t *testing.T) {
	o, err := rdmaOptions([][2]string{{"rdma-transport-mode", "unreliable-connected"}, {"rdma-rx-size", "2mb"}, {"rdma-poll-us", "50"}, {"maxmemory", "1gb"}})
	if err != nil {
		t.Fatal(err)
	}
	if !o.UC || o.RxSize != 2<<20 || o.Poll != 50*time.Microsecond {
		t.Errorf("options %+v", o)
	}
	if o, _ := rdmaOptions(nil); o.UC {
		t.Error("no setting gave UC; reliable-connected is the default")
	}
	if _, err := rdmaOptions([][2]string{{"rdma-transport-mode", "fast"}}); err == nil || !strings.Contains(err.Error(), "rdma-transport-mode") {
		t.Errorf("a bad mode: %v", err)
	}
}
