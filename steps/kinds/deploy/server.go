package deploy

import (
	"fmt"
	"strings"

	"github.com/dpulab/dpulab/labs"
	"github.com/dpulab/dpulab/runner"
	"github.com/dpulab/dpulab/server/transport"
	"github.com/dpulab/dpulab/steps/kind"
)

// A deploy step may start the distribution's redis-server or valkey-server
// instead of the bundled server (lab.yaml's server:). The program is found
// on the host, or installed with the host's package manager after a
// confirmation; each instance is then one foreground process started,
// recorded, stopped and swept exactly like the bundled server's (only the
// command differs, Plan.ServerCmd), and the deployment records what INFO
// server says ran, for the results.

// Program is a server a deploy step can start besides the bundled one.
type Program struct {
	// Name is the executable, looked up on PATH on the host.
	Name string
	// Apt and Dnf are its package names there.
	Apt, Dnf string
	// RDMAKnown: some builds serve RDMA (Valkey 8.1 built with it); Redis
	// never does.
	RDMAKnown bool
}

// Programs are the servers by lab.yaml's server: name.
var Programs = map[string]Program{
	ServerRedis:  {Name: "redis-server", Apt: "redis-server", Dnf: "redis"},
	ServerValkey: {Name: "valkey-server", Apt: "valkey-server", Dnf: "valkey", RDMAKnown: true},
}

// resolveServer fills p.Server from the step's (or variant's) server key
// and refuses what that server cannot run, before anything starts.
func (p *Plan) resolveServer(v labs.Value, vars map[string]string) error {
	s, err := v.String(vars, ServerBundled)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	if s == ServerBundled {
		p.Server = ""
		return nil
	}
	if err := checkServer(s); err != nil {
		return err
	}
	names := make([]string, len(p.Settings))
	for i, st := range p.Settings {
		names[i] = st[0]
	}
	if err := ServerAccepts(s, p.Transport, names); err != nil {
		return err
	}
	p.Server = s
	return nil
}

// NeedsRDMA reports whether a plan has the server serve RDMA.
func (p Plan) NeedsRDMA() bool {
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

// InstallCmd is the command that installs prog with the package manager
// pm ("apt-get" or "dnf"), run with sudo.
func InstallCmd(prog Program, pm string) string {
	if pm == "dnf" {
		return "dnf install -y " + runner.Quote(prog.Dnf)
	}
	return "DEBIAN_FRONTEND=noninteractive apt-get install -y " + runner.Quote(prog.Apt)
}

// FindCmd prints the program's path, exit 1 when it is not on PATH.
func FindCmd(prog Program) string { return "command -v " + runner.Quote(prog.Name) }

// DetectPMCmd prints the package manager the host has.
const DetectPMCmd = "if command -v apt-get >/dev/null 2>&1; then echo apt-get; elif command -v dnf >/dev/null 2>&1; then echo dnf; else echo none; fi"

// planServerInstall is what the plan and the dry run show before the
// instances' commands: the look-up, and the install that runs, with sudo,
// only when the program is missing and the person said yes.
func planServerInstall(h kind.Host, p Plan) []kind.PlannedCommand {
	prog, ok := Programs[p.Server]
	if !ok {
		return nil
	}
	install := fmt.Sprintf("%s >/dev/null 2>&1 || if command -v apt-get >/dev/null 2>&1; then %s; else %s; fi # only after a confirmation: install %s?",
		FindCmd(prog), InstallCmd(prog, "apt-get"), InstallCmd(prog, "dnf"), prog.Name)
	out := []kind.PlannedCommand{{Host: h.Name, Cmd: install, Sudo: true}}
	if p.NeedsRDMA() {
		out = append(out, kind.PlannedCommand{Host: h.Name, Cmd: runner.Quote(prog.Name) + " --version # must say it was built with RDMA"})
	}
	return out
}
