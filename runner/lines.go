package runner

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"time"
)

// maxLine bounds one output line; longer runs are cut into several Lines so
// that a binary blob on stdout cannot grow memory without limit. It is
// large because one JSON line of `dpulab bench` carries a run's latency
// histograms, per target too: 80 targets' HdrHistograms make a line of a
// few hundred KiB, and a cut line is a run lost ("not a JSON object").
const maxLine = 16 << 20

// maxTailLine bounds a line as Result.Tail keeps it (a failure's context,
// read by a person): longer ones are shortened there, never in what the
// Output callback sees.
const maxTailLine = 4 << 10

// tailLines is how many lines Result.Tail keeps.
const tailLines = 20

// lineSink collects the output of one command: it splits both streams into
// Lines, hands them to the caller's callback and keeps the last few for
// Result.Tail. One sink is shared by the stdout and stderr writers.
type lineSink struct {
	host string
	out  func(Line)

	mu   sync.Mutex
	tail []Line
}

func newLineSink(host string, out func(Line)) *lineSink {
	return &lineSink{host: host, out: out}
}

func (s *lineSink) emit(st Stream, text string) {
	l := Line{Host: s.host, Stream: st, Text: text, Time: time.Now()}
	kept := l
	if len(text) > maxTailLine {
		// A copy, so the tail does not hold the whole line alive.
		kept.Text = strings.Clone(strings.ToValidUTF8(text[:maxTailLine], "")) + fmt.Sprintf(" … (%d bytes in all)", len(text))
	}
	s.mu.Lock()
	if len(s.tail) == tailLines {
		copy(s.tail, s.tail[1:])
		s.tail = s.tail[:tailLines-1]
	}
	s.tail = append(s.tail, kept)
	s.mu.Unlock()
	if s.out != nil {
		s.out(l)
	}
}

func (s *lineSink) lastLines() []Line {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Line(nil), s.tail...)
}

// writer returns an io.Writer for one stream. Call flush on it when the
// stream ends so that a last line without a newline is not lost.
func (s *lineSink) writer(st Stream) *lineWriter {
	return &lineWriter{sink: s, stream: st}
}

// lineWriter splits what is written to it at newlines. Writes to one
// lineWriter come from one goroutine (the stream copier).
type lineWriter struct {
	sink   *lineSink
	stream Stream
	buf    []byte
	// filter, when set, sees each complete line first and may swallow it
	// (returns false); used to take the process-group marker off stderr.
	filter func(string) bool
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.buf = append(w.buf, p...)
			w.cut()
			break
		}
		w.buf = append(w.buf, p[:i]...)
		w.cut()
		w.line(string(bytes.TrimSuffix(w.buf, []byte{'\r'})))
		w.buf = w.buf[:0]
		p = p[i+1:]
	}
	return n, nil
}

// cut emits full maxLine pieces of a line that is still growing.
func (w *lineWriter) cut() {
	for len(w.buf) > maxLine {
		w.line(string(w.buf[:maxLine]))
		w.buf = append(w.buf[:0], w.buf[maxLine:]...)
	}
}

func (w *lineWriter) line(text string) {
	if w.filter != nil && !w.filter(text) {
		return
	}
	w.sink.emit(w.stream, text)
}

func (w *lineWriter) flush() {
	if len(w.buf) > 0 {
		w.line(string(w.buf))
		w.buf = w.buf[:0]
	}
}
