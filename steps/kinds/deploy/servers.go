package deploy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dpulab/dpulab/server/transport"
)

// The servers a deploy step can start: the bundled one (the default), or
// the distribution's Redis or Valkey, found on the host or installed by
// the lab after a confirmation.
const (
	ServerBundled = "bundled"
	ServerRedis   = "redis-server"
	ServerValkey  = "valkey-server"
)

// ServerNames lists the values of a deploy step's server key.
var ServerNames = []string{ServerBundled, ServerRedis, ServerValkey}

// ServerAccepts reports why server cannot run a deployment over transport
// (empty means tcp) with the named redis.conf settings, or nil. Redis has
// no RDMA at all; Valkey's depends on how it was built, which only the
// host can tell (the deploy's run asks it), so only the bundled server's
// article-only rdma-* names are refused for Valkey here. Values that are
// templates ({{...}}) are not judged.
func ServerAccepts(server, tr string, settings []string) error {
	if server == "" || server == ServerBundled || strings.Contains(server, "{{") {
		return nil
	}
	if server == ServerRedis && tr == string(transport.RDMA) {
		return fmt.Errorf("server redis-server cannot serve transport rdma: Redis has no RDMA transport (use the bundled server, or valkey-server built with RDMA)")
	}
	for _, name := range settings {
		n := strings.ToLower(name)
		if !strings.HasPrefix(n, "rdma-") {
			continue
		}
		if server == ServerRedis {
			return fmt.Errorf("setting %s is the bundled server's (RDMA); redis-server does not accept it: remove it or use server: bundled", name)
		}
		if !slices.Contains(valkeyRDMASettings, n) {
			return fmt.Errorf("setting %s exists in the bundled server only (from the article, in no released Valkey); valkey-server does not accept it: remove it or use server: bundled", name)
		}
	}
	return nil
}

// valkeyRDMASettings are the rdma-* names Valkey 8.1 built with RDMA reads.
var valkeyRDMASettings = []string{"rdma-port", "rdma-bind", "rdma-rx-size", "rdma-completion-vector"}
