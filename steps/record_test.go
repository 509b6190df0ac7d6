//go:build unix

package steps

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/kinds/command"
	"github.com/dpulab/dpulab/steps/results"
)

// What perftest 4.5's clients print (ib_send_lat -s 256, ib_write_bw),
// from the Soft-RoCE guest's run of the RDMA lab, spacing kept.
const perftestOut = `---------------------------------------------------------------------------------------
                    Send Latency Test
 Dual-port       : OFF		Device         : rxe1
 Connection type : RC		Using SRQ      : OFF
 Data ex. method : rdma_cm
---------------------------------------------------------------------------------------
 local address: LID 0000 QPN 0x0011 PSN 0x9a2c5b
 GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:09:00:01
---------------------------------------------------------------------------------------
 #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] 
 256        1000          12.56          1153.62      13.59               27.14        49.28           278.42                 1153.62  
---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF		Device         : rxe1
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 65536      5000             0.43               0.30   		   0.000567
---------------------------------------------------------------------------------------
`

func TestPerftestFigures(t *testing.T) {
	got := perftestFigures(strings.Split(perftestOut, "\n"))
	want := []results.HostFigure{
		{Tool: "perftest ib_send_lat", Label: "typical latency, 256 B", Value: 13.59, Unit: "µs"},
		{Tool: "perftest ib_send_lat", Label: "average latency, 256 B", Value: 27.14, Unit: "µs"},
		{Tool: "perftest ib_send_lat", Label: "99th percentile latency, 256 B", Value: 278.42, Unit: "µs"},
		{Tool: "perftest ib_write_bw", Label: "peak bandwidth, 64 KiB", Value: 0.43, Unit: "Gb/s"},
		{Tool: "perftest ib_write_bw", Label: "average bandwidth, 64 KiB", Value: 0.30, Unit: "Gb/s"},
		{Tool: "perftest ib_write_bw", Label: "message rate, 64 KiB", Value: 0.000567, Unit: "Mpps"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("figures\n%v\nwant\n%v", got, want)
	}
	if got := perftestFigures([]string{"ib_send_lat: command not found", " 256 1000 1 2 3"}); len(got) != 0 {
		t.Errorf("figures from no table: %v", got)
	}
	// A column perftest printed as inf or nan (a peak over an instant) is
	// left out: not a figure, and results.json could not be written with
	// it (seen in the guest: "json: unsupported value: +Inf").
	bw := []string{"                    RDMA_Write BW Test", " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]", " 65536      5000             inf               0.30   		   -nan"}
	if got := perftestFigures(bw); len(got) != 1 || got[0].Label != "average bandwidth, 64 KiB" {
		t.Errorf("figures from a row with inf and nan: %v", got)
	}
}

// TestRecordFormatsHaveReaders: every format a lab may name in record:
// has a reader here, and no reader is unreachable.
func TestRecordFormatsHaveReaders(t *testing.T) {
	for _, f := range command.RecordFormats {
		if recorders[f] == nil {
			t.Errorf("record: %s has no reader", f)
		}
	}
	for f := range recorders {
		if !slices.Contains(command.RecordFormats, f) {
			t.Errorf("reader %s is not in command.RecordFormats", f)
		}
	}
}

const recordLab = `
id: recordlab
title: Record
summary: a run step whose figures are kept
duration: 1m
roles:
  client: the client
steps:
  - id: floor
    title: Floor
    kind: run
    on: client
    record: perftest
    run:
      - cat {{.vars.out}}
variables:
  out:
    type: string
    default: ""
    pattern: '.*'
    description: the file to print
`

// TestRecordThroughTheEngine: a run step with record: perftest keeps what
// its commands printed in results.json (each figure with its step and
// host), once even when the step runs again, and the reports show them
// under their own heading.
func TestRecordThroughTheEngine(t *testing.T) {
	out := filepath.Join(t.TempDir(), "perftest.txt")
	os.WriteFile(out, []byte(perftestOut), 0o644)
	rec := &recorder{}
	e := newEngine(t, loadLab(t, recordLab), Options{Vars: map[string]string{"out": out}}, rec)
	ctx := testCtx(t, 30*time.Second)
	for range 2 {
		if st := e.RunStep(ctx, 0); st != results.Done {
			t.Fatalf("the step: %s\n%s", st, strings.Join(rec.output(), "\n"))
		}
	}
	r := writeAndLoadResults(t, e)
	if len(r.HostFigures) != 6 {
		t.Fatalf("host figures %v, want the 6 of one run of the step", r.HostFigures)
	}
	if f := r.HostFigures[0]; f.Step != "floor" || f.Host != "local" || f.Tool != "perftest ib_send_lat" || f.Value != 13.59 {
		t.Errorf("first figure %+v", f)
	}
	md := results.RenderMarkdown(r)
	if !strings.Contains(md, "## Measured on these hosts by the lab's tools") || !strings.Contains(md, "| floor | local | perftest ib_send_lat | typical latency, 256 B | 13.59 µs |") {
		t.Errorf("report.md:\n%s", md)
	}
	page, err := results.RenderHTML(r)
	if err != nil || !strings.Contains(string(page), "Measured on these hosts by the lab's tools") || !strings.Contains(string(page), "<td>13.59 µs</td>") {
		t.Errorf("report.html: %v\n%s", err, page)
	}
}
