package sleep_test

import (
	"strings"
	"testing/fstest"
)

func replace(s, from, to string) string { return strings.Replace(s, from, to, 1) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func mapFS(labYAML string) fstest.MapFS {
	return fstest.MapFS{"lab/lab.yaml": {Data: []byte(labYAML)}}
}
