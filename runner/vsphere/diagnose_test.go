package vsphere

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/runner"
)

// full is what the person reads of an error: its text and its hint.
func full(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		s += "\nhint: " + h.Hint()
	}
	return s
}

// diagnosed checks that err reads as one diagnosis: every want is said,
// nothing of the others is, no --rehearse (a failure to reach vCenter is
// not a missing DPU), no password, no raw Go error text.
func diagnosed(t *testing.T, err error, want, not []string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	msg := full(err)
	noPassword(t, err)
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("lacks %q:\n%s", w, msg)
		}
	}
	for _, n := range append(not, "rehearse", "dial tcp", `Post "`, "InsecureSkipVerify", "insecure") {
		if strings.Contains(msg, n) {
			t.Errorf("says %q:\n%s", n, msg)
		}
	}
	if testing.Verbose() {
		t.Logf("%s", msg)
	}
}

// TestDiagnoses: each way of failing to use vCenter, against govmomi's
// simulator over TLS (a loopback port for the unreachable one), gets its
// own message and fix.
func TestDiagnoses(t *testing.T) {
	s := newSim(t)
	_, addr, err := parseURL(s.URL)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("wrong thumbprint", func(t *testing.T) {
		cfg := s.config(nil)
		cfg.Thumbprint = strings.Repeat("AB:", 31) + "AB"
		cfg.AcceptNew = true // never a way round a mismatch
		_, err := Dial(context.Background(), cfg)
		var te *ThumbprintError
		if !errors.As(err, &te) || te.Unknown() {
			t.Fatalf("err = %v, want a changed-thumbprint refusal", err)
		}
		diagnosed(t, err, []string{s.Thumb, cfg.Thumbprint, "vcenter.thumbprint", "Certificate Management", "vecs-cli", "intercepting", "do not connect"},
			[]string{"--accept-new-host-keys", "not known yet"})
	})

	t.Run("unknown certificate", func(t *testing.T) {
		_, err := Dial(context.Background(), s.config(nil))
		var te *ThumbprintError
		if !errors.As(err, &te) || !te.Unknown() {
			t.Fatalf("err = %v, want an unknown-certificate refusal", err)
		}
		diagnosed(t, err, []string{s.Thumb, "not known yet", "no thumbprint is pinned", `vcenter.thumbprint: "` + s.Thumb + `"`, "--accept-new-host-keys", s.Known, "Certificate Management"},
			[]string{"intercepting"})
	})

	t.Run("unreachable", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close() // closed: nothing listens there now
		cfg := s.config(nil)
		cfg.URL = "https://" + l.Addr().String() + "/sdk"
		_, err = Dial(context.Background(), cfg)
		if !IsProblem(err, Unreachable) {
			t.Fatalf("err = %v, want Unreachable", err)
		}
		diagnosed(t, err, []string{"127.0.0.1", "port " + strconv.Itoa(port), "connection refused", "tried: a TCP connection", cfg.URL, "vcenter.url", "nc -vz 127.0.0.1 " + strconv.Itoa(port)},
			[]string{"thumbprint", "password"})
	})

	t.Run("not TLS", func(t *testing.T) {
		h := httptest.NewServer(http.NotFoundHandler())
		defer h.Close()
		cfg := s.config(nil)
		cfg.URL = "https://" + h.Listener.Addr().String() + "/sdk"
		_, err := Dial(context.Background(), cfg)
		if !IsProblem(err, NotVSphere) {
			t.Fatalf("err = %v, want NotVSphere", err)
		}
		diagnosed(t, err, []string{"not with TLS", "vcenter.url"}, []string{"thumbprint"})
	})

	t.Run("login refused", func(t *testing.T) {
		vc := &runner.VCenter{URL: s.URL, User: simUser, Thumbprint: s.Thumb}
		t.Setenv(DefaultPasswordEnv, simPassword+"-wrong")
		_, err := Dial(context.Background(), FromInventory(vc, nil))
		if !IsProblem(err, LoginRefused) {
			t.Fatalf("err = %v, want LoginRefused", err)
		}
		diagnosed(t, err, []string{addr, "refused the login of " + simUser, "wrong user name or password", "vcenter.user", "$" + DefaultPasswordEnv}, []string{"thumbprint", "unreachable"})
		if strings.Contains(full(err), simPassword) {
			t.Error("the (wrong) password is shown")
		}
	})

	t.Run("no password and no terminal", func(t *testing.T) {
		vc := &runner.VCenter{URL: s.URL, User: simUser, Thumbprint: s.Thumb}
		t.Setenv(DefaultPasswordEnv, "")
		_, err := Dial(context.Background(), FromInventory(vc, nil))
		if !IsProblem(err, NoPassword) {
			t.Fatalf("err = %v, want NoPassword", err)
		}
		diagnosed(t, err, []string{simUser, "no terminal", "export " + DefaultPasswordEnv, "vcenter.password_env"}, []string{"ssh-agent", "SSH key"})
	})

	c := s.dial(t)
	t.Run("missing VM", func(t *testing.T) {
		_, err := c.CheckUPTv2(context.Background(), "redis-dpu-vm")
		if !IsProblem(err, NotFound) {
			t.Fatalf("err = %v, want NotFound", err)
		}
		diagnosed(t, err, []string{`no VM named "redis-dpu-vm"`, `"DC0_H0_VM0"`, "vm:"}, []string{"DPU"})
	})
	t.Run("missing ESXi host", func(t *testing.T) {
		_, _, err := c.CheckDPUs(context.Background(), "esx-dpu-01")
		if !IsProblem(err, NotFound) {
			t.Fatalf("err = %v, want NotFound", err)
		}
		diagnosed(t, err, []string{`no ESXi host named "esx-dpu-01"`, `"DC0_H0"`, `"DC0_C0_H0"`, "esxi:"}, nil)
	})
	t.Run("missing DPU", func(t *testing.T) {
		r, _, err := c.CheckDPUs(context.Background(), "DC0_H0")
		if err != nil || r.Status != Fail {
			t.Fatalf("result %+v, err %v: want a failed check", r, err)
		}
		// What was looked at, on the host that exists.
		for _, w := range []string{"ESXi DC0_H0", "reports no DPU", "physical NICs (vmnic0", "hardware health"} {
			if !strings.Contains(r.String(), w) {
				t.Errorf("lacks %q: %s", w, r)
			}
		}
	})
	t.Run("Checks keep the error's own fix", func(t *testing.T) {
		rs := c.Checks(context.Background(), []Target{{VM: "redis-dpu-vm"}})
		if len(rs) == 0 || rs[0].Status != Unknown || !strings.Contains(rs[0].Hint, "name the vSphere Client shows") || !strings.Contains(rs[0].Detail, "DC0_H0_VM0") {
			t.Fatalf("results %+v", rs)
		}
	})
}

// TestOriginOfTheSimulator: a session says where its figures come from,
// and the simulator is named as such, not as the vCenter it claims to be.
func TestOriginOfTheSimulator(t *testing.T) {
	s := newSim(t)
	c := s.dial(t)
	o := c.Origin()
	if !o.Simulated || o.URL != s.URL || o.Product == "" || o.Version == "" || o.API != "VirtualCenter" {
		t.Fatalf("origin %+v", o)
	}
	l := o.Label()
	for _, w := range []string{"SIMULATED", SimulatorProduct, s.URL, o.Product, "not a measurement"} {
		if !strings.Contains(l, w) {
			t.Errorf("label lacks %q: %s", w, l)
		}
	}
	real := Origin{URL: "https://vc.lab/sdk", Product: "VMware vCenter Server 8.0.2 build-22385739"}
	if l := real.Label(); strings.Contains(l, "SIMULATED") || !strings.Contains(l, "8.0.2") {
		t.Errorf("a real vCenter's label: %s", l)
	}
}
