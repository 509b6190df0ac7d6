package testpeer

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/pem"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// SSHD is a real OpenSSH sshd started by a test on 127.0.0.1 (or the
// address SSHDListen names), with its own
// config, host key and authorized user key, all in a temp dir, so a test
// logs in as the current user with a key it made and touches nothing of
// the machine's own ssh setup.
//
// Its sessions get SHLVL=1: Debian's bash sources ~/.bashrc for every
// command run by sshd unless it believes it is a nested shell, and a heavy
// ~/.bashrc costs seconds per session. dpulab's behaviour does not depend
// on it.
type SSHD struct {
	// Host is the address sshd listens on: 127.0.0.1 unless SSHDListen
	// said otherwise.
	Host string
	Port int
	// HostKey is the first of HostKeys (ed25519 unless SSHDHostKeys
	// said otherwise).
	HostKey  ssh.PublicKey
	HostKeys []ssh.PublicKey
	// HostCerts are the host certificates sshd presents, one per host
	// key, when SSHDHostCertificate asked for them.
	HostCerts []*ssh.Certificate
	// UserKey is the path of the user's private key (no passphrase).
	UserKey string
	// KnownHosts is a known_hosts file that trusts every HostKeys entry
	// for Host:Port. Tests of the unknown-key path use another file.
	KnownHosts string
	// Dir holds the config, keys and known_hosts; it is the test's temp
	// dir, removed after the test.
	Dir string

	log *LockedBuffer
}

// Log returns what sshd has logged so far (LogLevel ERROR unless an
// SSHDConfig line says otherwise): "no more sessions" when a connection
// asks for more than MaxSessions, for instance.
func (s *SSHD) Log() string { return s.log.String() }

// LockedBuffer is a bytes.Buffer written by exec's copy goroutine and read
// by the test (a process's output, sshd's log).
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Addr is "HOST:PORT" (127.0.0.1:PORT unless SSHDListen said otherwise).
func (s *SSHD) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// Fingerprint is the host key's SHA256 fingerprint as OpenSSH prints it.
func (s *SSHD) Fingerprint() string { return ssh.FingerprintSHA256(s.HostKey) }

// SSHDOption changes how StartSSHD configures sshd.
type SSHDOption func(*sshdOptions)

type sshdOptions struct {
	extra    []string
	keyTypes []string
	ca       ssh.Signer
	caNames  []string
	listen   string
}

// SSHDListen makes sshd listen on addr (an address of this machine, e.g.
// one on an RDMA device's interface) instead of 127.0.0.1, so that a lab's
// hosts can be told apart by address. KnownHosts names addr.
func SSHDListen(addr string) SSHDOption {
	return func(o *sshdOptions) { o.listen = addr }
}

// SSHDHostCertificate makes sshd present host certificates (HostCertificate)
// signed by ca, valid for principals (the names a client checks, e.g.
// "127.0.0.1"), one per host key. HostCerts lists them.
func SSHDHostCertificate(ca ssh.Signer, principals ...string) SSHDOption {
	return func(o *sshdOptions) { o.ca, o.caNames = ca, principals }
}

// SSHDConfig adds sshd_config lines (e.g. "MaxSessions 10"). They go before
// the test's own lines, so they win: sshd takes the first value it reads
// for most keywords.
func SSHDConfig(lines ...string) SSHDOption {
	return func(o *sshdOptions) { o.extra = append(o.extra, lines...) }
}

// SSHDHostKeys sets the types of host key sshd has, in order: "ed25519"
// (the default) and/or "rsa". A server with only an RSA key is how a test
// meets a host whose key changed type.
func SSHDHostKeys(types ...string) SSHDOption {
	return func(o *sshdOptions) { o.keyTypes = types }
}

// StartSSHD starts sshd on a free port of 127.0.0.1 (or SSHDListen's
// address) and stops it when the test
// ends. It skips (fails when Required()) when sshd is not installed or
// the test does not run as root (sshd needs root to log a user in).
func StartSSHD(t testing.TB, opts ...SSHDOption) *SSHD {
	t.Helper()
	o := sshdOptions{keyTypes: []string{"ed25519"}, listen: "127.0.0.1"}
	for _, f := range opts {
		f(&o)
	}
	if net.ParseIP(o.listen) == nil {
		t.Fatalf("testpeer: sshd listen address %q is not an IP address", o.listen)
	}
	for _, l := range o.extra {
		if strings.ContainsAny(l, "\n\r") {
			t.Fatalf("testpeer: sshd config line %q holds a newline", l)
		}
	}
	bin := Require(t, "/usr/sbin/sshd")
	if os.Geteuid() != 0 {
		msg := "this test logs in over a test sshd as the current user and needs root to run sshd"
		if Required() {
			t.Fatalf("%s; %s=1 requires it", msg, RequireEnv)
		}
		t.Skip(msg)
	}
	// sshd's privilege separation directory, which only its init script
	// creates (absent in containers).
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		t.Fatalf("create /run/sshd: %v", err)
	}
	dir := t.TempDir()
	var hostKeys []ssh.PublicKey
	var hostCerts []*ssh.Certificate
	var hostKeyLines string
	for _, kt := range o.keyTypes {
		file := filepath.Join(dir, "host_"+kt)
		var pub ssh.PublicKey
		switch kt {
		case "ed25519":
			pub = writeKey(t, file)
		case "rsa":
			pub = writeRSAKey(t, file)
		default:
			t.Fatalf("testpeer: unknown host key type %q (ed25519, rsa)", kt)
		}
		hostKeys = append(hostKeys, pub)
		hostKeyLines += "HostKey " + file + "\n"
		if o.ca != nil {
			cert := &ssh.Certificate{
				Key: pub, CertType: ssh.HostCert, KeyId: "testpeer " + kt,
				ValidPrincipals: o.caNames, ValidBefore: ssh.CertTimeInfinity,
			}
			if err := cert.SignCert(rand.Reader, o.ca); err != nil {
				t.Fatalf("testpeer: sign host certificate: %v", err)
			}
			if err := os.WriteFile(file+"-cert.pub", ssh.MarshalAuthorizedKey(cert), 0o644); err != nil {
				t.Fatal(err)
			}
			hostCerts = append(hostCerts, cert)
			hostKeyLines += "HostCertificate " + file + "-cert.pub\n"
		}
	}
	if len(hostKeys) == 0 {
		t.Fatal("testpeer: sshd needs at least one host key type")
	}
	userPub := writeKey(t, filepath.Join(dir, "user_ed25519"))
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), ssh.MarshalAuthorizedKey(userPub), 0o600); err != nil {
		t.Fatal(err)
	}
	var lastErr string
	// A free port can be taken between finding it and sshd binding it:
	// try a few.
	for attempt := 0; attempt < 3; attempt++ {
		port := FreePorts(t, 1)
		cfg := filepath.Join(dir, "sshd_config")
		conf := strings.Join(append(o.extra, ""), "\n") + hostKeyLines + fmt.Sprintf(`Port %d
ListenAddress %s
PidFile %s
AuthorizedKeysFile %s
UsePAM no
StrictModes no
PermitRootLogin yes
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
Subsystem sftp internal-sftp
LogLevel ERROR
SetEnv SHLVL=1
`, port, net.JoinHostPort(o.listen, strconv.Itoa(port)), filepath.Join(dir, "sshd.pid"), filepath.Join(dir, "authorized_keys"))
		if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		stderr := &LockedBuffer{}
		cmd := exec.Command(bin, "-D", "-e", "-f", cfg)
		cmd.Stderr = stderr
		// Session processes of a connection a failed test left open hold
		// stderr: do not wait for them forever at cleanup.
		cmd.WaitDelay = 2 * time.Second
		if err := cmd.Start(); err != nil {
			t.Fatalf("start sshd: %v", err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		if !waitListening(o.listen, port, exited) {
			cmd.Process.Kill()
			<-exited
			lastErr = stderr.String()
			continue
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			<-exited
		})
		kh := filepath.Join(dir, "known_hosts")
		var lines string
		for _, k := range hostKeys {
			lines += knownhosts.Line([]string{knownhosts.Normalize(net.JoinHostPort(o.listen, strconv.Itoa(port)))}, k) + "\n"
		}
		if err := os.WriteFile(kh, []byte(lines), 0o600); err != nil {
			t.Fatal(err)
		}
		return &SSHD{log: stderr, Host: o.listen, Port: port, HostKey: hostKeys[0], HostKeys: hostKeys, HostCerts: hostCerts, UserKey: filepath.Join(dir, "user_ed25519"), KnownHosts: kh, Dir: dir}
	}
	t.Fatalf("sshd did not start: %s", lastErr)
	return nil
}

// waitListening waits up to 20 s (an emulated guest starts sshd slowly)
// for host:port to accept, giving up early when the process exits.
func waitListening(host string, port int, exited <-chan struct{}) bool {
	for i := 0; i < 400; i++ {
		select {
		case <-exited:
			return false
		default:
		}
		if c, err := net.Dial("tcp", net.JoinHostPort(host, strconv.Itoa(port))); err == nil {
			c.Close()
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// writeKey writes a new ed25519 private key in OpenSSH format to path and
// returns its public key.
func writeKey(t testing.TB, path string) ssh.PublicKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	blk, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(blk), 0o600); err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// writeRSAKey writes a new 2048-bit RSA private key in OpenSSH format to
// path and returns its public key.
func writeRSAKey(t testing.TB, path string) ssh.PublicKey {
	t.Helper()
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	blk, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(blk), 0o600); err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(&priv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// FreePorts finds n consecutive free TCP ports on loopback and returns the
// first. Another process may still take one before the caller binds it.
//
// The ports come from below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range): a port handed out for listening later
// must not be one the kernel may meanwhile give to an outgoing connection
// as its local port (tests in other packages connect all the time), which
// would make the listen fail with "address already in use" although the
// port looked free.
func FreePorts(t testing.TB, n int) int {
	t.Helper()
	lo, hi := 10000, ephemeralLow()
	for try := 0; try < 200; try++ {
		var base int
		if hi-lo > n {
			base = lo + mrand.IntN(hi-lo-n)
		} else {
			// No room below the ephemeral range: take what the kernel gives.
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			base = l.Addr().(*net.TCPAddr).Port
			l.Close()
			if base+n > 65000 {
				continue
			}
		}
		ok := true
		for p := base; p < base+n; p++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatalf("no %d consecutive free ports on 127.0.0.1", n)
	return 0
}

// ephemeralLow is the first port of the kernel's ephemeral range (32768
// when it cannot be read, Linux's default).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 32768
	}
	v, err := strconv.Atoi(f[0])
	if err != nil || v < 1024 {
		return 32768
	}
	return v
}
