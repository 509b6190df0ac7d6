package server

import (
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"
)

// fieldRange is a width-bit field's value range.
func fieldRange(width int, signed bool) (lo, hi *big.Int) {
	if signed {
		hi = new(big.Int).Lsh(big.NewInt(1), uint(width-1))
		lo = new(big.Int).Neg(hi)
		return lo, hi.Sub(hi, big.NewInt(1))
	}
	hi = new(big.Int).Lsh(big.NewInt(1), uint(width))
	return big.NewInt(0), hi.Sub(hi, big.NewInt(1))
}

// wantField is what BITFIELD's overflow handling must give for the exact
// sum v (arbitrary precision): the sum if it fits, else the wrapped
// (modulo 2^width, in the field's range) or saturated value.
func wantField(v *big.Int, width int, signed bool, ow int) (*big.Int, bool) {
	lo, hi := fieldRange(width, signed)
	if v.Cmp(lo) >= 0 && v.Cmp(hi) <= 0 {
		return v, false
	}
	switch ow {
	case bfSat:
		if v.Cmp(hi) > 0 {
			return hi, true
		}
		return lo, true
	default:
		mod := new(big.Int).Lsh(big.NewInt(1), uint(width))
		r := new(big.Int).Mod(v, mod)
		if r.Cmp(hi) > 0 {
			r.Sub(r, mod)
		}
		return r, true
	}
}

// TestBitfieldOverflowMatchesArithmetic checks the overflow helpers, which
// follow Redis's C code with its wrapping intermediates, against exact
// arithmetic for every width and values at and around the edges.
func TestBitfieldOverflowMatchesArithmetic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	edges := func(width int, signed bool) []int64 {
		lo, hi := fieldRange(width, signed)
		out := []int64{0, 1, -1, lo.Int64(), hi.Int64(), 1<<62 - 1, -1 << 63, 1<<63 - 1}
		for i := 0; i < 6; i++ {
			out = append(out, rng.Int64(), -rng.Int64(), rng.Int64N(1<<min(width, 62)+1))
		}
		if lo.IsInt64() && lo.Int64() > -1<<63 {
			out = append(out, lo.Int64()-1)
		}
		if hi.IsInt64() && hi.Int64() < 1<<63-1 {
			out = append(out, hi.Int64()+1)
		}
		return out
	}
	for width := 1; width <= 64; width++ {
		for _, signed := range []bool{true, false} {
			if !signed && width == 64 {
				continue
			}
			lo, hi := fieldRange(width, signed)
			for _, ow := range []int{bfWrap, bfSat} {
				for _, value := range edges(width, signed) {
					// INCRBY starts from a value the field can hold.
					bv := big.NewInt(value)
					if bv.Cmp(lo) < 0 || bv.Cmp(hi) > 0 {
						continue
					}
					for _, incr := range edges(width, signed) {
						sum := new(big.Int).Add(bv, big.NewInt(incr))
						want, wantOver := wantField(sum, width, signed, ow)
						var got string
						var over bool
						if signed {
							var r int64
							r, over = signedFieldOverflow(value, incr, width, ow)
							got = strconv.FormatInt(r, 10)
						} else {
							var r uint64
							r, over = unsignedFieldOverflow(uint64(value), incr, width, ow)
							got = strconv.FormatUint(r, 10)
						}
						if got != want.String() || over != wantOver {
							t.Fatalf("width %d signed %v ow %d: %d + %d = %s (overflow %v), want %s (overflow %v)",
								width, signed, ow, value, incr, got, over, want, wantOver)
						}
					}
				}
			}
		}
	}
}

func TestBitfieldRoundTrip(t *testing.T) {
	buf := make([]byte, 16)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 2000; i++ {
		width := 1 + rng.IntN(64)
		off := uint64(rng.IntN(64))
		v := rng.Uint64() & widthMask(width)
		for j := range buf {
			buf[j] = byte(rng.Uint32())
		}
		before := append([]byte(nil), buf...)
		setBitfield(buf, off, width, v)
		if got := getBitfield(buf, off, width); got != v {
			t.Fatalf("width %d at %d: wrote %#x, read %#x", width, off, v, got)
		}
		// Bits outside the field are untouched.
		for b := uint64(0); b < 128; b++ {
			if b >= off && b < off+uint64(width) {
				continue
			}
			if before[b>>3]&(1<<(7-b&7)) != buf[b>>3]&(1<<(7-b&7)) {
				t.Fatalf("width %d at %d: bit %d changed", width, off, b)
			}
		}
	}
}

func TestBitPosAndCountAgainstBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 500; i++ {
		v := make([]byte, 1+rng.IntN(40))
		for j := range v {
			switch rng.IntN(3) {
			case 0:
				v[j] = 0
			case 1:
				v[j] = 0xff
			default:
				v[j] = byte(rng.Uint32())
			}
		}
		n := int64(len(v)) * 8
		first := rng.Int64N(n)
		last := first + rng.Int64N(n-first)
		count, pos0, pos1 := int64(0), int64(-1), int64(-1)
		for p := first; p <= last; p++ {
			set := v[p>>3]&(1<<(7-p&7)) != 0
			if set {
				count++
				if pos1 < 0 {
					pos1 = p
				}
			} else if pos0 < 0 {
				pos0 = p
			}
		}
		if got := popcountRange(v, first, last); got != count {
			t.Fatalf("%x [%d,%d]: popcount %d, want %d", v, first, last, got, count)
		}
		if got := bitposRange(v, first, last, true); got != pos1 {
			t.Fatalf("%x [%d,%d]: first 1 at %d, want %d", v, first, last, got, pos1)
		}
		if got := bitposRange(v, first, last, false); got != pos0 {
			t.Fatalf("%x [%d,%d]: first 0 at %d, want %d", v, first, last, got, pos0)
		}
	}
}

// TestSetBitLimits: the offset limit follows proto-max-bulk-len, and a
// bitmap written in place is seen by WATCH.
func TestSetBitLimits(t *testing.T) {
	c, addr := newTestServer(t)
	c.must(`"OK"`, "CONFIG", "SET", "proto-max-bulk-len", "1048576")
	c.must("(integer) 0", "SETBIT", "b", strconv.Itoa(1048576*8-1), "1")
	c.must("(error) ERR bit offset is not an integer or out of range", "SETBIT", "b", strconv.Itoa(1048576*8), "1")
	c.must("(integer) 1048576", "STRLEN", "b")
	c.must("(integer) 1", "BITCOUNT", "b")

	c.must(`"OK"`, "WATCH", "b")
	other := dialTest(t, addr)
	other.must("(integer) 0", "SETBIT", "b", "0", "1")
	c.must(`"OK"`, "MULTI")
	c.must(`"QUEUED"`, "GET", "nosuch")
	c.must("(nil)", "EXEC")
	// An unchanged bit is no change.
	c.must(`"OK"`, "WATCH", "b")
	other.must("(integer) 1", "SETBIT", "b", "0", "1")
	c.must(`"OK"`, "MULTI")
	c.must(`"QUEUED"`, "BITCOUNT", "b", "0", "0")
	c.must("*[(integer) 1]", "EXEC")
}
