package server

// globMatch is Redis 7.0's stringmatchlen: * ? [abc] [^a] [a-z] and \
// escapes, byte by byte. It runs in bounded time whatever the pattern
// (KEYS, SCAN MATCH, PSUBSCRIBE, CONFIG GET and CLIENT KILL run it in the
// event loop), by Redis's two guards against abusive patterns:
//
//   - skipLongerMatches (Redis 7.0.9, CVE-2022-36021): once the rest of the
//     pattern after a '*' has failed against every suffix of the string,
//     no earlier '*' can succeed by consuming more, so the whole search
//     stops. Without it "a*a*a*...*b" against a long run of 'a' backtracks
//     exponentially; with it the work is O(len(pattern) * len(s)).
//   - nesting: more than 1000 '*' deep answers no match (which bounds the
//     recursion, so the Go stack cannot be exhausted either).
//
// Everything else answers as Redis does, quirks included: the empty string
// matches only the empty pattern ("*" and "**" do not match it; KEYS and
// SCAN answer "*" without asking), ranges compare bytes as C's signed
// char, an unterminated class ends at the pattern's end.
func globMatch(pattern, s []byte, nocase bool) bool {
	skip := false
	return globMatchImpl(pattern, s, nocase, &skip, 0)
}

// globMaxNesting is Redis's nesting limit of stringmatchlen_impl.
const globMaxNesting = 1000

func globMatchImpl(p, s []byte, nocase bool, skipLonger *bool, nesting int) bool {
	if nesting > globMaxNesting {
		return false
	}
	for len(p) > 0 && len(s) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for len(s) > 0 {
				if globMatchImpl(p[1:], s, nocase, skipLonger, nesting+1) {
					return true
				}
				if *skipLonger {
					return false
				}
				s = s[1:]
			}
			// No suffix matches the rest of the pattern: a longer match
			// of any earlier '*' cannot either.
			*skipLonger = true
			return false
		case '?':
			s = s[1:]
		case '[':
			p = p[1:]
			not := len(p) > 0 && p[0] == '^'
			if not {
				p = p[1:]
			}
			match := false
			for {
				if len(p) >= 2 && p[0] == '\\' {
					p = p[1:]
					if p[0] == s[0] {
						match = true
					}
				} else if len(p) > 0 && p[0] == ']' {
					break
				} else if len(p) == 0 {
					// Unterminated: the class ends with the pattern.
					break
				} else if len(p) >= 3 && p[1] == '-' {
					// C compares chars, signed on the platforms Redis
					// runs on.
					lo, hi, c := int(int8(p[0])), int(int8(p[2])), int(int8(s[0]))
					if lo > hi {
						lo, hi = hi, lo
					}
					if nocase {
						lo, hi, c = lowerSigned(lo), lowerSigned(hi), lowerSigned(c)
					}
					p = p[2:]
					if c >= lo && c <= hi {
						match = true
					}
				} else if p[0] == s[0] || nocase && lowerByte(p[0]) == lowerByte(s[0]) {
					match = true
				}
				p = p[1:]
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			s = s[1:]
			if len(p) == 0 {
				// Redis steps back onto the class's last byte and then
				// past it: the pattern is done.
				return len(s) == 0
			}
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if p[0] != s[0] && (!nocase || lowerByte(p[0]) != lowerByte(s[0])) {
				return false
			}
			s = s[1:]
		}
		p = p[1:]
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			break
		}
	}
	return len(p) == 0 && len(s) == 0
}

// lowerSigned is C's tolower on a signed char's value: ASCII letters only.
func lowerSigned(c int) int {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
