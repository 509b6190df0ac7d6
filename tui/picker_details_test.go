package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/session"
	"github.com/dpulab/dpulab/tui/session/sessiontest"
)

// noRDMA is the provider's whole answer on a machine without an RDMA
// device, as rdma.Provider says it.
const noRDMA = "no RDMA device usable on this machine (rdma-core (pure Go): no RDMA device: /dev/infiniband/rdma_cm is absent; " +
	"load the adapter's driver (e.g. modprobe mlx5_ib) and rdma_ucm, or add Soft-RoCE, software RDMA over an Ethernet interface: " +
	"modprobe rdma_rxe && rdma link add rxe0 type rxe netdev IF)"

func rdmaFake() *sessiontest.Fake {
	return &sessiontest.Fake{LabInfo: session.LabInfo{
		ID: "redis-rdma-rc-uc", Title: "Redis over RDMA: TCP against reliable (RC) and unreliable (UC) connections", Duration: time.Hour,
		Summary: "Measure the fabric's own latency floor, then the same Redis load over TCP, RC and UC.",
		Roles:   []string{"client", "server"}, Local: true, Steps: 1, ResumeAt: -1, NoHardware: noRDMA,
	}, Script: []sessiontest.Step{{Info: steps.StepInfo{ID: "overview", Title: "What this lab does", Kind: "read"}}}}
}

// TestPickerNoRDMADevice: on a machine without an RDMA device the RDMA
// lab's entry says so in one short line, with what to do, as a terse list
// does (k9s, lazygit); the provider's whole answer is behind the details
// key (i), which esc closes, and enter opens the lab from the details too.
func TestPickerNoRDMADevice(t *testing.T) {
	for _, size := range [][2]int{{100, 30}, {80, 24}} {
		cat := &sessiontest.Catalog{Fakes: []*sessiontest.Fake{quickstartFake(), rdmaFake()}}
		app := testApp(Config{Catalog: cat})
		tm := start(t, app, size[0], size[1])
		waitFor(t, tm, "pick a lab", "no RDMA device here")
		press(tm, km.Down)
		waitFor(t, tm, "│ ⚠ no RDMA device here")
		var item []string
		for _, l := range strings.Split(ansi.Strip(app.View()), "\n") {
			if strings.HasPrefix(l, "│") {
				item = append(item, strings.TrimSpace(strings.TrimPrefix(l, "│")))
			}
		}
		if len(item) < 2 || item[len(item)-2] != "⚠ no RDMA device here: add Soft-RoCE, or give RDMA hosts" {
			t.Errorf("%dx%d: the RDMA lab's hint is not one line that says what is missing and what to do: %q", size[0], size[1], item)
		}
		if v := ansi.Strip(app.View()); strings.Contains(v, "/dev/infiniband") || !strings.Contains(v, "i details") {
			t.Errorf("%dx%d: the list shows the provider's whole answer, or no details key:\n%s", size[0], size[1], v)
		}
		if size[0] == 100 {
			requireGolden(t, app.View())
		}
		press(tm, km.Details)
		waitFor(t, tm, "lab details")
		// The details, wrapped, run together: the provider's whole answer
		// and what else to do.
		v := ansi.Strip(app.View())
		words := strings.Join(strings.Fields(v), " ")
		for _, want := range []string{"⚠ " + noRDMA, "--inventory hosts.yaml", "id: redis-rdma-rc-uc", "Measure the fabric's"} {
			if !strings.Contains(words, want) {
				t.Errorf("%dx%d: the details lack %q:\n%s", size[0], size[1], want, v)
			}
		}
		for _, l := range strings.Split(v, "\n") {
			if w := ansi.StringWidth(l); w > size[0] {
				t.Errorf("%dx%d: a details line is %d columns: %q", size[0], size[1], w, l)
			}
		}
		press(tm, km.Back)
		waitFor(t, tm, "pick a lab")
		if app.Picker().ShowingDetails() {
			t.Errorf("esc did not close the details")
		}
		press(tm, km.Details)
		waitFor(t, tm, "lab details")
		press(tm, km.Enter)
		waitFor(t, tm, "Step 1/")
		got := finish(t, tm)
		if got.State() != StateLab || got.Lab().Session().Info().ID != "redis-rdma-rc-uc" {
			t.Errorf("%dx%d: enter in the details did not open the lab (state %v)", size[0], size[1], got.State())
		}
	}
}
