//go:build perf

package tui

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/dpulab/dpulab/labs/tco"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/keymap/keymaptest"
	"github.com/dpulab/dpulab/tui/session"
)

// clkTck is USER_HZ, the unit of utime and stime in /proc/self/stat; it is
// 100 on every Linux architecture Go supports.
const clkTck = 100

// selfCPU returns this process's user+system CPU time from /proc/self/stat.
func selfCPU(t *testing.T) time.Duration {
	t.Helper()
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Skipf("no /proc/self/stat: %v", err)
	}
	// Fields after the command name (which may hold spaces) in parentheses.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / clkTck
}

// window is CPU and wall time spent while bench and compare steps ran.
type window struct {
	mu        sync.Mutex
	cpu, wall time.Duration
}

// measured wraps the real engine's sessions: it records CPU time during
// bench/compare steps and hides the variables form (values come from
// Options.Vars), so the TUI runs unattended.
type measured struct {
	session.Catalog
	t        *testing.T
	vars     map[string]string
	w        *window
	opened   chan session.Session
	done     chan struct{}
	finished sync.Once
	fail     chan string
	last     atomic.Int32 // 1-based index of the last step started
	// onBench, when set, runs as a bench or compare step starts: the TUI
	// run opens the dashboard there, as a person watching would (d).
	onBench func()
}

func (c *measured) Open(id string, o session.Options) (session.Session, error) {
	o.Vars, o.Restart = c.vars, true
	emit := o.Emit
	o.Emit = func(ev steps.Event) {
		if p, ok := ev.(steps.Prompt); ok {
			if p.Type == steps.PromptConfirm {
				// What the person would press (quickstart's deploy asks).
				p.Reply(steps.Answer{Choice: "yes"})
				return
			}
			// Nobody can answer host keys or passwords here: say so
			// instead of hanging on the dialog.
			select {
			case c.fail <- fmt.Sprintf("unexpected %s prompt: %s", promptName(p.Type), p.Message):
			default:
			}
			p.Reply(steps.Answer{Choice: "refuse"})
			return
		}
		emit(ev)
	}
	s, err := c.Catalog.Open(id, o)
	if err != nil {
		return nil, err
	}
	ms := &measuredSession{Session: s, c: c}
	// Whatever happens, stop the servers the lab started (bounded: a
	// cleanup that hangs must not hang the test).
	c.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = s.Cleanup(ctx)
	})
	c.opened <- ms
	return ms, nil
}

type measuredSession struct {
	session.Session
	c *measured
}

func (s *measuredSession) Variables() []session.Variable { return nil }

func (s *measuredSession) RunStep(ctx context.Context, i int) results.Status {
	s.c.last.Store(int32(i + 1))
	if steps.DescribeKind(s.Steps()[i].Kind).View != steps.ViewDashboard {
		return s.check(i, s.Session.RunStep(ctx, i))
	}
	if s.c.onBench != nil {
		s.c.onBench()
	}
	c0, w0 := selfCPU(s.c.t), time.Now()
	st := s.Session.RunStep(ctx, i)
	s.c.w.mu.Lock()
	s.c.w.cpu += selfCPU(s.c.t) - c0
	s.c.w.wall += time.Since(w0)
	s.c.w.mu.Unlock()
	return s.check(i, st)
}

// check ends the wait at the first failure instead of timing out.
func (s *measuredSession) check(i int, st results.Status) results.Status {
	if st == results.Failed {
		select {
		case s.c.fail <- fmt.Sprintf("step %d (%s) failed", i+1, s.Steps()[i].ID):
		default:
		}
	}
	return st
}

func (s *measuredSession) Finish(ctx context.Context) (string, error) {
	d, err := s.Session.Finish(ctx)
	s.c.finished.Do(func() { close(s.c.done) })
	return d, err
}

func promptName(k steps.PromptKind) string {
	switch k {
	case steps.PromptHostKey:
		return "host-key"
	case steps.PromptSecret:
		return "password"
	}
	return "confirmation"
}

// stepTimeout bounds each step of the headless yardstick: a step that
// hangs (a server that never answers, a prompt nobody sees) fails the test
// with its name instead of running into go test's global timeout.
const stepTimeout = 2 * time.Minute

func pct(w *window) float64 { return 100 * float64(w.cpu) / float64(w.wall) }

// TestPerfTUICPU measures this process's CPU while quickstart's bench and
// compare run, once with the TUI rendering every event (at 10 fps, to a
// discarded terminal) and once headless (the engine alone, events dropped),
// the yardstick. The bench itself runs in child processes and is not
// counted. Printed, not asserted: run with
// go test -tags perf -run Perf -v ./tui/
func TestPerfTUICPU(t *testing.T) {
	bin := buildDpulab(t)
	port := freePorts(t, 8)
	vars := map[string]string{"port": fmt.Sprint(port), "warmup": "0s", "duration": "5s", "runs": "1"}
	newCat := func(w *window) *measured {
		return &measured{
			Catalog: &session.EngineCatalog{StateDir: t.TempDir(), Binary: bin},
			t:       t, vars: vars, w: w, opened: make(chan session.Session, 1), done: make(chan struct{}), fail: make(chan string, 16),
		}
	}
	t.Chdir(t.TempDir()) // results/ goes here

	// Yardstick: the engine alone.
	head := &window{}
	hc := newCat(head)
	s, err := hc.Open("quickstart", session.Options{Emit: func(steps.Event) {}})
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range s.Steps() {
		ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
		s.RunStep(ctx, i)
		timedOut := ctx.Err() != nil
		cancel()
		if timedOut {
			t.Fatalf("headless: step %d (%s) did not end within %v", i+1, st.ID, stepTimeout)
		}
		select {
		case msg := <-hc.fail:
			t.Fatal("headless: " + msg)
		default:
		}
	}
	fctx, fcancel := context.WithTimeout(context.Background(), stepTimeout)
	_, _ = s.Finish(fctx)
	fcancel()

	// The TUI, driven like a person pressing enter then a.
	tuiW := &window{}
	tc := newCat(tuiW)
	app := testApp(Config{Catalog: tc, TCO: tco.Compute})
	app.cfg.NoAnimation = false // spinners animate as in real use
	p := tea.NewProgram(app, tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithFPS(10))
	// Once: the dashboard stays open from the bench into the compare, and
	// d again would close it.
	var openDash sync.Once
	tc.onBench = func() { openDash.Do(func() { go p.Send(keymaptest.Press(km.Dashboard)) }) }
	go func() { _, _ = p.Run() }()
	p.Send(tea.WindowSizeMsg{Width: 100, Height: 30})
	p.Send(keymaptest.Press(km.Enter))
	select {
	case <-tc.opened:
	case <-time.After(10 * time.Second):
		t.Fatal("the lab did not open")
	}
	p.Send(keymaptest.Press(km.RunAll))
	select {
	case <-tc.done:
	case msg := <-tc.fail:
		t.Fatal(msg)
	case <-time.After(3 * time.Minute):
		t.Fatalf("the lab did not finish within 3 minutes (last step started: %d)", tc.last.Load())
	}
	p.Quit()
	waited := make(chan struct{})
	go func() { p.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(30 * time.Second):
		t.Fatal("the TUI did not stop within 30s of quitting")
	}

	t.Logf("bench+compare wall time: TUI %v, headless %v", tuiW.wall.Round(time.Millisecond), head.wall.Round(time.Millisecond))
	t.Logf("process CPU during bench+compare: TUI %.2f%% of one core (%v), headless engine %.2f%% (%v)",
		pct(tuiW), tuiW.cpu, pct(head), head.cpu)
	t.Logf("TUI cost over the yardstick: %+.2f%% of one core (budget: under 5%% for the whole TUI process)", pct(tuiW)-pct(head))
}
