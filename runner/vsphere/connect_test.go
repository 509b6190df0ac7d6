package vsphere

import (
	"context"
	"crypto/sha1"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/runner"
)

func noPassword(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), simPassword) {
		t.Fatalf("the password is in the error: %v", err)
	}
}

func TestFirstUseRefusedWithoutAcceptNew(t *testing.T) {
	s := newSim(t)
	calls := 0
	_, err := Dial(context.Background(), s.config(&calls))
	noPassword(t, err)
	var te *ThumbprintError
	if !errors.As(err, &te) || !te.Unknown() || !errors.Is(err, ErrThumbprint) {
		t.Fatalf("err = %v, want an unknown-thumbprint refusal", err)
	}
	for _, want := range []string{s.Thumb, "--accept-new-host-keys", s.Known, "is not known yet"} {
		if !strings.Contains(full(err), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if calls != 0 {
		t.Errorf("the password was asked for %d times before the certificate was trusted", calls)
	}
	if _, err := os.Stat(s.Known); !os.IsNotExist(err) {
		t.Errorf("refusing saved something: %v", err)
	}
}

func TestAcceptNewSavesThenTrusts(t *testing.T) {
	s := newSim(t)
	calls := 0
	cfg := s.config(&calls)
	cfg.AcceptNew = true
	c, err := Dial(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Accepted() || c.Thumbprint() != s.Thumb || calls != 1 {
		t.Fatalf("accepted=%v thumbprint=%s calls=%d", c.Accepted(), c.Thumbprint(), calls)
	}
	if c.CAVerified() {
		t.Error("the simulator's self-signed certificate cannot verify against system roots")
	}
	c.Close(context.Background())
	b, err := os.ReadFile(s.Known)
	if err != nil || !strings.Contains(string(b), c.Address()+" "+s.Thumb+"\n") {
		t.Fatalf("known file = %q, %v", b, err)
	}
	if st, _ := os.Stat(s.Known); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	// Known now: no accept-new needed, nothing saved again.
	c2, err := Dial(context.Background(), s.config(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close(context.Background())
	if c2.Accepted() {
		t.Error("saved twice")
	}
	if b2, _ := os.ReadFile(s.Known); string(b2) != string(b) {
		t.Errorf("file changed: %q", b2)
	}
}

func TestChangedThumbprintRefused(t *testing.T) {
	s := newSim(t)
	old := "AA:" + strings.Repeat("0B:", 30) + "CC"
	_, addr, err := parseURL(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(strings.TrimSuffix(s.Known, KnownThumbprintsName), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Known, []byte("# pins\nother:443 "+s.Thumb+"\n"+addr+" "+old+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	calls := 0
	cfg := s.config(&calls)
	cfg.AcceptNew = true // never overrides a changed certificate
	_, err = Dial(context.Background(), cfg)
	noPassword(t, err)
	var te *ThumbprintError
	if !errors.As(err, &te) || te.Unknown() {
		t.Fatalf("err = %v, want a changed-thumbprint refusal", err)
	}
	for _, want := range []string{s.Thumb, old, s.Known + ":3", "intercepting", "refused"} {
		if !strings.Contains(full(err), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if calls != 0 {
		t.Error("password asked for")
	}
}

func TestInventoryThumbprintPin(t *testing.T) {
	s := newSim(t)
	sha1 := strings.ToLower(strings.ReplaceAll(thumbSHA1(s), ":", ""))
	tests := []struct {
		name, pin string
		ok        bool
	}{
		{"sha256", s.Thumb, true},
		{"sha1 lower case without colons", sha1, true},
		{"wrong", strings.Repeat("ab", 32), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := s.config(nil)
			cfg.Thumbprint = tc.pin
			c, err := Dial(context.Background(), cfg)
			noPassword(t, err)
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				c.Close(context.Background())
				if _, err := os.Stat(s.Known); !os.IsNotExist(err) {
					t.Error("an inventory pin is not saved to the file")
				}
				return
			}
			if !errors.Is(err, ErrThumbprint) || !strings.Contains(err.Error(), "the inventory's vcenter.thumbprint") || !strings.Contains(err.Error(), s.Thumb) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func thumbSHA1(s *sim) string {
	sum := sha1.Sum(s.srv.Certificate().Raw)
	return colonHex(sum[:])
}

func TestWrongPasswordNeverShown(t *testing.T) {
	s := newSim(t)
	cfg := s.config(nil)
	cfg.AcceptNew = true
	cfg.Password = func(context.Context) (string, error) { return simPassword + "-wrong", nil }
	_, err := Dial(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "refused the login of "+simUser) {
		t.Fatalf("err = %v", err)
	}
	noPassword(t, err)
}

func TestBadURLs(t *testing.T) {
	for _, u := range []string{"http://vc/sdk", "https://lab:" + simPassword + "@vc/sdk", "vc.lab"} {
		_, err := Dial(context.Background(), Config{URL: u, User: "u", Password: func(context.Context) (string, error) { return simPassword, nil }})
		if err == nil {
			t.Errorf("%s accepted", u)
		}
		noPassword(t, err)
	}
}

func TestFromInventoryPassword(t *testing.T) {
	vc := &runner.VCenter{URL: "https://vc/sdk", User: "lab", PasswordEnv: "DPULAB_TEST_VC_PW"}
	t.Setenv("DPULAB_TEST_VC_PW", "")
	asked := ""
	cfg := FromInventory(vc, func(_ context.Context, prompt string) (string, error) { asked = prompt; return "typed", nil })
	if pw, err := cfg.Password(context.Background()); err != nil || pw != "typed" || !strings.Contains(asked, "lab") {
		t.Fatalf("empty env: %q %v (prompt %q)", pw, err, asked)
	}
	t.Setenv("DPULAB_TEST_VC_PW", "from-env")
	if pw, err := cfg.Password(context.Background()); err != nil || pw != "from-env" {
		t.Fatalf("env: %q %v", pw, err)
	}
	t.Setenv("DPULAB_TEST_VC_PW", "")
	_, err := FromInventory(vc, nil).Password(context.Background())
	if err == nil || !strings.Contains(full(err), "Export DPULAB_TEST_VC_PW") {
		t.Fatalf("no terminal: %v", err)
	}
}

func TestApprovedThumbprintOnly(t *testing.T) {
	s := newSim(t)
	// The person approved another certificate's thumbprint: refused.
	cfg := s.config(nil)
	cfg.Approved = strings.Repeat("12", 32)
	_, err := Dial(context.Background(), cfg)
	var te *ThumbprintError
	if !errors.As(err, &te) || !te.Unknown() {
		t.Fatalf("err = %v", err)
	}
	// The one they were shown: saved and connected.
	cfg.Approved = te.Got
	c, err := Dial(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if !c.Accepted() {
		t.Error("not saved")
	}
}
