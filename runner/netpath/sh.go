package netpath

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dpulab/dpulab/runner"
)

// cmdTimeout bounds one command: loading a large ruleset is the slowest
// (about a second per 10,000 rules on a small VM); a hung `ip` must not
// hang a lab.
const cmdTimeout = 2 * time.Minute

// shResult is one command's output, split by stream.
type shResult struct {
	stdout, stderr string
	code           int
}

// sh runs cmd on t (as root through sudo when asked) and returns its
// output. A command that ran and failed is not an error here: callers
// judge the exit status, because some failures (a device type the kernel
// lacks, a namespace already gone) are answers.
func sh(ctx context.Context, t runner.Target, sudo bool, cmd string, stdin []byte) (shResult, error) {
	var out, errOut strings.Builder
	res, err := t.Run(ctx, runner.Command{
		Cmd:     cmd,
		Sudo:    sudo,
		Stdin:   stdin,
		Timeout: cmdTimeout,
		Output: func(l runner.Line) {
			// Run calls Output from one goroutine per stream; each
			// builder is written by one of them only.
			if l.Stream == runner.Stderr {
				errOut.WriteString(l.Text)
				errOut.WriteByte('\n')
				return
			}
			out.WriteString(l.Text)
			out.WriteByte('\n')
		},
	})
	r := shResult{stdout: out.String(), stderr: strings.TrimSpace(errOut.String()), code: res.ExitCode}
	if err != nil {
		return r, fmt.Errorf("on %s: %w", t.Name(), err)
	}
	return r, nil
}

// must runs cmd and turns a non-zero exit into an error that says what was
// being done and what the command said.
func must(ctx context.Context, t runner.Target, sudo bool, what, cmd string, stdin []byte) (string, error) {
	r, err := sh(ctx, t, sudo, cmd, stdin)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	if r.code != 0 {
		return "", fmt.Errorf("%s on %s: %s (exit %d)", what, t.Name(), said(r), r.code)
	}
	return r.stdout, nil
}

// said is what a failed command printed, for an error message: its
// standard error, else its output, else a note that it said nothing.
func said(r shResult) string {
	if r.stderr != "" {
		return lastLines(r.stderr, 3)
	}
	if s := strings.TrimSpace(r.stdout); s != "" {
		return lastLines(s, 3)
	}
	return "no message"
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}
