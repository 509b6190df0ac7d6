package deploy

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

	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/steps/kind"
)

// ensureServer makes sure the plan's server program is on h: found with
// command -v, else installed with sudo after a confirmation (--yes answers
// it), never silently. For RDMA, the program must say it was built with it.
func ensureServer(ctx context.Context, env Runner, step string, p Plan, h kind.Host, t runner.Target) error {
	prog, ok := Programs[p.Server]
	if !ok {
		return nil
	}
	found := func() (string, error) {
		res, err := t.Run(ctx, runner.Command{Cmd: FindCmd(prog), Timeout: 30 * time.Second})
		if err != nil {
			return "", &kind.StepError{Host: h.Name, Cmd: FindCmd(prog), Err: err}
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
		if err := installServer(ctx, env, step, prog, h, t); err != nil {
			return err
		}
		if where, err = found(); err != nil {
			return err
		}
		if where == "" {
			return &kind.StepError{Host: h.Name, Err: fmt.Errorf("%s is still not on PATH after installing it", prog.Name)}
		}
	}
	env.Say(step, h.Name, "%s: %q", prog.Name, where)
	if !p.NeedsRDMA() {
		return nil
	}
	if !prog.RDMAKnown {
		return &kind.StepError{Host: h.Name, Err: fmt.Errorf("%s has no RDMA transport: use the bundled server for rdma", prog.Name)}
	}
	cmd := runner.Quote(prog.Name) + " --version"
	res, err := t.Run(ctx, runner.Command{Cmd: cmd, Timeout: 30 * time.Second})
	if err != nil {
		return &kind.StepError{Host: h.Name, Cmd: cmd, Err: err}
	}
	version := strings.Join(kind.TailText(res.Tail), " ")
	if res.ExitCode != 0 || !strings.Contains(strings.ToLower(version), "rdma") {
		return &kind.StepError{Host: h.Name, Cmd: cmd, Tail: kind.TailText(res.Tail),
			Err: fmt.Errorf("%s on %s does not say it was built with RDMA (Debian's and Fedora's valkey are built without it): use the bundled server for transport rdma, or a Valkey built with BUILD_RDMA=yes", prog.Name, h.Name)}
	}
	return nil
}

// installServer asks, then installs prog with the host's package manager.
func installServer(ctx context.Context, env Runner, step string, prog Program, h kind.Host, t runner.Target) error {
	res, err := t.Run(ctx, runner.Command{Cmd: DetectPMCmd, Timeout: 30 * time.Second})
	if err != nil {
		return &kind.StepError{Host: h.Name, Cmd: DetectPMCmd, Err: err}
	}
	pm := firstLine(res.Tail)
	if pm != "apt-get" && pm != "dnf" {
		return &kind.StepError{Host: h.Name, Err: fmt.Errorf("%s is not installed on %s, and the host has neither apt-get nor dnf: install it yourself, or use server: bundled", prog.Name, h.Name)}
	}
	cmd := InstallCmd(prog, pm)
	if err := env.Confirm(ctx, step, h.Name, fmt.Sprintf("%s is not installed on %s. Install it now with: sudo %s ?", prog.Name, h.Name, cmd)); err != nil {
		return &kind.StepError{Host: h.Name, Cmd: cmd, Err: fmt.Errorf("%s is not installed on %s: %w", prog.Name, h.Name, err)}
	}
	env.Say(step, h.Name, "installing %s: sudo %s", prog.Name, cmd)
	res, err = t.Run(ctx, runner.Command{Cmd: cmd, Sudo: true, Timeout: 10 * time.Minute, Output: env.Output(step)})
	if err != nil || res.ExitCode != 0 {
		return &kind.StepError{Host: h.Name, Cmd: cmd, Tail: kind.TailText(res.Tail), Err: fmt.Errorf("install %s: %v", prog.Name, kind.ErrOr(err, res))}
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
func serverRan(ctx context.Context, env Runner, step string, p Plan) string {
	prog := Programs[p.Server]
	var seen []string
	for _, h := range p.Hosts {
		t, err := env.Prepared(ctx, h)
		if err != nil {
			continue
		}
		v, how := serverVersion(ctx, env, h, t, p.HostSide(h, 0), prog)
		if v == "" {
			env.Say(step, h.Name, "could not tell which %s version runs", prog.Name)
			continue
		}
		s := prog.Name + " " + v
		env.Say(step, h.Name, "group %s runs %s (%s)", p.Group, s, how)
		if !slices.Contains(seen, s) {
			seen = append(seen, s)
		}
	}
	if len(seen) == 0 {
		return prog.Name
	}
	return strings.Join(seen, ", ")
}

// versionRE is a version as servers print it: digits and dots.
var versionRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+){0,3}$`)

// serverVersion asks an instance's INFO server, and falls back to the
// program's --version (an instance in a namespace, a target that cannot
// dial from the host's side, a password INFO could not pass).
func serverVersion(ctx context.Context, env Env, h kind.Host, t runner.Target, inst Instance, prog Program) (version, how string) {
	if info, err := infoServer(ctx, env, h, t, inst); err == nil {
		v := info["valkey_version"]
		if prog.Name == "redis-server" || v == "" {
			v = info["redis_version"]
		}
		if prog.Name == "valkey-server" && info["server_name"] != "" && info["server_name"] != "valkey" {
			v = ""
		}
		if versionRE.MatchString(v) {
			return v, "INFO server"
		}
	}
	cmd := runner.Quote(prog.Name) + " --version"
	res, err := t.Run(ctx, runner.Command{Cmd: cmd, Timeout: 30 * time.Second})
	if err != nil || res.ExitCode != 0 {
		return "", ""
	}
	// "Redis server v=7.0.15 sha=..." / "Valkey server v=8.1.1 ..."
	for _, f := range strings.Fields(firstLine(res.Tail)) {
		if v, ok := strings.CutPrefix(f, "v="); ok && versionRE.MatchString(v) {
			return v, prog.Name + " --version"
		}
	}
	return "", ""
}

// infoServer reads INFO server of one instance over a connection from the
// host's side, authenticating with the lab's password when it has one
// (sent over the connection, never on a command line).
func infoServer(ctx context.Context, env Env, h kind.Host, t runner.Target, inst Instance) (map[string]string, error) {
	if inst.NetNS != "" {
		return nil, fmt.Errorf("instance in namespace %s", inst.NetNS)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var conn net.Conn
	var err error
	switch d := t.(type) {
	case ContextDialer:
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
	if pw := env.Password(); pw != "" {
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
