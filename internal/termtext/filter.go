package termtext

import "unicode/utf8"

// state is where the scanner stands in the terminal's parser.
type state uint8

const (
	ground   state = iota // text
	escape                // after ESC
	escInter              // ESC and intermediates (ESC ( B), until a final byte
	csi                   // after CSI, until a final byte
	str                   // DCS, SOS, PM or APC payload, until ST
	osc                   // OSC payload, until BEL or ST
	strEsc                // ESC inside a string: ST if '\' follows
)

// maxSGR bounds the parameter bytes of a CSI that SGR will consider keeping;
// "38;2;255;255;255;48;2;255;255;255;1;4" is 37. A longer CSI is dropped.
const maxSGR = 64

// filter is the scanner's state between calls, so that a sequence split
// across writes is still recognised.
type filter struct {
	st      state
	keepSGR bool
	// cr is set when the last line break written came from a \r: a \n that
	// follows it (maybe after dropped sequences) is the same line break.
	cr bool
	// bad is set when the CSI being read can no longer be a kept SGR.
	bad bool
	n   int
	par [maxSGR]byte
}

const (
	bel = 0x07
	can = 0x18
	sub = 0x1a
	esc = 0x1b
	del = 0x7f
)

// process runs s through f, appending what may reach the terminal to dst,
// and returns dst and how much of s it consumed. With more set, s is not the
// end of the stream: an incomplete UTF-8 sequence at its end is left
// unconsumed for the caller to hand back with the bytes that complete it.
func process[T ~string | ~[]byte](f *filter, dst []byte, s T, more bool) ([]byte, int) {
	i := 0
	for i < len(s) {
		if f.st == ground {
			j := i
			for j < len(s) && s[j] >= 0x20 && s[j] < del {
				j++
			}
			if j > i {
				dst = append(dst, s[i:j]...)
				f.cr = false
				i = j
				continue
			}
		}
		b := s[i]
		if b < utf8.RuneSelf {
			dst = f.ascii(dst, b)
			i++
			continue
		}
		if more && !fullRune(s[i:]) {
			return dst, i
		}
		r, size := decodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1 && b < 0xa0:
			// A raw 8-bit C1 byte: a terminal in 8-bit mode reads it as the
			// control, so it is treated as one.
			dst = f.c1(dst, rune(b))
		case r >= 0x80 && r < 0xa0:
			dst = f.c1(dst, r)
		default:
			dst = f.other(dst, r)
		}
		i += size
	}
	return dst, i
}

// ascii handles one 7-bit byte.
func (f *filter) ascii(dst []byte, b byte) []byte {
	switch f.st {
	case ground:
		return f.control(dst, b)
	case escape:
		switch {
		case b == '[':
			f.enterCSI()
		case b == ']':
			f.st = osc
		case b == 'P' || b == 'X' || b == '^' || b == '_':
			f.st = str
		case b >= 0x20 && b <= 0x2f:
			f.st = escInter
		case b >= 0x30 && b < del:
			f.st = ground // a two-byte sequence (ESC c, ESC 7, ESC M...): dropped
		default:
			return f.abort(dst, b)
		}
	case escInter:
		switch {
		case b >= 0x20 && b <= 0x2f:
		case b >= 0x30 && b < del:
			f.st = ground
		default:
			return f.abort(dst, b)
		}
	case csi:
		switch {
		case b >= 0x20 && b <= 0x3f:
			if f.n < len(f.par) {
				f.par[f.n] = b
				f.n++
			} else {
				f.bad = true
			}
		case b >= 0x40 && b < del:
			f.st = ground
			if f.keepSGR && b == 'm' && !f.bad && validSGR(f.par[:f.n]) {
				dst = append(dst, esc, '[')
				dst = append(dst, f.par[:f.n]...)
				dst = append(dst, 'm')
			}
		default:
			return f.abort(dst, b)
		}
	case osc, str:
		switch b {
		case esc:
			f.st = strEsc
		case can, sub:
			f.st = ground
		case bel:
			if f.st == osc {
				f.st = ground
			}
		}
	case strEsc:
		if b == '\\' {
			f.st = ground
			return dst
		}
		// Any other ESC ends the string and starts a sequence of its own.
		f.st = escape
		return f.ascii(dst, b)
	}
	return dst
}

// abort handles byte b that cannot continue the escape or control sequence
// being read: ESC starts a new one, CAN and SUB cancel it, DEL is ignored
// inside it, and anything else (a newline, a tab, another C0) ends it and is
// then handled as text.
func (f *filter) abort(dst []byte, b byte) []byte {
	switch b {
	case del:
		return dst
	case esc:
		f.st = escape
		return dst
	case can, sub:
		f.st = ground
		return dst
	}
	f.st = ground
	return f.control(dst, b)
}

// control handles a byte in ground state that is not printable ASCII.
func (f *filter) control(dst []byte, b byte) []byte {
	switch b {
	case esc:
		f.st = escape
	case '\n':
		if f.cr {
			f.cr = false
			return dst
		}
		dst = append(dst, '\n')
	case '\r':
		dst = append(dst, '\n')
		f.cr = true
	case '\t':
		dst = append(dst, '\t')
		f.cr = false
	default:
		if b >= 0x20 && b < del {
			dst = append(dst, b)
			f.cr = false
		}
	}
	return dst
}

// c1 handles a C1 control, whichever way it was encoded: the introducers
// start what their ESC forms start, from any state, as in a terminal; ST ends
// a string; every other C1 ends whatever was being read and is dropped.
func (f *filter) c1(dst []byte, r rune) []byte {
	switch r {
	case 0x9b:
		f.enterCSI()
	case 0x9d:
		f.st = osc
	case 0x90, 0x98, 0x9e, 0x9f:
		f.st = str
	default:
		f.st = ground
	}
	return dst
}

// other handles a rune at or above U+00A0; utf8.RuneError stands for a byte
// that does not start valid UTF-8 as well as for U+FFFD itself, and both are
// written as U+FFFD.
func (f *filter) other(dst []byte, r rune) []byte {
	switch f.st {
	case osc, str:
		return dst // payload
	case ground:
	default:
		// Not part of any escape or control sequence: the sequence ends
		// and the character is text.
		f.st = ground
	}
	if bidi(r) {
		return dst
	}
	f.cr = false
	return utf8.AppendRune(dst, r)
}

func (f *filter) enterCSI() {
	f.st = csi
	f.n = 0
	f.bad = false
}
