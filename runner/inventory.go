package runner

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Inventory is the list of lab hosts (hosts.yaml). The zero value, and a
// nil *Inventory, mean "no inventory": every role runs on this machine.
//
//	known_hosts: ~/.ssh/known_hosts        # default
//	hosts:
//	  - name: client1
//	    address: 10.0.0.5                  # "local" = this machine, no SSH
//	    port: 22
//	    user: lab
//	    identity: ~/.ssh/id_ed25519        # else ssh-agent, else password prompt
//	    roles: [client]
//	    labels: {nic: ConnectX-5}
//	    proxy_jump: jumper@bastion:2022    # else ~/.ssh/config's
//	    esxi: esx01.lab.example            # the ESXi host this VM runs on (vcenter needed)
//	    vm: redis-dpu-vm                   # its name in vCenter (default: name)
//	vcenter:                               # optional: hypervisor metrics and checks
//	  url: https://vcenter.lab.example/sdk
//	  user: lab@vsphere.local
//	  password_env: DPULAB_VCENTER_PASSWORD  # else asked for; never in this file
//	  thumbprint: 3F:A1:...                # optional pin (SHA-256 or SHA-1)
//
// An Ansible inventory (INI, YAML, or `ansible-inventory --list` JSON) is
// read too, told apart by content: see ansible.go for the mapping.
type Inventory struct {
	// Path is the file it was read from ("" for the default inventory).
	Path string `yaml:"-" json:"path,omitempty"`
	// KnownHosts is the known_hosts file, ~ expanded; empty means
	// ~/.ssh/known_hosts (or UserKnownHostsFile from ~/.ssh/config).
	KnownHosts string `yaml:"known_hosts" json:"known_hosts,omitempty"`
	Hosts      []Host `yaml:"hosts" json:"hosts"`
	// VCenter, when set, is where hypervisor metrics and the vSphere
	// checks come from (runner/vsphere); hosts name their ESXi host.
	VCenter *VCenter `yaml:"vcenter" json:"vcenter,omitempty"`
	// vcenterLine is the line of the vcenter key, for errors.
	vcenterLine int
	// ansible is set for an Ansible inventory: its groups are roles, but
	// not ones a person typed for dpulab (CheckRoles leaves them be).
	ansible bool
	// Warnings list what an Ansible inventory held that could not be
	// mapped (ansible_password, ansible_become, ...): shown, not
	// ignored.
	Warnings []string `yaml:"-" json:"warnings,omitempty"`
}

// Host is one lab host.
type Host struct {
	// Name identifies the host in steps, output and results.
	Name string `yaml:"name" json:"name"`
	// Address is an IP, a DNS name or a ~/.ssh/config Host alias; "local"
	// means this machine (no SSH). Empty means the same as Name.
	Address string `yaml:"address" json:"address"`
	// Port, User and Identity override ~/.ssh/config when set.
	Port     int    `yaml:"port" json:"port,omitempty"`
	User     string `yaml:"user" json:"user,omitempty"`
	Identity string `yaml:"identity" json:"identity,omitempty"`
	// ProxyJump, when set, overrides ~/.ssh/config's ([user@]host[:port],
	// comma-separated hops), as ssh -J.
	ProxyJump string `yaml:"proxy_jump" json:"proxy_jump,omitempty"`
	// Roles are what steps select hosts by (client, baseline, ...).
	Roles []string `yaml:"roles" json:"roles"`
	// Labels describe the host in results (nic, mode, ...).
	Labels map[string]string `yaml:"labels" json:"labels,omitempty"`
	// ESXi is the name vCenter knows the ESXi host by on which this
	// host (a VM) runs; empty when the host is not a vSphere VM.
	ESXi string `yaml:"esxi" json:"esxi,omitempty"`
	// VM is this host's virtual machine name in vCenter (default: Name)
	// when ESXi is set.
	VM string `yaml:"vm" json:"vm,omitempty"`
	// Line is where the host is defined in the inventory file.
	Line int `yaml:"-" json:"-"`
}

// VCenter is the inventory's optional vcenter section. The password is
// never part of it: it comes from the environment variable PasswordEnv
// when that is set and non-empty, else it is asked for.
type VCenter struct {
	// URL is the vCenter (or ESXi) SDK address, https://HOST[:PORT][/sdk].
	URL string `yaml:"url" json:"url"`
	// User logs in, e.g. administrator@vsphere.local.
	User string `yaml:"user" json:"user"`
	// PasswordEnv names the environment variable holding the password.
	PasswordEnv string `yaml:"password_env" json:"password_env,omitempty"`
	// Thumbprint pins the server's certificate (SHA-256 or SHA-1 hex,
	// colons optional); empty means the known-thumbprints file decides.
	Thumbprint string `yaml:"thumbprint" json:"thumbprint,omitempty"`
	// PasswordInFile catches `password:` written into the file, which is
	// refused; its value is never shown or kept.
	PasswordInFile string `yaml:"password" json:"-"`
}

// VMName is the host's VM name in vCenter.
func (h Host) VMName() string {
	if h.VM != "" {
		return h.VM
	}
	return h.Name
}

var (
	envNameRe    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	thumbprintRe = regexp.MustCompile(`^(?:[0-9A-Fa-f]{40}|[0-9A-Fa-f]{64})$`)
)

// validate checks the vcenter section; at is "file:line" of the section.
func (v *VCenter) validate(at string) []string {
	var errs []string
	if v.PasswordInFile != "" {
		errs = append(errs, fmt.Sprintf("%s: vcenter: a password is never read from the inventory: remove `password:` and set `password_env: VAR` (or leave it out to be asked)", at))
		v.PasswordInFile = ""
	}
	u, err := url.Parse(v.URL)
	shown := "(unparsable)"
	if err == nil {
		shown = u.Redacted() // a password in the url is not echoed
	}
	switch {
	case v.URL == "":
		errs = append(errs, fmt.Sprintf("%s: vcenter: add `url: https://VCENTER/sdk`", at))
	case err != nil || u.Scheme != "https" || u.Host == "":
		errs = append(errs, fmt.Sprintf("%s: vcenter: url %q: use https://HOST[:PORT][/sdk]", at, shown))
	case u.User != nil:
		errs = append(errs, fmt.Sprintf("%s: vcenter: url: put the user under `user:` and the password in the variable `password_env` names, not in the url", at))
	}
	if v.User == "" {
		errs = append(errs, fmt.Sprintf("%s: vcenter: add `user: ...`", at))
	}
	if v.PasswordEnv != "" && !envNameRe.MatchString(v.PasswordEnv) {
		errs = append(errs, fmt.Sprintf("%s: vcenter: password_env must name an environment variable (letters, digits, '_'), not hold the password", at))
	}
	if v.Thumbprint != "" && !thumbprintRe.MatchString(strings.ReplaceAll(v.Thumbprint, ":", "")) {
		errs = append(errs, fmt.Sprintf("%s: vcenter: thumbprint %q: give the certificate's SHA-256 (or SHA-1) fingerprint in hex, as vCenter shows it", at, v.Thumbprint))
	}
	return errs
}

// IsLocal reports whether the host is this machine.
func (h Host) IsLocal() bool { return h.Address == LocalName }

// HasRole reports whether the host plays role.
func (h Host) HasRole(role string) bool {
	for _, r := range h.Roles {
		if r == role {
			return true
		}
	}
	return false
}

var hostNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// LoadInventory reads an inventory file. An empty path returns the default
// inventory (every role on this machine). Errors name the file and line.
func LoadInventory(path string) (*Inventory, error) {
	if path == "" {
		return &Inventory{}, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	}
	return ParseInventory(path, b)
}

// ParseInventory parses an inventory: dpulab's hosts.yaml, or an Ansible
// inventory (INI, YAML, or `ansible-inventory --list` JSON), told apart by
// content. path is used in error messages.
func ParseInventory(path string, b []byte) (*Inventory, error) {
	inv := &Inventory{Path: path}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("%s: empty inventory: list hosts under `hosts:` or run without --inventory to use this machine", path)
	}
	if kind := ansibleKind(b); kind != "" {
		return parseAnsible(path, kind, b)
	}
	var doc yaml.Node
	docErr := yaml.Unmarshal(b, &doc)
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(inv); err != nil {
		return nil, yamlErr(path, err, &doc)
	}
	if docErr == nil {
		lines := hostLines(&doc)
		for i := range inv.Hosts {
			if i < len(lines) {
				inv.Hosts[i].Line = lines[i]
			}
		}
		inv.vcenterLine = keyLine(&doc, "vcenter")
	}
	if err := inv.validate(); err != nil {
		return nil, err
	}
	inv.KnownHosts = expandHome(inv.KnownHosts)
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		if h.Address == "" {
			h.Address = h.Name
		}
		h.Identity = expandHome(h.Identity)
	}
	return inv, nil
}

func parseAnsible(path, kind string, b []byte) (*Inventory, error) {
	var a *ansibleInv
	var err error
	switch kind {
	case "ini":
		a, err = parseAnsibleINI(path, b)
	case "yaml":
		a, err = parseAnsibleYAML(path, b)
	default:
		a, err = parseAnsibleJSON(path, b)
	}
	if err != nil {
		return nil, fmt.Errorf("ansible inventory %w", err)
	}
	if len(a.hosts) == 0 {
		return nil, fmt.Errorf("%s: the Ansible inventory (%s) lists no hosts", path, kind)
	}
	inv, err := a.toInventory(path)
	if err != nil {
		return nil, err
	}
	inv.ansible = true
	if err := inv.validate(); err != nil {
		return nil, err
	}
	for i := range inv.Hosts {
		if inv.Hosts[i].Address == "" {
			inv.Hosts[i].Address = inv.Hosts[i].Name
		}
	}
	return inv, nil
}

// hostLines finds the line of each item under the top-level hosts key.
func hostLines(doc *yaml.Node) []int {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "hosts" && m.Content[i+1].Kind == yaml.SequenceNode {
			var lines []int
			for _, it := range m.Content[i+1].Content {
				lines = append(lines, it.Line)
			}
			return lines
		}
	}
	return nil
}

// keyLine is the line of a top-level key, 0 when absent.
func keyLine(doc *yaml.Node, key string) int {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return 0
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i].Line
		}
	}
	return 0
}

var yamlLineRe = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// yamlErr rewrites yaml.v3's "line N: msg" errors as "file:N: msg", and
// its unknown fields in the inventory's words (unknownField); doc is the
// file's node tree, for the names of hosts.
func yamlErr(path string, err error, doc *yaml.Node) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var msgs []string
		for _, e := range te.Errors {
			if m, ok := unknownField(path, e, doc); ok {
				msgs = append(msgs, m)
				continue
			}
			msgs = append(msgs, fileLine(path, e))
		}
		return errors.New(strings.Join(msgs, "\n"))
	}
	return errors.New(fileLine(path, err.Error()))
}

func fileLine(path, msg string) string {
	if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s:%s: %s", path, m[1], m[2])
	}
	return fmt.Sprintf("%s: %s", path, strings.TrimPrefix(msg, "yaml: "))
}

func (inv *Inventory) validate() error {
	var errs []string
	seen := map[string]int{}
	for i, h := range inv.Hosts {
		at := fmt.Sprintf("%s:%d", inv.Path, h.Line)
		if h.Line == 0 {
			// Ansible YAML and JSON inventories carry no line numbers.
			at = inv.Path
		}
		switch {
		case h.Name == "":
			errs = append(errs, fmt.Sprintf("%s: host #%d has no name: add `name: ...`", at, i+1))
		case !hostNameRe.MatchString(h.Name):
			errs = append(errs, fmt.Sprintf("%s: host name %q: use letters, digits, '.', '_' and '-' only", at, h.Name))
		default:
			if prev, ok := seen[h.Name]; ok {
				errs = append(errs, fmt.Sprintf("%s: host %q is already defined at line %d: names must be unique", at, h.Name, prev))
			}
			seen[h.Name] = h.Line
		}
		if h.Name == LocalName && !h.IsLocal() {
			errs = append(errs, fmt.Sprintf("%s: host name %q means this machine: give this host another name, or set `address: local`", at, h.Name))
		}
		if h.Port < 0 || h.Port > 65535 {
			errs = append(errs, fmt.Sprintf("%s: host %q: port %d is not between 1 and 65535", at, h.Name, h.Port))
		}
		if strings.ContainsAny(h.Address, " \t\n") {
			errs = append(errs, fmt.Sprintf("%s: host %q: address %q contains spaces", at, h.Name, h.Address))
		}
		for _, r := range h.Roles {
			if strings.TrimSpace(r) == "" {
				errs = append(errs, fmt.Sprintf("%s: host %q: empty role", at, h.Name))
			}
		}
		if (h.ESXi != "" || h.VM != "") && inv.VCenter == nil {
			errs = append(errs, fmt.Sprintf("%s: host %q: esxi/vm are read through vCenter: add a `vcenter:` section (url, user, password_env)", at, h.Name))
		}
		if h.VM != "" && h.ESXi == "" {
			errs = append(errs, fmt.Sprintf("%s: host %q: vm is set without esxi: add `esxi: HOST` (the ESXi host name as vCenter shows it)", at, h.Name))
		}
	}
	if inv.VCenter != nil {
		errs = append(errs, inv.VCenter.validate(fmt.Sprintf("%s:%d", inv.Path, inv.vcenterLine))...)
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

// HostsFor returns the hosts that play role, in inventory order. Without an
// inventory (no hosts) every role is this machine: a single host named
// "local". With one, the role named "local" is still this machine unless
// some host takes it (so the quickstart runs here with a lab inventory
// loaded), and any other role no host plays is an error saying how to fix
// the file.
func (inv *Inventory) HostsFor(role string) ([]Host, error) {
	if inv == nil || len(inv.Hosts) == 0 {
		return []Host{{Name: LocalName, Address: LocalName, Roles: []string{role}}}, nil
	}
	var out []Host
	for _, h := range inv.Hosts {
		if h.HasRole(role) {
			out = append(out, h)
		}
	}
	if len(out) == 0 && role == LocalName {
		if h, ok := inv.Host(LocalName); ok {
			return []Host{h}, nil
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no host has role %q (roles present: %s): add %q to the roles of a host", inv.Path, role, strings.Join(inv.Roles(), ", "), role)
	}
	return out, nil
}

// HasRole reports whether some host of the inventory plays role.
func (inv *Inventory) HasRole(role string) bool {
	if inv == nil {
		return false
	}
	for _, h := range inv.Hosts {
		if h.HasRole(role) {
			return true
		}
	}
	return false
}

// Roles lists every role some host plays, sorted.
func (inv *Inventory) Roles() []string {
	if inv == nil {
		return nil
	}
	set := map[string]bool{}
	for _, h := range inv.Hosts {
		for _, r := range h.Roles {
			set[r] = true
		}
	}
	out := make([]string, 0, len(set))
	for r := range set {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// Host returns the host called name.
func (inv *Inventory) Host(name string) (Host, bool) {
	if inv != nil {
		for _, h := range inv.Hosts {
			if h.Name == name {
				return h, true
			}
		}
	}
	// "local" is this machine unless the inventory names a host so.
	if name == LocalName {
		return Host{Name: LocalName, Address: LocalName, Roles: []string{LocalName}}, true
	}
	return Host{}, false
}

// expandHome replaces a leading ~ with the home directory.
func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return home + p[1:]
		}
	}
	return p
}
