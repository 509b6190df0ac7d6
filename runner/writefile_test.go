//go:build unix

package runner

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// cancellingReader hands out one chunk, then cancels the copy it feeds, as
// an interrupt in the middle of an upload does.
type cancellingReader struct {
	cancel context.CancelFunc
	sent   bool
}

func (r *cancellingReader) Read(p []byte) (int, error) {
	if r.sent {
		return 0, io.ErrUnexpectedEOF
	}
	r.sent = true
	r.cancel()
	return copy(p, bytes.Repeat([]byte("x"), len(p))), nil
}

// TestWriteFileLeavesNoTemporary: WriteFile writes atomically through a
// temporary file in the destination's directory, and an upload interrupted
// midway removes it (a killed dpulab would leave it in that directory, which
// the run's cleanup removes, never in /tmp).
func TestWriteFileLeavesNoTemporary(t *testing.T) {
	t.Parallel()
	sshd := startSSHD(t)
	for _, tg := range []Target{NewLocal(), NewSSH(sshd.config("real"))} {
		t.Run(tg.Name(), func(t *testing.T) {
			t.Parallel()
			defer tg.Close()
			ctx := context.Background()
			dir := filepath.Join(t.TempDir(), "work")
			dest := filepath.Join(dir, "redis.conf")
			if err := WriteFile(ctx, tg, dest, []byte("port 6379\n"), 0o640); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(dest)
			st, _ := os.Stat(dest)
			if err != nil || string(b) != "port 6379\n" || st.Mode().Perm() != 0o640 {
				t.Fatalf("%q %v %v", b, st.Mode(), err)
			}
			w := tg.(interface {
				writeFrom(context.Context, io.Reader, string, fs.FileMode) error
			})
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			if err := w.writeFrom(cctx, &cancellingReader{cancel: cancel}, dest, 0o600); err == nil {
				t.Fatal("an interrupted write succeeded")
			}
			if b, _ := os.ReadFile(dest); string(b) != "port 6379\n" {
				t.Fatalf("an interrupted write changed the file: %q", b)
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != 1 {
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				t.Fatalf("left in %s: %v", dir, names)
			}
		})
	}
}
