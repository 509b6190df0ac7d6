package lab

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/aymanbagabas/go-osc52/v2"

	"github.com/dpulab/dpulab/steps"
)

var getenv = os.Getenv

// copyCommands puts cmds on the terminal's clipboard through w (the
// page's terminal, nil when there is none) with OSC52, wrapped for tmux or
// screen when env says the terminal is one of theirs, and says how it
// went for the status line. Terminals that ignore OSC52 still show the
// commands in the commands pane.
func copyCommands(w io.Writer, cmds []steps.PlannedCommand, env func(string) string) (status string) {
	if len(cmds) == 0 {
		return "this step has no commands to copy"
	}
	var b strings.Builder
	for _, c := range cmds {
		if c.Sudo {
			b.WriteString("sudo ")
		}
		b.WriteString(c.Cmd + "\n")
	}
	if w == nil {
		return "no terminal to copy to; the commands are in the commands pane"
	}
	seq := osc52.New(b.String())
	if strings.HasPrefix(env("TERM"), "screen") || env("TMUX") != "" {
		seq = seq.Tmux()
	}
	if _, err := seq.WriteTo(w); err != nil {
		return "copy failed: " + err.Error()
	}
	return fmt.Sprintf("copied %d command(s) via OSC52 (terminal clipboard; needs OSC52 support, e.g. tmux set-clipboard on)", len(cmds))
}
