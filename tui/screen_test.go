package tui

import (
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps/results"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/dpulab/dpulab/tui/session/sessiontest"
)

func TestTooSmall(t *testing.T) {
	tm := start(t, testApp(Config{Catalog: &sessiontest.Catalog{Fakes: []*sessiontest.Fake{quickstartFake()}}}), 60, 20)
	waitFor(t, tm, "Terminal too small", "60×20")
	tm.Send(tea.WindowSizeMsg{Width: 100, Height: 30})
	waitFor(t, tm, "pick a lab")
	finish(t, tm)
}

func TestLabScreenFitsEverySize(t *testing.T) {
	f := quickstartFake()
	tm, _ := openQuickstart(t, f, 100, 30)
	sizes := [][2]int{{80, 24}, {120, 40}, {200, 60}, {81, 25}}
	for _, sz := range sizes {
		tm.Send(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
	}
	press(tm, km.Help)
	app := finish(t, tm)
	for _, sz := range sizes {
		app.SetSize(sz[0], sz[1])
		for _, help := range []bool{false, true} {
			app.help.ShowAll = help
			app.SetSize(sz[0], sz[1])
			view := app.View()
			if plain := ansi.Strip(view); !strings.Contains(plain, "Step 2/4: Start the servers") || strings.Contains(plain, "too small") {
				t.Errorf("%dx%d help=%v: the lab screen is not shown:\n%s", sz[0], sz[1], help, plain)
			}
			lines := strings.Split(view, "\n")
			if len(lines) != sz[1] {
				t.Errorf("%dx%d help=%v: %d lines, want exactly %d", sz[0], sz[1], help, len(lines), sz[1])
			}
			for _, l := range lines {
				if w := ansi.StringWidth(l); w > sz[0] {
					t.Errorf("%dx%d help=%v: line %d wide: %q", sz[0], sz[1], help, w, l)
				}
			}
		}
	}
}

// TestNoColorLabScreen: with NO_COLOR (every test app runs without colour)
// the step's text has no markdown markers left, and what colour signals
// elsewhere is still there as text: the selection (›), each step's status
// icon (✔ ✘ ○), the failure and its hint, sudo.
func TestNoColorLabScreen(t *testing.T) {
	f := quickstartFake()
	f.Script[1].Doc = "# Start the servers\n\nStart **four instances** of the *bundled* server with `dpulab server`."
	f.Script[1].Final = results.Failed
	f.Script[1].Err = "exit status 1"
	f.Script[1].Hint = "A port is in use: pick another with --set port=NNNN."
	tm, _ := openQuickstart(t, f, 100, 30)
	press(tm, km.Run)
	waitFor(t, tm, "step 2 failed")
	app := finish(t, tm)
	v := app.View()
	plain := ansi.Strip(v)
	if v != plain {
		t.Errorf("NO_COLOR screen carries escape codes")
	}
	for _, want := range []string{"Start four instances of the bundled server with `dpulab", "›✘  2 Start the servers", "✔  1 What this lab does", "○  3", "[sudo]", "Hint: A port is in use"} {
		if !strings.Contains(plain, want) {
			t.Errorf("screen lacks %q", want)
		}
	}
	if strings.Contains(plain, "**") || strings.Contains(plain, "*bundled*") {
		t.Errorf("markdown markers left on screen:\n%s", plain)
	}
	requireGolden(t, v)
}

// TestFooterKeepsHelpKey: at 80 columns the lab screen's key line drops
// keys from the middle, never "? more keys" at its end.
func TestFooterKeepsHelpKey(t *testing.T) {
	tm, _ := openQuickstart(t, quickstartFake(), 80, 24)
	app := finish(t, tm)
	lines := strings.Split(ansi.Strip(app.View()), "\n")
	foot := lines[len(lines)-1]
	if !strings.HasSuffix(strings.TrimRight(foot, " "), "q quit · ? more keys") || strings.Contains(foot, "…") {
		t.Fatalf("footer %q: want it to end with q quit · ? more keys, untruncated", foot)
	}
	if !strings.Contains(foot, "enter run") {
		t.Fatalf("footer %q lost the most important key", foot)
	}
}
