package termtext

// sgrLen returns the length of the allowed 7-bit SGR sequence at the start of
// s (which starts with ESC), or 0 if there is none.
func sgrLen[T ~string | ~[]byte](s T) int {
	if len(s) < 3 || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s) && i-2 <= maxSGR; i++ {
		b := s[i]
		if b >= '0' && b <= ';' {
			continue
		}
		if b == 'm' && validSGR(s[2:i]) {
			return i + 1
		}
		return 0
	}
	return 0
}

// validSGR reports whether every parameter of an SGR sequence is in the safe
// subset documented on SGR. Parameters are decimal, separated by ';'; an
// empty one means 0. The colon sub-parameter forms (38:2::r:g:b) and private
// markers are not accepted: they are rare in command output, and refusing
// them keeps this check small enough to trust.
func validSGR[T ~string | ~[]byte](p T) bool {
	i := 0
	// next parses the parameter at i; ok is false at the end of p or on a
	// byte that is not a digit, or a value above 255 (no allowed parameter
	// is larger, and it stops overflow).
	next := func() (v int, ok bool) {
		if i > len(p) {
			return 0, false
		}
		for i < len(p) && p[i] != ';' {
			c := p[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
			if v > 255 {
				return 0, false
			}
			i++
		}
		i++ // the ';', or one past the end
		return v, true
	}
	for i <= len(p) {
		v, ok := next()
		if !ok {
			return false
		}
		switch {
		case v <= 4 || v == 7 || v >= 22 && v <= 24 || v == 27,
			v >= 30 && v <= 37 || v == 39, v >= 40 && v <= 47 || v == 49,
			v >= 90 && v <= 97, v >= 100 && v <= 107:
		case v == 38 || v == 48:
			mode, ok := next()
			if !ok {
				return false
			}
			n := 0
			switch mode {
			case 5:
				n = 1
			case 2:
				n = 3
			default:
				return false
			}
			for range n {
				if _, ok := next(); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}
