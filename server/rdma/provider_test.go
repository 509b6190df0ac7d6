//go:build linux && (amd64 || arm64) && !nordma

package rdma

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The provider on a host without RDMA devices (this one: rdma-core's
// libraries are installed, the kernel has no RDMA), with or without cgo.
// On the real stack it is judged by the guest tests (.ci/rdma-guest,
// server/transport's TestGuest*).

// TestPureLoads: the provider loads libibverbs.so.1, librdmacm.so.1 and
// libc through purego (in a CGO_ENABLED=0 build too) and finds every
// entry point it calls.
func TestPureLoads(t *testing.T) {
	needRdmaCore(t)
	if err := pvInit(); err != nil {
		t.Fatalf("pvInit: %v", err)
	}
	for name, p := range map[string]uintptr{"ibv_reg_mr": fn.ibvRegMR, "ibv_get_cq_event": fn.ibvGetCQEvent,
		"rdma_create_ep": fn.rdmaCreateEP, "rdma_get_cm_event": fn.rdmaGetCMEvent, "__errno_location": fn.errnoLocation} {
		if p == 0 {
			t.Errorf("%s not resolved", name)
		}
	}
	// Errors are worded by libc's strerror.
	if got := strerror(syscall.ENOENT); got != "No such file or directory" {
		t.Errorf("strerror(ENOENT) = %q", got)
	}
}

// TestPureNoDevice: without an RDMA device, ProviderReady, Listen and Dial
// fail saying what to do, and `dpulab version`'s Provider names the
// provider (in a build whose transport it is: not a rdmasim one).
func TestPureNoDevice(t *testing.T) {
	needRdmaCore(t)
	saved := CMDevice
	defer func() { CMDevice = saved }()
	CMDevice = filepath.Join(t.TempDir(), "rdma_cm")
	const want = "no RDMA device: "
	if err := ProviderReady(); err == nil || !strings.Contains(err.Error(), want+CMDevice+" is absent") {
		t.Fatalf("ProviderReady: %v", err)
	}
	if name, err := Provider(); buildProvider != nil && (name != "rdma-core (pure Go)" || err == nil) {
		t.Errorf("Provider() = %q, %v", name, err)
	}
	if _, err := Listen("127.0.0.1:0", ProviderOptions{}); err == nil || !strings.HasPrefix(err.Error(), "rdma listen 127.0.0.1:0: "+want) {
		t.Errorf("Listen: %v", err)
	}
	if _, err := Dial(context.Background(), "127.0.0.1:6379", ProviderOptions{Type: UC}); err == nil || !strings.HasPrefix(err.Error(), "rdma connect 127.0.0.1:6379: "+want) {
		t.Errorf("Dial: %v", err)
	}
}

// TestPureCallsIntoRdmaCM: with the device check satisfied but no device
// in the kernel, Listen and Dial call into librdmacm for real and come
// back with its failure, errno read on the calling thread and worded by
// libc; nothing is left open.
func TestPureCallsIntoRdmaCM(t *testing.T) {
	needRdmaCore(t)
	if _, err := os.Stat("/dev/infiniband/rdma_cm"); err == nil {
		t.Skip("this host has an RDMA device: the guest tests cover it")
	}
	saved := CMDevice
	defer func() { CMDevice = saved }()
	CMDevice = filepath.Join(t.TempDir(), "rdma_cm")
	os.WriteFile(CMDevice, nil, 0o600)
	fds := openFDs(t)
	for range 3 {
		_, err := Listen("127.0.0.1:0", ProviderOptions{})
		if err == nil || !strings.HasPrefix(err.Error(), "rdma listen 127.0.0.1:0: rdma_") || strings.HasSuffix(err.Error(), ": ") {
			t.Errorf("Listen: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err = Dial(ctx, "127.0.0.1:6379", ProviderOptions{SourceAddr: "127.0.0.1"})
		cancel()
		if err == nil || !strings.HasPrefix(err.Error(), "rdma connect 127.0.0.1:6379: rdma_") {
			t.Errorf("Dial: %v", err)
		}
		t.Logf("Listen and Dial without a kernel device: %v", err)
	}
	if after := openFDs(t); after != fds {
		t.Errorf("open descriptors: %d before, %d after", fds, after)
	}
}

func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestPureSockaddr: addresses librdmacm writes (struct sockaddr_in and
// sockaddr_in6, in C memory) read back as host and port.
func TestPureSockaddr(t *testing.T) {
	m, err := newCmem(pageSize)
	if err != nil {
		t.Fatal(err)
	}
	defer m.free()
	binary.LittleEndian.PutUint16(m.b[0:], unix.AF_INET)
	binary.BigEndian.PutUint16(m.b[2:], 6379)
	copy(m.b[4:], []byte{10, 9, 0, 2})
	if h, p := sockaddr(m.at(0)); h != "10.9.0.2" || p != 6379 {
		t.Errorf("IPv4: %s %d", h, p)
	}
	binary.LittleEndian.PutUint16(m.b[128:], unix.AF_INET6)
	binary.BigEndian.PutUint16(m.b[130:], 7000)
	m.b[128+8+15] = 1
	if h, p := sockaddr(m.at(128)); h != "::1" || p != 7000 {
		t.Errorf("IPv6: %s %d", h, p)
	}
	if h, p := sockaddr(m.at(256)); h != "" || p != 0 {
		t.Errorf("no family: %s %d", h, p)
	}
	if s := cstring(m.str(512, "rxe0"), 64); s != "rxe0" {
		t.Errorf("cstring: %q", s)
	}
}
