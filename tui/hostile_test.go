package tui

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpulab/dpulab/steps/results"

	"github.com/dpulab/dpulab/labs/tco"
	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/tui/pages/replay"
	"github.com/dpulab/dpulab/tui/session"
	"github.com/dpulab/dpulab/tui/session/sessiontest"
)

// hostileRaw is what a lab file, a remote host or a results folder can
// try on the operator's terminal: OSC 52 writes the clipboard (base64 of
// "HOSTILE"); then clear the screen and the scrollback, move the cursor,
// switch to the alternate screen, ask for the cursor position through a
// UTF-8 C1 CSI (the terminal answers by typing into our input), and a bidi
// override.
const hostileRaw = "\x1b]52;c;SE9TVElMRQ==\x07\x1b[2J\x1b[3J\x1b[77;133H\x1b[?1049h\u009b6n\u202e"

// printfHostile is hostileRaw as printf octal escapes, its backslashes
// doubled for a YAML double-quoted string, and split ('5”2',
// 'SE9TV”ElMRQ') so that the command's own text, shown in the commands
// pane, holds no marker.
const printfHostile = `\\033]5''2;c;SE9TV''ElMRQ==\\007\\033[2J\\033[3J\\033[77;133H\\033[?1049h\\302\\2336n\\342\\200\\256`

// writeHostileLab writes a local lab whose commands print every attack
// (lines shown in the output pane, with colour and a raw 8-bit C1 CSI and
// OSC, and the last lines of a failing command), and returns its folder.
// The lab's own text is clean: lint refuses escape sequences in titles,
// docs and hints (labs/termsafe.go), so lab-text attacks are driven through
// a scripted session instead (TestHostileLabTextNeverReachesTheTerminal).
func writeHostileLab(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "hostile")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	lab := `id: hostile
title: Hostile output lab
summary: Commands that print terminal attacks.
duration: 1m
roles:
  local: This machine.
steps:
  - id: intro
    title: Intro
    kind: read
    doc: intro.md
  - id: noisy
    title: Noisy output
    kind: run
    doc: noisy.md
    run:
      - "printf 'out-line-1 ` + printfHostile + `\\033[31mred-text\\033[0m rtl:\\342\\200\\256gnp.exe\\n'"
      - "printf 'raw-c1 \\2336n \\2355''2;c;SE9U\\007 end\\n'"
  - id: broken
    title: Broken step
    kind: run
    doc: broken.md
    run:
      - "printf 'tail-1 ` + printfHostile + `\\ntail-2 \\033[2J\\ntail-3 \\342\\200\\256evil\\n'; exit 3"
    hint: Hint-text of the broken step.
  - id: cleanup
    title: Clean up
    kind: cleanup
    doc: cleanup.md
    run:
      - "true"
`
	docs := map[string]string{
		"lab.yaml":   lab,
		"intro.md":   "# Intro\n\nDoc-prose of the intro.\n",
		"noisy.md":   "Noisy doc\n",
		"broken.md":  "Broken doc\n",
		"cleanup.md": "Cleanup doc\n",
	}
	for name, text := range docs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestHostileLabNeverReachesTheTerminal drives the real engine over a lab
// whose commands print every attack, through a run step's output and a
// failure's last lines, and parses what the program wrote: nothing but
// text, SGR and bubbletea's own sequences.
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
				TCO:         tco.Compute,
			})
			tm := start(t, app, 120, 40)
			s := &streamTap{tm: tm}
			s.waitFor(t, "pick a lab", "Hostile output lab")
			press(tm, km.Filter)
			tm.Type("hostile")
			s.waitFor(t, "Filter: hostile")
			press(tm, km.Enter) // accept the filter
			press(tm, km.Enter) // open the lab
			s.waitFor(t, "Step 1/4", "Doc-prose")
			press(tm, km.Run) // the read step
			s.waitFor(t, "Step 2/4", "Noisy doc")
			press(tm, km.Run) // output with every attack
			s.waitFor(t, "out-line-1", "red-text", "raw-c1", "step 2 done")
			press(tm, km.Run) // fails, with a hint
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
	raw := hostileRaw
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
	if err := os.WriteFile(filepath.Join(dir, results.ResultsFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	loaded, err := results.LoadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	app := New(Config{Replay: loaded, ReplayOptions: replay.Options{Step: time.Millisecond, TCO: tco.Compute}, NoAnimation: true})
	tm := start(t, app, 120, 40)
	s := &streamTap{tm: tm}
	s.waitFor(t, "REPLAY of a run", "Recorded", "Recorded bench")
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

// TestHostileLabTextNeverReachesTheTerminal: the lab's own text — title,
// step titles, docs (prose and a code block), commands, a confirmation's
// question and host, output, the error, the hint and the failure's last
// lines — each carrying every attack, through a scripted session (lint now
// refuses such a lab file, but the TUI must not rely on it: a lab from an
// older binary's lint, a session of another kind).
func TestHostileLabTextNeverReachesTheTerminal(t *testing.T) {
	h := hostileRaw
	info := func(id, title, kind string) steps.StepInfo {
		return steps.StepInfo{ID: id, Title: title + h + " end", Kind: kind}
	}
	f := &sessiontest.Fake{
		LabInfo: session.LabInfo{ID: "hostile", Title: "Hostile lab " + h + "title", Summary: h, Duration: time.Minute,
			Roles: []string{"local" + h}, Local: true, ResumeAt: -1},
		Script: []sessiontest.Step{
			{Info: info("intro", "Intro", "read"), Final: results.Done,
				Doc: "# Intro " + h + "\n\nDoc-prose " + h + " more prose.\n\n```sh\necho " + h + "\n```\n"},
			{Info: info("broken", "Broken", "run"), Doc: "Broken doc " + h,
				Plan: []steps.PlannedCommand{{Host: "local" + h, Cmd: "echo " + h}},
				Emit: []steps.Event{
					steps.Prompt{Step: "broken", Type: steps.PromptConfirm, Host: "host" + h, Message: "Question " + h + "?"},
					out("local"+h, "out-line-1 "+h+"\x1b[31mred-text\x1b[0m"),
				},
				Final: results.Failed, Err: "exit status 3 " + h, Hint: "Hint-text " + h + " end of hint",
				Tail: []string{"tail-1 " + h, "tail-2 " + h, "tail-3 " + h}},
		},
	}
	app := New(Config{Catalog: &sessiontest.Catalog{Fakes: []*sessiontest.Fake{f}}, NoAnimation: true, TCO: tco.Compute})
	tm := start(t, app, 120, 40)
	s := &streamTap{tm: tm}
	s.waitFor(t, "pick a lab", "Hostile lab")
	press(tm, km.Enter)
	s.waitFor(t, "Step 1/2", "Doc-prose")
	press(tm, km.Run)
	s.waitFor(t, "Step 2/2", "Broken doc")
	press(tm, km.Run)
	s.waitFor(t, "Question", "Yes, run it")
	answer(tm, "y")
	s.waitFor(t, "out-line-1", "tail-3", "Hint-text", "step 2 failed")
	finish(t, tm)
	rest, err := io.ReadAll(tm.FinalOutput(t))
	if err != nil {
		t.Fatal(err)
	}
	s.all.Write(rest)
	assertTerminalSafe(t, s.all.Bytes(), true)
	if !strings.Contains(s.all.String(), "\x1b[31mred-text") {
		t.Error("the output's own red (a safe SGR) should reach the output pane")
	}
}
