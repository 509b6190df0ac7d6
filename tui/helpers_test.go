package tui

import (
	"bytes"
	"crypto/ed25519"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"
	"golang.org/x/crypto/ssh"

	"github.com/dpulab/dpulab/internal/testpeer"
	"github.com/dpulab/dpulab/labs/tco"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/keymap"
	"github.com/dpulab/dpulab/tui/keymap/keymaptest"
	"github.com/dpulab/dpulab/tui/session"
	"github.com/dpulab/dpulab/tui/session/sessiontest"
)

func TestMain(m *testing.M) {
	// Goldens are plain text: pin the profile so no colour leaks in.
	lipgloss.SetColorProfile(termenv.Ascii)
	restore := testpeer.IsolateUserDirs()
	code := m.Run()
	testpeer.RemoveBuilds()
	restore()
	os.Exit(code)
}

// testApp builds the app the way runTUI does, with animations frozen so
// goldens are stable.
func testApp(cfg Config) *App {
	cfg.NoColor = true
	cfg.NoAnimation = true
	if cfg.TCO == nil {
		cfg.TCO = tco.Compute
	}
	return New(cfg)
}

func start(t *testing.T, m tea.Model, w, h int) *teatest.TestModel {
	t.Helper()
	return teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h))
}

// waitFor waits until the screen output contains every one of want.
func waitFor(t *testing.T, tm *teatest.TestModel, want ...string) {
	t.Helper()
	seen := map[string]bool{}
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		plain := ansi.Strip(string(b))
		for _, w := range want {
			if bytes.Contains([]byte(plain), []byte(w)) {
				seen[w] = true
			}
		}
		return len(seen) == len(want)
	}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

// transcript is everything a program has drawn since the test began, for
// tests whose waits must not lose what an earlier wait read: waitFor
// consumes the output it reads, so a text drawn in the same frame as an
// earlier wait's is gone for the next one (a booth loop, confirmed and
// starting over within one frame on a loaded machine).
type transcript struct {
	tm  *teatest.TestModel
	all []byte
}

// waitFor waits until every want has been drawn at some point since the
// test began.
func (tr *transcript) waitFor(t *testing.T, want ...string) {
	t.Helper()
	tr.waitUntil(t, want, func(plain string) bool {
		for _, w := range want {
			if !strings.Contains(plain, w) {
				return false
			}
		}
		return true
	})
}

// waitForSeq waits until the texts have been drawn in this order, each
// after the previous one's first appearance (texts of frames drawn apart
// in time; within one frame the order is the screen's, top to bottom).
func (tr *transcript) waitForSeq(t *testing.T, texts ...string) {
	t.Helper()
	tr.waitUntil(t, texts, func(plain string) bool {
		at := 0
		for _, w := range texts {
			i := strings.Index(plain[at:], w)
			if i < 0 {
				return false
			}
			at += i + len(w)
		}
		return true
	})
}

func (tr *transcript) waitUntil(t *testing.T, want []string, ok func(plain string) bool) {
	t.Helper()
	var plain string
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := io.ReadAll(tr.tm.Output())
		tr.all = append(tr.all, b...)
		plain = ansi.Strip(string(tr.all))
		if ok(plain) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("never drawn: %q; the last 3000 bytes drawn:\n%s", want, plain[max(0, len(plain)-3000):])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// finish quits the program and returns the final app.
func finish(t *testing.T, tm *teatest.TestModel) *App {
	t.Helper()
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	return tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*App)
}

// requireGolden compares the app's screen, without ANSI, with
// testdata/TestName.golden (refresh with go test -update).
func requireGolden(t *testing.T, view string) {
	t.Helper()
	golden.RequireEqual(t, []byte(ansi.Strip(view)))
}

// km is the key map the tests press: the app's own (common.NewCommon).
var km = keymap.DefaultKeyMap()

// press sends the first key of each binding, in order.
func press(tm *teatest.TestModel, bs ...key.Binding) {
	for _, b := range bs {
		tm.Send(keymaptest.Press(b))
	}
}

// answer types a dialog's shortcut: the first letter of a choice
// (prompt.Choice), which the dialog derives from its choices, not from the
// key map.
func answer(tm *teatest.TestModel, letter string) { tm.Type(letter) }

// hostKey is a real ed25519 host key (fixed seed) and its SHA256
// fingerprint, as ssh-keygen -lf would print it.
func hostKey(t *testing.T) (keyType, fingerprint string) {
	t.Helper()
	priv := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	pub, err := ssh.NewPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	return pub.Type(), ssh.FingerprintSHA256(pub)
}

func out(host, text string) steps.Event {
	return steps.Output{Step: "x", Line: runner.Line{Host: host, Text: text}}
}

// quickstartFake is a scripted lab shaped like quickstart.
func quickstartFake() *sessiontest.Fake {
	info := func(id, title, kind string, st results.Status) steps.StepInfo {
		return steps.StepInfo{ID: id, Title: title, Kind: kind, Status: st}
	}
	return &sessiontest.Fake{
		LabInfo: session.LabInfo{ID: "quickstart", Title: "Quickstart: TCP loopback against a Unix socket", Duration: 3 * time.Minute,
			Roles: []string{"local"}, Local: true, ResumeAt: -1},
		Vars: []session.Variable{
			{Name: "instances", Type: "int", Default: "4", Min: "1", Max: "32", Description: "Server instances to start."},
			{Name: "duration", Type: "duration", Default: "5s", Min: "1s", Max: "10m", Description: "Length of each timed run."},
		},
		Script: []sessiontest.Step{
			{Info: info("welcome", "What this lab does", "read", results.Done), Doc: "# Quickstart\n\nThis lab runs on this machine.", Final: results.Done},
			{Info: info("deploy", "Start the servers", "run", results.Pending),
				Doc: "# Start the servers\n\nFour instances of the bundled server start, each on its own port.",
				Plan: []steps.PlannedCommand{
					{Host: "local", Cmd: "dpulab server --port 7400 --instances 4 --bind 127.0.0.1"},
					{Host: "server1", Cmd: "sysctl -w net.core.somaxconn=4096", Sudo: true},
				},
				Emit:  []steps.Event{out("local", "server:7400 listening"), out("server1", "net.core.somaxconn = 4096")},
				Final: results.Done},
			{Info: info("bench", "Benchmark over TCP loopback", "bench", results.Pending), Doc: "# Benchmark", Final: results.Done},
			{Info: info("cleanup", "Stop the servers", "cleanup", results.Pending), Doc: "# Cleanup", Final: results.Done,
				Plan: []steps.PlannedCommand{{Host: "local", Cmd: "rm -f /tmp/dpulab-quickstart/redis.conf"}}},
		},
	}
}

func loadRecorded(t *testing.T) *results.Results {
	t.Helper()
	r, err := results.LoadResults("testdata/recorded")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// safeBuffer is a bytes.Buffer safe for the program's goroutine and the
// test's.
type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// streamTap keeps every byte the program wrote while the test waits on it.
type streamTap struct {
	tm  *teatest.TestModel
	all bytes.Buffer
}

func (s *streamTap) waitFor(t *testing.T, want ...string) {
	t.Helper()
	r := io.TeeReader(s.tm.Output(), &s.all)
	teatest.WaitFor(t, r, func(b []byte) bool {
		plain := ansi.Strip(string(b))
		for _, w := range want {
			if !strings.Contains(plain, w) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}
