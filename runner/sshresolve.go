package runner

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kevinburke/ssh_config"
)

// hostSettings is what the OpenSSH configuration says about one host: the
// subset of `ssh -G` output dpulab acts on.
type hostSettings struct {
	HostName string
	User     string
	Port     int
	// IdentityFiles as configured, tokens and ~ expanded; defaultIDs says
	// nothing named them (they are OpenSSH's defaults, whose absence is
	// expected).
	IdentityFiles    []string
	defaultIDs       bool
	IdentitiesOnly   bool
	IdentityAgent    string
	CertificateFiles []string
	ProxyJump        string
	ProxyCommand     string
	UserKnownHosts   []string
	GlobalKnownHosts []string
	HashKnownHosts   bool
	// StrictHostKeyChecking is "ask", "yes", "accept-new" or "no".
	StrictHostKeyChecking string
}

// defaultIdentityNames are the files OpenSSH tries when no IdentityFile is
// configured (ssh -G lists them); dpulab loads the key types it supports.
var defaultIdentityNames = []string{"id_rsa", "id_ecdsa", "id_ecdsa_sk", "id_ed25519", "id_ed25519_sk", "id_xmss", "id_dsa"}

// ssh -G's settings are read with the inventory's explicit values given as
// options, so that Match user and friends see what the connection will use.
func (p *Pool) openSSHSettings(ssh, alias, user string, port int) (hostSettings, error) {
	args := []string{"-G"}
	cfg, err := p.openSSHConfigArg()
	if err != nil {
		return hostSettings{}, err
	}
	if cfg != "" {
		args = append(args, "-F", cfg)
	}
	if port != 0 {
		args = append(args, "-p", strconv.Itoa(port))
	}
	if user != "" {
		args = append(args, "-l", user)
	}
	// "--": an alias is never read as an option, whatever the inventory
	// says.
	args = append(args, "--", alias)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, ssh, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errOut.String())
		if msg == "" {
			msg = err.Error()
		}
		return hostSettings{}, fmt.Errorf("ssh -G %s (OpenSSH's reading of its config): %s", alias, msg)
	}
	return parseSSHG(out.Bytes(), alias)
}

// parseSSHG reads `ssh -G` output: one "keyword value" per line, keywords
// in lower case, IdentityFile and CertificateFile repeated, paths with ~
// and tokens not yet expanded.
func parseSSHG(b []byte, alias string) (hostSettings, error) {
	var hs hostSettings
	get := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		k = strings.ToLower(k)
		switch k {
		case "identityfile":
			hs.IdentityFiles = append(hs.IdentityFiles, v)
		case "certificatefile":
			hs.CertificateFiles = append(hs.CertificateFiles, v)
		default:
			get[k] = v
		}
	}
	hs.HostName = get["hostname"]
	hs.User = get["user"]
	if v := get["port"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 65535 {
			return hostSettings{}, fmt.Errorf("ssh -G %s: port %q is not a port number", alias, v)
		}
		hs.Port = n
	}
	hs.IdentitiesOnly = get["identitiesonly"] == "yes"
	hs.IdentityAgent = get["identityagent"]
	hs.ProxyJump = get["proxyjump"]
	hs.ProxyCommand = get["proxycommand"]
	hs.UserKnownHosts = strings.Fields(get["userknownhostsfile"])
	hs.GlobalKnownHosts = strings.Fields(get["globalknownhostsfile"])
	hs.HashKnownHosts = get["hashknownhosts"] == "yes"
	hs.StrictHostKeyChecking = strictValue(get["stricthostkeychecking"])
	hs.defaultIDs = isDefaultIdentityList(hs.IdentityFiles)
	return hs, nil
}

// strictValue normalises StrictHostKeyChecking's spellings.
func strictValue(v string) string {
	switch strings.ToLower(v) {
	case "yes", "true":
		return "yes"
	case "no", "off", "false":
		return "no"
	case "accept-new":
		return "accept-new"
	}
	return "ask"
}

// isDefaultIdentityList reports whether ssh -G listed exactly OpenSSH's
// default identity files, which it does when nothing names one.
func isDefaultIdentityList(ids []string) bool {
	if len(ids) != len(defaultIdentityNames) {
		return false
	}
	for i, id := range ids {
		if id != "~/.ssh/"+defaultIdentityNames[i] {
			return false
		}
	}
	return true
}

// openSSHConfigArg returns the file for ssh -F: "" to let ssh read its own
// (~/.ssh/config, /etc/ssh/ssh_config), /dev/null for none, the file when
// there is one, and a file including each of several, made once per Pool.
func (p *Pool) openSSHConfigArg() (string, error) {
	files := p.opts.SSHConfigFiles
	switch {
	case files == nil:
		return "", nil
	case len(files) == 0:
		return os.DevNull, nil
	case len(files) == 1:
		return absPath(files[0]), nil
	}
	p.includeOnce.Do(func() {
		var b strings.Builder
		for _, f := range files {
			fmt.Fprintf(&b, "Include %q\n", absPath(f))
		}
		f, err := os.CreateTemp("", "dpulab-ssh-config-*")
		if err != nil {
			p.includeErr = fmt.Errorf("ssh config: %w", err)
			return
		}
		_, err = f.WriteString(b.String())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(f.Name())
			p.includeErr = fmt.Errorf("ssh config: %w", err)
			return
		}
		p.includeFile = f.Name()
	})
	return p.includeFile, p.includeErr
}

func absPath(f string) string {
	f = expandHome(f)
	if a, err := filepath.Abs(f); err == nil {
		return a
	}
	return f
}

// librarySettings reads the config files with the library parser, for
// machines without the OpenSSH client. It knows Host blocks, and Match
// blocks whose criteria are only "all" and "host"; any other Match block
// was skipped with a warning when the files were read.
func (p *Pool) librarySettings(alias, user string, port int) (hostSettings, error) {
	if _, err := p.sshConfigs(); err != nil {
		return hostSettings{}, err
	}
	hs := hostSettings{User: user, Port: port, IdentityAgent: "SSH_AUTH_SOCK"}
	hs.HostName = alias
	if hn := p.sshGet(alias, "HostName"); hn != "" {
		hs.HostName = strings.ReplaceAll(hn, "%h", alias)
	}
	if hs.User == "" {
		hs.User = p.sshGet(alias, "User")
	}
	if hs.User == "" {
		hs.User = currentUser()
	}
	if hs.Port == 0 {
		if v := p.sshGet(alias, "Port"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 65535 {
				return hostSettings{}, fmt.Errorf("ssh config Port %q for %s is not a port number", v, alias)
			}
			hs.Port = n
		}
	}
	if hs.Port == 0 {
		hs.Port = 22
	}
	for _, v := range p.sshGetAll(alias, "IdentityFile") {
		if v != ssh_config.Default("IdentityFile") {
			hs.IdentityFiles = append(hs.IdentityFiles, v)
		}
	}
	if len(hs.IdentityFiles) == 0 {
		hs.defaultIDs = true
		for _, n := range defaultIdentityNames {
			hs.IdentityFiles = append(hs.IdentityFiles, "~/.ssh/"+n)
		}
	}
	hs.CertificateFiles = p.sshGetAll(alias, "CertificateFile")
	hs.IdentitiesOnly = strings.EqualFold(p.sshGet(alias, "IdentitiesOnly"), "yes")
	if v := p.sshGet(alias, "IdentityAgent"); v != "" {
		hs.IdentityAgent = v
	}
	hs.ProxyJump = p.sshGet(alias, "ProxyJump")
	hs.ProxyCommand = p.sshGet(alias, "ProxyCommand")
	hs.UserKnownHosts = strings.Fields(p.sshGet(alias, "UserKnownHostsFile"))
	if len(hs.UserKnownHosts) == 0 {
		hs.UserKnownHosts = []string{"~/.ssh/known_hosts", "~/.ssh/known_hosts2"}
	}
	hs.GlobalKnownHosts = strings.Fields(p.sshGet(alias, "GlobalKnownHostsFile"))
	if len(hs.GlobalKnownHosts) == 0 {
		hs.GlobalKnownHosts = []string{"/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"}
	}
	hs.HashKnownHosts = strings.EqualFold(p.sshGet(alias, "HashKnownHosts"), "yes")
	hs.StrictHostKeyChecking = strictValue(p.sshGet(alias, "StrictHostKeyChecking"))
	return hs, nil
}

// sshConfigs reads the config files for the library parser once.
func (p *Pool) sshConfigs() ([]*ssh_config.Config, error) {
	p.cfgOnce.Do(func() {
		files := p.opts.SSHConfigFiles
		if files == nil {
			files = []string{expandHome("~/.ssh/config"), "/etc/ssh/ssh_config"}
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				if errors.Is(err, os.ErrNotExist) {
					continue
				}
				p.cfgErr = fmt.Errorf("ssh config: %w", err)
				return
			}
			src, warns := rewriteMatchBlocks(f, b)
			for _, w := range warns {
				p.warn(w)
			}
			c, err := ssh_config.DecodeBytes(src)
			if err != nil {
				p.cfgErr = fmt.Errorf("ssh config %s: %w", f, err)
				return
			}
			p.cfgs = append(p.cfgs, c)
		}
	})
	return p.cfgs, p.cfgErr
}

// rewriteMatchBlocks makes an OpenSSH config readable by the library
// parser, which knows Host blocks only: a Match block whose criteria are
// "all" or "host PATTERNS" becomes the Host block it means, and any other
// (user, localuser, exec, canonical, final, originalhost, tagged, ...) is
// turned into comments, with a warning naming file and line: applying it
// to every host, or failing every host, would both be wrong. Line numbers
// are kept.
func rewriteMatchBlocks(file string, b []byte) ([]byte, []string) {
	lines := strings.Split(string(b), "\n")
	var warns []string
	skipping := false
	for i, line := range lines {
		kw, rest := configKeyword(line)
		switch kw {
		case "host":
			skipping = false
			continue
		case "match":
			skipping = false
			if host, ok := matchAsHost(rest); ok {
				lines[i] = "Host " + host
				continue
			}
			warns = append(warns, fmt.Sprintf("%s:%d: %q skipped: only OpenSSH's own client can evaluate it, and it is not installed (Debian: apt-get install openssh-client)", file, i+1, strings.TrimSpace(line)))
			skipping = true
		}
		if skipping {
			lines[i] = "# " + line
		}
	}
	return []byte(strings.Join(lines, "\n")), warns
}

// configKeyword returns a config line's keyword, lower case, and the rest.
func configKeyword(line string) (string, string) {
	s := strings.TrimSpace(line)
	if s == "" || s[0] == '#' {
		return "", ""
	}
	i := strings.IndexAny(s, " \t=")
	if i < 0 {
		return strings.ToLower(s), ""
	}
	return strings.ToLower(s[:i]), strings.TrimLeft(s[i:], " \t=")
}

// matchAsHost turns "all", "host PATTERNS" (with optional "all") into
// Host patterns; ok is false for any other criterion.
func matchAsHost(criteria string) (string, bool) {
	f := strings.Fields(criteria)
	var host string
	for i := 0; i < len(f); i++ {
		switch strings.ToLower(f[i]) {
		case "all":
			if host == "" {
				host = "*"
			}
		case "host":
			if i+1 >= len(f) {
				return "", false
			}
			i++
			host = strings.ReplaceAll(strings.Trim(f[i], `"`), ",", " ")
		default:
			return "", false
		}
	}
	if host == "" {
		return "", false
	}
	return host, true
}

// sshGet returns the first value for key of alias in the config files.
func (p *Pool) sshGet(alias, key string) string {
	cfgs, _ := p.sshConfigs()
	for _, c := range cfgs {
		if v, err := c.Get(alias, key); err == nil && v != "" {
			return v
		}
	}
	return ""
}

func (p *Pool) sshGetAll(alias, key string) []string {
	cfgs, _ := p.sshConfigs()
	var out []string
	for _, c := range cfgs {
		if v, err := c.GetAll(alias, key); err == nil {
			out = append(out, v...)
		}
	}
	return out
}
