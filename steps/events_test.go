//go:build unix

package steps

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/kinds/load"
	"github.com/dpulab/dpulab/steps/results"
)

func TestEventJSON(t *testing.T) {
	b, err := EventJSON(StepFinished{Step: "s", Status: results.Failed, Err: "boom"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), `{"type":"step_finished","step":"s"`) || !strings.Contains(string(b), `"status":"failed"`) {
		t.Errorf("EventJSON = %s", b)
	}
	o := Output{Step: "s", Line: runner.Line{Host: "h", Stream: runner.Stderr, Text: "t"}}
	b, _ = EventJSON(o)
	if !strings.Contains(string(b), `"line":{"host":"h","stream":"stderr","text":"t"`) {
		t.Errorf("output JSON = %s", b)
	}
	var back Output
	if err := json.Unmarshal(b, &back); err != nil {
		t.Errorf("decode output: %v", err)
	} else if back.Line != o.Line {
		t.Errorf("output round trip = %+v", back.Line)
	}
	p := Prompt{Message: "m", Reply: func(Answer) {}}
	if b, err := EventJSON(p); err != nil || strings.Contains(string(b), "Reply") {
		t.Errorf("prompt JSON = %s, %v", b, err)
	}
}

func TestReachableSameMachine(t *testing.T) {
	// Two inventory hosts that are both this machine (sshd on loopback):
	// a wildcard-bound server at the loopback address is reachable.
	client := hostRef{Name: "c", Address: "127.0.0.1"}
	in := Instance{Host: "s", Address: "127.0.0.1:7000", Bind: "0.0.0.0", HostAddress: "127.0.0.1"}
	if err := load.Reachable(client, []Instance{in}, "tcp"); err != nil {
		t.Errorf("reachable = %v, want nil", err)
	}
	in.Bind, in.HostAddress = "127.0.0.1", "10.0.0.7"
	if err := load.Reachable(client, []Instance{in}, "tcp"); err == nil || !strings.Contains(err.Error(), "loopback only") {
		t.Errorf("reachable = %v, want the bound-to-loopback error", err)
	}
}

func TestReachable(t *testing.T) {
	client := hostRef{Name: "c"}
	tests := []struct {
		name      string
		inst      Instance
		transport string
		want      string
	}{
		{"same host loopback", Instance{Host: "c", Address: "127.0.0.1:7000"}, "tcp", ""},
		{"same host socket", Instance{Host: "c", Address: "127.0.0.1:7000", Socket: "/s"}, "unix", ""},
		{"other host lab address", Instance{Host: "s", Address: "10.0.0.7:7000"}, "tcp", ""},
		{"other host loopback", Instance{Host: "s", Address: "127.0.0.1:7000"}, "tcp", "set the deploy's bind"},
		{"other host socket", Instance{Host: "s", Address: "10.0.0.7:7000", Socket: "/s"}, "unix", "Unix socket"},
		{"bound to loopback on a lab host", Instance{Host: "s", Address: "127.0.0.1:7000", Bind: "127.0.0.1 ::1", HostAddress: "10.0.0.7"}, "tcp", "bound to 127.0.0.1 (loopback only)"},
		{"wildcard bind, inventory says loopback", Instance{Host: "s", Address: "127.0.0.1:7000", Bind: "0.0.0.0", HostAddress: "127.0.0.1"}, "tcp", "give s its lab address in the inventory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := load.Reachable(client, []Instance{tt.inst}, tt.transport)
			if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("reachable = %v, want %q", err, tt.want)
			}
		})
	}
}
