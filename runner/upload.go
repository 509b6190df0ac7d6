package runner

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// UploadSelf puts this dpulab executable on t under remoteDir and returns
// its path there. When t's OS and architecture differ from this binary's,
// a build for them is looked for next to the executable
// (dpulab-linux-arm64, ...); without one the error says how to build it.
// An identical file already there (same size and sha256) is not sent again.
func UploadSelf(ctx context.Context, t Target, remoteDir string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("upload dpulab: cannot find this executable: %w", err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return UploadBinary(ctx, t, exe, Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}, remoteDir)
}

// UploadBinary is UploadSelf for the executable exe built for exePlat.
func UploadBinary(ctx context.Context, t Target, exe string, exePlat Platform, remoteDir string) (string, error) {
	plat, err := t.Platform(ctx)
	if err != nil {
		return "", onHost("upload dpulab", t.Name(), err)
	}
	local := exe
	if plat != exePlat {
		local, err = BinaryFor(exe, plat)
		if err != nil {
			return "", onHost("upload dpulab", t.Name(), err)
		}
	}
	remote := path.Join(remoteDir, "dpulab")
	if _, err := uploadExe(ctx, t, local, remote); err != nil {
		return "", onHost("upload dpulab", t.Name(), err)
	}
	return remote, nil
}

// UploadAgent puts the dpulab agent for t's platform (found, or built, by
// f) on t as remoteDir/dpulab-agent and returns its path there, the local
// file it came from and its sha256. An identical file already there (same
// size and sha256) is not sent again.
func UploadAgent(ctx context.Context, t Target, f *AgentFinder, remoteDir string) (remote, local, sum string, err error) {
	plat, err := t.Platform(ctx)
	if err != nil {
		return "", "", "", onHost("upload the dpulab agent", t.Name(), err)
	}
	local, err = f.Find(ctx, plat)
	if err != nil {
		return "", "", "", onHost("upload the dpulab agent", t.Name(), err)
	}
	remote = path.Join(remoteDir, "dpulab-agent")
	sum, err = uploadExe(ctx, t, local, remote)
	if err != nil {
		return "", "", "", onHost("upload the dpulab agent", t.Name(), err)
	}
	return remote, local, sum, nil
}

// uploadExe puts the executable local on t at remote, unless a file of
// the same size and sha256 is there already, and returns its sha256.
func uploadExe(ctx context.Context, t Target, local, remote string) (string, error) {
	sum, size, err := fileSHA256(local)
	if err != nil {
		return "", err
	}
	res, err := t.Run(ctx, Command{Cmd: "f=" + Quote(remote) + `; [ -f "$f" ] && wc -c <"$f" && sha256sum "$f"`})
	if err != nil {
		return "", err
	}
	if res.ExitCode == 0 && sameFile(res.Tail, size, sum) {
		return sum, nil
	}
	if err := t.Upload(ctx, local, remote, 0o755); err != nil {
		return "", err
	}
	return sum, nil
}

// WriteFile writes content to remotePath on t with mode, atomically: into a
// temporary file in remotePath's directory, renamed over it. No temporary
// file is made on this machine, and one left on the host by a killed
// dpulab sits in that directory (".NAME.dpulab-tmp-*"), so removing the
// directory (a run's working directory) removes it.
func WriteFile(ctx context.Context, t Target, remotePath string, content []byte, mode fs.FileMode) error {
	if w, ok := t.(interface {
		writeFrom(ctx context.Context, r io.Reader, remotePath string, mode fs.FileMode) error
	}); ok {
		return w.writeFrom(ctx, bytes.NewReader(content), remotePath, mode)
	}
	f, err := os.CreateTemp("", "dpulab-write-*")
	if err != nil {
		return fmt.Errorf("write %s on %s: %w", remotePath, t.Name(), err)
	}
	defer os.Remove(f.Name())
	_, err = f.Write(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s on %s: %w", remotePath, t.Name(), err)
	}
	return t.Upload(ctx, f.Name(), remotePath, mode)
}

// sameFile checks `wc -c; sha256sum` output against size and sum.
func sameFile(lines []Line, size int64, sum string) bool {
	var out []string
	for _, l := range lines {
		if l.Stream == Stdout {
			out = append(out, strings.TrimSpace(l.Text))
		}
	}
	if len(out) != 2 {
		return false
	}
	n, err := strconv.ParseInt(out[0], 10, 64)
	if err != nil || n != size {
		return false
	}
	f := strings.Fields(out[1])
	return len(f) >= 1 && f[0] == sum
}

// BinaryFor finds the dpulab build for plat next to exe:
// dpulab-OS-ARCH in the same directory.
func BinaryFor(exe string, plat Platform) (string, error) {
	name := fmt.Sprintf("dpulab-%s-%s", plat.OS, plat.Arch)
	cand := filepath.Join(filepath.Dir(exe), name)
	st, err := os.Stat(cand)
	if err == nil && st.Mode().IsRegular() {
		return cand, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	return "", fmt.Errorf("the host is %s/%s and this dpulab is %s/%s; no %s next to it: build one with `GOOS=%s GOARCH=%s go build -o %s ./cmd/dpulab`",
		plat.OS, plat.Arch, runtime.GOOS, runtime.GOARCH, cand, plat.OS, plat.Arch, cand)
}

func fileSHA256(p string) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
