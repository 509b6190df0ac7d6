package tui

import (
	"testing"

	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/session/sessiontest"
)

// TestSoftwareRDMAOnStatusLineAndDashboard: once the engine finds the
// run's RDMA devices are software ones, the lab page's status line says
// SOFTWARE RDMA (Soft-RoCE) with the devices, first, and the live
// dashboard's header carries the label over every figure (issue 28).
func TestSoftwareRDMAOnStatusLineAndDashboard(t *testing.T) {
	f := quickstartFake()
	devs := "rxe0 on server, rxe1 on client"
	f.Script[1].Emit = append([]steps.Event{steps.SoftwareRDMAFound{Step: "deploy", Devices: devs}}, f.Script[1].Emit...)
	// The dashboard's label comes with the engine's samples (their Figures).
	f.Script[1].Emit = append(f.Script[1].Emit, steps.Sample{Step: "deploy", Run: 1, Point: results.Point{OpsPerSec: 1000},
		Figures: results.Figures{SoftwareRDMA: devs}})
	app := testApp(Config{Catalog: &sessiontest.Catalog{Fakes: []*sessiontest.Fake{f}}})
	tm := start(t, app, 160, 30)
	press(tm, app.KeyMap.Enter)
	waitFor(t, tm, "What this lab does")
	press(tm, app.KeyMap.Run)
	waitFor(t, tm, "SOFTWARE RDMA (Soft-RoCE) ("+devs+")")
	press(tm, app.KeyMap.Dashboard)
	waitFor(t, tm, "SOFTWARE RDMA (Soft-RoCE) Live bench")
	press(tm, app.KeyMap.ForceQuit, app.KeyMap.ForceQuit)
	finish(t, tm)
}
