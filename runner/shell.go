package runner

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// Shell is how to open an interactive shell on a host: the program with its
// arguments, and the directory on this machine to start it in. The TUI
// hands the terminal to it for a step the trainee does by hand.
type Shell struct {
	Argv []string
	Dir  string
}

// Shell returns an interactive shell on the host called name, in dir (the
// lab's working directory; the home directory when dir does not exist).
// On this machine that is the user's $SHELL. On a lab host it is OpenSSH's
// ssh with what the run uses: the inventory's address (a ~/.ssh/config
// alias works), port, user, identity and jump host, the same ssh config
// files and known_hosts file, and StrictHostKeyChecking=yes: the run
// verified the host's key, and a shell must not accept a new one silently.
func (p *Pool) Shell(name, dir string) (Shell, error) {
	h, ok := p.inv.Host(name)
	if !ok {
		return Shell{}, fmt.Errorf("no host %s in the inventory", name)
	}
	if h.IsLocal() {
		sh := os.Getenv("SHELL")
		if sh == "" {
			sh = "/bin/sh"
		}
		start := dir
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			start, _ = os.UserHomeDir()
		}
		return Shell{Argv: []string{sh}, Dir: start}, nil
	}
	bin := p.opts.SSHClient
	if bin == "" || bin == "none" {
		var err error
		if bin, err = exec.LookPath("ssh"); err != nil {
			return Shell{}, fmt.Errorf("a shell on %s needs OpenSSH's ssh client: install openssh-client, or let dpulab do the step", name)
		}
	}
	argv := []string{bin, "-t"}
	cfg, err := p.openSSHConfigArg()
	if err != nil {
		return Shell{}, err
	}
	if cfg != "" {
		argv = append(argv, "-F", cfg)
	}
	if h.Port != 0 {
		argv = append(argv, "-p", strconv.Itoa(h.Port))
	}
	if h.User != "" {
		argv = append(argv, "-l", h.User)
	}
	if h.Identity != "" {
		argv = append(argv, "-i", expandHome(h.Identity), "-o", "IdentitiesOnly=yes")
	}
	if h.ProxyJump != "" {
		argv = append(argv, "-J", h.ProxyJump)
	}
	known := p.opts.KnownHosts
	if known == "" && p.inv != nil {
		known = p.inv.KnownHosts
	}
	if known != "" {
		// ssh reads an -o value as a config line: quote the path, whose
		// spaces would otherwise split it into several files.
		if strings.ContainsAny(known, "\"\n") {
			return Shell{}, errors.New("the known_hosts path holds a quote or a newline, which ssh cannot be given")
		}
		argv = append(argv, "-o", `UserKnownHostsFile="`+expandHome(known)+`"`)
	}
	alias := h.Address
	if alias == "" {
		alias = h.Name
	}
	remote := "cd " + Quote(dir) + ` 2>/dev/null; exec "${SHELL:-/bin/sh}" -l`
	argv = append(argv, "-o", "StrictHostKeyChecking=yes", "--", alias, remote)
	return Shell{Argv: argv}, nil
}
