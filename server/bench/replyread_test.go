package bench

import (
	"bytes"
	"testing"

	"github.com/dpulab/dpulab/server/resp"
)

// cannedReplies hands out one pipeline's replies per Read, forever: the
// read side of a connection without a kernel in the way.
type cannedReplies struct{ b []byte }

func (c *cannedReplies) Read(p []byte) (int, error) { return copy(p, c.b), nil }

// BenchmarkReplyRead is the lean path's reply side: 16 GET replies of 32
// bytes per read, parsed and timestamped (allocation-free).
func BenchmarkReplyRead(b *testing.B) {
	one := resp.AppendBulk(nil, bytes.Repeat([]byte("v"), 32))
	src := &cannedReplies{b: bytes.Repeat(one, 16)}
	st := stampReader{rd: src}
	rd := resp.NewReaderSize(&st, replyBuf)
	b.ReportAllocs()
	b.SetBytes(int64(len(src.b)))
	for b.Loop() {
		for range 16 {
			if _, err := rd.ReadReply(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
