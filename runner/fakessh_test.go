//go:build unix

package runner

import (
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// fakeSSH is an in-process SSH server for fault injection: it runs exec
// requests with `sh -c` on this machine (in a new session, as sshd does) and
// serves SFTP, and the test can drop every connection at will. Real
// behaviour is tested against OpenSSH's sshd in sshd_test.go.
type fakeSSH struct {
	t        *testing.T
	ln       net.Listener
	hostKey  ssh.Signer
	password string
	userKey  ssh.PublicKey
	// env is added to the environment of commands (e.g. a PATH with fake
	// sudo).
	env []string
	// extraKeys are further host keys (a server with several key types).
	extraKeys []ssh.Signer
	// kiAnswer, when set, enables keyboard-interactive auth asking one
	// question ("Verification code: ") that expects it.
	kiAnswer string

	mu    sync.Mutex
	conns []net.Conn
	procs []*os.Process
	execs []string
}

// newFakeSSH starts a server; setup functions configure it before it
// accepts connections.
func newFakeSSH(t *testing.T, password string, setup ...func(*fakeSSH)) *fakeSSH {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return newFakeSSHWithKey(t, password, signer, setup...)
}

func newFakeSSHWithKey(t *testing.T, password string, hostKey ssh.Signer, setup ...func(*fakeSSH)) *fakeSSH {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSSH{t: t, ln: ln, hostKey: hostKey, password: password}
	for _, fn := range setup {
		fn(f)
	}
	go f.serve()
	t.Cleanup(f.close)
	return f
}

func (f *fakeSSH) port() int { return f.ln.Addr().(*net.TCPAddr).Port }

func (f *fakeSSH) close() {
	f.ln.Close()
	f.drop()
}

// drop closes every client connection and kills what they ran, like a
// host that vanished from the network.
func (f *fakeSSH) drop() { f.dropConns(true) }

// dropConns closes every client connection; with kill false the commands
// keep running, as on a real host after a network cut.
func (f *fakeSSH) dropConns(kill bool) {
	f.mu.Lock()
	conns := f.conns
	f.conns = nil
	procs := f.procs
	f.procs = nil
	f.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	if !kill {
		f.mu.Lock()
		f.procs = append(f.procs, procs...)
		f.mu.Unlock()
		return
	}
	for _, p := range procs {
		syscall.Kill(-p.Pid, syscall.SIGKILL)
	}
}

func (f *fakeSSH) serve() {
	cfg := &ssh.ServerConfig{
		PasswordCallback: func(c ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			if f.password != "" && string(pw) == f.password {
				return nil, nil
			}
			return nil, errors.New("wrong password")
		},
		PublicKeyCallback: func(c ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
			if f.userKey != nil && string(k.Marshal()) == string(f.userKey.Marshal()) {
				return nil, nil
			}
			return nil, errors.New("unknown key")
		},
	}
	if f.kiAnswer != "" {
		cfg.KeyboardInteractiveCallback = func(c ssh.ConnMetadata, ch ssh.KeyboardInteractiveChallenge) (*ssh.Permissions, error) {
			ans, err := ch("", "", []string{"Verification code: "}, []bool{false})
			if err != nil {
				return nil, err
			}
			if len(ans) == 1 && ans[0] == f.kiAnswer {
				return nil, nil
			}
			return nil, errors.New("wrong code")
		}
	}
	cfg.AddHostKey(f.hostKey)
	for _, k := range f.extraKeys {
		cfg.AddHostKey(k)
	}
	for {
		nc, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.conns = append(f.conns, nc)
		f.mu.Unlock()
		go f.handle(nc, cfg)
	}
}

func (f *fakeSSH) handle(nc net.Conn, cfg *ssh.ServerConfig) {
	sc, chans, reqs, err := ssh.NewServerConn(nc, cfg)
	if err != nil {
		nc.Close()
		return
	}
	defer sc.Close()
	go func() {
		for r := range reqs {
			r.Reply(r.Type == "keepalive@openssh.com", nil)
		}
	}()
	for nch := range chans {
		if nch.ChannelType() != "session" {
			nch.Reject(ssh.UnknownChannelType, "only sessions")
			continue
		}
		ch, creqs, err := nch.Accept()
		if err != nil {
			continue
		}
		go f.session(ch, creqs)
	}
}

func (f *fakeSSH) session(ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	for r := range reqs {
		switch r.Type {
		case "exec":
			if len(r.Payload) < 4 {
				r.Reply(false, nil)
				continue
			}
			cmdline := string(r.Payload[4:])
			r.Reply(true, nil)
			f.mu.Lock()
			f.execs = append(f.execs, cmdline)
			f.mu.Unlock()
			f.exec(ch, cmdline)
			return
		case "subsystem":
			if len(r.Payload) < 4 || string(r.Payload[4:]) != "sftp" {
				r.Reply(false, nil)
				continue
			}
			r.Reply(true, nil)
			srv, err := sftp.NewServer(ch)
			if err != nil {
				return
			}
			srv.Serve()
			return
		default:
			r.Reply(false, nil)
		}
	}
}

func (f *fakeSSH) exec(ch ssh.Channel, cmdline string) {
	cmd := exec.Command("sh", "-c", cmdline)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Env = append(os.Environ(), f.env...)
	cmd.Stdin = ch
	cmd.Stdout = ch
	cmd.Stderr = ch.Stderr()
	if err := cmd.Start(); err != nil {
		return
	}
	f.mu.Lock()
	f.procs = append(f.procs, cmd.Process)
	f.mu.Unlock()
	err := cmd.Wait()
	status := uint32(0)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		status = uint32(ee.ExitCode())
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			status = 128 + uint32(ws.Signal())
		}
	}
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], status)
	ch.SendRequest("exit-status", false, b[:])
}

// execLog returns the command lines the server was asked to run.
func (f *fakeSSH) execLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.execs...)
}

var _ = io.EOF
