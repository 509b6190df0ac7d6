//go:build unix

package runner

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const ansibleINI = `# lab inventory
bastion ansible_host=10.0.0.1

[clients]
client[01:02] ansible_user=lab
dpu1 ansible_host=10.0.0.7 ansible_port=2222 ansible_ssh_common_args='-o ProxyJump=jumper@10.0.0.1:2022 -o Compression=yes'

[servers]
dpu1
std1 ansible_host=10.0.0.6 ansible_ssh_private_key_file=/keys/id_std ansible_password=hunter2

[servers:vars]
ansible_become=true

[lab:children]
clients
servers

[lab:vars]
ansible_user=labuser
`

const ansibleYAML = `all:
  hosts:
    bastion:
      ansible_host: 10.0.0.1
  children:
    clients:
      hosts:
        client[01:02]:
          ansible_user: lab
        dpu1:
          ansible_host: 10.0.0.7
          ansible_port: 2222
          ansible_ssh_common_args: -J jumper@10.0.0.1:2022 -o Compression=yes
    servers:
      hosts:
        dpu1:
        std1:
          ansible_host: 10.0.0.6
          ansible_ssh_private_key_file: /keys/id_std
          ansible_password: hunter2
      vars:
        ansible_become: true
    lab:
      children:
        clients:
        servers:
      vars:
        ansible_user: labuser
`

// ansibleJSON is what ansible-inventory --list prints for the inventory
// above (hostvars hold group variables merged in).
const ansibleJSON = `{
  "_meta": {"hostvars": {
    "bastion": {"ansible_host": "10.0.0.1"},
    "client01": {"ansible_user": "lab"},
    "client02": {"ansible_user": "lab"},
    "dpu1": {"ansible_host": "10.0.0.7", "ansible_port": 2222, "ansible_user": "labuser", "ansible_become": true,
             "ansible_ssh_common_args": "-o ProxyJump=jumper@10.0.0.1:2022 -o Compression=yes"},
    "std1": {"ansible_host": "10.0.0.6", "ansible_user": "labuser", "ansible_become": true,
             "ansible_ssh_private_key_file": "/keys/id_std", "ansible_password": "hunter2"}
  }},
  "all": {"children": ["ungrouped", "lab"]},
  "ungrouped": {"hosts": ["bastion"]},
  "lab": {"children": ["clients", "servers"]},
  "clients": {"hosts": ["client01", "client02", "dpu1"]},
  "servers": {"hosts": ["dpu1", "std1"]}
}`

// TestAnsibleInventories: the same lab as INI, YAML and --list JSON maps
// to the same hosts and roles (dpu1 is in two groups), connection
// variables are honoured, and the ones that cannot be are reported.
func TestAnsibleInventories(t *testing.T) {
	for _, tc := range []struct{ name, file, content string }{
		{"ini", "hosts", ansibleINI},
		{"yaml", "hosts.yml", ansibleYAML},
		{"json", "list.json", ansibleJSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.file)
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			inv, err := LoadInventory(path)
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]Host{}
			for _, h := range inv.Hosts {
				byName[h.Name] = h
			}
			if len(inv.Hosts) != 5 {
				t.Fatalf("hosts %+v", inv.Hosts)
			}
			want := map[string]Host{
				"bastion":  {Name: "bastion", Address: "10.0.0.1"},
				"client01": {Name: "client01", Address: "client01", User: "lab", Roles: []string{"clients", "lab"}},
				"client02": {Name: "client02", Address: "client02", User: "lab", Roles: []string{"clients", "lab"}},
				"dpu1":     {Name: "dpu1", Address: "10.0.0.7", Port: 2222, User: "labuser", ProxyJump: "jumper@10.0.0.1:2022", Roles: []string{"clients", "lab", "servers"}},
				"std1":     {Name: "std1", Address: "10.0.0.6", User: "labuser", Identity: "/keys/id_std", Roles: []string{"lab", "servers"}},
			}
			for name, w := range want {
				got := byName[name]
				got.Line = 0
				if !reflect.DeepEqual(got, w) {
					t.Errorf("%s:\n got %+v\nwant %+v", name, got, w)
				}
			}
			if hs, err := inv.HostsFor("servers"); err != nil || len(hs) != 2 {
				t.Errorf("servers: %v %v", hs, err)
			}
			warns := strings.Join(inv.Warnings, "\n")
			for _, w := range []string{"ansible_password (hosts std1) not used: dpulab asks for passwords", "ansible_become (hosts dpu1, std1) not used", `"-o Compression=yes" (hosts dpu1) not used`} {
				if !strings.Contains(warns, w) {
					t.Errorf("warnings lack %q:\n%s", w, warns)
				}
			}
			if strings.Contains(warns, "hunter2") {
				t.Errorf("a password reached the warnings:\n%s", warns)
			}
		})
	}
}

// TestAnsibleRolesVariable: dpulab_roles maps groups to roles explicitly,
// as a list or a comma string, host over group; the inventory's
// validation still applies after mapping.
func TestAnsibleRolesVariable(t *testing.T) {
	inv, err := ParseInventory("hosts", []byte("[dpus]\nbf2 ansible_host=10.0.0.9 dpulab_roles=accelerated,server\nbf3\n\n[dpus:vars]\ndpulab_roles=baseline\n\n[me]\nlocalhost ansible_connection=local\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(inv.Hosts[0].Roles, []string{"accelerated", "server"}) || !reflect.DeepEqual(inv.Hosts[1].Roles, []string{"baseline"}) {
		t.Fatalf("roles %v %v", inv.Hosts[0].Roles, inv.Hosts[1].Roles)
	}
	if !inv.Hosts[2].IsLocal() {
		t.Fatalf("ansible_connection=local: %+v", inv.Hosts[2])
	}
	y, err := ParseInventory("h.yml", []byte("all:\n  children:\n    dpus:\n      hosts:\n        bf2:\n      vars:\n        dpulab_roles: [accelerated, client]\n"))
	if err != nil || !reflect.DeepEqual(y.Hosts[0].Roles, []string{"accelerated", "client"}) || y.Hosts[0].Line != 5 {
		t.Fatalf("yaml list: %+v %v", y, err)
	}
	// Validation after mapping: the reserved name, bad names, ports.
	for _, bad := range []struct{ in, want string }{
		{"[g]\nlocal ansible_host=10.0.0.1\n", `host name "local" means this machine`},
		{"[g]\nh ansible_port=99999\n", "port 99999"},
		{"[g]\nh ansible_port=x\n", "not a port number"},
		{"[g]\nh[3:1]\n", "not a rising range"},
		{"[g:weird]\nh\n", "only :vars and :children"},
	} {
		if _, err := ParseInventory("hosts", []byte(bad.in)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: err = %v, want %q", bad.in, err, bad.want)
		}
	}
}

func TestExpandHostRange(t *testing.T) {
	for in, want := range map[string][]string{
		"web[01:03]":      {"web01", "web02", "web03"},
		"db-[a:c].lab":    {"db-a.lab", "db-b.lab", "db-c.lab"},
		"n[0:4:2]":        {"n0", "n2", "n4"},
		"r[1:2]c[1:2]":    {"r1c1", "r1c2", "r2c1", "r2c2"},
		"plain.host.name": {"plain.host.name"},
	} {
		got, err := expandHostRange(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
}

// A dpulab hosts.yaml is still read as one, broken or not.
func TestNativeInventoryNotTakenForAnsible(t *testing.T) {
	for _, in := range []string{"hosts:\n  - name: a\n", "known_hosts: x\nhosts: []\n", "hosts: [\n"} {
		if k := ansibleKind([]byte(in)); k != "" {
			t.Errorf("%q taken for Ansible %s", in, k)
		}
	}
}

func TestAnsibleINIHostPort(t *testing.T) {
	inv, err := ParseInventory("hosts", []byte("[g]\nbadwolf.example.com:5309\nweb ansible_host=10.0.0.2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if h := inv.Hosts[0]; h.Name != "badwolf.example.com" || h.Port != 5309 || h.Line != 2 {
		t.Fatalf("%+v", h)
	}
}
