//go:build unix

package steps

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpulab/dpulab/labs"
)

func stepIndex(t *testing.T, l *labs.Lab, id string) int {
	t.Helper()
	for i, st := range l.Steps {
		if st.ID == id {
			return i
		}
	}
	t.Fatalf("lab %s has no step %s", l.ID, id)
	return -1
}

// The quickstart's template and deploy steps say what they write, where,
// rendered with the run's variables, without writing anything; other
// steps write nothing Rendered shows.
func TestRenderedQuickstart(t *testing.T) {
	l := quickstart(t)
	vars := map[string]string{"instances": "3", "port": "7710"}
	e := newEngine(t, l, Options{Vars: vars, Binary: "/bin/true"}, &recorder{})

	files, more, err := e.Rendered(stepIndex(t, l, "config"))
	if err != nil || more != 0 || len(files) != 1 {
		t.Fatalf("config: %d files (+%d), %v", len(files), more, err)
	}
	f := files[0]
	if f.Host != "local" || f.Path != e.workdir()+"/redis.conf" || f.Source != "redis.conf.tmpl" || f.Step != "config" {
		t.Errorf("config file = %+v", f)
	}
	for _, want := range []string{"\nport 7710\n", "unixsocket " + e.workdir() + "/local-7710/redis.sock", "loglevel notice"} {
		if !strings.Contains(f.Content, want) {
			t.Errorf("config content lacks %q:\n%s", want, f.Content)
		}
	}
	if _, err := os.Stat(f.Path); !os.IsNotExist(err) {
		t.Errorf("Rendered wrote %s (stat: %v)", f.Path, err)
	}

	files, _, err = e.Rendered(stepIndex(t, l, "deploy"))
	if err != nil || len(files) != 3 {
		t.Fatalf("deploy: %d files, %v", len(files), err)
	}
	for k, f := range files {
		port := 7710 + k
		if f.Path != filepath.Join(e.workdir(), fmt.Sprintf("local-%d", port), "redis.conf") || !strings.Contains(f.Content, fmt.Sprintf("\nport %d\n", port)) {
			t.Errorf("deploy file %d = %s:\n%s", k, f.Path, f.Content)
		}
	}

	for _, id := range []string{"welcome", "workdir", "edit-config", "bench"} {
		if files, _, err := e.Rendered(stepIndex(t, l, id)); err != nil || files != nil {
			t.Errorf("%s: %v, %v", id, files, err)
		}
	}
	if _, _, err := e.Rendered(99); err == nil {
		t.Error("step 99: no error")
	}
	if !KindWritesFiles("template") || !KindWritesFiles("deploy") || KindWritesFiles("task") {
		t.Error("KindWritesFiles")
	}
}

func TestHideSecrets(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"requirepass s3cret\nport 1\n", "requirepass (hidden)\nport 1\n"},
		{"  RequirePass \"a b\"\n", "  RequirePass (hidden)\n"},
		{"masterauth x\n", "masterauth (hidden)\n"},
		{"user bob on >pw1 >pw2 ~* +@all\n", "user bob on (hidden) (hidden) ~* +@all\n"},
		{"# requirepass is off\nport 2\n", "# requirepass is off\nport 2\n"},
	} {
		if got := hideSecrets(c.in); got != c.want {
			t.Errorf("hideSecrets(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// The quickstart's task step shows its solution: do-it-for-me's commands
// and the check, per host, with the run's working directory.
func TestSolutionQuickstart(t *testing.T) {
	l := quickstart(t)
	e := newEngine(t, l, Options{Binary: "/bin/true"}, &recorder{})
	sol, err := e.Solution(stepIndex(t, l, "edit-config"))
	if err != nil || len(sol) != 1 {
		t.Fatalf("solution = %+v, %v", sol, err)
	}
	s := sol[0]
	if s.Host != "local" || len(s.Run) != 2 || !strings.Contains(s.Run[0], "loglevel warning") || !strings.Contains(s.Run[0], e.workdir()+"/redis.conf") ||
		!strings.Contains(s.Verify, "grep -x 'loglevel warning'") {
		t.Errorf("solution = %+v", s)
	}
	if _, err := e.Solution(stepIndex(t, l, "config")); err == nil {
		t.Error("a template step has a task solution")
	}
}
