package server

import "github.com/dpulab/dpulab/server/resp"

// parseInt parses an integer argument as strictly as Redis's string2ll:
// no spaces, no '+', no leading zeros, within int64 (resp.ParseInt, the
// one integer parser).
func parseInt(b []byte) (int64, bool) { return resp.ParseInt(b) }

// equalFold reports whether b equals the lowercase ASCII word s, ignoring
// case, without allocating.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// globMatch is Redis's stringmatchlen: * ? [abc] [^a] [a-z] and \ escapes.
func globMatch(pattern, s []byte, nocase bool) bool {
	return globMatchDepth(pattern, s, nocase, 0)
}

func lowerByte(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func globMatchDepth(p, s []byte, nocase bool, depth int) bool {
	if depth > 1000 {
		return false
	}
	for len(p) > 0 && len(s) >= 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if globMatchDepth(p[1:], s[i:], nocase, depth+1) {
					return true
				}
			}
			return false
		case '?':
			if len(s) == 0 {
				return false
			}
			s = s[1:]
		case '[':
			if len(s) == 0 {
				return false
			}
			p = p[1:]
			not := len(p) > 0 && p[0] == '^'
			if not {
				p = p[1:]
			}
			match := false
			for {
				if len(p) == 0 {
					break
				}
				if p[0] == '\\' && len(p) >= 2 {
					p = p[1:]
					if p[0] == s[0] {
						match = true
					}
				} else if p[0] == ']' {
					break
				} else if len(p) >= 3 && p[1] == '-' {
					lo, hi, c := p[0], p[2], s[0]
					if lo > hi {
						lo, hi = hi, lo
					}
					if nocase {
						lo, hi, c = lowerByte(lo), lowerByte(hi), lowerByte(c)
					}
					if c >= lo && c <= hi {
						match = true
					}
					p = p[2:]
				} else if nocase && lowerByte(p[0]) == lowerByte(s[0]) || p[0] == s[0] {
					match = true
				}
				p = p[1:]
			}
			if len(p) == 0 {
				// Unterminated class: Redis treats the end as the class end.
				if not {
					match = !match
				}
				if !match {
					return false
				}
				s = s[1:]
				return len(s) == 0
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			s = s[1:]
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if len(s) == 0 {
				return false
			}
			if nocase {
				if lowerByte(p[0]) != lowerByte(s[0]) {
					return false
				}
			} else if p[0] != s[0] {
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
