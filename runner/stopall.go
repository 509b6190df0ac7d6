package runner

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Stopped is what StopAll did to one process.
type Stopped struct {
	Proc Proc
	// Killed is set when the process group did not end within grace of
	// SIGTERM and was sent SIGKILL (and then ended).
	Killed bool
	// Err is set when the process may still run: a group still alive
	// after SIGKILL, one that could not be signalled, or a command that
	// did not finish (ctx ended, connection lost). Nil means the group is
	// gone, checked.
	Err error
}

// StopAll ends many processes started by Start or StartAll on one target,
// with a few commands instead of one per process (one SSH session per
// batch of up to stopBatchSize: with sshd's default MaxSessions 10, sixty
// stops one session each queue for minutes on a saturated host). Each
// group is what Stop would end: still the one started (its pid file names
// it, or its leader's command line names the pid file), else left alone.
// SIGTERM to every group of a batch at once, a wait of up to grace for
// all, SIGKILL to those still alive, then a check that each is gone: a
// group that outlives SIGKILL by killWait is reported, never counted as
// stopped. Results are in the order of procs.
//
// A Target that does not run helper scripts (a test's fake, a wrapper)
// gets its Stop called for each process, stopBatches at a time.
func StopAll(ctx context.Context, t Target, procs []Proc, grace time.Duration) []Stopped {
	out := make([]Stopped, len(procs))
	for i, p := range procs {
		out[i].Proc = p
	}
	c, _ := t.(interface {
		stopBatch(ctx context.Context, procs []Proc, grace time.Duration) []Stopped
	})
	var batches [][]int
	if c != nil {
		batches = stopBatchesOf(procs)
	} else {
		for i := range procs {
			batches = append(batches, []int{i})
		}
	}
	sem := make(chan struct{}, stopBatches)
	var wg sync.WaitGroup
	for _, b := range batches {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if c == nil {
				p := procs[b[0]]
				out[b[0]].Err = t.Stop(ctx, p, grace)
				return
			}
			ps := make([]Proc, len(b))
			for j, i := range b {
				ps[j] = procs[i]
			}
			for j, r := range c.stopBatch(ctx, ps, grace) {
				out[b[j]] = r
			}
		}()
	}
	wg.Wait()
	return out
}

// stopBatchSize and stopBatches shape StopAll's commands; killWait is how
// long a group may take to vanish after SIGKILL (a saturated host reaps
// slowly) before it is reported as still running.
const (
	stopBatchSize = 64
	stopBatches   = 2
	killWait      = 10 * time.Second
)

// stopBatchesOf cuts procs into batches of indexes with the same Sudo.
func stopBatchesOf(procs []Proc) [][]int {
	var out [][]int
	for _, sudo := range []bool{false, true} {
		var cur []int
		for i, p := range procs {
			if p.Sudo != sudo {
				continue
			}
			if len(cur) == stopBatchSize {
				out = append(out, cur)
				cur = nil
			}
			cur = append(cur, i)
		}
		if len(cur) > 0 {
			out = append(out, cur)
		}
	}
	return out
}

// stopAllScript ends the process groups given as pairs (PGID, PIDFILE)
// after $1 (grace, tenths of a second) and $2 (the wait after SIGKILL,
// tenths). A group is ours when its pid file names it or, the file gone,
// its leader's command line names the file (as stopScript). It prints,
// for pair J (0-based): "J gone" (not running, or no longer ours), "J
// stopped" (ended on SIGTERM), "J killed" (ended after SIGKILL), "J left"
// (alive after SIGKILL and the wait), "J denied" (could not be signalled:
// another user's). Liveness ignores zombies. Every round of the waits
// looks at all groups with one ps, not one per group.
const stopAllScript = `g=$1; k=$2; shift 2
live() { if command -v ps >/dev/null 2>&1; then ps -eo pgid=,stat= | awk -v g=" $1 " '$2 !~ /^Z/ && index(g, " " $1 " ") {print $1}' | sort -u | tr '\n' ' '; else for p in $1; do kill -0 -"$p" 2>/dev/null && printf '%s ' "$p"; done; fi; }
j=0
ours=
while [ $# -ge 2 ]; do
  p=$1; pf=$2; shift 2
  case $p in ''|0|1|*[!0-9]*) echo "$j gone"; j=$((j+1)); continue ;; esac
  x=
  read -r x <"$pf" 2>/dev/null
  if [ "$x" != "$p" ]; then
    case "$(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null)" in *" $pf"*) ;; *) rm -rf "$pf".dpulab-run-*; echo "$j gone"; j=$((j+1)); continue ;; esac
  fi
  if kill -TERM -"$p" 2>/dev/null; then
    ours="$ours $p"; eval "J_$p=$j F_$p=\$pf"
  elif [ -d /proc/"$p" ]; then
    echo "$j denied"
  else
    rm -f "$pf"; rm -rf "$pf".dpulab-run-*; echo "$j gone"
  fi
  j=$((j+1))
done
left=
[ -n "$ours" ] && left=$(live "$ours")
i=0
while [ -n "$left" ] && [ "$i" -lt "$g" ]; do sleep 0.1; i=$((i+1)); left=$(live "$left"); done
killed=$left
for p in $left; do kill -KILL -"$p" 2>/dev/null; done
i=0
while [ -n "$left" ] && [ "$i" -lt "$k" ]; do sleep 0.1; i=$((i+1)); left=$(live "$left"); done
for p in $ours; do
  eval "j=\$J_$p pf=\$F_$p"
  case " $left " in
  *" $p "*) echo "$j left" ;;
  *) rm -f "$pf"; rm -rf "$pf".dpulab-run-*
     case " $killed " in *" $p "*) echo "$j killed" ;; *) echo "$j stopped" ;; esac ;;
  esac
done`

// stopBatch stops procs (all with the same Sudo) with one stopAllScript.
func (c *common) stopBatch(ctx context.Context, procs []Proc, grace time.Duration) []Stopped {
	out := make([]Stopped, len(procs))
	args := []string{strconv.Itoa(int(grace / (100 * time.Millisecond))), strconv.Itoa(int(killWait / (100 * time.Millisecond)))}
	for j, p := range procs {
		out[j].Proc = p
		args = append(args, strconv.Itoa(p.PID), p.LogFile+".pid")
	}
	fail := func(err error) []Stopped {
		for j := range out {
			if out[j].Err == nil {
				out[j].Err = err
			}
		}
		return out
	}
	what := func() string {
		if len(procs) == 1 {
			return fmt.Sprintf("stop %s (pid %d)", procs[0].Name, procs[0].PID)
		}
		return fmt.Sprintf("stop %d processes (%s and the rest)", len(procs), procs[0].Name)
	}
	start := time.Now()
	script := "sh -c " + Quote(stopAllScript) + " dpulab-stop-all " + QuoteAll(args...)
	script, stdin, err := c.asRoot(ctx, script, procs[0].Sudo)
	if err != nil {
		return fail(err)
	}
	stdout, errOut, code, err := c.simple(ctx, script, stdin)
	seen := make([]bool, len(procs))
	for _, line := range strings.Split(strings.TrimSpace(string(stdout)), "\n") {
		js, verdict, ok := strings.Cut(line, " ")
		j, jerr := strconv.Atoi(js)
		if !ok || jerr != nil || j < 0 || j >= len(procs) {
			continue
		}
		seen[j] = true
		p := procs[j]
		switch verdict {
		case "gone", "stopped":
		case "killed":
			out[j].Killed = true
		case "left":
			out[j].Err = fmt.Errorf("stop %s on %s: process group %d still runs %s after SIGKILL (sent %s after SIGTERM): it may be stuck in the kernel (ps -o pid,stat,wchan -g %d shows where)", p.Name, c.host, p.PID, killWait, grace, p.PID)
		case "denied":
			out[j].Err = fmt.Errorf("stop %s on %s: process group %d runs but cannot be signalled: it belongs to another user (stop it with sudo)", p.Name, c.host, p.PID)
		default:
			out[j].Err = fmt.Errorf("stop %s on %s: unexpected reply %q", p.Name, c.host, line)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("gave up after %s waiting for the host to end them (SIGTERM, then SIGKILL after %s, then a check that they are gone): %w", time.Since(start).Round(100*time.Millisecond), grace, err)
		}
		err = onHost(what(), c.host, err)
	} else if code != 0 {
		err = fmt.Errorf("%s on %s: exit %d: %s", what(), c.host, code, strings.TrimSpace(string(errOut)))
	}
	for j := range out {
		switch {
		case seen[j]:
		case err != nil:
			out[j].Err = err
		default:
			out[j].Err = fmt.Errorf("stop %s on %s: no word of it from the command that stopped it: %s", procs[j].Name, c.host, strings.TrimSpace(string(errOut)))
		}
	}
	return out
}
