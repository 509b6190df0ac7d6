//go:build unix

package runner

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadInventory(t *testing.T) {
	inv, err := LoadInventory("testdata/hosts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Hosts) != 4 || inv.KnownHosts != "/tmp/dpulab-test-known_hosts" {
		t.Fatalf("%+v", inv)
	}
	h := inv.Hosts[0]
	if h.Name != "client1" || h.Address != "10.0.0.5" || h.Port != 2222 || h.User != "lab" || h.Line != 3 {
		t.Fatalf("host %+v", h)
	}
	if inv.Hosts[2].Labels["mode"] != "UPTv2" || inv.Hosts[2].Line != 13 {
		t.Fatalf("host %+v", inv.Hosts[2])
	}
	tests := []struct {
		role  string
		names []string
	}{
		{"client", []string{"client1", "me"}},
		{"baseline", []string{"esx-std-vm", "esx-dpu-vm"}},
		{"accelerated", []string{"esx-dpu-vm"}},
	}
	for _, tc := range tests {
		t.Run(tc.role, func(t *testing.T) {
			hs, err := inv.HostsFor(tc.role)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, h := range hs {
				names = append(names, h.Name)
			}
			if !reflect.DeepEqual(names, tc.names) {
				t.Fatalf("%v, want %v", names, tc.names)
			}
		})
	}
	_, err = inv.HostsFor("server")
	if err == nil || !strings.Contains(err.Error(), `no host has role "server"`) || !strings.Contains(err.Error(), "accelerated, baseline, client") {
		t.Fatalf("err = %v", err)
	}
	if !inv.Hosts[3].IsLocal() || inv.Hosts[0].IsLocal() {
		t.Fatal("IsLocal")
	}
}

func TestNoInventoryIsLocal(t *testing.T) {
	for _, inv := range []*Inventory{nil, {}} {
		inv2, _ := LoadInventory("")
		for _, i := range []*Inventory{inv, inv2} {
			hs, err := i.HostsFor("anything")
			if err != nil || len(hs) != 1 || !hs[0].IsLocal() || hs[0].Name != "local" {
				t.Fatalf("%v %v", hs, err)
			}
		}
	}
}

// The role named "local" stays this machine with an inventory that gives
// it to no host (the quickstart with a lab inventory loaded); a host that
// takes the role gets it; other roles without a host are errors.
func TestLocalRoleWithInventory(t *testing.T) {
	inv, err := ParseInventory("inv.yaml", []byte("hosts:\n  - name: a\n    address: 10.0.0.1\n    roles: [client]\n"))
	if err != nil {
		t.Fatal(err)
	}
	hs, err := inv.HostsFor("local")
	if err != nil || len(hs) != 1 || !hs[0].IsLocal() || hs[0].Name != LocalName {
		t.Fatalf("HostsFor(local) = %v, %v; want this machine", hs, err)
	}
	if h, ok := inv.Host(LocalName); !ok || !h.IsLocal() {
		t.Fatalf("Host(local) = %v, %v", h, ok)
	}
	if _, err := inv.HostsFor("server"); err == nil || !strings.Contains(err.Error(), `no host has role "server"`) {
		t.Fatalf("HostsFor(server) err = %v", err)
	}
	inv, err = ParseInventory("inv.yaml", []byte("hosts:\n  - name: lab1\n    address: 10.0.0.2\n    roles: [local]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if hs, err := inv.HostsFor("local"); err != nil || len(hs) != 1 || hs[0].Name != "lab1" {
		t.Fatalf("HostsFor(local) with a host taking the role = %v, %v", hs, err)
	}
}

func TestInventoryErrors(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"unknown field", "hosts:\n  - name: a\n    adress: x\n", "inv.yaml:3: unknown field adress in host a; did you mean address? (it takes: name, address, port,"},
		{"unknown field, second host", "hosts:\n  - name: a\n  - name: h1\n    address: x\n    rols: [client]\n", "inv.yaml:5: unknown field rols in host h1; did you mean roles?"},
		{"unknown field before the name", "hosts:\n  - adress: x\n    name: h1\n", "inv.yaml:2: unknown field adress in host h1; did you mean address?"},
		{"unknown field, no name", "hosts:\n  - adress: x\n", "inv.yaml:2: unknown field adress in host #1; did you mean address?"},
		{"unknown field, nothing close", "hosts:\n  - name: a\n    colour: red\n", "inv.yaml:3: unknown field colour in host a (it takes: name, address"},
		{"unknown vcenter field", "vcenter:\n  url: https://vc\n  usr: a\n", "inv.yaml:3: unknown field usr in the vcenter section; did you mean user? (it takes: url, user, password_env, thumbprint)"},
		{"unknown top-level field", "host:\n  - name: a\n", "inv.yaml:1: unknown field host at the top level; did you mean hosts?"},
		{"bad type", "hosts:\n  - name: a\n    port: many\n", "inv.yaml:3: cannot unmarshal"},
		{"syntax", "hosts: [\n", "inv.yaml:"},
		{"no name", "hosts:\n  - address: x\n", "inv.yaml:2: host #1 has no name"},
		{"duplicate", "hosts:\n  - name: a\n  - name: a\n", "inv.yaml:3: host \"a\" is already defined at line 2"},
		{"bad port", "hosts:\n  - name: a\n    port: 70000\n", "inv.yaml:2: host \"a\": port 70000"},
		{"bad name", "hosts:\n  - name: 'a b'\n", "inv.yaml:2: host name \"a b\""},
		{"empty", "\n", "empty inventory"},
		{"remote host named local", "hosts:\n  - name: local\n    address: 10.0.0.9\n", `inv.yaml:2: host name "local" means this machine`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseInventory("inv.yaml", []byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if _, err := LoadInventory("testdata/missing.yaml"); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Fatalf("err = %v", err)
	}
}

func TestPoolResolvesSSHConfig(t *testing.T) {
	inv, err := LoadInventory("testdata/hosts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	pool := NewPool(inv, SSHOptions{SSHConfigFiles: []string{"testdata/ssh_config"}})
	defer pool.Close()

	c1, err := pool.SSHConfig(inv.Hosts[0])
	if err != nil {
		t.Fatal(err)
	}
	if c1.Addr != "10.0.0.5" || c1.Port != 2222 || c1.User != "lab" || !reflect.DeepEqual(c1.Identities, []string{"/keys/id_lab"}) || c1.KnownHosts != "/tmp/dpulab-test-known_hosts" {
		t.Fatalf("client1 %+v", c1)
	}
	std, err := pool.SSHConfig(inv.Hosts[1])
	if err != nil {
		t.Fatal(err)
	}
	if std.Name != "esx-std-vm" || std.Addr != "10.0.0.6" || std.Port != 2200 || std.User != "stduser" || std.Identities[0] != filepath.Join(home, ".ssh/id_std") {
		t.Fatalf("std %+v", std)
	}
	dpu, err := pool.SSHConfig(inv.Hosts[2])
	if err != nil {
		t.Fatal(err)
	}
	if dpu.Addr != "192.168.50.7" || dpu.Port != 22 || dpu.Jump == nil {
		t.Fatalf("dpu %+v", dpu)
	}
	if j := dpu.Jump; j.Addr != "10.0.0.1" || j.Port != 2022 || j.User != "jumper" || j.KnownHosts != "/tmp/dpulab-test-known_hosts" {
		t.Fatalf("jump %+v", j)
	}

	// Targets are made once per host and reused.
	a, err := pool.Target(inv.Hosts[1])
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pool.Target(inv.Hosts[1])
	if a != b {
		t.Fatal("second Target for the same host is a new one")
	}
	if _, ok := a.(*SSHTarget); !ok {
		t.Fatalf("%T", a)
	}
	ts, err := pool.TargetsFor("client")
	if err != nil || len(ts) != 2 || ts[1].Name() != "me" {
		t.Fatalf("%v %v", ts, err)
	}
	if _, ok := ts[1].(*Local); !ok {
		t.Fatalf("local host gave %T", ts[1])
	}
}

func TestParseJump(t *testing.T) {
	tests := []struct {
		in         string
		user, host string
		port       int
	}{
		{"bastion", "", "bastion", 0},
		{"u@b:2022", "u", "b", 2022},
		{"ssh://u@b", "u", "b", 0},
		{"[::1]:22", "", "::1", 22},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			u, h, p, err := parseJump(tc.in)
			if err != nil || u != tc.user || h != tc.host || p != tc.port {
				t.Fatalf("%q %q %d %v", u, h, p, err)
			}
		})
	}
}

func TestInventoryVCenter(t *testing.T) {
	good := `vcenter:
  url: https://vc.lab.example/sdk
  user: lab@vsphere.local
  password_env: DPULAB_VCENTER_PASSWORD
  thumbprint: 3f:a1:00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff:00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd
hosts:
  - name: esx-dpu-vm
    address: 10.0.0.7
    roles: [accelerated]
    esxi: esx02.lab.example
    vm: redis-dpu
  - name: esx-std-vm
    address: 10.0.0.6
    roles: [baseline]
    esxi: esx01.lab.example
  - name: client1
    address: 10.0.0.5
    roles: [client]
`
	inv, err := ParseInventory("hosts.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	vc := inv.VCenter
	if vc == nil || vc.URL != "https://vc.lab.example/sdk" || vc.User != "lab@vsphere.local" || vc.PasswordEnv != "DPULAB_VCENTER_PASSWORD" || !strings.HasPrefix(vc.Thumbprint, "3f:a1") {
		t.Fatalf("vcenter = %+v", vc)
	}
	if h := inv.Hosts[0]; h.ESXi != "esx02.lab.example" || h.VMName() != "redis-dpu" {
		t.Fatalf("host %+v", h)
	}
	if h := inv.Hosts[1]; h.ESXi != "esx01.lab.example" || h.VMName() != "esx-std-vm" {
		t.Fatalf("host %+v (the VM name defaults to the host's)", h)
	}
	if inv.Hosts[2].ESXi != "" {
		t.Fatalf("client1 is no VM: %+v", inv.Hosts[2])
	}

	bad := []struct {
		name, yaml string
		want       []string
	}{
		{"password in file", "vcenter:\n  url: https://vc/sdk\n  user: u\n  password: s3cr3t-Pw\nhosts:\n  - name: a\n", []string{"hosts.yaml:1: vcenter: a password is never read from the inventory", "password_env"}},
		{"http url", "vcenter:\n  url: http://vc/sdk\n  user: u\nhosts:\n  - name: a\n", []string{`url "http://vc/sdk": use https://`}},
		{"password in http url", "vcenter:\n  url: http://u:s3cr3t-Pw@vc/sdk\n  user: u\nhosts:\n  - name: a\n", []string{"use https://"}},
		{"user in url", "vcenter:\n  url: https://u:s3cr3t-Pw@vc/sdk\n  user: u\nhosts:\n  - name: a\n", []string{"not in the url"}},
		{"no user", "hosts:\n  - name: a\nvcenter:\n  url: https://vc/sdk\n", []string{"hosts.yaml:3: vcenter: add `user: ...`"}},
		{"password as env name", "vcenter:\n  url: https://vc/sdk\n  user: u\n  password_env: s3cr3t-Pw!\nhosts:\n  - name: a\n", []string{"password_env must name an environment variable"}},
		{"bad thumbprint", "vcenter:\n  url: https://vc/sdk\n  user: u\n  thumbprint: AB:CD\nhosts:\n  - name: a\n", []string{`thumbprint "AB:CD"`}},
		{"esxi without vcenter", "hosts:\n  - name: a\n    esxi: esx01\n", []string{"hosts.yaml:2: host \"a\": esxi/vm are read through vCenter"}},
		{"vm without esxi", "vcenter:\n  url: https://vc/sdk\n  user: u\nhosts:\n  - name: a\n    vm: x\n", []string{"vm is set without esxi"}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseInventory("hosts.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "s3cr3t-Pw") {
				t.Errorf("the password is in the error: %q", err)
			}
		})
	}
}

// TestInventoryUnknownRole is a mistyped role: refused with the host, its
// line, the closest role and every role the labs use; a known role, and
// an Ansible inventory's groups, pass.
func TestInventoryUnknownRole(t *testing.T) {
	known := []string{"local", "client", "server", "baseline", "accelerated"}
	inv, err := ParseInventory("inv.yaml", []byte("hosts:\n  - name: a\n    roles: [client]\n  - name: h1\n    address: local\n    roles: [locl, server]\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = inv.CheckRoles(known)
	want := `inv.yaml:4: host h1: unknown role "locl"; did you mean local? (the labs' roles: accelerated, baseline, client, local, server)`
	if err == nil || err.Error() != want {
		t.Errorf("CheckRoles = %v\nwant %s", err, want)
	}
	inv, err = ParseInventory("inv.yaml", []byte("hosts:\n  - name: a\n    roles: [gpu]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := inv.CheckRoles(known); err == nil || strings.Contains(err.Error(), "did you mean") || !strings.Contains(err.Error(), `unknown role "gpu" (the labs' roles: accelerated`) {
		t.Errorf("a role close to none: %v", err)
	}
	inv, err = ParseInventory("inv.yaml", []byte("hosts:\n  - name: a\n    roles: [client, baseline]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := inv.CheckRoles(known); err != nil {
		t.Errorf("known roles refused: %v", err)
	}
	ans, err := ParseInventory("hosts.ini", []byte("[webservers]\nweb1 ansible_host=10.0.0.1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ans.CheckRoles(known); err != nil {
		t.Errorf("an Ansible inventory's groups were checked as roles: %v", err)
	}
}
