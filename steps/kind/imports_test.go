package kind_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestKindsDoNotImportTheEngine: a kind under steps/kinds/ (and this
// contract, and the live events of steps/event) works through kind.Env; importing package steps would give it
// the engine back, and the compiler would allow it only until steps
// imports the kind.
func TestKindsDoNotImportTheEngine(t *testing.T) {
	const engine = "github.com/dpulab/dpulab/steps"
	n := 0
	for _, root := range []string{".", "../kinds", "../event"} {
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			n++
			for _, im := range f.Imports {
				if path, _ := strconv.Unquote(im.Path.Value); path == engine {
					t.Errorf("%s imports %s: a kind works through kind.Env", p, engine)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < 10 {
		t.Fatalf("read %d Go files: the walk missed the kinds", n)
	}
}
