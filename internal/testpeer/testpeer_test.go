package testpeer

import (
	"testing"
)

func TestRequireFindsShell(t *testing.T) {
	// sh exists on every machine the tests run on.
	if p := Require(t, "sh"); p == "" {
		t.Fatal("Require(sh) returned an empty path")
	}
}

func TestRequireMissingSkipsOrFails(t *testing.T) {
	if Required() {
		t.Skip("cannot observe a skip while " + RequireEnv + "=1")
	}
	ran := false
	t.Run("missing", func(t *testing.T) {
		defer func() { ran = true }()
		Require(t, "dpulab-no-such-binary-xyz")
		t.Error("Require returned for a missing binary instead of skipping")
	})
	if !ran {
		t.Fatal("subtest did not run")
	}
}
