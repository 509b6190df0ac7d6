package tui

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/dpulab/dpulab/internal/testpeer"
)

// tmuxScreen drives one tmux session on a private server socket, so the
// test never touches the person's own tmux.
type tmuxScreen struct {
	t      *testing.T
	tmux   string
	socket string
}

func newTmux(t *testing.T, w, h int, dir string, env []string, argv ...string) *tmuxScreen {
	t.Helper()
	tm := testpeer.Require(t, "tmux")
	s := &tmuxScreen{t: t, tmux: tm, socket: fmt.Sprintf("dpulab-e2e-%d-%d", os.Getpid(), time.Now().UnixNano())}
	var sh strings.Builder
	for _, e := range env {
		sh.WriteString(shq(e) + " ")
	}
	for _, a := range argv {
		sh.WriteString(shq(a) + " ")
	}
	// Keep the pane after dpulab exits so the test can read its status.
	script := "env TERM=xterm-256color " + sh.String() + "2>" + shq(filepath.Join(dir, "stderr.txt")) + "; echo DPULAB-EXITED:$?; sleep 600"
	s.run("new-session", "-d", "-s", "e2e", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "-c", dir, "sh", "-c", script)
	t.Cleanup(func() {
		// A test that failed halfway leaves dpulab running: Ctrl+C makes it
		// stop what the lab started before the pane goes away.
		for i := 0; i < 150; i++ {
			out, err := exec.Command(s.tmux, "-L", s.socket, "capture-pane", "-p", "-t", "e2e").Output()
			if err != nil || strings.Contains(string(out), "DPULAB-EXITED") {
				break
			}
			if i%25 == 0 {
				_ = exec.Command(s.tmux, "-L", s.socket, "send-keys", "-t", "e2e", "C-c").Run()
			}
			time.Sleep(200 * time.Millisecond)
		}
		_ = exec.Command(s.tmux, "-L", s.socket, "kill-server").Run()
	})
	return s
}

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (s *tmuxScreen) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command(s.tmux, append([]string{"-L", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (s *tmuxScreen) screen() string { return s.run("capture-pane", "-p", "-t", "e2e") }

// keys sends tmux key names (Enter, Tab, C-u) or literal text.
func (s *tmuxScreen) keys(k ...string) { s.run(append([]string{"send-keys", "-t", "e2e"}, k...)...) }

// tmuxKeys are tmux's names of the keys bindings spell otherwise.
var tmuxKeys = map[string]string{
	"enter": "Enter", "tab": "Tab", "shift+tab": "BTab", "esc": "Escape", "up": "Up", "down": "Down",
	"left": "Left", "right": "Right", "pgup": "PPage", "pgdown": "NPage", "home": "Home", "end": "End",
	"backspace": "BSpace", "ctrl+c": "C-c", "ctrl+u": "C-u", " ": "Space",
}

// press sends the first key of each binding, as the key map spells it.
func (s *tmuxScreen) press(bs ...key.Binding) {
	var ks []string
	for _, b := range bs {
		k := b.Keys()[0]
		if n, ok := tmuxKeys[k]; ok {
			k = n
		}
		ks = append(ks, k)
	}
	s.keys(ks...)
}

func (s *tmuxScreen) text(txt string) { s.run("send-keys", "-t", "e2e", "-l", txt) }

// waitFor polls the screen until every want is on it, failing with the
// last screen after timeout.
func (s *tmuxScreen) waitFor(timeout time.Duration, want ...string) string {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		scr := s.screen()
		ok := true
		for _, w := range want {
			if !strings.Contains(scr, w) {
				ok = false
			}
		}
		if ok {
			return scr
		}
		if strings.Contains(scr, "DPULAB-EXITED") || time.Now().After(deadline) {
			s.t.Fatalf("screen never showed %q; last screen:\n%s", want, scr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitGone polls the screen until gone is off it (an overlay closed),
// failing with the last screen after timeout. A key pressed right after esc
// can reach the program in the same read as the esc, which then reads as
// alt+key (an alt+enter that neither closes the overlay nor runs the
// step): wait for esc's effect before the next key.
func (s *tmuxScreen) waitGone(timeout time.Duration, gone string) {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		scr := s.screen()
		if !strings.Contains(scr, gone) {
			return
		}
		if strings.Contains(scr, "DPULAB-EXITED") || time.Now().After(deadline) {
			s.t.Fatalf("screen still shows %q; last screen:\n%s", gone, scr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitForShell waits until the n-th shell of a task step (banner) shows
// its prompt: n banners on the screen and the prompt after the last. When
// the TUI hands the terminal over it leaves its alternate screen, and the
// main screen still holds the earlier shells' banners and prompts, so
// waiting for a banner and a prompt alone can match the last shell's
// before the new one reads its input (text typed then is lost).
func (s *tmuxScreen) waitForShell(timeout time.Duration, banner, prompt string, n int) string {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		scr := s.screen()
		if strings.Count(scr, banner) >= n {
			if _, after, _ := strings.Cut(scr[strings.LastIndex(scr, banner):], "\n"); strings.Contains(after, prompt) {
				return scr
			}
		}
		if strings.Contains(scr, "DPULAB-EXITED") || time.Now().After(deadline) {
			s.t.Fatalf("screen never showed shell %d (%q, then %q); last screen:\n%s", n, banner, prompt, scr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func saveCapture(t *testing.T, name, scr string) {
	t.Helper()
	if !*writeCaptures {
		return
	}
	p := filepath.Join("testdata", "captures", name)
	if err := os.WriteFile(p, []byte(scr), 0o644); err != nil {
		t.Fatal(err)
	}
}
