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
	// Cleanup, when set, must be called once the shell has ended: it
	// removes the temporary known_hosts file that carries host keys the
	// person accepted for this run only.
	Cleanup func()
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
	// Keys the person accepted for this run only are in no known_hosts
	// file; ssh gets them from a temporary one beside the real one, so the
	// shell trusts exactly what the run trusts, and nothing is saved.
	var sh Shell
	files := []string{}
	if known != "" {
		files = append(files, expandHome(known))
	}
	if lines := p.onceKnownHosts(name); len(lines) > 0 {
		f, err := os.CreateTemp("", "dpulab-known-once-*")
		if err != nil {
			return Shell{}, fmt.Errorf("a shell on %s: write the host key accepted for this run: %w", name, err)
		}
		_, werr := f.WriteString(strings.Join(lines, "\n") + "\n")
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(f.Name())
			return Shell{}, fmt.Errorf("a shell on %s: write the host key accepted for this run: %w", name, werr)
		}
		if known == "" {
			// ssh's own default, which naming another file would replace.
			files = append(files, expandHome("~/.ssh/known_hosts"))
		}
		files = append(files, f.Name())
		tmp := f.Name()
		sh.Cleanup = func() { os.Remove(tmp) }
	}
	if len(files) > 0 {
		// ssh reads an -o value as a config line: quote each path, whose
		// spaces would otherwise split it into several files.
		var quoted []string
		for _, f := range files {
			if strings.ContainsAny(f, "\"\n") {
				if sh.Cleanup != nil {
					sh.Cleanup()
				}
				return Shell{}, errors.New("the known_hosts path holds a quote or a newline, which ssh cannot be given")
			}
			quoted = append(quoted, `"`+f+`"`)
		}
		argv = append(argv, "-o", "UserKnownHostsFile="+strings.Join(quoted, " "))
	}
	alias := h.Address
	if alias == "" {
		alias = h.Name
	}
	remote := "cd " + Quote(dir) + ` 2>/dev/null; exec "${SHELL:-/bin/sh}" -l`
	argv = append(argv, "-o", "StrictHostKeyChecking=yes", "--", alias, remote)
	sh.Argv = argv
	return sh, nil
}

// onceKnownHosts returns known_hosts lines for the keys accepted for this
// run only on the host called name (none when it has not been dialled).
func (p *Pool) onceKnownHosts(name string) []string {
	p.mu.Lock()
	t, ok := p.targets[name]
	p.mu.Unlock()
	st, isSSH := t.(*SSHTarget)
	if !ok || !isSSH || st.keys == nil {
		return nil
	}
	return st.keys.onceLines()
}
