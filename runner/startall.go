package runner

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// StartAll starts many detached processes on one target with a few
// commands instead of one per process: specs are cut into batches
// (startBatchSize processes, startBatchBytes of arguments at most), and
// each batch is one helper command (one SSH session) that launches every
// process of it, then waits for their pid files. Up to startBatches
// batches run at once. Each process is exactly what Start makes of its
// spec: its own session and process group, the same group leader command
// line (naming its log and pid file, so Stop and StopMarked find it), its
// own nonce claiming PIDFILE.NONCE (so a cancelled batch stops what it
// launched, as a cancelled Start does).
//
// started, when not nil, is called with each batch's processes as soon as
// their pids are known, before StartAll returns (from several goroutines
// at once): a caller records them there, so a run killed while later
// batches start has saved the earlier ones. StartAll returns the
// processes in the order of specs (the zero Proc for one that did not
// start) and the error of each (nil for one that started). When ctx ends
// while a batch runs, what that batch may have launched is stopped before
// StartAll returns, and its processes get ctx's error.
//
// A Target that does not run helper scripts (a test's fake, a wrapper)
// gets its Start called for each spec, startBatches at a time.
func StartAll(ctx context.Context, t Target, specs []ProcSpec, started func([]Proc)) ([]Proc, []error) {
	procs := make([]Proc, len(specs))
	errs := make([]error, len(specs))
	c, _ := t.(batchStarter)
	var wg sync.WaitGroup
	sem := make(chan struct{}, startBatches)
	for _, b := range startBatchesOf(specs) {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var ps []Proc
			var es []error
			if c != nil {
				ps, es = c.startBatch(ctx, pick(specs, b))
			} else {
				ps, es = make([]Proc, len(b)), make([]error, len(b))
				for j, i := range b {
					ps[j], es[j] = t.Start(ctx, specs[i])
				}
			}
			var ok []Proc
			for j, i := range b {
				procs[i], errs[i] = ps[j], es[j]
				if es[j] == nil {
					ok = append(ok, ps[j])
				}
			}
			if started != nil && len(ok) > 0 {
				started(ok)
			}
		}()
	}
	wg.Wait()
	return procs, errs
}

// startBatchSize, startBatchBytes and startBatches shape StartAll's
// commands: a batch launches its processes one after the other (a few
// forks each), so several batches run at once to use the host's cores;
// each holds one session, and four of them stay well within sshd's
// MaxSessions (10 by default) beside the commands a run has open. The
// bytes bound keeps a batch's command line far below Linux's 128 KiB
// limit of one argument (sshd hands the whole line to the shell as one).
const (
	startBatchSize  = 16
	startBatchBytes = 32 << 10
	startBatches    = 4
)

// startBatchesOf cuts specs into batches of indexes: same Sudo within a
// batch, at most startBatchSize specs and startBatchBytes of them (a spec
// larger than that goes alone).
func startBatchesOf(specs []ProcSpec) [][]int {
	var out [][]int
	for _, sudo := range []bool{false, true} {
		var cur []int
		size := 0
		for i, p := range specs {
			if p.Sudo != sudo {
				continue
			}
			n := len(p.Cmd) + len(p.LogFile) + len(p.Name) + 64
			if len(cur) > 0 && (len(cur) == startBatchSize || size+n > startBatchBytes) {
				out = append(out, cur)
				cur, size = nil, 0
			}
			cur = append(cur, i)
			size += n
		}
		if len(cur) > 0 {
			out = append(out, cur)
		}
	}
	return out
}

func pick(specs []ProcSpec, idx []int) []ProcSpec {
	out := make([]ProcSpec, len(idx))
	for j, i := range idx {
		out[j] = specs[i]
	}
	return out
}

// batchStarter is implemented by the runner's own targets (common's
// startBatch): those that run StartAll's helper script.
type batchStarter interface {
	startBatch(ctx context.Context, specs []ProcSpec) ([]Proc, []error)
}

// startScript starts the processes given as groups of four arguments
// (command, log file, name, nonce), all first, then waits for each one's
// pid file. Each command runs detached: a new session (setsid) so it has
// its own process group and no controlling terminal, output appended to
// the log file (or a fresh file under $TMPDIR/dpulab-UID named after the
// name and the nonce), stdin from /dev/null. The group leader is a small
// shell that opens the log, then writes the pid file (so the log exists
// once Start returns), and removes the pid file when the command ends, so
// Stop never signals a pid that has since been reused by something else;
// its command line names the log and pid files, so a marker that is a
// directory above them (StopMarked) matches the group from the instant it
// exists.
//
// Before launching one, it claims the directory PIDFILE.NONCE: if Start's
// cancel (startCancelScript) made it first, that one does not start; else
// the group id is written into it at once, for the cancel to find. For
// process J (0-based) it prints "J PID LOGFILE", or "J - REASON" when it
// did not start.
const startScript = `umask 077
i=0
while [ $# -ge 4 ]; do
  log=$2
  if [ -z "$log" ]; then d="${TMPDIR:-/tmp}/dpulab-$(id -u)"; log="$d/$3-$4.log"; else d=$(dirname "$log"); fi
  if ! mkdir -p "$d" 2>/dev/null; then
    echo "$i - cannot create $d"
  else
    pf="$log.pid"
    claim="$pf.$4"
    if ! mkdir "$claim" 2>/dev/null; then
      echo "$i - start cancelled"
    else
      rm -f "$pf"
      setsid sh -c 'exec >>"$2" 2>&1 </dev/null; echo "$$" >"$3.tmp" && mv "$3.tmp" "$3"; sh -c "$1"; rc=$?; rm -f "$3"; exit $rc' dpulab-start "$1" "$log" "$pf" >/dev/null 2>&1 </dev/null &
      p=$!
      echo "$p" >"$claim/pgid"
      eval "P_$i=\$p L_$i=\$log"
    fi
  fi
  i=$((i+1))
  shift 4
done
j=0
w=0
while [ "$j" -lt "$i" ]; do
  eval "p=\${P_$j-} log=\${L_$j-}"
  if [ -n "$p" ]; then
    pf="$log.pid"
    while [ ! -s "$pf" ] && kill -0 "$p" 2>/dev/null && [ "$w" -le 3000 ]; do w=$((w+1)); sleep 0.02; done
    if [ ! -s "$pf" ] && kill -0 "$p" 2>/dev/null; then echo "$j - no pid file $pf: waited 60s or more for the process to write it (the host may be overloaded)"; else printf '%s %s %s\n' "$j" "$p" "$log"; fi
  fi
  j=$((j+1))
done`

// startBatch starts specs (all with the same Sudo) with one helper
// command (startScript); see StartAll. Start is a batch of one.
func (c *common) startBatch(ctx context.Context, specs []ProcSpec) ([]Proc, []error) {
	procs := make([]Proc, len(specs))
	errs := make([]error, len(specs))
	fail := func(err error) ([]Proc, []error) {
		for j := range errs {
			if errs[j] == nil && procs[j].PID == 0 {
				errs[j] = err
			}
		}
		return procs, errs
	}
	if len(specs) == 0 {
		return procs, errs
	}
	names := make([]string, len(specs))
	nonces := make([]string, len(specs))
	args := make([]string, 0, 4*len(specs))
	for j, p := range specs {
		names[j] = unsafeName.ReplaceAllString(p.Name, "_")
		if names[j] == "" {
			names[j] = "proc"
		}
		nonces[j] = newNonce()
		args = append(args, p.Cmd, p.LogFile, names[j], nonces[j])
	}
	sudo := specs[0].Sudo
	script := "sh -c " + Quote(startScript) + " dpulab-start " + QuoteAll(args...)
	script, stdin, err := c.asRoot(ctx, script, sudo)
	if err != nil {
		return fail(err)
	}
	out, errOut, code, err := c.simple(ctx, script, stdin)
	if err != nil {
		if ctx.Err() != nil {
			// The batch may have launched any of its processes, or may
			// still: undo each before their pids are lost with this error.
			for j, p := range specs {
				if cerr := c.cancelStart(p, names[j], nonces[j]); cerr != nil {
					errs[j] = fmt.Errorf("%w (and stopping what it may have started failed: %v)", onHost("start "+p.Name, c.host, err), cerr)
				}
			}
		}
		what := "start " + specs[0].Name
		if len(specs) > 1 {
			what += " and the rest of its batch"
		}
		return fail(onHost(what, c.host, err))
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 {
			continue
		}
		j, jerr := strconv.Atoi(f[0])
		if jerr != nil || j < 0 || j >= len(specs) || errs[j] != nil || procs[j].PID != 0 {
			continue
		}
		p := specs[j]
		if f[1] == "-" {
			errs[j] = fmt.Errorf("start %s on %s: %s", p.Name, c.host, f[2])
			continue
		}
		pid, perr := strconv.Atoi(f[1])
		if perr != nil || pid <= 1 {
			errs[j] = fmt.Errorf("start %s on %s: unexpected reply %q", p.Name, c.host, line)
			continue
		}
		procs[j] = Proc{Host: c.host, Name: p.Name, PID: pid, LogFile: f[2], Sudo: p.Sudo}
	}
	if code != 0 {
		return fail(fmt.Errorf("start %s on %s: exit %d: %s", specs[0].Name, c.host, code, strings.TrimSpace(string(errOut))))
	}
	return fail(fmt.Errorf("start %s on %s: no reply from the batch that started it: %s", specs[0].Name, c.host, strings.TrimSpace(string(errOut))))
}
