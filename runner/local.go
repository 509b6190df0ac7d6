package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"time"
)

// LocalName is the inventory address, and the Target name, of this machine.
const LocalName = "local"

// Local runs commands on this machine with os/exec and `sh -c`. Each Run
// gets its own process group (Setpgid) so that cancelling kills the command
// and everything it started. Linux and macOS only: on Windows every command
// fails with errLocalUnsupported (local_windows.go), and labs reach their
// hosts over SSH.
type Local struct {
	name     string
	p        Prompter
	graceDur time.Duration
	common
}

// LocalOption configures a Local target.
type LocalOption func(*Local)

// WithLocalPrompter sets who is asked for the sudo password.
func WithLocalPrompter(p Prompter) LocalOption { return func(l *Local) { l.p = p } }

// WithLocalName names the target (default "local"), e.g. after the
// inventory host that points at this machine.
func WithLocalName(name string) LocalOption { return func(l *Local) { l.name = name } }

// NewLocal returns the Target for this machine.
func NewLocal(opts ...LocalOption) *Local {
	l := &Local{name: LocalName, graceDur: time.Second}
	for _, o := range opts {
		o(l)
	}
	l.common = common{
		host:   l.name,
		user:   currentUser,
		simple: l.simple,
		prompter: func() Prompter {
			if l.p != nil {
				return l.p
			}
			return HeadlessPrompter{}
		},
	}
	return l
}

func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return fmt.Sprint(os.Getuid())
}

// Name implements Target.
func (l *Local) Name() string { return l.name }

// Run implements Target.
func (l *Local) Run(ctx context.Context, c Command) (Result, error) {
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	if err := localSupported(); err != nil {
		return Result{ExitCode: -1}, fmt.Errorf("run on %s: %w", l.name, err)
	}
	start := time.Now()
	script := c.Cmd
	var stdin []byte
	if c.Sudo {
		prefix, pw, err := l.sudoPrefix(ctx)
		if err != nil {
			return Result{ExitCode: -1}, err
		}
		if prefix != "" {
			script = prefix + "sh -c " + Quote(c.Cmd)
			stdin = pw
		}
	}
	sink := newLineSink(l.name, c.Output)
	outW, errW := sink.writer(Stdout), sink.writer(Stderr)
	cmd := exec.Command("sh", "-c", script)
	ownGroup(cmd)
	cmd.Stdout, cmd.Stderr = outW, errW
	if stdin != nil || c.Stdin != nil {
		cmd.Stdin = io.MultiReader(bytes.NewReader(stdin), bytes.NewReader(c.Stdin))
	}
	// A background child that escaped the group may hold the pipes open;
	// do not wait for it forever.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return Result{ExitCode: -1}, fmt.Errorf("run on %s: %w", l.name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	result := func(code int) Result {
		outW.flush()
		errW.flush()
		return Result{ExitCode: code, Duration: time.Since(start), Tail: sink.lastLines()}
	}
	select {
	case err := <-done:
		if err == nil {
			return result(0), nil
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return result(exitStatus(ee)), nil
		}
		if errors.Is(err, exec.ErrWaitDelay) {
			return result(cmd.ProcessState.ExitCode()), nil
		}
		return result(-1), fmt.Errorf("run on %s: %w", l.name, err)
	case <-ctx.Done():
	}
	if c.Sudo && os.Geteuid() != 0 {
		// Root's processes in the group cannot be signalled by us: kill the
		// group through sudo too.
		kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second+l.graceDur)
		_ = l.killGroup(kctx, cmd.Process.Pid, "", true, l.graceDur)
		cancel()
	}
	killLocalGroup(cmd.Process.Pid, l.graceDur, done)
	<-done
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) && c.Timeout > 0 {
		return result(-1), fmt.Errorf("run on %s: timed out after %s: %w", l.name, c.Timeout, err)
	}
	return result(-1), fmt.Errorf("run on %s: %w", l.name, err)
}

// simple runs a helper script to completion.
func (l *Local) simple(ctx context.Context, script string, stdin []byte) ([]byte, []byte, int, error) {
	if err := localSupported(); err != nil {
		return nil, nil, -1, err
	}
	cmd := exec.Command("sh", "-c", script)
	ownGroup(cmd)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, nil, -1, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		killLocalGroup(cmd.Process.Pid, 0, done)
		<-done
		return out.Bytes(), errOut.Bytes(), -1, ctx.Err()
	}
	if err == nil {
		return out.Bytes(), errOut.Bytes(), 0, nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.Bytes(), errOut.Bytes(), exitStatus(ee), nil
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		// The script ended; a child it left (or a slow copy on a
		// saturated host) held its output open past WaitDelay. Its exit
		// status is what counts, as in Run: a stop that worked is not
		// reported as failed.
		return out.Bytes(), errOut.Bytes(), cmd.ProcessState.ExitCode(), nil
	}
	return out.Bytes(), errOut.Bytes(), -1, err
}

// Start implements Target.
func (l *Local) Start(ctx context.Context, p ProcSpec) (Proc, error) { return l.start(ctx, p) }

// Stop implements Target.
func (l *Local) Stop(ctx context.Context, p Proc, grace time.Duration) error {
	return l.stop(ctx, p, grace)
}

// Upload implements Target: a copy written to a temporary file beside the
// destination and renamed over it.
func (l *Local) Upload(ctx context.Context, localPath, remotePath string, mode fs.FileMode) error {
	if err := copyFileAtomic(localPath, remotePath, mode); err != nil {
		return fmt.Errorf("upload to %s: %w", l.name, err)
	}
	return nil
}

func copyFileAtomic(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return writeAtomic(in, dst, mode)
}

// writeAtomic writes r to a temporary file beside dst (removed on every
// error path) and renames it over dst.
func writeAtomic(r io.Reader, dst string, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".dpulab-tmp-*")
	if err != nil {
		return err
	}
	_, err = io.Copy(tmp, r)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), mode.Perm())
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

func (l *Local) writeFrom(ctx context.Context, r io.Reader, dst string, mode fs.FileMode) error {
	if err := writeAtomic(ctxReader{ctx, r}, dst, mode); err != nil {
		return fmt.Errorf("write %s on %s: %w", dst, l.name, err)
	}
	return nil
}

// ctxReader stops a copy when ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// ReadFile implements Target.
func (l *Local) ReadFile(ctx context.Context, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read on %s: %w", l.name, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxReadFile+1))
	if err != nil {
		return nil, fmt.Errorf("read on %s: %w", l.name, err)
	}
	if len(b) > maxReadFile {
		return nil, fmt.Errorf("read %s on %s: larger than %d bytes", path, l.name, maxReadFile)
	}
	return b, nil
}

// Platform implements Target.
func (l *Local) Platform(ctx context.Context) (Platform, error) { return l.platform(ctx) }

// Connect implements Connector; there is nothing to connect to.
func (l *Local) Connect(ctx context.Context) error { return nil }

// Close implements Target.
func (l *Local) Close() error { return nil }

var _ Target = (*Local)(nil)
