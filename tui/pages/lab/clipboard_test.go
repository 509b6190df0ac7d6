package lab

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/steps"
)

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("closed terminal") }

// TestCopyCommands: y writes the step's commands (sudo where they need it)
// as an OSC52 sequence, wrapped for tmux and screen, and says so; with
// no commands, no terminal or a failed write it says that instead.
func TestCopyCommands(t *testing.T) {
	cmds := []steps.PlannedCommand{{Cmd: "redis-server"}, {Host: "server1", Sudo: true, Cmd: "sysctl -w a=1"}}
	text := base64.StdEncoding.EncodeToString([]byte("redis-server\nsudo sysctl -w a=1\n"))
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	for _, tc := range []struct {
		name   string
		w      io.Writer
		cmds   []steps.PlannedCommand
		env    map[string]string
		status string
		// seq is the start of what the terminal gets.
		seq string
	}{
		{name: "a terminal", w: &bytes.Buffer{}, cmds: cmds, env: map[string]string{"TERM": "xterm-256color"},
			status: "copied 2 command(s) via OSC52", seq: "\x1b]52;c;" + text},
		{name: "in tmux", w: &bytes.Buffer{}, cmds: cmds, env: map[string]string{"TERM": "xterm", "TMUX": "/tmp/tmux-0/default,1,0"},
			status: "copied 2 command(s)", seq: "\x1bPtmux;\x1b\x1b]52;c;" + text},
		{name: "in screen", w: &bytes.Buffer{}, cmds: cmds, env: map[string]string{"TERM": "screen-256color"},
			status: "copied 2 command(s)", seq: "\x1bPtmux;\x1b\x1b]52;c;" + text},
		{name: "no commands", w: &bytes.Buffer{}, status: "this step has no commands to copy"},
		{name: "no terminal", cmds: cmds, status: "no terminal to copy to; the commands are in the commands pane"},
		{name: "a failed write", w: failingWriter{}, cmds: cmds, status: "copy failed: closed terminal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := copyCommands(tc.w, tc.cmds, env(tc.env))
			if !strings.HasPrefix(got, tc.status) {
				t.Errorf("status %q, want %q", got, tc.status)
			}
			b, _ := tc.w.(*bytes.Buffer)
			if b == nil {
				return
			}
			if !strings.HasPrefix(b.String(), tc.seq) || (tc.seq == "" && b.Len() > 0) {
				t.Errorf("terminal got %q, want it to start %q", b.String(), tc.seq)
			}
		})
	}
}
