package rdma

import (
	"io"
	"testing"
)

// BenchmarkWrite measures one Write of a RESP-sized message through the
// protocol and the fabric, with a reader draining the other side; allocs/op
// is the figure to watch (the data path must not allocate per message).
func BenchmarkWrite(b *testing.B) {
	for _, size := range []int{64, 16 << 10} {
		for _, typ := range []QPType{RC, UC} {
			b.Run(typ.String()+"/"+byteSize(size), func(b *testing.B) {
				c, s, _, _ := connect(b, typ, Config{RxSize: DefaultRxSize}, Config{RxSize: DefaultRxSize})
				done := make(chan struct{})
				go func() {
					defer close(done)
					buf := make([]byte, 64<<10)
					for {
						if _, err := s.Read(buf); err != nil {
							return
						}
					}
				}()
				msg := make([]byte, size)
				// The first write waits for the peer's buffer and
				// registers the staging buffer: setup, not per message.
				if _, err := c.Write(msg); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(size))
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if _, err := c.Write(msg); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				c.Close()
				<-done
			})
		}
	}
}

func byteSize(n int) string {
	if n >= 1<<10 {
		return itoa(n>>10) + "KiB"
	}
	return itoa(n) + "B"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

var _ io.Reader = (*Conn)(nil)
