package resp

import (
	"math"
	"math/big"
	"strconv"
	"testing"
)

// The two integer parsers ParseInt and ParseLength replaced, kept here
// verbatim as references: each caller must see the same results as before.

// oldStrict is server/util.go's parseInt before the merge (Redis's
// string2ll, for command arguments).
func oldStrict(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := false
	i := 0
	if b[0] == '-' {
		neg = true
		i = 1
		if len(b) == 1 {
			return 0, false
		}
	}
	if b[i] < '1' || b[i] > '9' {
		return 0, false
	}
	var v uint64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if v > (math.MaxUint64-9)/10 {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// oldLenient is this package's parseInt before the merge (request and
// reply lengths).
func oldLenient(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	neg := false
	if b[0] == '-' {
		neg = true
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		nv := v*10 + uint64(c-'0')
		if nv < v || nv > 1<<63 {
			return 0, false
		}
		v = nv
	}
	if neg {
		return -int64(v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// parseCorpus is every string of up to 4 characters over the characters
// that matter, plus numbers at and around every edge.
func parseCorpus() []string {
	alpha := []byte("0129-+ x")
	var out []string
	var gen func(prefix []byte, n int)
	gen = func(prefix []byte, n int) {
		out = append(out, string(prefix))
		if n == 0 {
			return
		}
		for _, c := range alpha {
			gen(append(prefix, c), n-1)
		}
	}
	gen(nil, 4)
	edges := []string{"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"18446744073709551615", "18446744073709551616", "99999999999999999999", "21000000000000000000",
		"-18446744073709551616", "09223372036854775807", "-09223372036854775808", "00000000000000000000",
		"000000000000000000001", "100000000000000000000", "1844674407370955161", "18446744073709551610"}
	for _, e := range edges {
		out = append(out, e, e[:len(e)-1], e+"0")
	}
	return out
}

func TestParseIntIsTheOldStrictParser(t *testing.T) {
	for _, s := range parseCorpus() {
		v, ok := ParseInt([]byte(s))
		wv, wok := oldStrict([]byte(s))
		if v != wv || ok != wok {
			t.Errorf("ParseInt(%q) = %d, %v; the arguments' parser gave %d, %v", s, v, ok, wv, wok)
		}
		if sv, sok := ParseInt(s); sv != v || sok != ok {
			t.Errorf("ParseInt(string %q) = %d, %v; as bytes %d, %v", s, sv, sok, v, ok)
		}
	}
}

// TestParseLengthIsTheOldLenientParser: the same results for every input
// but the ones the old parser got wrong: 20-digit numbers whose
// multiplication by ten wrapped past 2^64 unnoticed (it took
// "21000000000000000000" for 2553255926290448384). Those are out of range
// now; every caller refused any length that large anyway (above INT_MAX
// or proto-max-bulk-len), so requests are answered as before.
func TestParseLengthIsTheOldLenientParser(t *testing.T) {
	for _, s := range parseCorpus() {
		v, ok := ParseLength([]byte(s))
		wv, wok := oldLenient([]byte(s))
		if v == wv && ok == wok {
			continue
		}
		exact, isNum := new(big.Int).SetString(s, 10)
		if ok || !wok || !isNum || exact.IsInt64() {
			t.Errorf("ParseLength(%q) = %d, %v; the lengths' parser gave %d, %v", s, v, ok, wv, wok)
		}
	}
	if _, ok := ParseLength("21000000000000000000"); ok {
		t.Error("ParseLength accepts a value above 2^64")
	}
}

func FuzzParseInt(f *testing.F) {
	for _, s := range []string{"0", "-0", "007", "-9223372036854775808", "21000000000000000000", "+1", " 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := ParseInt(s)
		if wv, wok := oldStrict([]byte(s)); v != wv || ok != wok {
			t.Fatalf("ParseInt(%q) = %d, %v; old %d, %v", s, v, ok, wv, wok)
		}
		if ok && strconv.FormatInt(v, 10) != s {
			t.Fatalf("ParseInt(%q) = %d, which does not print back as the input", s, v)
		}
		lv, lok := ParseLength(s)
		if ok && (!lok || lv != v) {
			t.Fatalf("ParseLength(%q) = %d, %v; ParseInt accepted it as %d", s, lv, lok, v)
		}
		exact, isNum := new(big.Int).SetString(s, 10)
		if lok != (isNum && exact.IsInt64() && len(s) <= 20 && s[0] != '+') {
			t.Fatalf("ParseLength(%q) ok = %v", s, lok)
		}
		if lok && exact.Int64() != lv {
			t.Fatalf("ParseLength(%q) = %d, want %s", s, lv, exact)
		}
	})
}

// TestRequestLengthsStayLenient: the request parser still reads lengths
// with leading zeros and "-0" (Redis refuses both; see ParseLength), and a
// length beyond int64 is still a protocol error.
func TestRequestLengthsStayLenient(t *testing.T) {
	// "$-0" has always been an empty argument here.
	in := []byte("*02\r\n$04\r\nECHO\r\n$-0\r\n\r\n")
	args, n, err := ParseCommand(in, nil, Limits{})
	if err != nil || n != len(in) || len(args) != 2 || len(args[1]) != 0 {
		t.Fatalf("$-0 bulk: args %q, n %d, err %v; want ECHO and an empty argument", args, n, err)
	}
	in = []byte("*002\r\n$0004\r\nECHO\r\n$01\r\nx\r\n")
	args, n, err = ParseCommand(in, nil, Limits{})
	if err != nil || n != len(in) || len(args) != 2 || string(args[0]) != "ECHO" || string(args[1]) != "x" {
		t.Fatalf("leading zeros: args %q, n %d, err %v", args, n, err)
	}
	for _, in := range []string{"*21000000000000000000\r\n", "*1\r\n$21000000000000000000\r\n"} {
		if _, _, err := ParseCommand([]byte(in), nil, Limits{}); err == nil {
			t.Errorf("%q: no protocol error", in)
		}
	}
}
