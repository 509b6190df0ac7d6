package tui

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/dpulab/dpulab/internal/termtext"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/pages/replay"
	"github.com/dpulab/dpulab/tui/session"
)

// The attacks a lab file or a remote host can try on the operator's
// terminal. Each payload is written into the lab in escaped form; the
// markers below are what must never reach the terminal.
const (
	// OSC 52 writes the clipboard (base64 of "HOSTILE").
	yamlOSC52 = `\e]52;c;SE9TVElMRQ==\a`
	// Clear the screen and the scrollback, move the cursor, switch to the
	// alternate screen, ask for the cursor position (the terminal answers
	// by typing into our input) through an 8-bit CSI, then a bidi override.
	yamlCSI  = `\e[2J\e[3J\e[77;133H\e[?1049h\x9b6n`
	yamlBidi = `\u202e`
	hostileY = yamlOSC52 + yamlCSI + yamlBidi
)

// hostileMarkers never appear in the terminal stream: the lab's sequences,
// and the clipboard payload even as text.
var hostileMarkers = []string{"52;c;", "SE9TVElMRQ", "\x1b[2J", "\x1b[3J", "\x1b[77;133H", "\x1b[?1049h", "\x1b[6n", "\x1b]"}

// writeHostileLab writes a local lab whose title, summary, step titles,
// docs (prose and a code block), commands, hints and command output (lines
// shown in the output pane and a failure's last lines, with a raw 8-bit C1
// byte) all carry hostileY, and returns its folder.
func writeHostileLab(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "hostile")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// In YAML double quotes \e is ESC, \a BEL, \x9b U+009B (a C1 control
	// in UTF-8), \u202e RIGHT-TO-LEFT OVERRIDE.
	lab := `id: hostile
title: "Hostile lab ` + hostileY + `title"
summary: "A summary ` + hostileY + `"
duration: 1m
roles:
  local: This machine.
steps:
  - id: intro
    title: "Intro ` + hostileY + `step"
    kind: read
    doc: intro.md
  - id: noisy
    title: "Noisy ` + hostileY + `output"
    kind: run
    doc: noisy.md
    run:
      - "printf '%s\\n' 'out-line-1 ` + yamlOSC52 + `\e[31mred-text\e[0m ` + yamlCSI + ` rtl:` + yamlBidi + `gnp.exe'"
      - "printf 'raw-c1 \\2336n \\2355''2;c;SE9U\\007 end\\n'"
  - id: broken
    title: "Broken ` + hostileY + `step"
    kind: run
    doc: broken.md
    run:
      - "printf '%s\\n' 'tail-1 ` + yamlOSC52 + `' 'tail-2 ` + yamlCSI + `' 'tail-3 ` + yamlBidi + `evil'; exit 3"
    hint: "Hint-text ` + hostileY + ` end of hint"
  - id: cleanup
    title: "Clean ` + hostileY + `up"
    kind: cleanup
    doc: cleanup.md
    run:
      - "true"
`
	raw := "\x1b]52;c;SE9TVElMRQ==\x07\x1b[2J\x1b[3J\x1b[77;133H\x1b[?1049h\xc2\x9b6n\u202e"
	docs := map[string]string{
		"lab.yaml":   lab,
		"intro.md":   "# Intro " + raw + "\n\nDoc-prose " + raw + " more prose.\n\n```sh\necho " + raw + "\n```\n",
		"noisy.md":   "Noisy doc " + raw + "\n",
		"broken.md":  "Broken doc " + raw + "\n",
		"cleanup.md": "Cleanup doc " + raw + "\n",
	}
	for name, text := range docs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// bubbleteaCSI matches the control sequences bubbletea's renderer itself
// writes (cursor up and position, erase line and below, cursor visibility,
// bracketed paste, focus and mouse modes, scroll margins).
var bubbleteaCSI = regexp.MustCompile(`^\x1b\[(\?(25|2004|1004|100[0-6])[hl]|[0-9]*[ABCDK]|2K|J|0J|[0-9]*(;[0-9]*)?[Hr])$`)

// assertTerminalSafe parses a terminal byte stream: every ESC must start a
// CSI, every CSI be an SGR or one of bubbletea's own sequences, no C1
// control, bidi override or invalid UTF-8 may appear, nor any of the lab's
// payload markers. With labSGR, the SGRs must also be in termtext's safe
// subset (the TUI's own styles are off: the colour profile is ASCII).
func assertTerminalSafe(t *testing.T, stream []byte, labSGR bool) {
	t.Helper()
	s := string(stream)
	for _, m := range hostileMarkers {
		if i := strings.Index(s, m); i >= 0 {
			t.Errorf("the terminal stream holds %q at %d: …%q…", m, i, s[max(i-40, 0):min(i+40, len(s))])
		}
	}
	if !utf8.ValidString(s) {
		t.Error("the terminal stream is not valid UTF-8")
	}
	seen := map[string]int{}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b:
			m := regexp.MustCompile(`^\x1b\[[0-?]*[ -/]*[@-~]`).FindString(s[i:])
			if m == "" {
				t.Errorf("ESC at %d starts no CSI: %q", i, s[i:min(i+20, len(s))])
				i++
				continue
			}
			switch {
			case strings.HasSuffix(m, "m"):
				if labSGR && termtext.SGR(m) != m {
					t.Errorf("SGR %q at %d is outside the safe subset", m, i)
				}
			case !bubbleteaCSI.MatchString(m):
				t.Errorf("control sequence %q at %d is not one bubbletea writes", m, i)
			}
			seen[m]++
			i += len(m)
			continue
		case r >= 0x80 && r < 0xa0:
			t.Errorf("C1 control %U at %d", r, i)
		case r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
			t.Errorf("bidi control %U at %d", r, i)
		case r < 0x20 && r != '\n' && r != '\r' && r != '\t':
			t.Errorf("C0 control %U at %d", r, i)
		}
		i += size
	}
	if t.Failed() {
		t.Logf("sequences seen: %v", seen)
	}
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

// TestHostileLabNeverReachesTheTerminal drives the real engine over a lab
// whose every string attacks the terminal, through the picker, a read step,
// a run step's output and a failure with its hint, and parses what the
// program wrote: nothing but text, SGR and bubbletea's own sequences.
func TestHostileLabNeverReachesTheTerminal(t *testing.T) {
	for _, tc := range []struct {
		name    string
		noColor bool
	}{{"colour", false}, {"NO_COLOR", true}} {
		t.Run(tc.name, func(t *testing.T) {
			labDir := writeHostileLab(t)
			t.Chdir(t.TempDir()) // results/ goes here
			app := New(Config{
				Catalog:     &session.EngineCatalog{LabDirs: []string{filepath.Dir(labDir)}, StateDir: t.TempDir()},
				NoColor:     tc.noColor,
				NoAnimation: true,
				TCO:         steps.ComputeTCO,
			})
			tm := start(t, app, 120, 40)
			s := &streamTap{tm: tm}
			s.waitFor(t, "pick a lab", "Hostile lab")
			tm.Send(press("/"))
			tm.Type("hostile")
			s.waitFor(t, "Filter: hostile")
			tm.Send(press("enter")) // accept the filter
			tm.Send(press("enter")) // open the lab
			s.waitFor(t, "Step 1/4", "Doc-prose")
			tm.Send(press("enter")) // the read step
			s.waitFor(t, "Step 2/4", "Noisy doc")
			tm.Send(press("enter")) // output with every attack
			s.waitFor(t, "out-line-1", "red-text", "raw-c1", "step 2 done")
			tm.Send(press("enter")) // fails, with a hint
			s.waitFor(t, "tail-3", "Hint-text", "step 3 failed")
			a := finish(t, tm)
			rest, err := io.ReadAll(tm.FinalOutput(t))
			if err != nil {
				t.Fatal(err)
			}
			s.all.Write(rest)

			l := a.Lab()
			if l == nil {
				t.Fatal("the lab page is gone")
			}
			if f, ok := l.Failure(2); !ok || len(f.Tail) == 0 || !strings.Contains(f.Hint, "Hint-text") {
				t.Fatalf("the failure of step 3 lacks its last lines or hint: %+v", f)
			}
			assertTerminalSafe(t, s.all.Bytes(), true)
			if !tc.noColor && !strings.Contains(s.all.String(), "\x1b[31mred-text") {
				t.Error("the command's own red (a safe SGR) should reach the output pane")
			}
			if tc.noColor && strings.Contains(s.all.String(), "\x1b[31m") {
				t.Error("NO_COLOR: the command's colours must go too")
			}
		})
	}
}

// TestReplayHostileRecording plays back a results folder whose recorded
// text (lab title, hosts and their labels, variant labels, variables,
// reference figures, the run's error) carries the same attacks: a folder
// someone hands over must be as harmless to replay as a lab file to open.
func TestReplayHostileRecording(t *testing.T) {
	raw := "\x1b]52;c;SE9TVElMRQ==\x07\x1b[2J\x1b[3J\x1b[77;133H\x1b[?1049h\u009b6n\u202e"
	res := loadRecorded(t)
	res.Title = "Recorded " + raw + "title"
	for i := range res.Hosts {
		res.Hosts[i].Name += raw
		res.Hosts[i].Labels = map[string]string{"nic" + raw: "BlueField" + raw}
	}
	for i := range res.Benches {
		for j := range res.Benches[i].Variants {
			res.Benches[i].Variants[j].Label += raw
		}
	}
	for i := range res.References {
		res.References[i].Label += raw
		res.References[i].Source += raw
	}
	res.Variables["evil"+raw] = raw
	res.Error = "recorded error " + raw
	dir := t.TempDir()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, steps.ResultsFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	loaded, err := steps.LoadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	app := New(Config{Replay: loaded, ReplayOptions: replay.Options{Step: time.Millisecond, TCO: steps.ComputeTCO}, NoAnimation: true})
	tm := start(t, app, 120, 40)
	s := &streamTap{tm: tm}
	s.waitFor(t, "REPLAY of a run", "Recorded", "Live bench")
	s.waitFor(t, "Compare:", "Published reference figures")
	finish(t, tm)
	rest, err := io.ReadAll(tm.FinalOutput(t))
	if err != nil {
		t.Fatal(err)
	}
	s.all.Write(rest)
	assertTerminalSafe(t, s.all.Bytes(), false)
	if loaded.Title != res.Title {
		t.Error("the replay must not change the recording it was given")
	}
}
