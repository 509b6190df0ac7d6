package server

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unsafe"

	"github.com/dpulab/dpulab/server/resp"
)

// Number parsing and formatting that reproduces the C library calls Redis
// makes (string2ll, strtod, strtold, printf "%.17Lf"), because replies and
// errors must match Redis to the letter: Go's strconv accepts and rejects
// different inputs and rounds differently.

// parseRedisInt parses b as Redis's string2ll does: an optional '-', no
// '+', no leading zeros, no spaces, within int64 (resp.ParseInt). It takes
// strings and byte slices alike, without allocating.
func parseRedisInt[T ~string | ~[]byte](b T) (int64, bool) { return resp.ParseInt(b) }

// bytesView returns b as a string without copying, for parsing an argument
// that is neither modified nor kept during the call (ZADD parses a score
// per element; copying each would be a needless allocation).
func bytesView(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// cIsSpace is C's isspace in the "C" locale.
func cIsSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// cFloatSyntax scans the longest prefix of s that glibc's strtod/strtold
// would convert (after leading white space) and returns that prefix
// rewritten into a form Go's parsers accept (hex floats get an explicit
// "p0" exponent), how many bytes of s it consumed (0: no conversion), and
// what kind of number it is.
func cFloatSyntax(s string) (norm string, consumed int, kind byte) {
	i := 0
	for i < len(s) && cIsSpace(s[i]) {
		i++
	}
	sign := ""
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		if s[i] == '-' {
			sign = "-"
		}
		i++
	}
	rest := strings.ToLower(s[i:min(len(s), i+8)])
	switch {
	case strings.HasPrefix(rest, "infinity"):
		return sign + "inf", i + 8, 'i'
	case strings.HasPrefix(rest, "inf"):
		return sign + "inf", i + 3, 'i'
	case strings.HasPrefix(rest, "nan"):
		j := i + 3
		// "nan(n-char-sequence)" is consumed whole when it is closed.
		if j < len(s) && s[j] == '(' {
			k := j + 1
			for k < len(s) && (s[k] == '_' || s[k] >= '0' && s[k] <= '9' || s[k] >= 'a' && s[k] <= 'z' || s[k] >= 'A' && s[k] <= 'Z') {
				k++
			}
			if k < len(s) && s[k] == ')' {
				j = k + 1
			}
		}
		return "nan", j, 'n'
	}
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	isHex := func(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
	if i+1 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') {
		j := i + 2
		digits := 0
		for j < len(s) && isHex(s[j]) {
			j, digits = j+1, digits+1
		}
		if j < len(s) && s[j] == '.' {
			j++
			for j < len(s) && isHex(s[j]) {
				j, digits = j+1, digits+1
			}
		}
		if digits == 0 {
			// Only the "0" converts; the 'x' is left over.
			return sign + "0", i + 1, 'd'
		}
		mant := s[i:j]
		exp := "p0"
		if j < len(s) && (s[j] == 'p' || s[j] == 'P') {
			k := j + 1
			if k < len(s) && (s[k] == '+' || s[k] == '-') {
				k++
			}
			if k < len(s) && isDigit(s[k]) {
				for k < len(s) && isDigit(s[k]) {
					k++
				}
				exp = s[j:k]
				j = k
			}
		}
		if strings.HasSuffix(mant, ".") {
			mant += "0"
		}
		return sign + mant + exp, j, 'x'
	}
	j := i
	digits := 0
	for j < len(s) && isDigit(s[j]) {
		j, digits = j+1, digits+1
	}
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && isDigit(s[j]) {
			j, digits = j+1, digits+1
		}
	}
	if digits == 0 {
		return "", 0, 0
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			j = k
		}
	}
	return sign + s[i:j], j, 'd'
}

// hasNonZeroDigit reports whether a decimal or hex mantissa has a non-zero
// digit, to tell an underflow to zero from a real zero.
func hasNonZeroDigit(norm string) bool {
	m := strings.TrimPrefix(strings.TrimPrefix(norm, "-"), "0x")
	m = strings.TrimPrefix(m, "0X")
	for _, c := range m {
		switch {
		case c == 'e' || c == 'E' || c == 'p' || c == 'P':
			return false
		case c >= '1' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
			return true
		}
	}
	return false
}

// cStrtod converts the prefix of s as strtod does. consumed == 0 means no
// conversion; erange reports overflow (±Inf) or underflow.
func cStrtod(s string) (v float64, consumed int, erange bool) {
	norm, n, kind := cFloatSyntax(s)
	switch kind {
	case 0:
		return 0, 0, false
	case 'i':
		if strings.HasPrefix(norm, "-") {
			return math.Inf(-1), n, false
		}
		return math.Inf(1), n, false
	case 'n':
		return math.NaN(), n, false
	}
	v, err := strconv.ParseFloat(norm, 64)
	if err != nil {
		// Well-formed by construction, so this is a range error: Go
		// returns ±Inf like strtod's HUGE_VAL.
		return v, n, true
	}
	if v == 0 && hasNonZeroDigit(norm) {
		return v, n, true
	}
	if v != 0 && math.Abs(v) < 0x1p-1022 {
		return v, n, true // denormal: glibc sets ERANGE
	}
	return v, n, false
}

// parseRedisDouble parses b as getDoubleFromObject does (ZADD scores,
// ZINCRBY increments): the whole string must convert, no leading space, no
// overflow or underflow to zero, not NaN.
func parseRedisDouble(b []byte) (float64, bool) {
	s := bytesView(b)
	if len(s) == 0 || cIsSpace(s[0]) {
		return 0, false
	}
	v, n, erange := cStrtod(s)
	if n != len(s) || math.IsNaN(v) {
		return 0, false
	}
	if erange && (math.IsInf(v, 0) || v == 0) {
		return 0, false
	}
	return v, true
}

// parseScoreBound parses a ZRANGEBYSCORE/ZCOUNT bound as zslParseRange
// does: "(" marks it exclusive, then strtod must consume the rest (an empty
// rest is 0) and the value must not be NaN.
func parseScoreBound(b []byte) (v float64, exclusive bool, ok bool) {
	s := bytesView(b)
	if len(s) > 0 && s[0] == '(' {
		exclusive, s = true, s[1:]
	}
	v, n, _ := cStrtod(s)
	if n != len(s) || math.IsNaN(v) {
		return 0, false, false
	}
	return v, exclusive, true
}

// Long doubles: Redis computes HINCRBYFLOAT (and INCRBYFLOAT) in the C long
// double of x86-64, the x87 80-bit format with a 64-bit mantissa, and
// prints it with "%.17Lf". big.Float with 64 bits of precision rounds the
// same way, so 0.1 + 0.2 prints "0.3" here as it does in Redis (float64
// would give 0.30000000000000004).
const (
	ldPrec   = 64
	ldMaxExp = 16384  // values at or above 2**16384 overflow to infinity
	ldMinExp = -16444 // below the smallest denormal, 2**-16445, is zero
)

// parseLongDouble parses b as Redis's string2ld: the whole string must
// convert, no leading space, not NaN, no overflow or underflow to zero.
// Infinity parses (callers reject it with their own message).
func parseLongDouble(b []byte) (*big.Float, bool) {
	s := string(b)
	if len(s) == 0 || cIsSpace(s[0]) || len(s) >= 5*1024 {
		return nil, false
	}
	norm, n, kind := cFloatSyntax(s)
	if n != len(s) {
		return nil, false
	}
	switch kind {
	case 'n', 0:
		return nil, false
	case 'i':
		return new(big.Float).SetInf(strings.HasPrefix(norm, "-")), true
	}
	base := 10
	if kind == 'x' {
		base = 0
	} else if hugeDecimalExponent(norm) {
		// Far beyond a long double's range (about 1e±4951 even counting
		// the up to 5 KB of digits before it), and big.ParseFloat would
		// spend minutes computing 10**exp: decide without it. A zero
		// mantissa is zero; anything else overflows or underflows, which
		// string2ld rejects.
		if hasNonZeroDigit(norm) {
			return nil, false
		}
		return new(big.Float).SetPrec(ldPrec), true
	}
	f, _, err := big.ParseFloat(norm, base, ldPrec, big.ToNearestEven)
	if err != nil {
		return nil, false
	}
	if f.Sign() == 0 {
		if hasNonZeroDigit(norm) {
			return nil, false // underflow to zero: ERANGE
		}
		return f, true
	}
	if e := f.MantExp(nil); e > ldMaxExp || e < ldMinExp {
		return nil, false // overflow (HUGE_VALL) or underflow (zero)
	}
	return f, true
}

// hugeDecimalExponent reports whether a decimal number's exponent is
// beyond ±20000.
func hugeDecimalExponent(norm string) bool {
	i := strings.IndexAny(norm, "eE")
	if i < 0 {
		return false
	}
	e := strings.TrimLeft(strings.TrimLeft(norm[i+1:], "+-"), "0")
	return len(e) > 5 || len(e) == 5 && e > "20000"
}

// addLongDouble returns a+b rounded to a long double; ok is false when the
// result is infinite (overflow or an infinite operand).
func addLongDouble(a, b *big.Float) (*big.Float, bool) {
	if a.IsInf() || b.IsInf() {
		return nil, false
	}
	z := new(big.Float).SetPrec(ldPrec).SetMode(big.ToNearestEven)
	z.Add(a, b)
	if z.Sign() != 0 && z.MantExp(nil) > ldMaxExp {
		return nil, false
	}
	return z, true
}

// formatLongDoubleHuman prints f as Redis's ld2string(LD_STR_HUMAN):
// "%.17Lf" with trailing zeros (and a trailing '.') removed, and "-0" as
// "0".
func formatLongDoubleHuman(f *big.Float) string {
	s := f.Text('f', 17)
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}
