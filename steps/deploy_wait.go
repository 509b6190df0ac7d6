package steps

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/kinds/deploy"
)

// How deploy waits for its servers to answer PING (as long as each one's
// start progresses, within minutes) is steps/kinds/deploy's Await, with
// the limits kindEnv.WaitLimits gives it. What stays here is the engine's
// end of a deployment: stopping the servers it recorded, host by host.

// waitLimits bounds deploy's wait for one host's instances.
type waitLimits = deploy.Limits

func since(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }

// stopOnHost stops procs, all on host, and says so for each; it returns
// the errors (one per distinct cause, naming the processes it left) and
// the processes that may still run, which stay recorded for a later
// cleanup.
func (e *Engine) stopOnHost(ctx context.Context, host string, procs []runner.Proc) ([]error, []runner.Proc) {
	start := time.Now()
	t, err := e.hosts.target(ctx, host)
	if err != nil {
		return []error{fmt.Errorf("stop %s and %d more on %s: %w", procs[0].Name, len(procs)-1, host, err)}, procs
	}
	var failed []runner.Proc
	byCause := map[string][]runner.Proc{}
	var causes []string
	for _, r := range runner.StopAll(ctx, t, procs, stopGrace) {
		p := r.Proc
		switch {
		case r.Err != nil:
			failed = append(failed, p)
			msg := r.Err.Error()
			if _, ok := byCause[msg]; !ok {
				causes = append(causes, msg)
			}
			byCause[msg] = append(byCause[msg], p)
		case r.Killed:
			e.opts.Emit(Output{Line: runner.Line{Host: p.Host, Text: fmt.Sprintf("stopped %s (pid %d) with SIGKILL: it had not ended %s after SIGTERM", p.Name, p.PID, stopGrace), Time: time.Now()}})
		default:
			e.opts.Emit(Output{Line: runner.Line{Host: p.Host, Text: fmt.Sprintf("stopped %s (pid %d)", p.Name, p.PID), Time: time.Now()}})
		}
	}
	var errs []error
	for _, c := range causes {
		ps := byCause[c]
		if len(ps) == 1 {
			errs = append(errs, fmt.Errorf("stop %s (pid %d) on %s: %s", ps[0].Name, ps[0].PID, host, c))
			continue
		}
		pids := make([]string, len(ps))
		for i, p := range ps {
			pids[i] = strconv.Itoa(p.PID)
		}
		errs = append(errs, fmt.Errorf("stop %d servers on %s (%s and the rest; pids %s): %s", len(ps), host, ps[0].Name, strings.Join(pids, " "), c))
	}
	if len(failed) > 0 && ctx.Err() != nil {
		errs = append(errs, fmt.Errorf("%d processes on %s may still run after %s of trying to stop them; they stay recorded, and the next run of the lab stops them first", len(failed), host, since(start)))
	}
	return errs, failed
}
