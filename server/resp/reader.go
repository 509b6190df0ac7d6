package resp

import (
	"errors"
	"io"
)

// Reader reads replies from a connection with its own buffer (no bufio), so
// a pipelined burst of replies is parsed out of one read.
type Reader struct {
	rd   io.Reader
	buf  []byte
	r, w int
	slab []Value
}

// NewReader returns a Reader over rd with a 64 KiB buffer.
func NewReader(rd io.Reader) *Reader {
	return NewReaderSize(rd, 64<<10)
}

// NewReaderSize returns a Reader over rd whose buffer starts at size bytes
// (64 KiB when size < 1) and doubles whenever a reply does not fit: a load
// generator with thousands of connections starts each small and lets the
// pipeline's replies size it.
func NewReaderSize(rd io.Reader, size int) *Reader {
	if size < 1 {
		size = 64 << 10
	}
	return &Reader{rd: rd, buf: make([]byte, size)}
}

// Buffered reports how many unread bytes are buffered.
func (r *Reader) Buffered() int { return r.w - r.r }

// ReadReply returns the next reply. The Value's Str and Elems are valid
// until the next call.
func (r *Reader) ReadReply() (Value, error) {
	for {
		if r.w > r.r {
			v, n, slab, err := ParseReply(r.buf[r.r:r.w], r.slab)
			r.slab = slab
			if err == nil {
				r.r += n
				return v, nil
			}
			if !errors.Is(err, ErrIncomplete) {
				return Value{}, err
			}
		}
		if err := r.fill(); err != nil {
			return Value{}, err
		}
	}
}

// fill reads more data, compacting or growing the buffer first.
func (r *Reader) fill() error {
	if r.r > 0 {
		copy(r.buf, r.buf[r.r:r.w])
		r.w -= r.r
		r.r = 0
	}
	if r.w == len(r.buf) {
		nb := make([]byte, 2*len(r.buf))
		copy(nb, r.buf[:r.w])
		r.buf = nb
	}
	n, err := r.rd.Read(r.buf[r.w:])
	r.w += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}
