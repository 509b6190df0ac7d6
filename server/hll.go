package server

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// HyperLogLog in Redis 7.0's own representation (hyperloglog.c), so that
// the string value is byte for byte what redis-server stores: a 16-byte
// header ("HYLL", the encoding, 3 unused bytes, the cached cardinality
// little-endian with its top bit set when stale), then either the dense
// registers (16384 six-bit registers packed LSB first, 12288 bytes) or the
// sparse opcodes (ZERO 00xxxxxx: 1..64 zero registers; XZERO 01xxxxxx
// yyyyyyyy: 1..16384 zero registers; VAL 1vvvvvxx: 1..4 registers of value
// 1..32). The functions work on the value's bytes; the ones that can grow
// a sparse value return the (possibly new) slice.

const (
	hllP           = 14
	hllQ           = 64 - hllP
	hllRegisters   = 1 << hllP
	hllPMask       = hllRegisters - 1
	hllBits        = 6
	hllRegisterMax = 1<<hllBits - 1
	hllHdrSize     = 16
	hllDenseSize   = hllHdrSize + (hllRegisters*hllBits+7)/8
	hllDense       = 0
	hllSparse      = 1
	hllMaxEncoding = 1

	hllSparseValMaxValue = 32
	hllSparseValMaxLen   = 4
	hllSparseZeroMaxLen  = 64
	hllSparseXZeroMaxLen = 16384

	// hllSparseMaxBytes is hll-sparse-max-bytes's default (PFSELFTEST's
	// value; PFADD and PFMERGE use the configured one).
	hllSparseMaxBytes = 3000

	hllAlphaInf = 0.721347520444481703680 // 0.5/ln(2)
)

const (
	errNotHLL     = "WRONGTYPE Key is not a valid HyperLogLog string value."
	errInvalidHLL = "INVALIDOBJ Corrupted HLL object detected"
)

// newHLL returns an empty HLL as createHLLObject makes it: sparse, one
// XZERO opcode covering every register, cached cardinality 0.
func newHLL() []byte {
	h := make([]byte, hllHdrSize+2)
	copy(h, "HYLL")
	h[4] = hllSparse
	l := hllRegisters - 1
	h[hllHdrSize] = byte(l>>8) | 0x40
	h[hllHdrSize+1] = byte(l)
	return h
}

// isHLL reports whether v is a value the PF commands accept
// (isHLLObjectOrReply): the magic, a known encoding, and the exact size
// when dense.
func isHLL(v []byte) bool {
	if len(v) < hllHdrSize || string(v[:4]) != "HYLL" || v[4] > hllMaxEncoding {
		return false
	}
	return v[4] != hllDense || len(v) == hllDenseSize
}

func hllInvalidateCache(h []byte) { h[15] |= 0x80 }

func hllValidCache(h []byte) bool { return h[15]&0x80 == 0 }

// murmurHash64A is Redis's endian-neutral MurmurHash2, 64-bit version.
func murmurHash64A(key []byte, seed uint64) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := seed ^ uint64(len(key))*m
	n := len(key) &^ 7
	for i := 0; i < n; i += 8 {
		k := binary.LittleEndian.Uint64(key[i:])
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
	}
	tail := key[n:]
	switch len(tail) {
	case 7:
		h ^= uint64(tail[6]) << 48
		fallthrough
	case 6:
		h ^= uint64(tail[5]) << 40
		fallthrough
	case 5:
		h ^= uint64(tail[4]) << 32
		fallthrough
	case 4:
		h ^= uint64(tail[3]) << 24
		fallthrough
	case 3:
		h ^= uint64(tail[2]) << 16
		fallthrough
	case 2:
		h ^= uint64(tail[1]) << 8
		fallthrough
	case 1:
		h ^= uint64(tail[0])
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// hllPatLen returns the register an element hashes to and the length of
// its 000..1 pattern (1..Q+1), as hllPatLen does.
func hllPatLen(ele []byte) (index int, count uint8) {
	hash := murmurHash64A(ele, 0xadc83b19)
	index = int(hash & hllPMask)
	hash >>= hllP
	hash |= 1 << hllQ
	return index, uint8(bits.TrailingZeros64(hash) + 1)
}

// Dense registers: r is the value after the header.

func hllDenseGet(r []byte, i int) uint8 {
	b := i * hllBits / 8
	fb := uint(i * hllBits & 7)
	b0 := uint(r[b])
	var b1 uint
	if b+1 < len(r) {
		b1 = uint(r[b+1])
	}
	return uint8((b0>>fb | b1<<(8-fb)) & hllRegisterMax)
}

func hllDenseSetReg(r []byte, i int, v uint8) {
	b := i * hllBits / 8
	fb := uint(i * hllBits & 7)
	fb8 := 8 - fb
	r[b] &^= byte(hllRegisterMax << fb)
	r[b] |= byte(uint(v) << fb)
	if b+1 < len(r) {
		r[b+1] &^= byte(hllRegisterMax >> fb8)
		r[b+1] |= byte(uint(v) >> fb8)
	}
}

// hllUnpack decodes all dense registers, 16 from every 12 bytes.
func hllUnpack(r []byte, regs *[hllRegisters]uint8) {
	_ = r[hllRegisters*hllBits/8-1]
	for j := 0; j < hllRegisters/16; j++ {
		b := r[j*12 : j*12+12 : j*12+12]
		o := regs[j*16 : j*16+16 : j*16+16]
		o[0] = b[0] & 63
		o[1] = (b[0]>>6 | b[1]<<2) & 63
		o[2] = (b[1]>>4 | b[2]<<4) & 63
		o[3] = b[2] >> 2 & 63
		o[4] = b[3] & 63
		o[5] = (b[3]>>6 | b[4]<<2) & 63
		o[6] = (b[4]>>4 | b[5]<<4) & 63
		o[7] = b[5] >> 2 & 63
		o[8] = b[6] & 63
		o[9] = (b[6]>>6 | b[7]<<2) & 63
		o[10] = (b[7]>>4 | b[8]<<4) & 63
		o[11] = b[8] >> 2 & 63
		o[12] = b[9] & 63
		o[13] = (b[9]>>6 | b[10]<<2) & 63
		o[14] = (b[10]>>4 | b[11]<<4) & 63
		o[15] = b[11] >> 2 & 63
	}
}

// hllDenseSet raises register i to count; it reports whether it changed.
func hllDenseSet(r []byte, i int, count uint8) bool {
	if count > hllDenseGet(r, i) {
		hllDenseSetReg(r, i, count)
		return true
	}
	return false
}

// Sparse opcodes.

func hllIsZero(b byte) bool  { return b&0xc0 == 0 }
func hllIsXZero(b byte) bool { return b&0xc0 == 0x40 }
func hllIsVal(b byte) bool   { return b&0x80 != 0 }

// hllAt is h[i], or the zero that follows an sds string's end.
func hllAt(h []byte, i int) byte {
	if i < len(h) {
		return h[i]
	}
	return 0
}

func hllZeroLen(b byte) int           { return int(b&0x3f) + 1 }
func hllXZeroLen(h []byte, p int) int { return (int(h[p]&0x3f)<<8 | int(hllAt(h, p+1))) + 1 }
func hllValValue(b byte) int          { return int(b>>2&0x1f) + 1 }
func hllValLen(b byte) int            { return int(b&3) + 1 }
func hllValOp(val, n int) byte        { return byte((val-1)<<2|(n-1)) | 0x80 }
func hllZeroOp(n int) byte            { return byte(n - 1) }
func hllXZeroOp(n int) (hi, lo byte)  { return byte((n-1)>>8) | 0x40, byte(n - 1) }
func hllAppendRun(seq []byte, n int) []byte {
	if n > hllSparseZeroMaxLen {
		hi, lo := hllXZeroOp(n)
		return append(seq, hi, lo)
	}
	return append(seq, hllZeroOp(n))
}

// hllSparseToDense converts a sparse value to a new dense one (the header,
// cached cardinality included, is kept); a dense value is returned as is.
// ok is false for a corrupted sparse value.
func hllSparseToDense(h []byte) (out []byte, ok bool) {
	if h[4] == hllDense {
		return h, true
	}
	d := make([]byte, hllDenseSize)
	copy(d, h[:hllHdrSize])
	d[4] = hllDense
	r := d[hllHdrSize:]
	idx := 0
	for p := hllHdrSize; p < len(h); {
		switch b := h[p]; {
		case hllIsZero(b):
			idx += hllZeroLen(b)
			p++
		case hllIsXZero(b):
			idx += hllXZeroLen(h, p)
			p += 2
		default:
			n, v := hllValLen(b), hllValValue(b)
			if n+idx > hllRegisters {
				return h, false
			}
			for ; n > 0; n-- {
				hllDenseSetReg(r, idx, uint8(v))
				idx++
			}
			p++
		}
	}
	if idx != hllRegisters {
		return h, false
	}
	return d, true
}

// hllSparseSet raises register index to count in a sparse value, as
// hllSparseSet does, opcode for opcode: it splits the run holding the
// register, merges equal adjacent VAL opcodes around it, and promotes the
// value to dense when count does not fit a VAL opcode or the value would
// pass maxBytes. It returns the value (a new slice when it grew or was
// promoted, else h changed in place) and 1 when the register changed, 0
// when not, -1 when the value is corrupted.
func hllSparseSet(h []byte, index int, count uint8, maxBytes int) ([]byte, int) {
	if count > hllSparseValMaxValue {
		return hllPromote(h, index, count)
	}
	// Step 1: the opcode covering index.
	p, first, span, prev := hllHdrSize, 0, 0, -1
	for p < len(h) {
		oplen := 1
		switch b := h[p]; {
		case hllIsZero(b):
			span = hllZeroLen(b)
		case hllIsVal(b):
			span = hllValLen(b)
		default:
			span = hllXZeroLen(h, p)
			oplen = 2
		}
		if index <= first+span-1 {
			break
		}
		prev = p
		p += oplen
		first += span
	}
	if span == 0 || p >= len(h) {
		return h, -1
	}
	b := h[p]
	isZero, isXZero, isVal := hllIsZero(b), hllIsXZero(b), hllIsVal(b)
	var runlen int
	switch {
	case isZero:
		runlen = hllZeroLen(b)
	case isXZero:
		runlen = hllXZeroLen(h, p)
	default:
		runlen = hllValLen(b)
	}
	// Step 2: the trivial updates in place.
	updated := false
	if isVal {
		if hllValValue(b) >= int(count) {
			return h, 0
		}
		if runlen == 1 {
			h[p] = hllValOp(int(count), 1)
			updated = true
		}
	}
	if !updated && isZero && runlen == 1 {
		h[p] = hllValOp(int(count), 1)
		updated = true
	}
	if !updated {
		// The general case: split the opcode in up to three.
		var buf [5]byte
		seq := buf[:0]
		last := first + span - 1
		if isZero || isXZero {
			if index != first {
				seq = hllAppendRun(seq, index-first)
			}
			seq = append(seq, hllValOp(int(count), 1))
			if index != last {
				seq = hllAppendRun(seq, last-index)
			}
		} else {
			cur := hllValValue(b)
			if index != first {
				seq = append(seq, hllValOp(cur, index-first))
			}
			seq = append(seq, hllValOp(int(count), 1))
			if index != last {
				seq = append(seq, hllValOp(cur, last-index))
			}
		}
		oldlen := 1
		if isXZero {
			oldlen = 2
		}
		delta := len(seq) - oldlen
		if delta > 0 && len(h)+delta > maxBytes {
			return hllPromote(h, index, count)
		}
		nh := make([]byte, 0, len(h)+len(seq))
		nh = append(nh, h[:p]...)
		nh = append(nh, seq...)
		if p+oldlen <= len(h) {
			nh = append(nh, h[p+oldlen:]...)
		} else {
			// An XZERO cut short by the value's end: Redis writes the
			// sequence and sets the length to the old one plus delta.
			nh = nh[:len(h)+delta]
		}
		h = nh
	}
	// Step 4: merge adjacent VAL opcodes of equal value, scanning up to
	// five opcodes from the one before.
	p = hllHdrSize
	if prev >= 0 {
		p = prev
	}
	for scan := 5; p < len(h) && scan > 0; {
		scan--
		switch {
		case hllIsXZero(h[p]):
			p += 2
			continue
		case hllIsZero(h[p]):
			p++
			continue
		}
		if p+1 < len(h) && hllIsVal(h[p+1]) {
			v1, v2 := hllValValue(h[p]), hllValValue(h[p+1])
			if n := hllValLen(h[p]) + hllValLen(h[p+1]); v1 == v2 && n <= hllSparseValMaxLen {
				h[p+1] = hllValOp(v1, n)
				h = append(h[:p], h[p+1:]...)
				continue
			}
		}
		p++
	}
	hllInvalidateCache(h)
	return h, 1
}

// hllPromote converts h to dense and sets the register there.
func hllPromote(h []byte, index int, count uint8) ([]byte, int) {
	d, ok := hllSparseToDense(h)
	if !ok {
		return h, -1
	}
	hllDenseSet(d[hllHdrSize:], index, count)
	return d, 1
}

// hllAdd adds ele to the HLL h (dense or sparse); see hllSparseSet for the
// results.
func hllAdd(h, ele []byte, maxBytes int) ([]byte, int) {
	index, count := hllPatLen(ele)
	if h[4] == hllDense {
		if hllDenseSet(h[hllHdrSize:], index, count) {
			return h, 1
		}
		return h, 0
	}
	return hllSparseSet(h, index, count, maxBytes)
}

// hllMerge raises max[i] to each register of h; false for a corrupted
// sparse value.
func hllMerge(max *[hllRegisters]uint8, h []byte) bool {
	if h[4] == hllDense {
		var regs [hllRegisters]uint8
		hllUnpack(h[hllHdrSize:], &regs)
		for i, v := range regs {
			if v > max[i] {
				max[i] = v
			}
		}
		return true
	}
	i := 0
	for p := hllHdrSize; p < len(h); {
		switch b := h[p]; {
		case hllIsZero(b):
			i += hllZeroLen(b)
			p++
		case hllIsXZero(b):
			i += hllXZeroLen(h, p)
			p += 2
		default:
			n, v := hllValLen(b), uint8(hllValValue(b))
			if n+i > hllRegisters {
				return false
			}
			for ; n > 0; n-- {
				if v > max[i] {
					max[i] = v
				}
				i++
			}
			p++
		}
	}
	return i == hllRegisters
}

// hllHisto counts the registers of h by value; invalid reports a sparse
// value that does not cover exactly every register.
func hllHisto(h []byte, histo *[64]int) (invalid bool) {
	if h[4] == hllDense {
		var regs [hllRegisters]uint8
		hllUnpack(h[hllHdrSize:], &regs)
		for _, v := range regs {
			histo[v]++
		}
		return false
	}
	idx := 0
	for p := hllHdrSize; p < len(h); {
		switch b := h[p]; {
		case hllIsZero(b):
			n := hllZeroLen(b)
			idx += n
			histo[0] += n
			p++
		case hllIsXZero(b):
			n := hllXZeroLen(h, p)
			idx += n
			histo[0] += n
			p += 2
		default:
			n := hllValLen(b)
			idx += n
			histo[hllValValue(b)] += n
			p++
		}
	}
	return idx != hllRegisters
}

func hllSigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		zPrime := z
		z += x * y
		y += y
		if zPrime == z {
			return z
		}
	}
}

func hllTau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		zPrime := z
		y *= 0.5
		d := 1 - x
		z -= float64(d*d) * y
		if zPrime == z {
			return z / 3
		}
	}
}

// hllEstimate is hllCount's estimator (Ertl's, arXiv:1702.01284) over a
// register histogram.
func hllEstimate(histo *[64]int) uint64 {
	const m = float64(hllRegisters)
	z := m * hllTau((m-float64(histo[hllQ+1]))/m)
	for j := hllQ; j >= 1; j-- {
		z += float64(histo[j])
		z *= 0.5
	}
	z += m * hllSigma(float64(histo[0])/m)
	return uint64(math.Round(hllAlphaInf * m * m / z))
}

// hllCard returns h's cardinality from its cache, or computes it and
// stores it in the cache (changed reports that). ok is false for a
// corrupted sparse value.
func hllCard(h []byte) (card uint64, changed, ok bool) {
	if hllValidCache(h) {
		return binary.LittleEndian.Uint64(h[8:16]), false, true
	}
	var histo [64]int
	if hllHisto(h, &histo) {
		return 0, false, false
	}
	card = hllEstimate(&histo)
	binary.LittleEndian.PutUint64(h[8:16], card)
	return card, true, true
}

// hllDecode is PFDEBUG DECODE's text for a sparse value.
func hllDecode(h []byte) string {
	var sb strings.Builder
	for p := hllHdrSize; p < len(h); {
		b := h[p]
		switch {
		case hllIsZero(b):
			sb.WriteString("z:" + strconv.Itoa(hllZeroLen(b)) + " ")
			p++
		case hllIsXZero(b):
			sb.WriteString("Z:" + strconv.Itoa(hllXZeroLen(h, p)) + " ")
			p += 2
		default:
			sb.WriteString("v:" + strconv.Itoa(hllValValue(b)) + "," + strconv.Itoa(hllValLen(b)) + " ")
			p++
		}
	}
	return strings.TrimRight(sb.String(), " ")
}
