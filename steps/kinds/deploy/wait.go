package deploy

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
	"github.com/dpulab/dpulab/steps/kind"
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
//     nothing for Limits.Stall: stuck, not slow;
//   - Limits.Max: the host is too slow to be measured meaningfully;
//     the error says what it waited for and the host's load average.
//
// One status command per host and round (not one per instance) reads
// whether each instance's process group lives, its CPU time and its log's
// size, and the host's load average: with sshd's default MaxSessions 10,
// 30 instances polled one command each would queue behind each other.
// The time is the Env's clock: a test runs the wait on a fake one.

// Limits bounds deploy's wait for one host's instances.
type Limits struct {
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

// DefaultLimits are generous: minutes, not seconds, because a start under
// a load average of 40 on two cores was seen to take longer than 15 s.
var DefaultLimits = Limits{Max: 5 * time.Minute, Stall: 90 * time.Second, Try: 5 * time.Second, CmdTry: time.Minute}

// probeConcurrency bounds how many instances of one host are probed or
// awaited at once: each probe is a TCP connection forwarded by the host's
// sshd (direct-tcpip), which takes no session.
const probeConcurrency = 32

// Started is an instance deploy started on a host and waits for.
type Started struct {
	// At is the instance as it is pinged from its host (its host side).
	At Instance
	// Proc is its process (its pid is its process group's id).
	Proc runner.Proc
	// Log is its log file on the host; Cmd the command that started it.
	Log, Cmd string
}

// waiting is one instance deploy still waits for.
type waiting struct {
	Started
	// last is the last PING's error.
	last error
	// cpu is the process group's CPU time in clock ticks (-1 before the
	// first status), size the log's size; moved is when either last
	// changed.
	cpu, size int64
	moved     time.Time
}

// Await waits until every instance of group started on h answers PING
// (see above). The error is a *kind.StepError naming the first of started
// that is not up, with its log's last lines.
func Await(ctx context.Context, env Env, h kind.Host, t runner.Target, group string, started []Started, lim Limits) error {
	start := env.Now()
	pending := make([]*waiting, len(started))
	for k, s := range started {
		pending[k] = &waiting{Started: s, cpu: -1, moved: start}
	}
	since := func() time.Duration { return env.Now().Sub(start).Round(100 * time.Millisecond) }
	var st hostStatus
	pause := 100 * time.Millisecond
	for {
		_ = ForEach(len(pending), probeConcurrency, func(i int) error {
			w := pending[i]
			try := lim.Try
			if PingsByCommand(h, t, w.At) {
				try = max(try, lim.CmdTry)
			}
			pctx, cancel := context.WithTimeout(ctx, try)
			w.last = Ping(pctx, env, h, t, w.At)
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
			return notUp(ctx, h, t, group, pending, fmt.Errorf("stopped waiting after %s for it to answer PING: %w", since(), err))
		}
		if s, err := readHostStatus(ctx, t, pending); err == nil {
			st = s
			now := env.Now()
			for _, w := range pending {
				g, ok := st.groups[w.Proc.PID]
				if !ok || g.live == 0 {
					return notUp(ctx, h, t, group, []*waiting{w}, fmt.Errorf("the server process (pid %d) exited before it answered PING", w.Proc.PID))
				}
				size := st.sizes[w.Log]
				if g.ticks != w.cpu || size != w.size {
					w.cpu, w.size, w.moved = g.ticks, size, now
				}
			}
		}
		now := env.Now()
		for i, w := range pending {
			if now.Sub(w.moved) > lim.Stall {
				err := &WaitError{
					msg:  fmt.Sprintf("its server process (pid %d) still runs but has used no CPU and written nothing to its log for %s, and does not answer PING (last try: %v)", w.Proc.PID, lim.Stall, w.last),
					hint: fmt.Sprintf("The server is stuck, not slow: its log %s may say why. Run the step again; if it sticks again, start the same command by hand on %s and watch it.", w.Log, h.Name),
				}
				return notUp(ctx, h, t, group, pending[i:], err)
			}
		}
		if now.Sub(start) > lim.Max {
			w := pending[0]
			err := &WaitError{
				msg:  fmt.Sprintf("waited %s for it to answer PING while its server process (pid %d) ran%s; the last try: %v. %s", since(), w.Proc.PID, st.cpuUsed(w), w.last, st.loadSentence(h.Name)),
				hint: fmt.Sprintf("%s may be overloaded: its server process still ran, and PING found no answer in time, when dpulab stopped waiting. Let the load drop (uptime shows it), deploy fewer instances (the lab's instances variable, with --set), or run the load generator on another host; then run the step again.", h.Name),
			}
			return notUp(ctx, h, t, group, pending, err)
		}
		select {
		case <-ctx.Done():
		case <-env.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// notUp is the failure of the first of ws, with its log's last lines;
// others of ws are counted.
func notUp(ctx context.Context, h kind.Host, t runner.Target, group string, ws []*waiting, err error) error {
	w := ws[0]
	// The log is read on a short context of its own: ctx may have ended.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	log, _ := t.ReadFile(rctx, w.Log)
	cancel()
	more := ""
	if len(ws) > 1 {
		more = fmt.Sprintf(" (and %d more of group %s's instances there)", len(ws)-1, group)
	}
	var we *WaitError
	if errors.As(err, &we) {
		we.msg = fmt.Sprintf("instance %s:%d on %s is not up: %s%s (its log is %s)", group, w.At.Port, h.Name, we.msg, more, w.Log)
	} else {
		err = fmt.Errorf("instance %s:%d on %s is not up: %w%s (its log is %s)", group, w.At.Port, h.Name, err, more, w.Log)
	}
	return &kind.StepError{Host: h.Name, Cmd: w.Cmd, Tail: LastLines(string(log), 10), Err: err}
}

// WaitError is a deploy that gave up waiting for a server that had not
// exited: what it waited for, and its own fix, which replaces the lab's
// hint (written for a server that fails, such as a port in use).
type WaitError struct {
	msg, hint string
}

func (w *WaitError) Error() string { return w.msg }

// Hint is what to do about it; the engine shows it instead of the lab's.
func (w *WaitError) Hint() string { return w.hint }

// ForEach runs fn for instances 0..n-1, limit at a time, and returns the
// error of the lowest-numbered instance that failed.
func ForEach(n, limit int, fn func(k int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for k := 0; k < n; k++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[k] = fn(k)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

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

// StatusScript prints, for the process groups in $1 (space-separated
// ids), one "group PGID LIVE TICKS" line each (LIVE: members that are not
// zombies; TICKS: their CPU time), the sizes of the files given after it
// (wc -c), the load average and cores; "end" last, so that output cut
// short is not taken for groups that are gone. One pass over /proc/*/stat
// and one wc: a few processes per round, whatever the number of instances.
const StatusScript = `g=$1; shift
if read -r l1 _ </proc/loadavg 2>/dev/null; then echo "load $l1"; fi
echo "cpus $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 0)"
echo "hz $(getconf CLK_TCK 2>/dev/null || echo 100)"
cat /proc/[0-9]*/stat 2>/dev/null | awk -v g=" $g " '{ s = $0; sub(/^.*\) /, "", s); n = split(s, f, " "); if (n < 13 || !index(g, " " f[3] " ")) next; if (f[1] != "Z") live[f[3]]++; t[f[3]] += f[12] + f[13] } END { for (p in t) print "group", p, live[p] + 0, t[p] }'
if [ $# -gt 0 ]; then wc -c -- "$@" 2>/dev/null; fi
echo end`

// readHostStatus runs StatusScript on t for the instances of ws.
func readHostStatus(ctx context.Context, t runner.Target, ws []*waiting) (hostStatus, error) {
	groups := make([]string, len(ws))
	logs := make([]string, len(ws))
	for i, w := range ws {
		groups[i] = strconv.Itoa(w.Proc.PID)
		logs[i] = w.Log
	}
	var mu sync.Mutex
	var lines []string
	cmd := "sh -c " + runner.Quote(StatusScript) + " dpulab-status " + runner.QuoteAll(append([]string{strings.Join(groups, " ")}, logs...)...)
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
