package main

import (
	"os"
	"testing"

	"github.com/dpulab/dpulab/internal/testpeer"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testpeer.RemoveBuilds()
	os.Exit(code)
}
