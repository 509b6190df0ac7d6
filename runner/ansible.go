package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Ansible inventories (INI, YAML, or the JSON of `ansible-inventory
// --list`) are read into the same Inventory: every group a host is in,
// directly or through children, is a role (except all and ungrouped),
// unless a dpulab_roles variable (host or group; a list or a comma
// string) names them. Connection variables map onto Host fields; the
// ansible_* variables that cannot be mapped are listed in
// Inventory.Warnings.

// ansibleInv is an Ansible inventory before mapping.
type ansibleInv struct {
	groups map[string]*ansibleGroup
	hosts  []string // in order of first appearance
	seen   map[string]int
	hvars  map[string]map[string]any
}

type ansibleGroup struct {
	hosts    []string
	children []string
	vars     map[string]any
}

func newAnsibleInv() *ansibleInv {
	return &ansibleInv{groups: map[string]*ansibleGroup{}, seen: map[string]int{}, hvars: map[string]map[string]any{}}
}

func (a *ansibleInv) group(name string) *ansibleGroup {
	g := a.groups[name]
	if g == nil {
		g = &ansibleGroup{vars: map[string]any{}}
		a.groups[name] = g
	}
	return g
}

func (a *ansibleInv) addHost(group, host string, line int, vars map[string]any) {
	if _, ok := a.seen[host]; !ok {
		a.seen[host] = line
		a.hosts = append(a.hosts, host)
		a.hvars[host] = map[string]any{}
	}
	for k, v := range vars {
		a.hvars[host][k] = v
	}
	if group != "" {
		g := a.group(group)
		for _, h := range g.hosts {
			if h == host {
				return
			}
		}
		g.hosts = append(g.hosts, host)
	}
}

var iniSectionRe = regexp.MustCompile(`^\[([^\]\s]+)\]$`)

// ansibleKind says which Ansible format b is in, or "" for dpulab's own.
func ansibleKind(b []byte) string {
	t := bytes.TrimSpace(b)
	if len(t) > 0 && t[0] == '{' {
		var m map[string]json.RawMessage
		if json.Unmarshal(t, &m) == nil {
			if _, ok := m["hosts"]; !ok {
				return "json"
			}
		}
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err == nil && doc != nil {
		if _, ok := doc["hosts"]; ok {
			return ""
		}
		if _, ok := doc["known_hosts"]; ok {
			return ""
		}
		for _, v := range doc {
			if m, ok := v.(map[string]any); ok {
				_, h := m["hosts"]
				_, c := m["children"]
				_, vs := m["vars"]
				if h || c || vs {
					return "yaml"
				}
			}
		}
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if iniSectionRe.MatchString(strings.TrimSpace(line)) {
			return "ini"
		}
	}
	if yaml.Unmarshal(b, new(any)) != nil && !bytes.Contains(b, []byte(": ")) && !bytes.Contains(b, []byte(":\n")) {
		// Not YAML, nor broken YAML (no "key: "): host lines of an INI
		// inventory without sections.
		return "ini"
	}
	return ""
}

// parseAnsibleINI reads Ansible's INI inventory format.
func parseAnsibleINI(path string, b []byte) (*ansibleInv, error) {
	a := newAnsibleInv()
	section, kind := "ungrouped", "hosts"
	for i, raw := range strings.Split(string(b), "\n") {
		n := i + 1
		line := strings.TrimSpace(raw)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if m := iniSectionRe.FindStringSubmatch(line); m != nil {
			section, kind = m[1], "hosts"
			if g, k, ok := strings.Cut(m[1], ":"); ok {
				section, kind = g, k
				if k != "vars" && k != "children" {
					return nil, fmt.Errorf("%s:%d: section [%s]: only :vars and :children follow a group name", path, n, m[1])
				}
			}
			a.group(section)
			continue
		}
		words, err := splitINI(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		switch kind {
		case "vars":
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				return nil, fmt.Errorf("%s:%d: [%s:vars] wants key=value lines", path, n, section)
			}
			a.group(section).vars[strings.TrimSpace(k)] = unquote(strings.TrimSpace(v))
		case "children":
			g := a.group(section)
			g.children = append(g.children, words[0])
			a.group(words[0])
		default:
			vars := map[string]any{}
			for _, w := range words[1:] {
				k, v, ok := strings.Cut(w, "=")
				if !ok {
					return nil, fmt.Errorf("%s:%d: %q after the host name is not key=value", path, n, w)
				}
				vars[k] = v
			}
			name := words[0]
			// "host:port", as Ansible's INI allows (not for IPv6
			// addresses, whose colons are their own).
			if h, port, ok := strings.Cut(name, ":"); ok && !strings.Contains(port, ":") && !strings.Contains(port, "]") {
				if _, err := strconv.Atoi(port); err == nil {
					name = h
					if _, set := vars["ansible_port"]; !set {
						vars["ansible_port"] = port
					}
				}
			}
			names, err := expandHostRange(name)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", path, n, err)
			}
			for _, h := range names {
				a.addHost(section, h, n, vars)
			}
		}
	}
	return a, nil
}

// splitINI splits a host line into words, honouring quotes.
func splitINI(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	var quote byte
	in := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '"' || c == '\'':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case c == '#' && !in:
			i = len(line)
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote in %q", line)
	}
	if in {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("empty line")
	}
	return words, nil
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

var hostRangeRe = regexp.MustCompile(`\[([0-9a-zA-Z]+):([0-9a-zA-Z]+)(?::([0-9]+))?\]`)

// expandHostRange expands Ansible's host ranges: web[01:03] is web01,
// web02, web03 (the width of the start kept), db-[a:c] is db-a..db-c, an
// optional third number is the stride.
func expandHostRange(name string) ([]string, error) {
	m := hostRangeRe.FindStringSubmatchIndex(name)
	if m == nil {
		return []string{name}, nil
	}
	pre, post := name[:m[0]], name[m[1]:]
	from, to := name[m[2]:m[3]], name[m[4]:m[5]]
	stride := 1
	if m[6] >= 0 {
		stride, _ = strconv.Atoi(name[m[6]:m[7]])
		if stride < 1 {
			return nil, fmt.Errorf("host range %q: stride must be at least 1", name)
		}
	}
	var items []string
	if a, err1 := strconv.Atoi(from); err1 == nil {
		b, err2 := strconv.Atoi(to)
		if err2 != nil || b < a {
			return nil, fmt.Errorf("host range %q: %s:%s is not a rising range", name, from, to)
		}
		if (b-a)/stride > 4096 {
			return nil, fmt.Errorf("host range %q: more than 4096 hosts", name)
		}
		for i := a; i <= b; i += stride {
			items = append(items, fmt.Sprintf("%0*d", len(from), i))
		}
	} else {
		if len(from) != 1 || len(to) != 1 || from[0] > to[0] {
			return nil, fmt.Errorf("host range %q: %s:%s is not a rising range of letters", name, from, to)
		}
		for c := from[0]; c <= to[0]; c += byte(stride) {
			items = append(items, string(c))
			if int(c)+stride > 255 {
				break
			}
		}
	}
	var out []string
	for _, it := range items {
		rest, err := expandHostRange(post)
		if err != nil {
			return nil, err
		}
		for _, r := range rest {
			out = append(out, pre+it+r)
		}
	}
	return out, nil
}

// parseAnsibleYAML reads Ansible's YAML inventory format: groups with
// hosts (a mapping of host to variables), vars and children. Hosts keep
// the file's order and their lines.
func parseAnsibleYAML(path string, b []byte) (*ansibleInv, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, yamlErr(path, err, nil)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: want a mapping of group names", path)
	}
	a := newAnsibleInv()
	vars := func(n *yaml.Node) (map[string]any, error) {
		m := map[string]any{}
		if n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return m, nil
		}
		if err := n.Decode(&m); err != nil {
			return nil, fmt.Errorf("%s:%d: want a mapping of variables: %v", path, n.Line, err)
		}
		return m, nil
	}
	var walk func(name string, n *yaml.Node, depth int) error
	walk = func(name string, n *yaml.Node, depth int) error {
		if depth > 64 {
			return fmt.Errorf("%s:%d: groups nested too deep", path, n.Line)
		}
		g := a.group(name)
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return nil
		}
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%s:%d: group %q: want a mapping of hosts, vars and children", path, n.Line, name)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i], n.Content[i+1]
			switch key.Value {
			case "hosts":
				if val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
					continue
				}
				if val.Kind != yaml.MappingNode {
					return fmt.Errorf("%s:%d: group %q: hosts must be a mapping of host names", path, val.Line, name)
				}
				for j := 0; j+1 < len(val.Content); j += 2 {
					hk := val.Content[j]
					hv, err := vars(val.Content[j+1])
					if err != nil {
						return err
					}
					names, err := expandHostRange(hk.Value)
					if err != nil {
						return fmt.Errorf("%s:%d: %v", path, hk.Line, err)
					}
					for _, hn := range names {
						a.addHost(name, hn, hk.Line, hv)
					}
				}
			case "vars":
				gv, err := vars(val)
				if err != nil {
					return err
				}
				for k, v := range gv {
					g.vars[k] = v
				}
			case "children":
				if val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
					continue
				}
				if val.Kind != yaml.MappingNode {
					return fmt.Errorf("%s:%d: group %q: children must be a mapping of group names", path, val.Line, name)
				}
				for j := 0; j+1 < len(val.Content); j += 2 {
					c := val.Content[j].Value
					g.children = append(g.children, c)
					if err := walk(c, val.Content[j+1], depth+1); err != nil {
						return err
					}
				}
			default:
				return fmt.Errorf("%s:%d: group %q: %q is not hosts, vars or children", path, key.Line, name, key.Value)
			}
		}
		return nil
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		if err := walk(top.Content[i].Value, top.Content[i+1], 0); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// parseAnsibleJSON reads the output of `ansible-inventory --list`.
func parseAnsibleJSON(path string, b []byte) (*ansibleInv, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	a := newAnsibleInv()
	var meta struct {
		Hostvars map[string]map[string]any `json:"hostvars"`
	}
	if raw, ok := doc["_meta"]; ok {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, fmt.Errorf("%s: _meta: %v", path, err)
		}
	}
	for _, name := range sortedKeys(doc) {
		if name == "_meta" {
			continue
		}
		var g struct {
			Hosts    []string       `json:"hosts"`
			Children []string       `json:"children"`
			Vars     map[string]any `json:"vars"`
		}
		if err := json.Unmarshal(doc[name], &g); err != nil {
			return nil, fmt.Errorf("%s: group %q: %v", path, name, err)
		}
		grp := a.group(name)
		grp.children = append(grp.children, g.Children...)
		for k, v := range g.Vars {
			grp.vars[k] = v
		}
		for _, h := range g.Hosts {
			a.addHost(name, h, 0, meta.Hostvars[h])
		}
	}
	// hostvars in --list output already hold the group variables merged
	// in; hosts only there belong to no group.
	for _, h := range sortedKeys(meta.Hostvars) {
		a.addHost("", h, 0, meta.Hostvars[h])
	}
	return a, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// unmapped says why an Ansible variable is not used.
var unmapped = map[string]string{
	"ansible_password":             "dpulab asks for passwords when needed and never stores them",
	"ansible_ssh_pass":             "dpulab asks for passwords when needed and never stores them",
	"ansible_ssh_password":         "dpulab asks for passwords when needed and never stores them",
	"ansible_become":               "dpulab runs the steps that need root with sudo itself",
	"ansible_become_method":        "dpulab runs the steps that need root with sudo itself",
	"ansible_become_user":          "dpulab runs the steps that need root with sudo itself",
	"ansible_become_password":      "dpulab asks for the sudo password when needed and never stores it",
	"ansible_become_pass":          "dpulab asks for the sudo password when needed and never stores it",
	"ansible_ssh_private_key_pass": "dpulab asks for passphrases when needed and never stores them",
}

// toInventory maps the groups and variables onto hosts and roles.
func (a *ansibleInv) toInventory(path string) (*Inventory, error) {
	inv := &Inventory{Path: path}
	// parents[g] are the groups g is a child of.
	parents := map[string][]string{}
	for name, g := range a.groups {
		for _, c := range g.children {
			parents[c] = append(parents[c], name)
		}
	}
	notUsed := map[string][]string{}
	for _, name := range a.hosts {
		// The host's groups, nearest first, each once.
		var groups []string
		seen := map[string]bool{}
		var queue []string
		for _, gname := range sortedKeys(a.groups) {
			for _, h := range a.groups[gname].hosts {
				if h == name {
					queue = append(queue, gname)
				}
			}
		}
		for len(queue) > 0 {
			g := queue[0]
			queue = queue[1:]
			if seen[g] {
				continue
			}
			seen[g] = true
			groups = append(groups, g)
			queue = append(queue, parents[g]...)
		}
		// Variables: all, then the farthest groups, then the nearest,
		// then the host's own.
		vars := map[string]any{}
		if g, ok := a.groups["all"]; ok {
			for k, v := range g.vars {
				vars[k] = v
			}
		}
		for i := len(groups) - 1; i >= 0; i-- {
			for k, v := range a.groups[groups[i]].vars {
				vars[k] = v
			}
		}
		for k, v := range a.hvars[name] {
			vars[k] = v
		}
		h := Host{Name: name, Line: a.seen[name]}
		for _, g := range groups {
			if g != "all" && g != "ungrouped" {
				h.Roles = append(h.Roles, g)
			}
		}
		sort.Strings(h.Roles)
		for _, k := range sortedKeys(vars) {
			s := fmt.Sprint(vars[k])
			switch k {
			case "dpulab_roles":
				h.Roles = nil
				switch v := vars[k].(type) {
				case []any:
					for _, r := range v {
						h.Roles = append(h.Roles, fmt.Sprint(r))
					}
				default:
					for _, r := range strings.Split(s, ",") {
						if r = strings.TrimSpace(r); r != "" {
							h.Roles = append(h.Roles, r)
						}
					}
				}
			case "ansible_host", "ansible_ssh_host":
				h.Address = s
			case "ansible_port", "ansible_ssh_port":
				p, err := strconv.Atoi(s)
				if err != nil {
					return nil, fmt.Errorf("%s: host %q: %s %q is not a port number", path, name, k, s)
				}
				h.Port = p
			case "ansible_user", "ansible_ssh_user":
				h.User = s
			case "ansible_ssh_private_key_file", "ansible_private_key_file":
				h.Identity = expandHome(s)
			case "ansible_ssh_common_args", "ansible_ssh_extra_args":
				jump, rest := proxyJumpArg(s)
				if jump != "" {
					h.ProxyJump = jump
				}
				if rest != "" {
					notUsed[k+" "+strconv.Quote(rest)] = append(notUsed[k+" "+strconv.Quote(rest)], name)
				}
			case "ansible_connection":
				switch s {
				case "local":
					h.Address = LocalName
				case "ssh", "smart", "paramiko":
				default:
					notUsed[k+"="+s] = append(notUsed[k+"="+s], name)
				}
			case "ansible_python_interpreter", "ansible_shell_type", "ansible_shell_executable":
				// Ansible's own business: nothing to do with connecting.
			default:
				if strings.HasPrefix(k, "ansible_") {
					notUsed[k] = append(notUsed[k], name)
				}
			}
		}
		inv.Hosts = append(inv.Hosts, h)
	}
	for _, k := range sortedKeys(notUsed) {
		why := "dpulab has no such setting"
		if w, ok := unmapped[strings.Fields(k)[0]]; ok {
			why = w
		}
		inv.Warnings = append(inv.Warnings, fmt.Sprintf("%s: %s (hosts %s) not used: %s", path, k, strings.Join(notUsed[k], ", "), why))
	}
	return inv, nil
}

// proxyJumpArg finds -J HOST or -o ProxyJump=HOST in ssh arguments and
// returns it with the arguments left over.
func proxyJumpArg(args string) (jump, rest string) {
	words, err := splitINI(args)
	if err != nil {
		return "", args
	}
	var left []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "-J" && i+1 < len(words):
			jump = words[i+1]
			i++
		case strings.HasPrefix(w, "-J"):
			jump = w[2:]
		case w == "-o" && i+1 < len(words) && isProxyJumpOpt(words[i+1]):
			jump = optValue(words[i+1])
			i++
		case strings.HasPrefix(w, "-o") && isProxyJumpOpt(w[2:]):
			jump = optValue(w[2:])
		default:
			left = append(left, w)
		}
	}
	return jump, strings.Join(left, " ")
}

func isProxyJumpOpt(s string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(s)), "proxyjump")
}

func optValue(s string) string {
	s = strings.TrimSpace(s)[len("proxyjump"):]
	return strings.TrimSpace(strings.TrimLeft(s, " \t="))
}
