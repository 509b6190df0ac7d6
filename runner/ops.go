package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// simpleFunc runs a short helper script to completion (sh semantics) and
// returns its output. Targets provide one; the operations that are the same
// everywhere (detached processes, sudo, platform) are written once on top.
type simpleFunc func(ctx context.Context, script string, stdin []byte) (stdout, stderr []byte, code int, err error)

// common is the part of a Target shared by local and SSH.
type common struct {
	host     string
	user     func() string
	simple   simpleFunc
	prompter func() Prompter

	sudoMu   sync.Mutex
	sudoMode sudoMode
	sudoPW   string // in memory only

	platMu sync.Mutex
	plat   *Platform
}

type sudoMode int

const (
	sudoUnknown  sudoMode = iota
	sudoRoot              // already root: run as is
	sudoNoPasswd          // sudo -n works
	sudoPassword          // sudo -k -S -p '' with the password on stdin
)

const sudoProbe = `if [ "$(id -u)" = 0 ]; then echo root; elif ! command -v sudo >/dev/null 2>&1; then echo nosudo; elif sudo -n true 2>/dev/null; then echo nopasswd; else echo password; fi`

// sudoPrefix returns what to put in front of a command to run it as root,
// and what to feed its stdin first. It probes the host once: root needs
// nothing, passwordless sudo gets `sudo -n`, otherwise the password is asked
// through the Prompter, checked, and fed on stdin to `sudo -k -S -p ”` (-k so
// sudo always reads it: a cached credential would let the password flow on
// into the command's own stdin).
func (c *common) sudoPrefix(ctx context.Context) (string, []byte, error) {
	c.sudoMu.Lock()
	defer c.sudoMu.Unlock()
	if c.sudoMode == sudoUnknown {
		out, errOut, code, err := c.simple(ctx, sudoProbe, nil)
		if err != nil {
			return "", nil, onHost("sudo", c.host, err)
		}
		switch strings.TrimSpace(string(out)) {
		case "root":
			c.sudoMode = sudoRoot
		case "nopasswd":
			c.sudoMode = sudoNoPasswd
		case "password":
			if err := c.askSudoPassword(ctx); err != nil {
				return "", nil, err
			}
			c.sudoMode = sudoPassword
		case "nosudo":
			return "", nil, &SudoError{Host: c.host, User: c.user(), Reason: "sudo is not installed and the user is not root", Fix: "Install sudo on " + c.host + ", or connect as root."}
		default:
			return "", nil, &SudoError{Host: c.host, User: c.user(), Reason: fmt.Sprintf("could not tell whether sudo works (exit %d: %s)", code, strings.TrimSpace(string(errOut)))}
		}
	}
	switch c.sudoMode {
	case sudoNoPasswd:
		return "sudo -n ", nil, nil
	case sudoPassword:
		return "sudo -k -S -p '' ", []byte(c.sudoPW + "\n"), nil
	}
	return "", nil, nil
}

// askSudoPassword prompts for the sudo password until sudo takes it (three
// tries), and says clearly when the user may not use sudo at all.
func (c *common) askSudoPassword(ctx context.Context) error {
	var last string
	for attempt := 1; attempt <= 3; attempt++ {
		pw, err := c.prompter().Secret(ctx, SecretPrompt{Kind: SecretSudo, Host: c.host, User: c.user(), Attempt: attempt})
		if err != nil {
			return &SudoError{Host: c.host, User: c.user(), Reason: "a password is required: " + err.Error(), Fix: fmt.Sprintf("Allow %s passwordless sudo on %s (a sudoers NOPASSWD rule) for headless runs, or run in the TUI to type the password.", c.user(), c.host)}
		}
		_, errOut, code, err := c.simple(ctx, "sudo -k -S -p '' true", []byte(pw+"\n"))
		if err != nil {
			return onHost("sudo", c.host, err)
		}
		if code == 0 {
			c.sudoPW = pw
			return nil
		}
		last = strings.TrimSpace(string(errOut))
		if strings.Contains(last, "not in the sudoers") || strings.Contains(last, "not allowed") || strings.Contains(last, "may not run sudo") {
			break
		}
	}
	return &SudoError{Host: c.host, User: c.user(), Reason: fmt.Sprintf("sudo refused (%s)", last), Fix: fmt.Sprintf("Check the password, or ask the admin of %s to allow %s to run sudo.", c.host, c.user())}
}

// startCancelScript undoes a Start whose caller gave up while it ran (args:
// the process's log file, name and nonce, as given to startScript). It
// claims PIDFILE.NONCE: made here, the launch never happens and it prints
// "none"; made by the launcher, it waits for the group id the launcher
// writes right after forking and prints "PID LOGFILE" for Stop. Exit 3: the
// launcher died between the two.
const startCancelScript = `log=$1
if [ -z "$log" ]; then log="${TMPDIR:-/tmp}/dpulab-$(id -u)/$2-$3.log"; fi
pf="$log.pid"
claim="$pf.$3"
mkdir -p "$(dirname "$log")" 2>/dev/null
if mkdir "$claim" 2>/dev/null; then echo none; exit 0; fi
i=0
while [ ! -s "$claim/pgid" ]; do i=$((i+1)); if [ "$i" -gt 250 ]; then echo "$log"; exit 3; fi; sleep 0.02; done
printf '%s %s\n' "$(cat "$claim/pgid")" "$log"`

// stopScript ends process group $1 if it is still the one Start made:
// pid file $2 names it, or, when the file is gone with its directory (a
// tmp cleaner, a person), the group leader's command line still names
// the file (startScript passes it). SIGTERM, then SIGKILL after $3 tenths
// of a second, then a check: a group still alive 10 s after SIGKILL is an
// error (exit 1), never a stop. Liveness ignores zombies (ps stat Z),
// which kill -0 would count until their new parent reaps them.
const stopScript = `alive() { if command -v ps >/dev/null 2>&1; then ps -eo pgid=,stat= | awk -v p="$1" '$1==p && $2 !~ /^Z/ {f=1} END {exit !f}'; else kill -0 -"$1" 2>/dev/null; fi; }
p=$1
if [ "$(cat "$2" 2>/dev/null)" != "$p" ]; then
  case "$(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null)" in *" $2"*) ;; *) rm -rf "$2".dpulab-run-*; exit 0 ;; esac
fi
kill -TERM -"$p" 2>/dev/null || { rm -rf "$2".dpulab-run-*; exit 0; }
i=0
while alive "$p"; do i=$((i+1)); if [ "$i" -gt "$3" ]; then kill -KILL -"$p" 2>/dev/null; break; fi; sleep 0.1; done
i=0
while alive "$p"; do i=$((i+1)); if [ "$i" -gt 100 ]; then echo "process group $p still runs 10s after SIGKILL" >&2; exit 1; fi; sleep 0.1; done
rm -f "$2"
rm -rf "$2".dpulab-run-*`

// stopMarkedScript ends every process group whose leader's command line
// carries the marker read from stdin (after sudo's password, when there is
// one: never in argv, where the script would match itself) as an argument,
// or as a directory of a path in one. Zombies and this script's own group
// are skipped. SIGTERM, then SIGKILL after $1 tenths of a second to those
// still alive, then a check. Prints how many groups it signalled; exit 1
// when a group could not be signalled (another user's: use sudo) or still
// runs 10 s after SIGKILL.
const stopMarkedScript = `IFS= read -r m || { echo "no marker on stdin" >&2; exit 2; }
case "$m" in /?*/?*) ;; *) echo "refusing marker $m: not an absolute path of two components" >&2; exit 2 ;; esac
read -r st </proc/$$/stat || exit 2
set -- "$1" ${st##*) }
self=$5
groups=
for d in /proc/[0-9]*; do
  p=${d#/proc/}
  read -r st 2>/dev/null <"$d/stat" || continue
  set -- "$1" ${st##*) }
  [ "$4" = "$p" ] || continue
  [ "$2" = Z ] && continue
  [ "$p" = "$self" ] && continue
  c=$(tr '\0' ' ' 2>/dev/null <"$d/cmdline") || continue
  case " $c " in *"$m/"*|*"$m "*|*"$m'"*|*"$m\""*) groups="$groups $p" ;; esac
done
n=0
rc=0
for p in $groups; do
  if kill -TERM -"$p" 2>/dev/null; then n=$((n+1)); elif kill -0 -"$p" 2>/dev/null || [ -d /proc/"$p" ]; then echo "cannot signal process group $p: it belongs to another user (stop with sudo)" >&2; rc=1; fi
done
live() { if command -v ps >/dev/null 2>&1; then ps -eo pgid=,stat= | awk -v g=" $groups " '$2 !~ /^Z/ && index(g, " " $1 " ") {print $1}' | sort -u; else for p in $groups; do kill -0 -"$p" 2>/dev/null && echo "$p"; done; fi; }
i=0
while [ -n "$groups" ]; do
  left=$(live)
  [ -z "$left" ] && break
  i=$((i+1))
  if [ "$i" -gt "$1" ]; then
    for p in $left; do kill -KILL -"$p" 2>/dev/null; done
    j=0; while left=$(live) && [ -n "$left" ] && [ "$j" -lt 100 ]; do j=$((j+1)); sleep 0.1; done
    if [ -n "$left" ]; then echo "process groups" $left "still run 10s after SIGKILL" >&2; rc=1; fi
    break
  fi
  sleep 0.1
done
echo "$n"
exit $rc`

// killScript ends process group $1, but only if its leader's command line
// still carries nonce $2 (the group was ours, not a reused pid): SIGTERM,
// then SIGKILL after $3 tenths of a second. Group 0 means its id never
// reached us (the connection dropped in the command's first moments): the
// leader is then found by its command line, runWrapper's "sh -c WRAPPER
// NONCE CMD" (sh, -c, the wrapper's text, the nonce); no such process means
// the command never started or has ended.
const killScript = `alive() { if command -v ps >/dev/null 2>&1; then ps -eo pgid=,stat= | awk -v p="$1" '$1==p && $2 !~ /^Z/ {f=1} END {exit !f}'; else kill -0 -"$1" 2>/dev/null; fi; }
p=$1
if [ "$p" = 0 ]; then
  p=
  for f in $(grep -lzxF -- "$2" /proc/[0-9]*/cmdline 2>/dev/null); do
    a=$(tr '\0' '\n' <"$f" 2>/dev/null | sed -n '1p;2p;4p' | tr '\n' ' ')
    [ "$a" = "sh -c $2 " ] || continue
    case "$(tr '\0' '\n' <"$f" 2>/dev/null | sed -n 3p)" in "printf '%s:%s\n' "*) p=${f#/proc/}; p=${p%/cmdline}; break ;; esac
  done
  [ -n "$p" ] || exit 0
fi
case $p in ''|0|*[!0-9]*) echo "bad process group id: $p" >&2; exit 2 ;; esac
case "$(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null)" in *"$2"*) ;; *) kill -0 -"$p" 2>/dev/null || exit 0; [ -r /proc/"$p"/cmdline ] && exit 0 ;; esac
kill -TERM -"$p" 2>/dev/null || exit 0
i=0
while alive "$p"; do i=$((i+1)); if [ "$i" -gt "$3" ]; then kill -KILL -"$p" 2>/dev/null; break; fi; sleep 0.1; done`

// safeName keeps a process name usable inside a file name.
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// start is a batch of one (startBatch): the same launch, claim and
// cancel as StartAll's.
func (c *common) start(ctx context.Context, p ProcSpec) (Proc, error) {
	ps, es := c.startBatch(ctx, []ProcSpec{p})
	return ps[0], es[0]
}

// cancelGrace is how long a process whose Start was cancelled gets between
// SIGTERM and SIGKILL.
const cancelGrace = time.Second

// asRoot prefixes script with what runs it as root when sudo is set, and
// returns the stdin that must come first (sudo's password, when it needs
// one): every operation that may run as root goes through it.
func (c *common) asRoot(ctx context.Context, script string, sudo bool) (string, []byte, error) {
	if !sudo {
		return script, nil, nil
	}
	prefix, pw, err := c.sudoPrefix(ctx)
	if err != nil {
		return "", nil, err
	}
	return prefix + script, pw, nil
}

// cancelStart stops what a cancelled Start launched, if anything, on a
// fresh short context (the caller's has ended).
func (c *common) cancelStart(p ProcSpec, name, nonce string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second+cancelGrace)
	defer cancel()
	script := "sh -c " + Quote(startCancelScript) + " dpulab-cancel " + QuoteAll(p.LogFile, name, nonce)
	script, stdin, err := c.asRoot(ctx, script, p.Sudo)
	if err != nil {
		return err
	}
	out, errOut, code, err := c.simple(ctx, script, stdin)
	if err != nil {
		return err
	}
	reply := strings.TrimSpace(string(out))
	switch code {
	case 0:
	case 3:
		// The launcher died after claiming and maybe after forking: find
		// the group by its pid file's path in the leader's command line.
		_, err := c.stopMarked(ctx, reply+".pid", cancelGrace, p.Sudo)
		return err
	default:
		return fmt.Errorf("exit %d: %s", code, strings.TrimSpace(string(errOut)))
	}
	if reply == "none" {
		return nil
	}
	pidS, logFile, ok := strings.Cut(reply, " ")
	pid, perr := strconv.Atoi(pidS)
	if !ok || perr != nil || pid <= 1 {
		return fmt.Errorf("unexpected reply %q", reply)
	}
	return c.stop(ctx, Proc{Host: c.host, Name: p.Name, PID: pid, LogFile: logFile, Sudo: p.Sudo}, cancelGrace)
}

// StopMarked ends every process group on t whose leader's command line
// carries marker, an absolute path such as a run's working directory: as an
// argument, or as a directory of a path in one (startScript puts the log
// and pid file paths in the leader's command line, so a Start whose Proc was
// never recorded is found by the directory of its log file). SIGTERM, then
// SIGKILL after grace to groups still alive. Zombies are ignored, and a
// group whose leader does not carry the marker is never touched. With sudo
// the search and the signals run as root (processes started with
// ProcSpec.Sudo). It returns how many groups it signalled. Commands of Run
// still running whose command line names a path under marker (a sampler
// run from the working directory's binary) are process groups of their own
// too, and are ended with the rest.
//
// A short marker, or one that is not a clean absolute path of at least two
// components outside the system directories, is refused: it could match
// processes that are not ours.
func StopMarked(ctx context.Context, t Target, marker string, grace time.Duration, sudo bool) (stopped int, err error) {
	if err := checkMarker(marker); err != nil {
		return 0, fmt.Errorf("stop processes of %s on %s: %w", marker, t.Name(), err)
	}
	ms, ok := t.(interface {
		stopMarked(ctx context.Context, marker string, grace time.Duration, sudo bool) (int, error)
	})
	if ok {
		return ms.stopMarked(ctx, marker, grace, sudo)
	}
	// Any other Target (a test's fake, a wrapper) runs the same script as a
	// command, the marker on stdin.
	var out strings.Builder
	script := "sh -c " + Quote(stopMarkedScript) + " dpulab-stop-marked " + Quote(strconv.Itoa(int(grace/(100*time.Millisecond))))
	res, err := t.Run(ctx, Command{Cmd: script, Sudo: sudo, Stdin: []byte(marker + "\n"), Timeout: grace + time.Minute, Output: func(l Line) {
		if l.Stream == Stdout {
			out.WriteString(l.Text)
		}
	}})
	if err != nil {
		return 0, onHost("stop processes of "+marker, t.Name(), err)
	}
	n, perr := strconv.Atoi(strings.TrimSpace(out.String()))
	if res.ExitCode != 0 || perr != nil {
		return n, fmt.Errorf("stop processes of %s on %s: exit %d", marker, t.Name(), res.ExitCode)
	}
	return n, nil
}

// systemDirs are top-level directories whose subdirectories name programs
// everyone runs: never a marker.
var systemDirs = map[string]bool{"bin": true, "sbin": true, "usr": true, "lib": true, "lib32": true, "lib64": true, "libx32": true, "etc": true, "proc": true, "sys": true, "dev": true, "boot": true, "opt": true, "snap": true, "nix": true}

func checkMarker(m string) error {
	switch {
	case m == "":
		return errors.New("empty marker")
	case strings.ContainsAny(m, "\x00\n\r"):
		return fmt.Errorf("marker %q holds a control character", m)
	case !path.IsAbs(m) || path.Clean(m) != m:
		return fmt.Errorf("marker %q is not a clean absolute path", m)
	case strings.Count(m, "/") < 2:
		return fmt.Errorf("marker %q has fewer than two path components: it could match processes that are not ours", m)
	case len(m) < 8:
		return fmt.Errorf("marker %q is shorter than 8 characters: it could match processes that are not ours", m)
	case systemDirs[strings.Split(m, "/")[1]]:
		return fmt.Errorf("marker %q is under a system directory: it would match programs that are not ours", m)
	}
	return nil
}

func (c *common) stopMarked(ctx context.Context, marker string, grace time.Duration, sudo bool) (int, error) {
	script := "sh -c " + Quote(stopMarkedScript) + " dpulab-stop-marked " + Quote(strconv.Itoa(int(grace/(100*time.Millisecond))))
	script, stdin, err := c.asRoot(ctx, script, sudo)
	if err != nil {
		return 0, err
	}
	stdin = append(append(stdin[:len(stdin):len(stdin)], marker...), '\n')
	out, errOut, code, err := c.simple(ctx, script, stdin)
	if err != nil {
		return 0, onHost("stop processes of "+marker, c.host, err)
	}
	n, perr := strconv.Atoi(strings.TrimSpace(string(out)))
	if code != 0 || perr != nil {
		return n, fmt.Errorf("stop processes of %s on %s: exit %d: %s", marker, c.host, code, strings.TrimSpace(string(errOut)))
	}
	return n, nil
}

func (c *common) stop(ctx context.Context, p Proc, grace time.Duration) error {
	if p.PID <= 1 {
		return fmt.Errorf("stop %s on %s: no pid recorded", p.Name, c.host)
	}
	tenths := int(grace / (100 * time.Millisecond))
	script := "sh -c " + Quote(stopScript) + " dpulab-stop " + QuoteAll(strconv.Itoa(p.PID), p.LogFile+".pid", strconv.Itoa(tenths))
	script, stdin, err := c.asRoot(ctx, script, p.Sudo)
	if err != nil {
		return err
	}
	_, errOut, code, err := c.simple(ctx, script, stdin)
	if err != nil {
		return onHost("stop "+p.Name, c.host, err)
	}
	if code != 0 {
		return fmt.Errorf("stop %s on %s: exit %d: %s", p.Name, c.host, code, strings.TrimSpace(string(errOut)))
	}
	return nil
}

// killGroup ends a process group of a cancelled Run (see killScript).
func (c *common) killGroup(ctx context.Context, pgid int, nonce string, sudo bool, grace time.Duration) error {
	script := "sh -c " + Quote(killScript) + " dpulab-kill " + QuoteAll(strconv.Itoa(pgid), nonce, strconv.Itoa(int(grace/(100*time.Millisecond))))
	script, stdin, err := c.asRoot(ctx, script, sudo)
	if err != nil {
		return err
	}
	_, errOut, code, err := c.simple(ctx, script, stdin)
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("kill process group %d on %s: exit %d: %s", pgid, c.host, code, strings.TrimSpace(string(errOut)))
	}
	return nil
}

func (c *common) platform(ctx context.Context) (Platform, error) {
	c.platMu.Lock()
	defer c.platMu.Unlock()
	if c.plat != nil {
		return *c.plat, nil
	}
	out, errOut, code, err := c.simple(ctx, "uname -sm", nil)
	if err != nil {
		return Platform{}, onHost("find the platform", c.host, err)
	}
	if code != 0 {
		return Platform{}, fmt.Errorf("platform of %s: uname -sm: exit %d: %s", c.host, code, strings.TrimSpace(string(errOut)))
	}
	p, err := ParseUname(string(out))
	if err != nil {
		return Platform{}, fmt.Errorf("platform of %s: %w", c.host, err)
	}
	c.plat = &p
	return p, nil
}

// ParseUname maps the output of `uname -sm` ("Linux aarch64") to Go's names
// (linux/arm64).
func ParseUname(s string) (Platform, error) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return Platform{}, fmt.Errorf("unexpected uname -sm output %q", s)
	}
	osName := strings.ToLower(f[0])
	arch, ok := map[string]string{
		"x86_64": "amd64", "amd64": "amd64",
		"aarch64": "arm64", "arm64": "arm64", "aarch64_be": "arm64be",
		"armv7l": "arm", "armv6l": "arm", "armv8l": "arm",
		"i386": "386", "i486": "386", "i586": "386", "i686": "386",
		"ppc64le": "ppc64le", "ppc64": "ppc64", "s390x": "s390x",
		"riscv64": "riscv64", "mips64": "mips64", "loongarch64": "loong64",
	}[f[1]]
	if !ok {
		return Platform{}, fmt.Errorf("unknown machine %q in uname -sm output %q", f[1], s)
	}
	return Platform{OS: osName, Arch: arch}, nil
}

// newNonce returns a random tag put into a run's command line so that a
// later kill can tell the process group is still ours.
func newNonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "dpulab-run-" + hex.EncodeToString(b[:])
}
