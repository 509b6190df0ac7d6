package labs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/dpulab/dpulab/labs"
)

// TestLintBadLabs lints every lab under testdata/bad and compares the
// problems, one a line with file:line, to the case's want.txt. Each case
// shows one family of mistakes a trainer makes.
func TestLintBadLabs(t *testing.T) {
	cases, err := filepath.Glob("testdata/bad/*")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no cases under testdata/bad: %v", err)
	}
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			probs, err := Lint(dir)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range probs {
				got = append(got, strings.TrimPrefix(p.String(), dir+string(filepath.Separator)))
			}
			wantB, err := os.ReadFile(filepath.Join(dir, "want.txt"))
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Split(strings.TrimSpace(string(wantB)), "\n")
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("problems differ\n--- got\n%s\n--- want\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
