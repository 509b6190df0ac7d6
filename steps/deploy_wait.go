package steps

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dpulab/dpulab/runner"
)

// How deploy waits for its servers to answer PING. A server starting on a
// saturated host (a booth laptop, a trainee's VM running the load
// generator too) may need far longer than on a quiet one, so there is no
// fixed PING timeout: deploy waits as long as the server's process lives
// and its start is progressing (its process group uses CPU time, or its
// log grows), up to a generous overall limit. What it does not wait for:
//
//   - a server process that exited: reported at once, with its log;
//   - a server process that still runs but has used no CPU and written
//     nothing for waitLimits.Stall: stuck, not slow;
//   - waitLimits.Max: the host is too slow to be measured meaningfully;
//     the error says what it waited for and the host's load average.
//
// One status command per host and round (not one per instance) reads
// whether each instance's process group lives, its CPU time and its log's
// size, and the host's load average: with sshd's default MaxSessions 10,
// 30 instances polled one command each would queue behind each other.

// waitLimits bounds deploy's wait for one host's instances.
type waitLimits struct {
	// Max bounds the whole wait.
	Max time.Duration
	// Stall gives up on an instance whose process lives but has used no
	// CPU and written nothing to its log for this long.
	Stall time.Duration
	// Try bounds one PING over a connection from the host's side;
	// CmdTry one made by a command on the host (a namespace's server,
	// a host whose sshd does not forward), which must start a dpulab
	// bench first: seconds on a quiet host, far more on a saturated one.
	Try, CmdTry time.Duration
}

// defaultWait is generous: minutes, not seconds, because a start under a
// load average of 40 on two cores was seen to take longer than 15 s.
var defaultWait = waitLimits{Max: 5 * time.Minute, Stall: 90 * time.Second, Try: 5 * time.Second, CmdTry: time.Minute}

func (e *Engine) waitLimits() waitLimits {
	if e.deployWait.Max > 0 {
		return e.deployWait
	}
	return defaultWait
}

// waiting is one instance deploy still waits for.
type waiting struct {
	k    int
	inst Instance
	proc runner.Proc
	log  string
	// last is the last PING's error.
	last error
	// cpu is the process group's CPU time in clock ticks (-1 before the
	// first status), size the log's size; moved is when either last
	// changed.
	cpu, size int64
	moved     time.Time
}

// awaitInstances waits until every instance of p on h answers PING (see
// above). The error is a *StepError naming the lowest-numbered instance
// that is not up, with its log's last lines.
func (e *Engine) awaitInstances(ctx context.Context, h hostRef, t runner.Target, p deployPlan, procs []runner.Proc) error {
	lim := e.waitLimits()
	start := time.Now()
	pending := make([]*waiting, p.Instances)
	for k := range pending {
		port := p.Port + k
		pending[k] = &waiting{k: k, inst: p.hostSide(h, k), proc: procs[k], log: path.Join(e.instanceDir(p.Group, port), "server.log"), cpu: -1, moved: start}
	}
	var st hostStatus
	pause := 100 * time.Millisecond
	for {
		_ = forEachInstance(len(pending), probeConcurrency, func(i int) error {
			w := pending[i]
			try := lim.Try
			if pingsByCommand(h, t, w.inst) {
				try = max(try, lim.CmdTry)
			}
			pctx, cancel := context.WithTimeout(ctx, try)
			w.last = e.pingOnce(pctx, h, t, w.inst)
			if w.last != nil && ctx.Err() == nil && pctx.Err() != nil {
				w.last = fmt.Errorf("no answer within %s: %w", try, w.last)
			}
			cancel()
			return nil
		})
		pending = slices.DeleteFunc(pending, func(w *waiting) bool { return w.last == nil })
		if len(pending) == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return e.notUp(ctx, h, t, p, pending, fmt.Errorf("stopped waiting after %s for it to answer PING: %w", since(start), err))
		}
		if s, err := readHostStatus(ctx, t, pending); err == nil {
			st = s
			now := time.Now()
			for _, w := range pending {
				g, ok := st.groups[w.proc.PID]
				if !ok || g.live == 0 {
					return e.notUp(ctx, h, t, p, []*waiting{w}, fmt.Errorf("the server process (pid %d) exited before it answered PING", w.proc.PID))
				}
				size := st.sizes[w.log]
				if g.ticks != w.cpu || size != w.size {
					w.cpu, w.size, w.moved = g.ticks, size, now
				}
			}
		}
		now := time.Now()
		for i, w := range pending {
			if now.Sub(w.moved) > lim.Stall {
				err := &waitError{
					msg:  fmt.Sprintf("its server process (pid %d) still runs but has used no CPU and written nothing to its log for %s, and does not answer PING (last try: %v)", w.proc.PID, lim.Stall, w.last),
					hint: fmt.Sprintf("The server is stuck, not slow: its log %s may say why. Run the step again; if it sticks again, start the same command by hand on %s and watch it.", w.log, h.Name),
				}
				return e.notUp(ctx, h, t, p, pending[i:], err)
			}
		}
		if now.Sub(start) > lim.Max {
			w := pending[0]
			err := &waitError{
				msg:  fmt.Sprintf("waited %s for it to answer PING while its server process (pid %d) ran%s; the last try: %v. %s", since(start), w.proc.PID, st.cpuUsed(w), w.last, st.loadSentence(h.Name)),
				hint: fmt.Sprintf("%s may be overloaded: its server process still ran, and PING found no answer in time, when dpulab stopped waiting. Let the load drop (uptime shows it), deploy fewer instances (the lab's instances variable, with --set), or run the load generator on another host; then run the step again.", h.Name),
			}
			return e.notUp(ctx, h, t, p, pending, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// pingsByCommand reports whether pingOnce reaches inst through a command
// on the host rather than a connection (see pingOnce).
func pingsByCommand(h hostRef, t runner.Target, inst Instance) bool {
	if inst.NetNS != "" {
		return true
	}
	_, dials := t.(contextDialer)
	return !dials && !h.Local
}

// notUp is the failure of the first of ws, with its log's last lines;
// others of ws are counted.
func (e *Engine) notUp(ctx context.Context, h hostRef, t runner.Target, p deployPlan, ws []*waiting, err error) error {
	w := ws[0]
	port := p.Port + w.k
	// The log is read on a short context of its own: ctx may have ended.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	log, _ := t.ReadFile(rctx, w.log)
	cancel()
	more := ""
	if len(ws) > 1 {
		more = fmt.Sprintf(" (and %d more of group %s's instances there)", len(ws)-1, p.Group)
	}
	var we *waitError
	if errors.As(err, &we) {
		we.msg = fmt.Sprintf("instance %s:%d on %s is not up: %s%s (its log is %s)", p.Group, port, h.Name, we.msg, more, w.log)
	} else {
		err = fmt.Errorf("instance %s:%d on %s is not up: %w%s (its log is %s)", p.Group, port, h.Name, err, more, w.log)
	}
	return &StepError{Host: h.Name, Cmd: e.serverCmd(h, p, port), Tail: lastLines(string(log), 10), Err: err}
}

// waitError is a deploy that gave up waiting for a server that had not
// exited: what it waited for, and its own fix, which replaces the lab's
// hint (written for a server that fails, such as a port in use).
type waitError struct {
	msg, hint string
}

func (w *waitError) Error() string { return w.msg }

// Hint is what to do about it (see ownHint).
func (w *waitError) Hint() string { return w.hint }

func since(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }

// hostStatus is what one status command read on a host.
type hostStatus struct {
	ok bool
	// load is the 1-minute load average ("" when unread), cpus the
	// cores online, hz the clock ticks per second.
	load string
	cpus int
	hz   int64
	// groups by process group id; sizes of the log files by path.
	groups map[int]groupStatus
	sizes  map[string]int64
}

type groupStatus struct {
	// live counts the group's processes that are not zombies; ticks is
	// their CPU time.
	live  int
	ticks int64
}

// cpuUsed says how much CPU the instance's processes have used, when known.
func (s hostStatus) cpuUsed(w *waiting) string {
	if !s.ok || w.cpu < 0 || s.hz <= 0 {
		return ""
	}
	return fmt.Sprintf(" (%.2f s of CPU so far)", float64(w.cpu)/float64(s.hz))
}

// loadSentence says how loaded host is, when the status could read it.
func (s hostStatus) loadSentence(host string) string {
	if !s.ok || s.load == "" {
		return host + " may be overloaded."
	}
	l, err := strconv.ParseFloat(s.load, 64)
	if err != nil || s.cpus <= 0 {
		return fmt.Sprintf("The load average of %s is %s: it may be overloaded.", host, s.load)
	}
	if l > float64(s.cpus) {
		return fmt.Sprintf("The load average of %s is %s on %d cores (%.1f per core): it looks overloaded.", host, s.load, s.cpus, l/float64(s.cpus))
	}
	return fmt.Sprintf("The load average of %s is %s on %d cores: it may be overloaded.", host, s.load, s.cpus)
}

// statusScript prints, for the process groups in $1 (space-separated
// ids), one "group PGID LIVE TICKS" line each (LIVE: members that are not
// zombies; TICKS: their CPU time), the sizes of the files given after it
// (wc -c), the load average and cores; "end" last, so that output cut
// short is not taken for groups that are gone. One pass over /proc/*/stat
// and one wc: a few processes per round, whatever the number of instances.
const statusScript = `g=$1; shift
if read -r l1 _ </proc/loadavg 2>/dev/null; then echo "load $l1"; fi
echo "cpus $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 0)"
echo "hz $(getconf CLK_TCK 2>/dev/null || echo 100)"
cat /proc/[0-9]*/stat 2>/dev/null | awk -v g=" $g " '{ s = $0; sub(/^.*\) /, "", s); n = split(s, f, " "); if (n < 13 || !index(g, " " f[3] " ")) next; if (f[1] != "Z") live[f[3]]++; t[f[3]] += f[12] + f[13] } END { for (p in t) print "group", p, live[p] + 0, t[p] }'
if [ $# -gt 0 ]; then wc -c -- "$@" 2>/dev/null; fi
echo end`

// readHostStatus runs statusScript on t for the instances of ws.
func readHostStatus(ctx context.Context, t runner.Target, ws []*waiting) (hostStatus, error) {
	groups := make([]string, len(ws))
	logs := make([]string, len(ws))
	for i, w := range ws {
		groups[i] = strconv.Itoa(w.proc.PID)
		logs[i] = w.log
	}
	var mu sync.Mutex
	var lines []string
	cmd := "sh -c " + runner.Quote(statusScript) + " dpulab-status " + runner.QuoteAll(append([]string{strings.Join(groups, " ")}, logs...)...)
	res, err := t.Run(ctx, runner.Command{Cmd: cmd, Timeout: time.Minute, Output: func(l runner.Line) {
		if l.Stream == runner.Stdout {
			mu.Lock()
			lines = append(lines, l.Text)
			mu.Unlock()
		}
	}})
	if err != nil {
		return hostStatus{}, err
	}
	mu.Lock()
	defer mu.Unlock()
	if res.ExitCode != 0 {
		return hostStatus{}, fmt.Errorf("status of the servers on %s: exit status %d", t.Name(), res.ExitCode)
	}
	return parseHostStatus(lines)
}

func parseHostStatus(lines []string) (hostStatus, error) {
	s := hostStatus{groups: map[int]groupStatus{}, sizes: map[string]int64{}}
	for _, l := range lines {
		l = strings.TrimSpace(l)
		key, rest, _ := strings.Cut(l, " ")
		switch key {
		case "end":
			s.ok = true
		case "load":
			s.load = rest
		case "cpus":
			s.cpus, _ = strconv.Atoi(rest)
		case "hz":
			s.hz, _ = strconv.ParseInt(rest, 10, 64)
		case "group":
			f := strings.Fields(rest)
			if len(f) != 3 {
				continue
			}
			pg, err1 := strconv.Atoi(f[0])
			live, err2 := strconv.Atoi(f[1])
			ticks, err3 := strconv.ParseInt(f[2], 10, 64)
			if err1 == nil && err2 == nil && err3 == nil {
				s.groups[pg] = groupStatus{live: live, ticks: ticks}
			}
		default:
			// wc -c: "SIZE PATH" (and a "SIZE total" line).
			if n, err := strconv.ParseInt(key, 10, 64); err == nil && path.IsAbs(rest) {
				s.sizes[rest] = n
			}
		}
	}
	if !s.ok {
		return s, errors.New("the status of the servers was cut short")
	}
	return s, nil
}

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
