package steps

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/server/transport"
	"github.com/dpulab/dpulab/steps/kinds/deploy"
)

// A deploy step may start the distribution's redis-server or valkey-server
// instead of the bundled server (lab.yaml's server:). The program is found
// on the host, or installed with the host's package manager after a
// confirmation; each instance is then one foreground process started,
// recorded, stopped and swept exactly like the bundled server's (only the
// command differs, deploy.go's serverCmd), and the deployment records what
// INFO server says ran, for the results.

// serverProgram is a server a deploy step can start besides the bundled one.
type serverProgram struct {
	// name is the executable, looked up on PATH on the host.
	name string
	// apt and dnf are its package names there.
	apt, dnf string
	// rdmaKnown: some builds serve RDMA (Valkey 8.1 built with it); Redis
	// never does.
	rdmaKnown bool
}

var serverPrograms = map[string]serverProgram{
	labs.ServerRedis:  {name: "redis-server", apt: "redis-server", dnf: "redis"},
	labs.ServerValkey: {name: "valkey-server", apt: "valkey-server", dnf: "valkey", rdmaKnown: true},
}

// resolveServer fills p.Server from the step's (or variant's) server key
// and refuses what that server cannot run, before anything starts.
func (p *deployPlan) resolveServer(v labs.Value, vars map[string]string) error {
	s, err := v.String(vars, labs.ServerBundled)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	if s == labs.ServerBundled {
		p.Server = ""
		return nil
	}
	if _, ok := serverPrograms[s]; !ok {
		return fmt.Errorf("server %q: use %s", s, strings.Join(labs.ServerNames, ", "))
	}
	names := make([]string, len(p.Settings))
	for i, st := range p.Settings {
		names[i] = st[0]
	}
	if err := labs.ServerAccepts(s, p.Transport, names); err != nil {
		return err
	}
	p.Server = s
	return nil
}

// needsRDMA reports whether a plan has the server serve RDMA.
func (p deployPlan) needsRDMA() bool {
	if p.Transport == string(transport.RDMA) {
		return true
	}
	for _, s := range p.Settings {
		if strings.EqualFold(s[0], "rdma-port") && s[1] != "0" {
			return true
		}
	}
	return false
}

// installCmd is the command that installs prog with the package manager
// pm ("apt-get" or "dnf"), run with sudo.
func installCmd(prog serverProgram, pm string) string {
	if pm == "dnf" {
		return "dnf install -y " + runner.Quote(prog.dnf)
	}
	return "DEBIAN_FRONTEND=noninteractive apt-get install -y " + runner.Quote(prog.apt)
}

// findCmd prints the program's path, exit 1 when it is not on PATH.
func findCmd(prog serverProgram) string { return "command -v " + runner.Quote(prog.name) }

// detectPMCmd prints the package manager the host has.
const detectPMCmd = "if command -v apt-get >/dev/null 2>&1; then echo apt-get; elif command -v dnf >/dev/null 2>&1; then echo dnf; else echo none; fi"

// planServerInstall is what the plan and the dry run show before the
// instances' commands: the look-up, and the install that runs, with sudo,
// only when the program is missing and the person said yes.
func planServerInstall(h hostRef, p deployPlan) []PlannedCommand {
	prog, ok := serverPrograms[p.Server]
	if !ok {
		return nil
	}
	install := fmt.Sprintf("%s >/dev/null 2>&1 || if command -v apt-get >/dev/null 2>&1; then %s; else %s; fi # only after a confirmation: install %s?",
		findCmd(prog), installCmd(prog, "apt-get"), installCmd(prog, "dnf"), prog.name)
	out := []PlannedCommand{{Host: h.Name, Cmd: install, Sudo: true}}
	if p.needsRDMA() {
		out = append(out, PlannedCommand{Host: h.Name, Cmd: runner.Quote(prog.name) + " --version # must say it was built with RDMA"})
	}
	return out
}

// ensureServer makes sure the plan's server program is on h: found with
// command -v, else installed with sudo after a confirmation (--yes answers
// it), never silently. For RDMA, the program must say it was built with it.
func (e *Engine) ensureServer(ctx context.Context, step string, p deployPlan, h hostRef, t runner.Target) error {
	prog, ok := serverPrograms[p.Server]
	if !ok {
		return nil
	}
	found := func() (string, error) {
		res, err := t.Run(ctx, runner.Command{Cmd: findCmd(prog), Timeout: 30 * time.Second})
		if err != nil {
			return "", &StepError{Host: h.Name, Cmd: findCmd(prog), Err: err}
		}
		if res.ExitCode != 0 {
			return "", nil
		}
		return firstLine(res.Tail), nil
	}
	where, err := found()
	if err != nil {
		return err
	}
	if where == "" {
		if err := e.installServer(ctx, step, prog, h, t); err != nil {
			return err
		}
		if where, err = found(); err != nil {
			return err
		}
		if where == "" {
			return &StepError{Host: h.Name, Err: fmt.Errorf("%s is still not on PATH after installing it", prog.name)}
		}
	}
	e.say(step, h.Name, "%s: %q", prog.name, where)
	if !p.needsRDMA() {
		return nil
	}
	if !prog.rdmaKnown {
		return &StepError{Host: h.Name, Err: fmt.Errorf("%s has no RDMA transport: use the bundled server for rdma", prog.name)}
	}
	cmd := runner.Quote(prog.name) + " --version"
	res, err := t.Run(ctx, runner.Command{Cmd: cmd, Timeout: 30 * time.Second})
	if err != nil {
		return &StepError{Host: h.Name, Cmd: cmd, Err: err}
	}
	version := strings.Join(tailText(res.Tail), " ")
	if res.ExitCode != 0 || !strings.Contains(strings.ToLower(version), "rdma") {
		return &StepError{Host: h.Name, Cmd: cmd, Tail: tailText(res.Tail),
			Err: fmt.Errorf("%s on %s does not say it was built with RDMA (Debian's and Fedora's valkey are built without it): use the bundled server for transport rdma, or a Valkey built with BUILD_RDMA=yes", prog.name, h.Name)}
	}
	return nil
}

// installServer asks, then installs prog with the host's package manager.
func (e *Engine) installServer(ctx context.Context, step string, prog serverProgram, h hostRef, t runner.Target) error {
	res, err := t.Run(ctx, runner.Command{Cmd: detectPMCmd, Timeout: 30 * time.Second})
	if err != nil {
		return &StepError{Host: h.Name, Cmd: detectPMCmd, Err: err}
	}
	pm := firstLine(res.Tail)
	if pm != "apt-get" && pm != "dnf" {
		return &StepError{Host: h.Name, Err: fmt.Errorf("%s is not installed on %s, and the host has neither apt-get nor dnf: install it yourself, or use server: bundled", prog.name, h.Name)}
	}
	cmd := installCmd(prog, pm)
	if err := e.confirm(ctx, step, h.Name, fmt.Sprintf("%s is not installed on %s. Install it now with: sudo %s ?", prog.name, h.Name, cmd)); err != nil {
		return &StepError{Host: h.Name, Cmd: cmd, Err: fmt.Errorf("%s is not installed on %s: %w", prog.name, h.Name, err)}
	}
	e.say(step, h.Name, "installing %s: sudo %s", prog.name, cmd)
	res, err = t.Run(ctx, runner.Command{Cmd: cmd, Sudo: true, Timeout: 10 * time.Minute, Output: e.emitOutput(step)})
	if err != nil || res.ExitCode != 0 {
		return &StepError{Host: h.Name, Cmd: cmd, Tail: tailText(res.Tail), Err: fmt.Errorf("install %s: %v", prog.name, errOr(err, res))}
	}
	return nil
}

func firstLine(ls []runner.Line) string {
	for _, l := range ls {
		if l.Stream == runner.Stdout {
			if s := strings.TrimSpace(l.Text); s != "" {
				return s
			}
		}
	}
	return ""
}

// serverRan says which server a deployment runs, as INFO server of the
// first instance on each host says (name and version), else as the
// program's --version says; hosts that differ are all named.
func (e *Engine) serverRan(ctx context.Context, step string, p deployPlan) string {
	prog := serverPrograms[p.Server]
	var seen []string
	for _, h := range p.Hosts {
		t, err := e.hosts.target(ctx, h.Name)
		if err != nil {
			continue
		}
		v, how := e.serverVersion(ctx, h, t, p.hostSide(h, 0), prog)
		if v == "" {
			e.say(step, h.Name, "could not tell which %s version runs", prog.name)
			continue
		}
		s := prog.name + " " + v
		e.say(step, h.Name, "group %s runs %s (%s)", p.Group, s, how)
		if !slices.Contains(seen, s) {
			seen = append(seen, s)
		}
	}
	if len(seen) == 0 {
		return prog.name
	}
	return strings.Join(seen, ", ")
}

// versionRE is a version as servers print it: digits and dots.
var versionRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+){0,3}$`)

// serverVersion asks an instance's INFO server, and falls back to the
// program's --version (an instance in a namespace, a target that cannot
// dial from the host's side, a password INFO could not pass).
func (e *Engine) serverVersion(ctx context.Context, h hostRef, t runner.Target, inst Instance, prog serverProgram) (version, how string) {
	if info, err := e.infoServer(ctx, h, t, inst); err == nil {
		v := info["valkey_version"]
		if prog.name == "redis-server" || v == "" {
			v = info["redis_version"]
		}
		if prog.name == "valkey-server" && info["server_name"] != "" && info["server_name"] != "valkey" {
			v = ""
		}
		if versionRE.MatchString(v) {
			return v, "INFO server"
		}
	}
	cmd := runner.Quote(prog.name) + " --version"
	res, err := t.Run(ctx, runner.Command{Cmd: cmd, Timeout: 30 * time.Second})
	if err != nil || res.ExitCode != 0 {
		return "", ""
	}
	// "Redis server v=7.0.15 sha=..." / "Valkey server v=8.1.1 ..."
	for _, f := range strings.Fields(firstLine(res.Tail)) {
		if v, ok := strings.CutPrefix(f, "v="); ok && versionRE.MatchString(v) {
			return v, prog.name + " --version"
		}
	}
	return "", ""
}

// infoServer reads INFO server of one instance over a connection from the
// host's side, authenticating with the lab's password when it has one
// (sent over the connection, never on a command line).
func (e *Engine) infoServer(ctx context.Context, h hostRef, t runner.Target, inst Instance) (map[string]string, error) {
	if inst.NetNS != "" {
		return nil, fmt.Errorf("instance in namespace %s", inst.NetNS)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var conn net.Conn
	var err error
	switch d := t.(type) {
	case deploy.ContextDialer:
		conn, err = d.DialContext(ctx, "tcp", inst.Address)
	default:
		if !h.Local {
			return nil, fmt.Errorf("%s cannot dial from the host's side", h.Name)
		}
		var nd net.Dialer
		conn, err = nd.DialContext(ctx, "tcp", inst.Address)
	}
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	dl, _ := ctx.Deadline()
	_ = conn.SetDeadline(dl)
	r := bufio.NewReader(conn)
	if pw := benchPassword(e.Vars()); pw != "" {
		if _, err := conn.Write(respCommand("AUTH", pw)); err != nil {
			return nil, err
		}
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		if !strings.HasPrefix(line, "+OK") {
			return nil, fmt.Errorf("AUTH refused")
		}
	}
	if _, err := conn.Write(respCommand("INFO", "server")); err != nil {
		return nil, err
	}
	return readInfo(r)
}

// respCommand encodes a command as a RESP array of bulk strings.
func respCommand(args ...string) []byte {
	b := []byte("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b = append(b, "$"+strconv.Itoa(len(a))+"\r\n"+a+"\r\n"...)
	}
	return b
}

// maxInfo bounds the INFO reply read (INFO server is about 1 KiB).
const maxInfo = 1 << 20

// readInfo reads an INFO reply (a bulk string, or RESP3's verbatim
// string) into its name:value fields.
func readInfo(r *bufio.Reader) (map[string]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" || (line[0] != '$' && line[0] != '=') {
		return nil, fmt.Errorf("INFO answered %q", line)
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < 0 || n > maxInfo {
		return nil, fmt.Errorf("INFO answered a length of %q", line[1:])
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, l := range strings.Split(string(body), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), ":")
		if ok && !strings.HasPrefix(k, "#") {
			out[k] = v
		}
	}
	return out, nil
}
