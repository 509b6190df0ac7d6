// Package testpeer lets tests depend on real peer programs (redis-server,
// sshd, tmux, ...) without breaking `go test ./...` on a machine that only
// has Go: a missing peer is a skip with a message, unless the environment
// asks for peers to be required (CI), in which case it is a failure.
package testpeer

import (
	"os"
	"os/exec"
	"testing"
)

// RequireEnv is the environment variable that turns a missing peer from a
// skip into a test failure. CI sets it to 1 after installing the peers.
const RequireEnv = "DPULAB_REQUIRE_PEERS"

// debianPackages names the Debian package of the peers the tests use, for
// the skip message.
var debianPackages = map[string]string{
	"redis-server":        "redis-server",
	"redis-cli":           "redis-tools",
	"redis-benchmark":     "redis-tools",
	"sshd":                "openssh-server",
	"ssh":                 "openssh-client",
	"ssh-keygen":          "openssh-client",
	"ssh-agent":           "openssh-client",
	"ssh-add":             "openssh-client",
	"tmux":                "tmux",
	"nft":                 "nftables",
	"qemu-aarch64-static": "qemu-user-static",
}

// Required reports whether missing peers must fail tests instead of skipping
// them.
func Required() bool {
	return os.Getenv(RequireEnv) == "1"
}

// Require returns the path of binary (looked up in PATH, or used as is when
// it contains a slash). When it is absent the test is skipped with a message
// naming the binary and how to install it, or fails when Required().
func Require(t testing.TB, binary string) string {
	t.Helper()
	path, err := exec.LookPath(binary)
	if err == nil {
		return path
	}
	install := "the package providing " + binary
	if pkg, ok := debianPackages[binary]; ok {
		install = pkg
	}
	msg := "peer " + binary + " not found (" + err.Error() + "); to run this test install it (Debian: apt-get install " + install + ")"
	if Required() {
		t.Fatalf("%s; %s=1 requires it", msg, RequireEnv)
	}
	t.Skip(msg)
	return ""
}

// Missing skips a test whose peer (what names it) is absent, or fails it
// when Required().
func Missing(t testing.TB, what string) {
	t.Helper()
	msg := "peer missing: " + what
	if Required() {
		t.Fatalf("%s; %s=1 requires it", msg, RequireEnv)
	}
	t.Skip(msg)
}

// RequireNetns skips (or, with DPULAB_REQUIRE_PEERS=1, fails) a test that
// makes real network namespaces, veths and nftables tables when this
// machine cannot: ip or nft missing, or not root. how says how to run the
// test as root.
func RequireNetns(t testing.TB, how string) {
	t.Helper()
	Require(t, "ip")
	Require(t, "nft")
	if os.Geteuid() != 0 {
		msg := "making network namespaces needs root: " + how
		if Required() {
			t.Fatalf("%s; %s=1 requires it", msg, RequireEnv)
		}
		t.Skip(msg)
	}
}
