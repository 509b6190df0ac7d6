//go:build unix

package main

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestLabsTableFits80Columns: `dpulab labs` lines up id, duration, roles
// and hosts in rows that fit an 80-column terminal, each lab's title on
// the next line, indented: a long title used to push the columns past the
// screen's edge, where every row wrapped into the next.
func TestLabsTableFits80Columns(t *testing.T) {
	out, _, err := runCmd(t, "labs")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < 3 || strings.Join(strings.Fields(lines[0]), " ") != "ID DURATION ROLES HOSTS" {
		t.Fatalf("header %q:\n%s", lines[0], out)
	}
	col := strings.Index(lines[0], "HOSTS")
	titles := map[string]string{
		"quickstart":       "Quickstart: TCP loopback against a Unix socket, on this machine",
		"redis-dpu-uptv2":  "Redis on vSphere 8: standard NIC, BlueField DPU offload (default mode) and full acceleration (UPTv2)",
		"redis-rdma-rc-uc": "Redis over RDMA: TCP against reliable (RC) and unreliable (UC) connections",
	}
	seen := 0
	for i := 1; i+1 < len(lines); i += 2 {
		row, title := lines[i], lines[i+1]
		if w := ansi.StringWidth(row); w > 80 {
			t.Errorf("row %q is %d columns", row, w)
		}
		if !strings.HasSuffix(row, "this machine") || strings.Index(row, "this machine") != col {
			t.Errorf("row %q: hosts not under HOSTS (column %d)", row, col)
		}
		id := strings.Fields(row)[0]
		if want, ok := titles[id]; ok {
			seen++
			if title != "    "+want {
				t.Errorf("%s: the line after its row is %q, want its title indented", id, title)
			}
		}
	}
	if seen != len(titles) {
		t.Errorf("%d of the built-in labs listed:\n%s", seen, out)
	}
}
