//go:build unix

package steps

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/server/transport"
	"github.com/dpulab/dpulab/steps/results"
)

// TestUnbuiltTransportIsUnavailable: a compare variant over a transport
// this binary lacks (rdma in a -tags nordma build) is planned with the exact
// command it would run and a note saying why it will not, and in the run
// it is listed as unavailable with that reason while the other variants
// are measured: nothing fails mid-run (issue 12's availability).
func TestUnbuiltTransportIsUnavailable(t *testing.T) {
	if transport.Available(transport.RDMA) == nil {
		t.Skip("this build has the rdma transport")
	}
	if testing.Short() {
		t.Skip("builds dpulab and runs a short bench")
	}
	port := freePorts(t, 1)
	lab := loadLab(t, fmt.Sprintf(`
id: unbuilt-test
title: TCP against RDMA
summary: One variant this build cannot run.
duration: 1m
roles:
  local: This machine.
steps:
  - id: deploy
    title: Start the server
    kind: deploy
    group: local
    instances: 1
    port: %d
    transport: rdma
  - id: compare
    title: TCP against RDMA
    kind: compare
    target: local
    key_maximum: 100
    warmup: 0s
    duration: 1s
    runs: 1
    variants:
      - label: TCP
        transport: tcp
      - label: RDMA RC
        transport: rdma
  - id: cleanup
    title: Clean up
    kind: cleanup
    run: "true"
`, port))
	rec := &recorder{}
	resDir := filepath.Join(t.TempDir(), "results")
	e := newEngine(t, lab, Options{Binary: dpulabBinary(t), Yes: true, ResultsDir: resDir}, rec)
	plan, err := e.Plan(1)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	var cmds []string
	for _, c := range plan {
		cmds = append(cmds, c.Cmd)
	}
	all := strings.Join(cmds, "\n")
	if !strings.Contains(all, "# not run: transport rdma: RDMA is not in this build") || !strings.Contains(all, fmt.Sprintf("--target rdma://127.0.0.1:%d", port)) {
		t.Errorf("the plan does not show the rdma bench and why it will not run:\n%s", all)
	}
	if err := e.Run(testCtx(t, 2*time.Minute)); err != nil {
		t.Fatalf("run: %v\n%s", err, strings.Join(rec.output(), "\n"))
	}
	r, err := results.LoadResults(resDir)
	if err != nil {
		t.Fatal(err)
	}
	c := r.Benches[0]
	if len(c.Variants) != 1 || c.Variants[0].Label != "TCP" || len(c.Variants[0].Points) != 1 {
		t.Errorf("measured variants: %+v", c.Variants)
	}
	if len(c.Unavailable) != 1 || c.Unavailable[0].Label != "RDMA RC" || !strings.Contains(c.Unavailable[0].Reason, "RDMA is not in this build") {
		t.Errorf("unavailable: %+v", c.Unavailable)
	}
	if md := results.RenderMarkdown(r); !strings.Contains(md, "- **RDMA RC**: not run here: transport rdma: RDMA is not in this build") {
		t.Errorf("report.md does not list the variant that could not run:\n%s", md)
	}
}
