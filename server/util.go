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

func lowerByte(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
