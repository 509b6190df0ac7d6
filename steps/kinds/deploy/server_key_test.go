package deploy_test

import (
	"strings"
	"testing"
	"testing/fstest"

	. "github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/steps/kinds/deploy"
	// The compare of the test lab is read by the load kind.
	_ "github.com/dpulab/dpulab/steps/kinds/load"
)

const serverLab = `id: srv
title: Servers
summary: the server key
duration: 1m
roles:
  local: this machine
steps:
  - id: deploy
    title: Deploy
    kind: deploy
    group: g
    server: %s
    transport: %s
%s  - id: compare
    title: Compare
    kind: compare
    target: g
    variants:
      - label: redis
      - label: ours
        deploy:
          server: bundled
`

func parseServerLab(t *testing.T, server, tr, extra string) (*Lab, Problems) {
	t.Helper()
	src := strings.Replace(strings.Replace(strings.Replace(serverLab, "%s", server, 1), "%s", tr, 1), "%s", extra, 1)
	return Parse(fstest.MapFS{"srv/lab.yaml": {Data: []byte(src)}}, "srv", "lab.yaml")
}

// TestDeployServerKey reads server: in a deploy step and a variant's
// override, writes it back with Encode, and refuses what the file alone
// shows a server cannot do, at the key's line.
func TestDeployServerKey(t *testing.T) {
	l, probs := parseServerLab(t, "redis-server", "tcp", "")
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	if got := l.Steps[0].Deploy.Server; got != "redis-server" {
		t.Errorf("deploy server = %q", got)
	}
	if v := l.Steps[1].Compare.Variants[1]; v.Deploy == nil || v.Deploy.Server != deploy.ServerBundled {
		t.Errorf("variant override = %+v", v.Deploy)
	}
	out, err := Encode(l)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), "server: "); n != 2 {
		t.Errorf("encoded lab has %d server keys, want 2:\n%s", n, out)
	}
	l2, probs := Parse(fstest.MapFS{"srv/lab.yaml": {Data: out}}, "srv", "lab.yaml")
	if len(probs) > 0 || l2.Steps[0].Deploy.Server != "redis-server" || l2.Steps[1].Compare.Variants[1].Deploy.Server != deploy.ServerBundled {
		t.Errorf("round trip: %v\n%s", probs, out)
	}

	for _, tc := range []struct {
		name, server, tr, extra, want string
	}{
		{"unknown", "keydb", "tcp", "", `lab.yaml:12: step deploy server: server "keydb": use bundled, redis-server, valkey-server`},
		{"redis rdma", "redis-server", "rdma", "", "lab.yaml:12: step deploy: server redis-server cannot serve transport rdma: Redis has no RDMA transport"},
		{"redis rdma setting", "redis-server", "tcp", "    settings:\n      rdma-rx-size: \"65536\"\n", "lab.yaml:12: step deploy: setting rdma-rx-size is the bundled server's"},
		{"valkey article setting", "valkey-server", "tcp", "    settings:\n      rdma-poll-us: \"10\"\n", "setting rdma-poll-us exists in the bundled server only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, probs := parseServerLab(t, tc.server, tc.tr, tc.extra)
			if len(probs) != 1 || !strings.Contains(probs[0].String(), tc.want) {
				t.Errorf("problems %v, want one with %q", probs, tc.want)
			}
		})
	}
	// Valkey's own RDMA names are left to the engine, which asks the host.
	if _, probs := parseServerLab(t, "valkey-server", "rdma", "    settings:\n      rdma-rx-size: \"65536\"\n"); len(probs) > 0 {
		t.Errorf("valkey-server over rdma refused in the file: %v", probs)
	}
}
