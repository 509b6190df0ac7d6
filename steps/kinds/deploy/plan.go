package deploy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"path"
	"strconv"
	"strings"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/server/transport"
	"github.com/dpulab/dpulab/steps/kind"
)

// Deploy starts one `dpulab server` process per instance (not one process
// with --instances N): each instance then has its own pid, log and config,
// a crashed instance is named in errors, and cleanup stops exactly the
// processes recorded in the saved progress.

// Plan is a deploy step resolved with the run's variables (and a compare
// variant's overrides): exactly what should be running. The load kind
// holds one per deployment it needs.
type Plan struct {
	Step      string      `json:"step"`
	Group     string      `json:"group"`
	Hosts     []kind.Host `json:"hosts"`
	Instances int         `json:"instances"`
	Port      int         `json:"port"`
	Bind      string      `json:"bind"`
	Transport string      `json:"transport"`
	Config    string      `json:"config,omitempty"`
	// Socket adds a Unix socket to every instance (some step reaches the
	// group over one).
	Socket   bool        `json:"socket,omitempty"`
	Settings [][2]string `json:"settings,omitempty"`
	// NetNS is the network namespace the instances run in (a compare
	// variant over an emulated path), and CPUs the cores they are pinned
	// to there; both empty otherwise.
	NetNS string `json:"netns,omitempty"`
	CPUs  string `json:"cpus,omitempty"`
	// Server is the program the instances run, empty for the bundled
	// server (so the keys of earlier saved progress stay valid):
	// redis-server or valkey-server (server.go).
	Server string `json:"server,omitempty"`
}

// Key identifies a plan in saved progress; a hash, because settings may
// hold a password.
func (p Plan) Key() string {
	b, _ := json.Marshal(p)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// MaxInstances keeps a typo from starting thousands of servers.
const MaxInstances = 512

// Resolve resolves a deploy step; variant (may be nil) overrides keys and
// adds settings, and its role, when set, replaces the step's. A variant's
// emulated network path is the engine's to add (it knows the host's
// cores and the run's namespaces).
func Resolve(env kind.Env, st *labs.Step, vars map[string]string, variant *labs.Variant) (Plan, error) {
	if st.Deploy == nil {
		return Plan{}, fmt.Errorf("step %s: no deploy keys", st.ID)
	}
	spec := *st.Deploy
	roles := st.On
	var extra []labs.Setting
	if variant != nil {
		if d := variant.Deploy; d != nil {
			if d.Instances.IsSet() {
				spec.Instances = d.Instances
			}
			if d.Port.IsSet() {
				spec.Port = d.Port
			}
			if d.Config != "" {
				spec.Config = d.Config
			}
			if d.Transport.IsSet() {
				spec.Transport = d.Transport
			}
			if d.Bind.IsSet() {
				spec.Bind = d.Bind
			}
			if d.Server.IsSet() {
				spec.Server = d.Server
			}
			extra = append(extra, d.Settings...)
		}
		extra = append(extra, variant.Settings...)
		if variant.On != "" {
			roles = []string{variant.On}
		}
	}
	p := Plan{Step: st.ID, Group: spec.Group, Config: spec.Config}
	p.Socket = groupNeedsSocket(env.Lab(), spec.Group, vars)
	var err error
	if p.Instances, err = spec.Instances.Int(vars, 1); err != nil {
		return p, fmt.Errorf("deploy %s: instances: %w", st.ID, err)
	}
	if p.Instances < 1 || p.Instances > MaxInstances {
		return p, fmt.Errorf("deploy %s: %d instances: want 1..%d", st.ID, p.Instances, MaxInstances)
	}
	if p.Port, err = spec.Port.Int(vars, 7000); err != nil {
		return p, fmt.Errorf("deploy %s: port: %w", st.ID, err)
	}
	if p.Port < 1 || p.Port+p.Instances-1 > 65535 {
		return p, fmt.Errorf("deploy %s: ports %d..%d out of range 1..65535", st.ID, p.Port, p.Port+p.Instances-1)
	}
	if p.Bind, err = spec.Bind.String(vars, "127.0.0.1"); err != nil {
		return p, fmt.Errorf("deploy %s: bind: %w", st.ID, err)
	}
	if p.Transport, err = spec.Transport.String(vars, string(transport.TCP)); err != nil {
		return p, fmt.Errorf("deploy %s: transport: %w", st.ID, err)
	}
	for _, s := range append(append([]labs.Setting{}, spec.Settings...), extra...) {
		v, err := s.Value.Resolve(vars)
		if err != nil {
			return p, fmt.Errorf("deploy %s: setting %s: %w", st.ID, s.Name, err)
		}
		if strings.ContainsAny(s.Name+v, "\n\r") {
			return p, fmt.Errorf("deploy %s: setting %s: a value may not span lines", st.ID, s.Name)
		}
		p.Settings = append(p.Settings, [2]string{s.Name, v})
	}
	if err := p.resolveServer(spec.Server, vars); err != nil {
		return p, fmt.Errorf("deploy %s: %w", st.ID, err)
	}
	if p.Hosts, err = env.HostsOf(roles); err != nil {
		return p, err
	}
	if len(p.Hosts) == 0 {
		return p, fmt.Errorf("deploy %s: no host plays role %s", st.ID, strings.Join(roles, ", "))
	}
	return p, nil
}

// groupNeedsSocket reports whether the group's deploy or any bench or
// compare against it uses the unix transport.
func groupNeedsSocket(l *labs.Lab, group string, vars map[string]string) bool {
	isUnix := func(v labs.Value) bool {
		s, err := v.Resolve(vars)
		return err == nil && s == string(transport.Unix)
	}
	for _, st := range l.Steps {
		switch {
		case st.Deploy != nil && st.Deploy.Group == group:
			if isUnix(st.Deploy.Transport) {
				return true
			}
		case st.Bench != nil:
			if st.Compare != nil {
				for _, v := range st.Compare.Variants {
					g := v.Group
					if g == "" {
						g = st.Bench.Target
					}
					if g == group && (isUnix(v.Transport) || (v.Deploy != nil && isUnix(v.Deploy.Transport))) {
						return true
					}
				}
			}
			if st.Bench.Target == group && isUnix(st.Bench.Transport) {
				return true
			}
		}
	}
	return false
}

// InstanceDir is an instance's own directory on its host, under the run's
// working directory.
func InstanceDir(workdir, group string, port int) string {
	return path.Join(workdir, fmt.Sprintf("%s-%d", group, port))
}

// ProcName names an instance's process in the saved progress.
func ProcName(group string, port int) string { return fmt.Sprintf("server:%s:%d", group, port) }

// Placed prefixes an exec'd command line with a network namespace and a
// CPU pinning (taskset), either may be empty. A cmd that does not start
// with "exec " runs under sh -c.
func Placed(ns, cpus, cmd string) string {
	if ns == "" && cpus == "" {
		return cmd
	}
	var pre []string
	if ns != "" {
		pre = append(pre, "ip", "netns", "exec", ns)
	}
	if cpus != "" {
		pre = append(pre, "taskset", "-c", cpus)
	}
	rest, ok := strings.CutPrefix(cmd, "exec ")
	if !ok {
		return runner.QuoteAll(pre...) + " sh -c " + runner.Quote(cmd)
	}
	return "exec " + runner.QuoteAll(pre...) + " " + rest
}

// ServerCmd is the shell command that starts the instance on port, agent
// being dpulab's path on its host.
func (p Plan) ServerCmd(agent, workdir string, port int) string {
	dir := InstanceDir(workdir, p.Group, port)
	args := []string{agent, "server", "--config", path.Join(dir, "redis.conf"), "--port", strconv.Itoa(port)}
	if p.Server != "" {
		// Redis and Valkey take the config file first, then options.
		args = []string{p.Server, path.Join(dir, "redis.conf"), "--port", strconv.Itoa(port)}
	}
	if p.Socket {
		args = append(args, "--unixsocket", path.Join(dir, "redis.sock"))
	}
	return Placed(p.NetNS, p.CPUs, "exec "+runner.QuoteAll(args...))
}

// HostSide is instance k on h as deploy pings it from the host: over the
// host's loopback (or the address the server is bound to, when that is
// not the loopback), or inside the path's namespace.
func (p Plan) HostSide(h kind.Host, k int) Instance {
	port := p.Port + k
	if p.NetNS != "" {
		return Instance{Host: h.Name, Port: port, Address: net.JoinHostPort(p.Bind, strconv.Itoa(port)), NetNS: p.NetNS}
	}
	return Instance{Host: h.Name, Port: port, Address: net.JoinHostPort(HostSideAddr(p.Bind), strconv.Itoa(port))}
}

// HostSideAddr is where a server bound to bind (redis.conf's bind: one or
// more addresses, "-" marking an optional one) answers on its own host:
// the loopback when bind is empty, a wildcard or names a loopback address;
// else bind's first address, since a server bound only to one interface's
// address (an RDMA network's, say) does not answer on 127.0.0.1.
func HostSideAddr(bind string) string {
	addrs := strings.Fields(bind)
	for _, a := range addrs {
		a = strings.TrimPrefix(a, "-")
		switch a {
		case "0.0.0.0", "*", "::", "::*", "localhost":
			return "127.0.0.1"
		}
		if ip := net.ParseIP(a); ip != nil && ip.IsLoopback() {
			return a
		}
	}
	if len(addrs) == 0 {
		return "127.0.0.1"
	}
	return strings.TrimPrefix(addrs[0], "-")
}

// ClientSide lists how clients reach the instances of a plan (what the
// bench is given).
func (p Plan) ClientSide(workdir string) []Instance {
	var out []Instance
	for _, h := range p.Hosts {
		addr := h.Address
		if p.Bind != "" && p.Bind != "0.0.0.0" && p.Bind != "::" && p.Bind != "*" {
			addr = strings.Fields(p.Bind)[0]
		}
		for k := 0; k < p.Instances; k++ {
			port := p.Port + k
			in := Instance{Host: h.Name, Address: net.JoinHostPort(addr, strconv.Itoa(port)), Port: port, Bind: p.Bind, HostAddress: h.Address, NetNS: p.NetNS}
			if p.Socket {
				in.Socket = path.Join(InstanceDir(workdir, p.Group, port), "redis.sock")
			}
			out = append(out, in)
		}
	}
	return out
}

// Commands lists the commands that start a deployment's instances, as the
// plan and the dry run show them.
func Commands(env Env, p Plan) []kind.PlannedCommand {
	var out []kind.PlannedCommand
	for _, h := range p.Hosts {
		out = append(out, planServerInstall(h, p)...)
		for k := 0; k < p.Instances; k++ {
			out = append(out, kind.PlannedCommand{Host: h.Name, Cmd: p.ServerCmd(env.Agent(h), env.Workdir(), p.Port+k)})
		}
	}
	return out
}

// RenderConfig is instance k's redis.conf on h: the lab's template (or a
// minimal one), then the step's and variant's settings, so that the later
// lines win as in redis.conf.
func RenderConfig(env Env, p Plan, h kind.Host, k int, tmpl []byte, vars map[string]string) (string, error) {
	port := p.Port + k
	dir := InstanceDir(env.Workdir(), p.Group, port)
	sock := ""
	if p.Socket {
		sock = path.Join(dir, "redis.sock")
	}
	var b strings.Builder
	if len(tmpl) > 0 {
		// What a lab's commands see on h, and the instance's own.
		data := env.CmdData(h, vars)
		for key, val := range map[string]any{
			labs.DataGroup: p.Group, labs.DataInstance: k, labs.DataPort: port,
			labs.DataBind: p.Bind, labs.DataSocket: sock, labs.DataTransport: p.Transport, labs.DataDir: dir,
		} {
			data[key] = val
		}
		s, err := labs.RenderText(string(tmpl), data)
		if err != nil {
			return "", fmt.Errorf("render %s: %w", p.Config, err)
		}
		b.WriteString(s)
		if !strings.HasSuffix(s, "\n") {
			b.WriteByte('\n')
		}
	} else {
		// No template: the minimum a lab instance needs. Port and socket
		// also come as flags.
		fmt.Fprintf(&b, "# written by dpulab deploy (group %s, instance %d)\nbind %s\nport %d\n", p.Group, k, p.Bind, port)
		if sock != "" {
			fmt.Fprintf(&b, "unixsocket %s\nunixsocketperm 700\n", sock)
		}
		fmt.Fprintf(&b, "dir %s\nsave \"\"\nappendonly no\n", dir)
	}
	if len(p.Settings) > 0 {
		b.WriteString("# settings of the lab step or compare variant\n")
	}
	for _, s := range p.Settings {
		fmt.Fprintf(&b, "%s %s\n", s[0], s[1])
	}
	if p.Server != "" {
		// One foreground process per instance, logging to its log file:
		// what the engine records, stops and sweeps.
		b.WriteString("# one foreground process per instance (dpulab records its pid)\ndaemonize no\nlogfile \"\"\n")
	}
	return b.String(), nil
}

// Files are the redis.conf of every instance of p, as deploy writes them;
// past limit, files are counted (empty) rather than rendered.
func Files(env Env, step string, p Plan, vars map[string]string, limit int) ([]kind.RenderedFile, error) {
	var tmpl []byte
	if p.Config != "" {
		b, err := env.Lab().ReadFile(p.Config)
		if err != nil {
			return nil, fmt.Errorf("read config template %s: %w", p.Config, err)
		}
		tmpl = b
	}
	var out []kind.RenderedFile
	for _, h := range p.Hosts {
		for k := 0; k < p.Instances; k++ {
			if len(out) > limit {
				// Enough to show; count the rest without rendering them.
				out = append(out, kind.RenderedFile{})
				continue
			}
			conf, err := RenderConfig(env, p, h, k, tmpl, vars)
			if err != nil {
				return out, err
			}
			out = append(out, kind.RenderedFile{Step: step, Host: h.Name, Path: path.Join(InstanceDir(env.Workdir(), p.Group, p.Port+k), "redis.conf"), Source: p.Config, Content: conf})
		}
	}
	return out, nil
}
