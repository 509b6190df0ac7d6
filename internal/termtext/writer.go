package termtext

import (
	"io"
	"unicode/utf8"
)

// Writer sanitises a byte stream as Plain (or SGR) would the whole of it,
// however the stream is cut into writes: an escape sequence or a UTF-8
// character split across two writes is recognised as if it came in one. It
// is not safe for concurrent use; give each stream (stdout, stderr) its own.
type Writer struct {
	w    io.Writer
	f    filter
	err  error
	buf  []byte
	tail [utf8.UTFMax]byte // an incomplete UTF-8 character held for the next write
	nt   int
}

// NewWriter returns a Writer that sanitises what it is given and writes the
// result to w, keeping allowed SGR sequences if keepSGR is set. Each Write
// makes at most one Write to w. Close flushes it; it does not close w.
func NewWriter(w io.Writer, keepSGR bool) io.WriteCloser {
	return &Writer{w: w, f: filter{keepSGR: keepSGR}}
}

// Write sanitises p and writes the result. It reports len(p) when the
// underlying write succeeds; after a failed write, every call returns that
// error.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n := len(p)
	dst := w.buf[:0]
	if w.nt > 0 {
		// Finish the held character with p's first bytes. Whatever the
		// held bytes turn out to be, at most UTFMax bytes of p decide it.
		var j [2 * utf8.UTFMax]byte
		k := copy(j[:], w.tail[:w.nt])
		m := copy(j[k:k+utf8.UTFMax], p)
		var used int
		dst, used = process(&w.f, dst, j[:k+m], true)
		if used < k {
			// Still incomplete: then all of p is in j.
			w.nt = copy(w.tail[:], j[used:k+m])
			p = nil
		} else {
			w.nt = 0
			p = p[used-k:]
		}
	}
	if len(p) > 0 {
		var used int
		dst, used = process(&w.f, dst, p, true)
		w.nt = copy(w.tail[:], p[used:])
	}
	if len(dst) > 0 {
		if _, err := w.w.Write(dst); err != nil {
			w.err = err
			return 0, err
		}
	}
	// Reuse the buffer across writes, but do not hold on to one burst's
	// worth of memory for the rest of a long stream.
	if cap(dst) <= 64<<10 {
		w.buf = dst[:0]
	} else {
		w.buf = nil
	}
	return n, nil
}

// Close writes what a pending incomplete UTF-8 character stands for (U+FFFD)
// and drops a pending partial escape sequence. It does not close the
// underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	dst := w.buf[:0]
	if w.nt > 0 {
		dst, _ = process(&w.f, dst, w.tail[:w.nt], false)
		w.nt = 0
	}
	w.f.st = ground
	if len(dst) > 0 {
		if _, err := w.w.Write(dst); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}
