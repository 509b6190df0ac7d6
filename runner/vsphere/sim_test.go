package vsphere

import (
	"context"
	"crypto/tls"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
)

// Credentials the simulated vCenter accepts; the password is distinctive so
// that a test can look for it in every error and note.
const (
	simUser     = "lab@vsphere.local"
	simPassword = "Pw-7f3c9e-never-shown"
)

type sim struct {
	model *simulator.Model
	srv   *simulator.Server
	// URL is https://127.0.0.1:PORT/sdk, without credentials.
	URL   string
	Thumb string
	// Known is a fresh known-thumbprints file path (not created).
	Known string
}

// newSim starts govmomi's in-process vCenter (VPX model: a datacenter, a
// standalone host DC0_H0 and a cluster of three, VMs on each, one
// distributed switch DVS0 whose port group the VMs use) over TLS, taking
// only simUser/simPassword.
func newSim(t *testing.T) *sim {
	t.Helper()
	m := simulator.VPX()
	if err := m.Create(); err != nil {
		t.Fatal(err)
	}
	m.Service.TLS = new(tls.Config)
	m.Service.Listen = &url.URL{User: url.UserPassword(simUser, simPassword)}
	s := m.Service.NewServer()
	t.Cleanup(func() {
		s.Close()
		m.Remove()
	})
	return &sim{model: m, srv: s, URL: "https://" + s.URL.Host + "/sdk", Thumb: Thumbprint(s.Certificate()),
		Known: filepath.Join(t.TempDir(), "state", KnownThumbprintsName)}
}

// config is a Config for the simulator whose password func counts calls.
func (s *sim) config(calls *int) Config {
	return Config{URL: s.URL, User: simUser, KnownThumbprints: s.Known, Password: func(context.Context) (string, error) {
		if calls != nil {
			*calls++
		}
		return simPassword, nil
	}}
}

// dial connects with the thumbprint accepted.
func (s *sim) dial(t *testing.T) *Client {
	t.Helper()
	cfg := s.config(nil)
	cfg.AcceptNew = true
	c, err := Dial(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// edit changes a simulated object under the simulator's lock.
func (s *sim) edit(t *testing.T, kind, name string, f func(obj mo.Entity)) {
	t.Helper()
	reg := s.model.Map()
	for _, e := range reg.All(kind) {
		if e.Entity().Name == name {
			reg.WithLock(s.model.Service.Context, e, func() { f(e) })
			return
		}
	}
	t.Fatalf("simulator has no %s %s", kind, name)
}
