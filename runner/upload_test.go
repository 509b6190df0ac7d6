//go:build unix

package runner

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestUploadBinary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	exe := filepath.Join(dir, "dpulab")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\necho self\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	here := Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}
	tg := NewLocal()
	remoteDir := filepath.Join(dir, "remote dir")

	p, err := UploadBinary(ctx, tg, exe, here, remoteDir)
	if err != nil {
		t.Fatal(err)
	}
	if p != filepath.Join(remoteDir, "dpulab") {
		t.Fatalf("path %q", p)
	}
	st1, _ := os.Stat(p)
	time.Sleep(20 * time.Millisecond)
	// Same file already there: not sent again (the inode stays).
	if _, err := UploadBinary(ctx, tg, exe, here, remoteDir); err != nil {
		t.Fatal(err)
	}
	st2, _ := os.Stat(p)
	if !os.SameFile(st1, st2) {
		t.Fatal("identical binary uploaded again")
	}
	// Changed: sent again.
	os.WriteFile(exe, []byte("#!/bin/sh\necho self v2\n"), 0o755)
	if _, err := UploadBinary(ctx, tg, exe, here, remoteDir); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if !strings.Contains(string(b), "v2") {
		t.Fatal("changed binary not uploaded")
	}

	// This binary built for another platform: the one for the host is
	// looked for next to it, else the error says how to build it.
	other := Platform{OS: "linux", Arch: "mips64"}
	if runtime.GOARCH == "mips64" {
		other.Arch = "riscv64"
	}
	_, err = UploadBinary(ctx, tg, exe, other, remoteDir)
	want := "GOOS=" + runtime.GOOS + " GOARCH=" + runtime.GOARCH + " go build -o " + filepath.Join(dir, "dpulab-"+runtime.GOOS+"-"+runtime.GOARCH) + " ./cmd/dpulab"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want it to say %q", err, want)
	}
	cross := filepath.Join(dir, "dpulab-"+runtime.GOOS+"-"+runtime.GOARCH)
	os.WriteFile(cross, []byte("#!/bin/sh\necho cross\n"), 0o755)
	if _, err := UploadBinary(ctx, tg, exe, other, remoteDir); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(p)
	if !strings.Contains(string(b), "cross") {
		t.Fatalf("uploaded %q, want the cross build", b)
	}
}
