//go:build unix

package main

import (
	"os"
	"testing"

	"github.com/dpulab/dpulab/internal/testpeer"
)

func TestMain(m *testing.M) {
	restore := testpeer.IsolateUserDirs()
	code := m.Run()
	testpeer.RemoveBuilds()
	restore()
	os.Exit(code)
}
