package termtext

import (
	"strings"
	"unicode/utf8"
)

// Plain removes every escape sequence (CSI, OSC including its payload up to
// BEL or ST, DCS/SOS/PM/APC strings, lone ESC and two-byte ESC sequences),
// every C0 control except \n and \t, DEL, every C1 control (U+0080..U+009F,
// and the raw 8-bit C1 bytes, which start the same sequences as their ESC
// forms), and the Unicode bidi overrides and isolates (U+202A..U+202E,
// U+2066..U+2069). Invalid UTF-8 becomes U+FFFD. \r\n becomes \n and a lone
// \r becomes \n, so a progress bar's redraws become lines instead of
// overwriting each other.
func Plain(s string) string {
	i := cleanPrefix(s, false)
	if i == len(s) {
		return s
	}
	return dirty(s, i, false)
}

// SGR is Plain, but keeps Select Graphic Rendition sequences (ESC [ params m)
// whose parameters are all in a safe subset: reset (0 or empty), bold (1),
// faint (2), italic (3), underline (4), reverse (7) and their resets (22, 23,
// 24, 27), the 8/16 colours (30-37, 40-47, 90-97, 100-107), 256-colour and
// 24-bit colour (38;5;n 48;5;n 38;2;r;g;b 48;2;r;g;b) and default
// foreground/background (39, 49). A CSI with any other parameter, or any
// other final byte, is dropped whole. Blink and conceal are left out on
// purpose: remote output must not hide text from the operator. A kept SGR
// that arrived as 8-bit CSI is written in its 7-bit form.
func SGR(s string) string {
	i := cleanPrefix(s, true)
	if i == len(s) {
		return s
	}
	return dirty(s, i, true)
}

// Line is Plain for text drawn on one line (a title, a host name, a table
// cell): line breaks and tabs become spaces, so outside text cannot add rows
// to a layout that counts them.
func Line(s string) string {
	s = Plain(s)
	if !strings.ContainsAny(s, "\n\t") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return ' '
		}
		return r
	}, s)
}

// Safe reports whether Plain(s) == s, without building anything.
func Safe(s string) bool {
	return cleanPrefix(s, false) == len(s)
}

// dirty sanitises s whose first i bytes are known clean.
func dirty(s string, i int, keepSGR bool) string {
	f := filter{keepSGR: keepSGR}
	dst := make([]byte, 0, len(s))
	dst = append(dst, s[:i]...)
	dst, _ = process(&f, dst, s[i:], false)
	return string(dst)
}

// text reports whether b is a byte the scanner passes through unchanged in
// ground state: printable ASCII, newline or tab.
func text(b byte) bool {
	return b >= 0x20 && b < 0x7f || b == '\n' || b == '\t'
}

// cleanPrefix returns the length of the longest prefix of s that the filter
// would copy unchanged (len(s) when all of it is clean). With keepSGR, an
// allowed SGR sequence in 7-bit form counts as clean.
func cleanPrefix[T ~string | ~[]byte](s T, keepSGR bool) int {
	i := 0
	for i < len(s) {
		b := s[i]
		if text(b) {
			i++
			continue
		}
		if b < utf8.RuneSelf {
			if b == 0x1b && keepSGR {
				if n := sgrLen(s[i:]); n > 0 {
					i += n
					continue
				}
			}
			return i
		}
		r, size := decodeRune(s[i:])
		if r == utf8.RuneError && size == 1 || r < 0xa0 || bidi(r) {
			return i
		}
		i += size
	}
	return i
}

// bidi reports whether r is one of the bidi embedding, override or isolate
// controls that let text display in an order other than the one it is read
// in (CVE-2021-42574, "Trojan Source").
func bidi(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// decodeRune is utf8.DecodeRune for either a string or a byte slice,
// written out because the standard library has no generic form and copying
// into an array per character halves the scanner's speed. It returns
// (utf8.RuneError, 1) for a byte that does not start a valid encoding, as
// utf8.DecodeRune does; FuzzDecodeRune holds the two to the same answers.
func decodeRune[T ~string | ~[]byte](s T) (rune, int) {
	n := len(s)
	if n == 0 {
		return utf8.RuneError, 0
	}
	b0 := s[0]
	switch {
	case b0 < utf8.RuneSelf:
		return rune(b0), 1
	case b0 >= 0xc2 && b0 <= 0xdf:
		if n >= 2 && s[1]&0xc0 == 0x80 {
			return rune(b0&0x1f)<<6 | rune(s[1]&0x3f), 2
		}
	case b0 >= 0xe0 && b0 <= 0xef:
		// E0 would be overlong below A0; ED above 9F is a surrogate.
		lo, hi := byte(0x80), byte(0xbf)
		if b0 == 0xe0 {
			lo = 0xa0
		} else if b0 == 0xed {
			hi = 0x9f
		}
		if n >= 3 && s[1] >= lo && s[1] <= hi && s[2]&0xc0 == 0x80 {
			return rune(b0&0x0f)<<12 | rune(s[1]&0x3f)<<6 | rune(s[2]&0x3f), 3
		}
	case b0 >= 0xf0 && b0 <= 0xf4:
		// F0 would be overlong below 90; F4 above 8F is past U+10FFFF.
		lo, hi := byte(0x80), byte(0xbf)
		if b0 == 0xf0 {
			lo = 0x90
		} else if b0 == 0xf4 {
			hi = 0x8f
		}
		if n >= 4 && s[1] >= lo && s[1] <= hi && s[2]&0xc0 == 0x80 && s[3]&0xc0 == 0x80 {
			return rune(b0&0x07)<<18 | rune(s[1]&0x3f)<<12 | rune(s[2]&0x3f)<<6 | rune(s[3]&0x3f), 4
		}
	}
	return utf8.RuneError, 1
}

// fullRune is utf8.FullRune for either a string or a byte slice.
func fullRune[T ~string | ~[]byte](s T) bool {
	var b [utf8.UTFMax]byte
	n := copy(b[:], s)
	return utf8.FullRune(b[:n])
}
