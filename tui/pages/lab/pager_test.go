package lab

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/dpulab/dpulab/steps"
	"github.com/dpulab/dpulab/steps/results"
	"github.com/dpulab/dpulab/tui/common"
	"github.com/dpulab/dpulab/tui/keymap/keymaptest"
)

// sectionText is secs as plain text: "## title" then its lines.
func sectionText(secs []section) string {
	var b strings.Builder
	for _, s := range secs {
		b.WriteString("## " + s.title + "\n")
		for _, l := range s.lines {
			b.WriteString(ansi.Strip(l) + "\n")
		}
	}
	return b.String()
}

func sectionTitles(secs []section) []string {
	var ts []string
	for _, s := range secs {
		ts = append(ts, s.title)
	}
	return ts
}

// TestWholeText: the whole-text view of a step, by what the page knows of
// it: its commands whole (multi-line scripts under their prompt), why it
// failed (an earlier session's said so; a hint for the command line
// worded for the form), a plan that fails, a task step's hidden answer, no
// commands, no output.
func TestWholeText(t *testing.T) {
	km := common.NewCommon(true, 100, 30).KeyMap
	ss := []steps.StepInfo{
		{ID: "a", Title: "Start", Kind: "run", Status: results.Failed},
		{ID: "b", Title: "By hand", Kind: "task", Status: results.Pending},
	}
	failed := &steps.StepFinished{Index: 0, Status: results.Failed, Host: "server1", Err: "exit 1",
		Cmd: "redis-server\n--port 1", Tail: []string{"bind: in use"}, Hint: "Try --set port=7000."}
	for _, tc := range []struct {
		name   string
		t      stepText
		titles []string
		want   []string
		lacks  []string
	}{
		{name: "commands", t: stepText{index: 0, steps: ss, cmds: []steps.PlannedCommand{{Cmd: "echo a\necho b"}, {Host: "server1", Sudo: true, Cmd: "id"}}, output: []string{"a"}},
			titles: []string{secStep, secCommands, secOutput},
			want:   []string{"Step 1/2: Start", "kind run · failed", "local $ echo a\n        echo b", "server1 [sudo] $ id", "## Output\na\n"}},
		{name: "failed here", t: stepText{index: 0, steps: ss, failure: failed, status: "step 1 failed"},
			titles: []string{secStep, secFailure, secStatus, secCommands, secOutput},
			want: []string{"✘ failed on server1: exit 1", "The command that failed:\n  redis-server\n  --port 1", "Its last lines of output:\n  bind: in use",
				"Hint: Try the variables form (v), field port.", "## Status\nstep 1 failed", "(no output yet)"},
			lacks: []string{"earlier session"}},
		{name: "failed earlier", t: stepText{index: 0, steps: ss, failure: failed, earlier: true},
			want: []string{"✘ failed in an earlier session on server1: exit 1"}},
		{name: "failed earlier, no reason saved", t: stepText{index: 0, steps: ss, failure: &steps.StepFinished{Err: "in an earlier session"}, earlier: true},
			want: []string{"✘ failed: in an earlier session\n"}},
		{name: "cannot plan", t: stepText{index: 0, steps: ss, planErr: "no port"},
			want: []string{"cannot plan: no port"}, lacks: []string{"no shell commands"}},
		{name: "no commands", t: stepText{index: 0, steps: ss},
			want: []string{"(no shell commands of the lab's own: "}},
		{name: "a task's answer hidden", t: stepText{index: 1, steps: ss, hideCmds: true, cmds: []steps.PlannedCommand{{Cmd: "secret answer"}}},
			titles: []string{secStep, secCommands, secOutput},
			want:   []string{"(yours to do in a shell: t opens one, m shows the commands that do it, f runs them for you)"}, lacks: []string{"secret answer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			secs := wholeText(km, tc.t)
			if tc.titles != nil && !slices.Equal(sectionTitles(secs), tc.titles) {
				t.Errorf("sections %q, want %q", sectionTitles(secs), tc.titles)
			}
			text := sectionText(secs)
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("lacks %q:\n%s", w, text)
				}
			}
			for _, l := range tc.lacks {
				if strings.Contains(text, l) {
					t.Errorf("has %q:\n%s", l, text)
				}
			}
		})
	}
	if wholeText(km, stepText{index: 2, steps: ss}) != nil {
		t.Error("a step past the list has text")
	}
}

// pagerSrc answers for task steps and rendered files.
type pagerSrc struct {
	sol   map[int][]steps.TaskSolution
	files map[int][]steps.RenderedFile
	more  int
	err   error
}

func (s pagerSrc) Solution(i int) ([]steps.TaskSolution, error) {
	if s.sol[i] == nil {
		return nil, errors.New("not a task step")
	}
	return s.sol[i], nil
}

func (s pagerSrc) Rendered(i int) ([]steps.RenderedFile, int, error) {
	return s.files[i], s.more, s.err
}

// TestPagerShowMeAndFiles: show me opens a task step's solution and says
// why not on any other step; F opens the files the selected step writes,
// else every writing step's, and says so when the lab writes none.
func TestPagerShowMeAndFiles(t *testing.T) {
	ss := []steps.StepInfo{
		{ID: "t", Title: "By hand", Kind: "task"},
		{ID: "c", Title: "Config", Kind: "template", Status: results.Done},
		{ID: "r", Title: "Run", Kind: "run"},
		{ID: "d", Title: "Deploy", Kind: "deploy"},
	}
	src := pagerSrc{
		sol: map[int][]steps.TaskSolution{0: {{Host: "server1", Sudo: true, Run: []string{"systemctl start redis"}, Verify: "redis-cli ping"}}},
		files: map[int][]steps.RenderedFile{
			1: {{Host: "server1", Path: "/etc/redis.conf", Source: "redis.conf.tmpl", Content: "# comment\nport 6379\n"}},
			3: {{Host: "server2", Path: "/tmp/d.conf", Content: "bind 0.0.0.0"}},
		},
	}
	for _, tc := range []struct {
		name   string
		src    pagerSrc
		ss     []steps.StepInfo
		open   func(p *pager, ss []steps.StepInfo) string
		status string
		title  string
		want   []string
	}{
		{name: "show me", src: src, ss: ss, open: func(p *pager, ss []steps.StepInfo) string { return p.ShowMe(ss, 0) },
			title: "Step 1: show me",
			want:  []string{"## On server1, these commands do it\nserver1 [sudo] $ systemctl start redis", "## On server1, the lab checks it with\nserver1 [sudo] $ redis-cli ping", "## Your turn\nt (or enter) opens a shell"}},
		{name: "show me, not a task", src: src, ss: ss, open: func(p *pager, ss []steps.StepInfo) string { return p.ShowMe(ss, 2) },
			status: "m shows how to do a task step; step 3 is not one"},
		{name: "show me, the session cannot", src: pagerSrc{}, ss: ss, open: func(p *pager, ss []steps.StepInfo) string { return p.ShowMe(ss, 0) },
			status: "show me: not a task step"},
		{name: "files of the selected step", src: src, ss: ss, open: func(p *pager, ss []steps.StepInfo) string { return p.Files(ss, 1) },
			title: "Step 2: rendered files",
			want:  []string{"## server1:/etc/redis.conf\nstep 2 (c, done) writes it · from redis.conf.tmpl\n# comment\nport 6379\n"}},
		{name: "files of every step", src: src, ss: ss, open: func(p *pager, ss []steps.StepInfo) string { return p.Files(ss, 2) },
			title: "Rendered files",
			want:  []string{"## server1:/etc/redis.conf", "## server2:/tmp/d.conf\nstep 4 (d, pending) writes it · from dpulab's minimal config"}},
		{name: "files cut and refused", src: pagerSrc{more: 3, files: src.files}, ss: ss, open: func(p *pager, ss []steps.StepInfo) string { return p.Files(ss, 1) },
			want: []string{"## step 2 (c, done)\n… and 3 more files, not shown"}},
		{name: "files that cannot render", src: pagerSrc{err: errors.New("no such variable")}, ss: ss, open: func(p *pager, ss []steps.StepInfo) string { return p.Files(ss, 1) },
			want: []string{"## step 2 (c, done)\ncannot render: no such variable"}},
		{name: "no files", src: src, ss: ss[2:3], open: func(p *pager, ss []steps.StepInfo) string { return p.Files(ss, 0) },
			status: "this lab writes no files (it has no template or deploy step)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPager(common.NewCommon(true, 100, 30), tc.src)
			status := ansi.Strip(tc.open(p, tc.ss))
			if status != tc.status || (p.Reader() == nil) != (tc.status != "") {
				t.Fatalf("status %q, open %v; want %q", status, p.Reader() != nil, tc.status)
			}
			if p.Reader() == nil {
				return
			}
			if tc.title != "" && p.Reader().title != tc.title {
				t.Errorf("title %q, want %q", p.Reader().title, tc.title)
			}
			text := sectionText(p.Reader().text)
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("lacks %q:\n%s", w, text)
				}
			}
		})
	}
}

// TestPagerKeys: esc and q close any view, and so does the key that opened
// it, but not another view's; other keys scroll; the reader takes the
// page's height but its status line.
func TestPagerKeys(t *testing.T) {
	c := common.NewCommon(true, 100, 30)
	km := c.KeyMap
	ss := []steps.StepInfo{{ID: "c", Title: "Config", Kind: "template"}}
	var long []string
	for range 100 {
		long = append(long, "line")
	}
	src := pagerSrc{files: map[int][]steps.RenderedFile{0: {{Host: "h", Path: "/p", Content: strings.Join(long, "\n")}}}}
	for _, tc := range []struct {
		name   string
		open   func(p *pager)
		key    string
		closes bool
	}{
		{name: "esc closes the whole text", open: func(p *pager) { p.Whole(stepText{steps: ss}) }, key: "esc", closes: true},
		{name: "q closes the whole text", open: func(p *pager) { p.Whole(stepText{steps: ss}) }, key: "q", closes: true},
		{name: "w closes the whole text", open: func(p *pager) { p.Whole(stepText{steps: ss}) }, key: km.Whole.Keys()[0], closes: true},
		{name: "F closes the files", open: func(p *pager) { p.Files(ss, 0) }, key: km.Files.Keys()[0], closes: true},
		{name: "w does not close the files", open: func(p *pager) { p.Files(ss, 0) }, key: km.Whole.Keys()[0]},
		{name: "j scrolls the files", open: func(p *pager) { p.Files(ss, 0) }, key: "j"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPager(c, src)
			p.SetSize(80, 24)
			tc.open(p)
			if h := p.Reader().Height; h != 23 {
				t.Errorf("reader height %d, want the page's 24 less the status line", h)
			}
			p.Key(keymaptest.Msg(tc.key))
			if (p.Reader() == nil) != tc.closes {
				t.Fatalf("open %v after %q, want closed %v", p.Reader() != nil, tc.key, tc.closes)
			}
			if tc.key == "j" && p.Reader().vp.YOffset != 1 {
				t.Errorf("j scrolled to %d, want 1", p.Reader().vp.YOffset)
			}
		})
	}
}
