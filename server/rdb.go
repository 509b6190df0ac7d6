package server

import (
	"encoding/binary"
	"errors"
	"hash/crc64"
	"math"
	"strconv"
	"sync"

	"github.com/dpulab/dpulab/server/resp"
)

// Redis 7.0's RDB serialization of one value, as DUMP produces and RESTORE
// takes it (rdb.c's rdbSaveObject/rdbLoadObject, cluster.c's
// createDumpPayload/verifyDumpPayload): the object type byte, the object,
// the RDB version as two little-endian bytes (10 for Redis 7.0) and a
// CRC64 (Jones polynomial, as crc64.c; little-endian) over everything
// before it.
//
// What we write is what redis-server 7.0 writes for the same value where
// our encoding is Redis's (strings with their int encodings and LZF,
// listpack hashes and sorted sets, intsets, quicklists of listpacks split
// as a list-max-listpack-size -2 quicklist splits them), byte for byte:
// our LZF is a port of Redis's liblzf (lzfCompress). Hashtable-encoded
// hashes and sets come out in another order, and a stream in our node
// layout, without its deleted entries. We read everything 7.0 writes and the older
// types it still loads (ziplist-based lists, hashes and sorted sets,
// quicklists of ziplists, plain lists, ZSET with text scores, streams
// without the 7.0 fields); not zipmaps and not modules.
//
// The loader never trusts a length: each is checked against what is left
// of the payload before anything is read or allocated, so no byte sequence
// can make it panic or ask for more memory than a bounded multiple of the
// payload (FuzzRestorePayload).

// RDB object types (rdb.h).
const (
	rdbTypeString            = 0
	rdbTypeList              = 1
	rdbTypeSet               = 2
	rdbTypeZSet              = 3
	rdbTypeHash              = 4
	rdbTypeZSet2             = 5
	rdbTypeHashZipmap        = 9
	rdbTypeListZiplist       = 10
	rdbTypeSetIntset         = 11
	rdbTypeZSetZiplist       = 12
	rdbTypeHashZiplist       = 13
	rdbTypeListQuicklist     = 14
	rdbTypeStreamListpacks   = 15
	rdbTypeHashListpack      = 16
	rdbTypeZSetListpack      = 17
	rdbTypeListQuicklist2    = 18
	rdbTypeStreamListpacks2  = 19
	quicklistNodePlain       = 1
	quicklistNodePacked      = 2
	quicklistSizeLimit       = 8192 // list-max-listpack-size -2
	streamItemFlagDeleted    = 1
	streamItemFlagSameFields = 2
)

// Length encodings (rdb.h): the top two bits of the first byte.
const (
	rdb6BitLen  = 0
	rdb14BitLen = 1
	rdb32BitLen = 0x80
	rdb64BitLen = 0x81
	rdbEncVal   = 3
	rdbEncInt8  = 0
	rdbEncInt16 = 1
	rdbEncInt32 = 2
	rdbEncLZF   = 3
)

// maxRestoreInflate bounds what the LZF strings of one payload may
// decompress to, together (proto-max-bulk-len's default): a small payload
// cannot ask for more. One back reference of 3 bytes yields at most 264,
// so a string's claimed size is also checked against its compressed one.
const (
	maxRestoreInflate = 512 << 20
	lzfMaxRatio       = 88
)

var errBadData = errors.New("ERR Bad data format")

// rdbVersion is the RDB format version of Redis 7.0, which DUMP and
// FUNCTION DUMP payloads carry.
const rdbVersion = 10

// crcTable is the Jones polynomial (0xad93d23594c935a9) in the reflected
// form Go's crc64 takes.
var crcTable = crc64.MakeTable(0x95ac9329ac4bc9b5)

// redisCRC64 is crc64.c's crc64(0, p): reflected, no initial or final
// inversion (Go's crc64 inverts both, hence the complements).
func redisCRC64(p []byte) uint64 { return ^crc64.Update(^uint64(0), crcTable, p) }

// verifyDumpPayload is cluster.c's: a version we know and a good CRC. It
// returns what the loader reads: the whole payload, as Redis's loader
// reads from the whole buffer (an object whose last string runs into the
// trailer loads there too).
func verifyDumpPayload(p []byte) ([]byte, bool) {
	if len(p) < 10 {
		return nil, false
	}
	footer := p[len(p)-10:]
	if ver := binary.LittleEndian.Uint16(footer); ver > rdbVersion {
		return nil, false
	}
	if redisCRC64(p[:len(p)-8]) != binary.LittleEndian.Uint64(footer[2:]) {
		return nil, false
	}
	return p, true
}

// ---- writing ----

// rdbWriter appends RDB encodings to b.
type rdbWriter struct{ b []byte }

func (w *rdbWriter) byte(c byte) { w.b = append(w.b, c) }

// len is rdbSaveLen.
func (w *rdbWriter) len(n uint64) {
	switch {
	case n < 1<<6:
		w.b = append(w.b, byte(n))
	case n < 1<<14:
		w.b = append(w.b, byte(n>>8)|rdb14BitLen<<6, byte(n))
	case n <= math.MaxUint32:
		w.b = append(w.b, rdb32BitLen)
		w.b = binary.BigEndian.AppendUint32(w.b, uint32(n))
	default:
		w.b = append(w.b, rdb64BitLen)
		w.b = binary.BigEndian.AppendUint64(w.b, n)
	}
}

// intEncoding is rdbEncodeInteger: v in the smallest of the 8, 16 and 32
// bit encodings, or false.
func (w *rdbWriter) intEncoding(v int64) bool {
	switch {
	case v >= math.MinInt8 && v <= math.MaxInt8:
		w.b = append(w.b, rdbEncVal<<6|rdbEncInt8, byte(v))
	case v >= math.MinInt16 && v <= math.MaxInt16:
		w.b = append(w.b, rdbEncVal<<6|rdbEncInt16)
		w.b = binary.LittleEndian.AppendUint16(w.b, uint16(v))
	case v >= math.MinInt32 && v <= math.MaxInt32:
		w.b = append(w.b, rdbEncVal<<6|rdbEncInt32)
		w.b = binary.LittleEndian.AppendUint32(w.b, uint32(v))
	default:
		return false
	}
	return true
}

// str is rdbSaveRawString: an integer of up to 11 characters in an int
// encoding, a string of more than 20 bytes LZF-compressed when that saves
// at least 4 bytes, else the length and the bytes.
func (w *rdbWriter) str(s []byte) {
	if len(s) <= 11 {
		if v, ok := parseRedisInt(s); ok && w.intEncoding(v) {
			return
		}
	}
	if len(s) > 20 {
		if c := lzfCompress(s); c != nil {
			w.b = append(w.b, rdbEncVal<<6|rdbEncLZF)
			w.len(uint64(len(c)))
			w.len(uint64(len(s)))
			w.b = append(w.b, c...)
			return
		}
	}
	w.len(uint64(len(s)))
	w.b = append(w.b, s...)
}

func (w *rdbWriter) double(f float64) {
	w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(f))
}

func (w *rdbWriter) millis(ms int64) { w.b = binary.LittleEndian.AppendUint64(w.b, uint64(ms)) }

func (w *rdbWriter) streamID(id StreamID) {
	w.b = binary.BigEndian.AppendUint64(w.b, id.Ms)
	w.b = binary.BigEndian.AppendUint64(w.b, id.Seq)
}

// dumpPayload is createDumpPayload: e's value serialized, with trailer.
func dumpPayload(e entry) []byte {
	w := &rdbWriter{}
	switch e.kind() {
	case kindString:
		w.byte(rdbTypeString)
		w.str(e.bytes())
	case kindList:
		dumpList(w, e.box().o.(*List))
	case kindHash:
		dumpHash(w, e.box().o.(*Hash))
	case kindSet:
		dumpSet(w, e.box().o.(*Set))
	case kindZSet:
		dumpZSet(w, e.box().o.(*ZSet))
	case kindStream:
		dumpStream(w, e.box().o.(*Stream))
	}
	return dumpTrailer(w.b)
}

// dumpTrailer appends a DUMP payload's trailer to b: the RDB version and
// the CRC64 of everything before it (DUMP's and FUNCTION DUMP's).
func dumpTrailer(b []byte) []byte {
	b = binary.LittleEndian.AppendUint16(b, rdbVersion)
	return binary.LittleEndian.AppendUint64(b, redisCRC64(b))
}

// dumpList writes a quicklist of listpack nodes, split where Redis 7.0
// splits an RPUSHed list at list-max-listpack-size -2 (8 KB nodes).
func dumpList(w *rdbWriter, l *List) {
	w.byte(rdbTypeListQuicklist2)
	var nodes [][]byte
	var lp lpBuilder
	for i := 0; i < l.n; i++ {
		v := l.buf[l.slot(i)]
		// quicklistNodeExceedsLimit: the node's bytes (with its end
		// byte) plus the element plus SIZE_ESTIMATE_OVERHEAD.
		if lp.n > 0 && len(lp.b)+1+len(v)+8 > quicklistSizeLimit {
			nodes = append(nodes, lp.finish())
			lp = lpBuilder{}
		}
		lp.appendString(stringView(v))
	}
	if lp.n > 0 {
		nodes = append(nodes, lp.finish())
	}
	w.len(uint64(len(nodes)))
	for _, n := range nodes {
		w.len(quicklistNodePacked)
		w.str(n)
	}
}

func dumpHash(w *rdbWriter, h *Hash) {
	if h.m == nil {
		w.byte(rdbTypeHashListpack)
		var lp lpBuilder
		h.EachBytes(func(f, v []byte) bool {
			lp.appendString(f)
			lp.appendString(v)
			return true
		})
		w.str(lp.finish())
		return
	}
	w.byte(rdbTypeHash)
	w.len(uint64(len(h.m)))
	for f, v := range h.m {
		w.str(stringView(f))
		w.str(stringView(v))
	}
}

func dumpSet(w *rdbWriter, s *Set) {
	if s.idx == nil {
		w.byte(rdbTypeSetIntset)
		w.str(intsetBytes(s.ints))
		return
	}
	w.byte(rdbTypeSet)
	w.len(uint64(len(s.members)))
	for _, m := range s.members {
		w.str(stringView(m))
	}
}

// intsetBytes is intset.c's layout of sorted values: the width (2, 4 or 8
// bytes, the smallest that holds them all), the count, the values, all
// little-endian.
func intsetBytes(vals []int64) []byte {
	width := 2
	for _, v := range vals {
		if v < math.MinInt32 || v > math.MaxInt32 {
			width = 8
			break
		}
		if v < math.MinInt16 || v > math.MaxInt16 {
			width = 4
		}
	}
	b := make([]byte, 0, 8+width*len(vals))
	b = binary.LittleEndian.AppendUint32(b, uint32(width))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(vals)))
	for _, v := range vals {
		switch width {
		case 2:
			b = binary.LittleEndian.AppendUint16(b, uint16(v))
		case 4:
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		default:
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
	}
	return b
}

func dumpZSet(w *rdbWriter, z *ZSet) {
	if !z.isBig() {
		w.byte(rdbTypeZSetListpack)
		var lp lpBuilder
		var num []byte
		for _, m := range z.small {
			lp.appendString(stringView(m.Member))
			num = resp.AppendFloat(num[:0], m.Score) // d2string
			lp.appendString(num)
		}
		w.str(lp.finish())
		return
	}
	// From the tail, as Redis writes it so loading inserts at the head.
	w.byte(rdbTypeZSet2)
	w.len(uint64(z.b.zsl.length))
	for x := z.b.zsl.tail; x != nil; x = x.backward {
		w.str(stringView(x.member))
		w.double(x.score)
	}
}

// dumpStream writes RDB_TYPE_STREAM_LISTPACKS_2: the live entries in
// listpack nodes of up to 100 (Redis's layout: a master entry with the
// first entry's fields, then each entry as deltas from the master ID,
// SAMEFIELDS when its fields are the master's), then the stream's
// metadata and its consumer groups.
func dumpStream(w *rdbWriter, s *Stream) {
	w.byte(rdbTypeStreamListpacks2)
	entries := s.Range(StreamID{}, StreamID{math.MaxUint64, math.MaxUint64}, -1, false)
	nodes := (len(entries) + streamNodeMaxEntries - 1) / streamNodeMaxEntries
	w.len(uint64(nodes))
	var fields [][]byte
	for start := 0; start < len(entries); start += streamNodeMaxEntries {
		chunk := entries[start:min(start+streamNodeMaxEntries, len(entries))]
		master := chunk[0].ID
		var masterFields [][]byte
		var lp lpBuilder
		for k, e := range chunk {
			fields = fields[:0]
			e.eachField(func(f []byte) { fields = append(fields, f) })
			pairs := len(fields) / 2
			if k == 0 {
				for i := 0; i < pairs; i++ {
					masterFields = append(masterFields, fields[2*i])
				}
				lp.appendInt(int64(len(chunk)))
				lp.appendInt(0)
				lp.appendInt(int64(pairs))
				for _, f := range masterFields {
					lp.appendString(f)
				}
				lp.appendInt(0)
			}
			same := pairs == len(masterFields)
			for i := 0; same && i < pairs; i++ {
				same = string(fields[2*i]) == string(masterFields[i])
			}
			flags := int64(0)
			if same {
				flags = streamItemFlagSameFields
			}
			lp.appendInt(flags)
			lp.appendInt(int64(e.ID.Ms - master.Ms))
			lp.appendInt(int64(e.ID.Seq - master.Seq))
			if !same {
				lp.appendInt(int64(pairs))
			}
			for i := 0; i < pairs; i++ {
				if !same {
					lp.appendString(fields[2*i])
				}
				lp.appendString(fields[2*i+1])
			}
			count := int64(pairs) + 3
			if !same {
				count += int64(pairs) + 1
			}
			lp.appendInt(count)
		}
		var key rdbWriter
		key.streamID(master)
		w.str(key.b)
		w.str(lp.finish())
	}
	w.len(uint64(s.length))
	w.len(s.lastID.Ms)
	w.len(s.lastID.Seq)
	var first StreamID
	if len(entries) > 0 {
		first = entries[0].ID
	}
	w.len(first.Ms)
	w.len(first.Seq)
	w.len(s.maxDeleted.Ms)
	w.len(s.maxDeleted.Seq)
	w.len(s.added)
	w.len(uint64(len(s.groups)))
	for _, g := range s.groups {
		w.str(stringView(g.name))
		w.len(g.lastID.Ms)
		w.len(g.lastID.Seq)
		w.len(uint64(g.entriesRead))
		w.len(uint64(len(g.pending)))
		for _, p := range g.pending {
			w.streamID(p.id)
			w.millis(p.deliveryTime)
			w.len(uint64(p.deliveryCount))
		}
		names := g.consumerNames()
		w.len(uint64(len(names)))
		for _, n := range names {
			cons := g.consumers[n]
			w.str(stringView(n))
			w.millis(cons.seenTime)
			w.len(uint64(len(cons.pending)))
			for _, p := range cons.pending {
				w.streamID(p.id)
			}
		}
	}
}

// ---- listpack ----

// lpBuilder writes a listpack (listpack.c): a 6-byte header (total bytes,
// element count), the elements, 0xFF.
type lpBuilder struct {
	b []byte
	n int
}

// appendString is lpAppend: a string that is a canonical int64 is stored
// as an integer, as lpEncodeGetType decides.
func (lp *lpBuilder) appendString(s []byte) {
	if len(s) <= 20 {
		if v, ok := parseRedisInt(s); ok {
			lp.appendInt(v)
			return
		}
	}
	lp.start()
	at := len(lp.b)
	switch n := len(s); {
	case n < 64:
		lp.b = append(lp.b, 0x80|byte(n))
	case n < 4096:
		lp.b = append(lp.b, 0xE0|byte(n>>8), byte(n))
	default:
		lp.b = append(lp.b, 0xF0)
		lp.b = binary.LittleEndian.AppendUint32(lp.b, uint32(n))
	}
	lp.b = append(lp.b, s...)
	lp.backlen(len(lp.b) - at)
}

// appendInt is lpAppendInteger: the smallest integer encoding.
func (lp *lpBuilder) appendInt(v int64) {
	lp.start()
	at := len(lp.b)
	switch {
	case v >= 0 && v <= 127:
		lp.b = append(lp.b, byte(v))
	case v >= -4096 && v <= 4095:
		u := uint64(v) & (1<<13 - 1)
		lp.b = append(lp.b, 0xC0|byte(u>>8), byte(u))
	case v >= math.MinInt16 && v <= math.MaxInt16:
		lp.b = append(lp.b, 0xF1)
		lp.b = binary.LittleEndian.AppendUint16(lp.b, uint16(v))
	case v >= -1<<23 && v < 1<<23:
		u := uint32(v)
		lp.b = append(lp.b, 0xF2, byte(u), byte(u>>8), byte(u>>16))
	case v >= math.MinInt32 && v <= math.MaxInt32:
		lp.b = append(lp.b, 0xF3)
		lp.b = binary.LittleEndian.AppendUint32(lp.b, uint32(v))
	default:
		lp.b = append(lp.b, 0xF4)
		lp.b = binary.LittleEndian.AppendUint64(lp.b, uint64(v))
	}
	lp.backlen(len(lp.b) - at)
}

func (lp *lpBuilder) start() {
	if lp.b == nil {
		lp.b = make([]byte, 6, 64)
	}
	lp.n++
}

// backlen is lpEncodeBacklen: the entry's length, readable backwards.
func (lp *lpBuilder) backlen(l int) {
	switch {
	case l <= 127:
		lp.b = append(lp.b, byte(l))
	case l < 16383:
		lp.b = append(lp.b, byte(l>>7), byte(l&127)|128)
	case l < 2097151:
		lp.b = append(lp.b, byte(l>>14), byte((l>>7)&127)|128, byte(l&127)|128)
	case l < 268435455:
		lp.b = append(lp.b, byte(l>>21), byte((l>>14)&127)|128, byte((l>>7)&127)|128, byte(l&127)|128)
	default:
		lp.b = append(lp.b, byte(l>>28), byte((l>>21)&127)|128, byte((l>>14)&127)|128, byte((l>>7)&127)|128, byte(l&127)|128)
	}
}

func (lp *lpBuilder) finish() []byte {
	if lp.b == nil {
		lp.b = make([]byte, 6, 7)
	}
	lp.b = append(lp.b, 0xFF)
	binary.LittleEndian.PutUint32(lp.b, uint32(len(lp.b)))
	n := lp.n
	if n > 65535 {
		n = 65535
	}
	binary.LittleEndian.PutUint16(lp.b[4:], uint16(n))
	return lp.b
}

// lpElem is one element read from a listpack or ziplist: a string (s
// non-nil or isInt false) or an integer.
type lpElem struct {
	s     []byte
	v     int64
	isInt bool
}

// bytes returns the element as a string (an integer in decimal).
func (e lpElem) bytes() []byte {
	if e.isInt {
		return strconv.AppendInt(nil, e.v, 10)
	}
	return e.s
}

// int returns the element as an integer, as lpGetInteger would.
func (e lpElem) int() (int64, bool) {
	if e.isInt {
		return e.v, true
	}
	return parseRedisInt(e.s)
}

// parseListpack decodes every element of a listpack, checking the header
// against the blob and every entry against what is left of it.
func parseListpack(b []byte) ([]lpElem, error) {
	if len(b) < 7 || binary.LittleEndian.Uint32(b) != uint32(len(b)) || b[len(b)-1] != 0xFF {
		return nil, errBadData
	}
	count := int(binary.LittleEndian.Uint16(b[4:]))
	out := make([]lpElem, 0, min(count, len(b)))
	p := 6
	end := len(b) - 1
	for p < end {
		c := b[p]
		var e lpElem
		var n int // bytes of encoding and data
		need := func(k int) bool { return k <= end-p }
		switch {
		case c&0x80 == 0:
			e, n = lpElem{v: int64(c), isInt: true}, 1
		case c&0xC0 == 0x80:
			l := int(c & 0x3F)
			if !need(1 + l) {
				return nil, errBadData
			}
			e, n = lpElem{s: b[p+1 : p+1+l]}, 1+l
		case c&0xE0 == 0xC0:
			if !need(2) {
				return nil, errBadData
			}
			u := uint64(c&0x1F)<<8 | uint64(b[p+1])
			v := int64(u)
			if u >= 1<<12 {
				v = int64(u) - 1<<13
			}
			e, n = lpElem{v: v, isInt: true}, 2
		case c&0xF0 == 0xE0:
			if !need(2) {
				return nil, errBadData
			}
			l := int(c&0x0F)<<8 | int(b[p+1])
			if !need(2 + l) {
				return nil, errBadData
			}
			e, n = lpElem{s: b[p+2 : p+2+l]}, 2+l
		case c == 0xF0:
			if !need(5) {
				return nil, errBadData
			}
			l := uint64(binary.LittleEndian.Uint32(b[p+1:]))
			if l > uint64(end-p-5) {
				return nil, errBadData
			}
			e, n = lpElem{s: b[p+5 : p+5+int(l)]}, 5+int(l)
		case c == 0xF1:
			if !need(3) {
				return nil, errBadData
			}
			e, n = lpElem{v: int64(int16(binary.LittleEndian.Uint16(b[p+1:]))), isInt: true}, 3
		case c == 0xF2:
			if !need(4) {
				return nil, errBadData
			}
			u := uint32(b[p+1]) | uint32(b[p+2])<<8 | uint32(b[p+3])<<16
			e, n = lpElem{v: int64(int32(u<<8) >> 8), isInt: true}, 4
		case c == 0xF3:
			if !need(5) {
				return nil, errBadData
			}
			e, n = lpElem{v: int64(int32(binary.LittleEndian.Uint32(b[p+1:]))), isInt: true}, 5
		case c == 0xF4:
			if !need(9) {
				return nil, errBadData
			}
			e, n = lpElem{v: int64(binary.LittleEndian.Uint64(b[p+1:])), isInt: true}, 9
		default:
			return nil, errBadData
		}
		if e.s == nil && !e.isInt {
			e.s = []byte{}
		}
		bl := backlenSize(n)
		if !need(n + bl) {
			return nil, errBadData
		}
		p += n + bl
		out = append(out, e)
	}
	if count != 65535 && count != len(out) {
		return nil, errBadData
	}
	return out, nil
}

// backlenSize is how many bytes lpEncodeBacklen takes for l.
func backlenSize(l int) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

// parseZiplist decodes a ziplist (ziplist.c), the encoding of Redis
// before 7.0, still loaded from old payloads.
func parseZiplist(b []byte) ([]lpElem, error) {
	if len(b) < 11 || binary.LittleEndian.Uint32(b) != uint32(len(b)) || b[len(b)-1] != 0xFF {
		return nil, errBadData
	}
	count := int(binary.LittleEndian.Uint16(b[8:]))
	out := make([]lpElem, 0, min(count, len(b)))
	p, end := 10, len(b)-1
	for p < end {
		// prevlen
		if b[p] < 254 {
			p++
		} else {
			if end-p < 5 {
				return nil, errBadData
			}
			p += 5
		}
		if p >= end {
			return nil, errBadData
		}
		c := b[p]
		need := func(k int) bool { return k <= end-p }
		var e lpElem
		var n int
		switch {
		case c>>6 == 0:
			l := int(c & 0x3F)
			if !need(1 + l) {
				return nil, errBadData
			}
			e, n = lpElem{s: b[p+1 : p+1+l]}, 1+l
		case c>>6 == 1:
			if !need(2) {
				return nil, errBadData
			}
			l := int(c&0x3F)<<8 | int(b[p+1])
			if !need(2 + l) {
				return nil, errBadData
			}
			e, n = lpElem{s: b[p+2 : p+2+l]}, 2+l
		case c == 0x80:
			if !need(5) {
				return nil, errBadData
			}
			l := uint64(binary.BigEndian.Uint32(b[p+1:]))
			if l > uint64(end-p-5) {
				return nil, errBadData
			}
			e, n = lpElem{s: b[p+5 : p+5+int(l)]}, 5+int(l)
		case c == 0xC0:
			if !need(3) {
				return nil, errBadData
			}
			e, n = lpElem{v: int64(int16(binary.LittleEndian.Uint16(b[p+1:]))), isInt: true}, 3
		case c == 0xD0:
			if !need(5) {
				return nil, errBadData
			}
			e, n = lpElem{v: int64(int32(binary.LittleEndian.Uint32(b[p+1:]))), isInt: true}, 5
		case c == 0xE0:
			if !need(9) {
				return nil, errBadData
			}
			e, n = lpElem{v: int64(binary.LittleEndian.Uint64(b[p+1:])), isInt: true}, 9
		case c == 0xF0:
			if !need(4) {
				return nil, errBadData
			}
			u := uint32(b[p+1]) | uint32(b[p+2])<<8 | uint32(b[p+3])<<16
			e, n = lpElem{v: int64(int32(u<<8) >> 8), isInt: true}, 4
		case c == 0xFE:
			if !need(2) {
				return nil, errBadData
			}
			e, n = lpElem{v: int64(int8(b[p+1])), isInt: true}, 2
		case c >= 0xF1 && c <= 0xFD:
			e, n = lpElem{v: int64(c&0x0F) - 1, isInt: true}, 1
		default:
			return nil, errBadData
		}
		if e.s == nil && !e.isInt {
			e.s = []byte{}
		}
		p += n
		out = append(out, e)
	}
	if count != 65535 && count != len(out) {
		return nil, errBadData
	}
	return out, nil
}

// parseIntset decodes an intset blob: sorted, distinct values of one width.
func parseIntset(b []byte) ([]int64, error) {
	if len(b) < 8 {
		return nil, errBadData
	}
	width := binary.LittleEndian.Uint32(b)
	n := uint64(binary.LittleEndian.Uint32(b[4:]))
	if width != 2 && width != 4 && width != 8 || n*uint64(width) != uint64(len(b)-8) || n == 0 {
		return nil, errBadData
	}
	out := make([]int64, n)
	for i := range out {
		p := 8 + i*int(width)
		switch width {
		case 2:
			out[i] = int64(int16(binary.LittleEndian.Uint16(b[p:])))
		case 4:
			out[i] = int64(int32(binary.LittleEndian.Uint32(b[p:])))
		default:
			out[i] = int64(binary.LittleEndian.Uint64(b[p:]))
		}
		if i > 0 && out[i] <= out[i-1] {
			return nil, errBadData
		}
	}
	return out, nil
}

// ---- LZF ----

// lzfDecompress is lzf_d.c's decoder into exactly ulen bytes: literal
// runs (a control byte below 32: that many plus one bytes follow) and
// back references (length in the top three bits, seven meaning another
// length byte follows; offset in the low five bits and the next byte).
func lzfDecompress(in []byte, ulen int) ([]byte, error) {
	out := make([]byte, 0, ulen)
	for ip := 0; ip < len(in); {
		ctrl := int(in[ip])
		ip++
		if ctrl < 32 {
			n := ctrl + 1
			if n > len(in)-ip || n > ulen-len(out) {
				return nil, errBadData
			}
			out = append(out, in[ip:ip+n]...)
			ip += n
			continue
		}
		n := ctrl >> 5
		if n == 7 {
			if ip >= len(in) {
				return nil, errBadData
			}
			n += int(in[ip])
			ip++
		}
		if ip >= len(in) {
			return nil, errBadData
		}
		ref := len(out) - (ctrl&0x1f)<<8 - int(in[ip]) - 1
		ip++
		n += 2
		if ref < 0 || n > ulen-len(out) {
			return nil, errBadData
		}
		for i := 0; i < n; i++ { // may overlap: byte by byte
			out = append(out, out[ref+i])
		}
	}
	if len(out) != ulen {
		return nil, errBadData
	}
	return out, nil
}

// lzfState is lzf_c.c's hash table of positions (plus one; 0 is empty),
// pooled, with the slots a call set so the next call clears only those.
type lzfState struct {
	htab    [1 << lzfHLog]int32
	touched []uint16
}

const lzfHLog = 16 // Redis's lzfP.h HLOG

var lzfStates = sync.Pool{New: func() any { return new(lzfState) }}

// lzfCompress is lzf_c.c's lzf_compress (liblzf 3.6, as Redis 7.0 ships
// it: HLOG 16, VERY_FAST; later Redis versions added a check that no
// match starts in the last 4 bytes), with out_len len(in)-4 as rdbSaveLzfStringObject passes
// it: nil when the result would not fit (not worth compressing). Redis
// leaves its table uninitialised; ours starts empty, which is what a
// fresh redis-server does, so the bytes usually match redis-server's.
func lzfCompress(in []byte) []byte {
	const (
		maxLit = 1 << 5
		maxOff = 1 << 13
		maxRef = (1 << 8) + (1 << 3)
	)
	inLen := len(in)
	if inLen <= 4 {
		return nil
	}
	outLen := inLen - 4
	st := lzfStates.Get().(*lzfState)
	defer func() {
		for _, i := range st.touched {
			st.htab[i] = 0
		}
		st.touched = st.touched[:0]
		lzfStates.Put(st)
	}()
	set := func(h uint32, pos int) {
		i := uint16(((h >> (3*8 - lzfHLog)) - h*5) & (1<<lzfHLog - 1))
		st.htab[i] = int32(pos + 1)
		st.touched = append(st.touched, i)
	}
	out := make([]byte, outLen+8)
	ip, op, lit := 0, 1, 0 // op 1: start a literal run
	hval := uint32(in[0])<<8 | uint32(in[1])
	for ip < inLen-2 {
		hval = hval<<8 | uint32(in[ip+2])
		slot := uint16(((hval >> (3*8 - lzfHLog)) - hval*5) & (1<<lzfHLog - 1))
		ref := int(st.htab[slot]) - 1
		st.htab[slot] = int32(ip + 1)
		st.touched = append(st.touched, slot)
		off := ip - ref - 1
		if ref > 0 && off < maxOff &&
			in[ref] == in[ip] && in[ref+1] == in[ip+1] && in[ref+2] == in[ip+2] {
			l := 2
			maxlen := min(inLen-ip-l, maxRef)
			empty := 0
			if lit == 0 {
				empty = 1
			}
			if op-empty+3+1 >= outLen {
				return nil
			}
			out[op-lit-1] = byte(lit - 1) // stop the run
			op -= empty                   // undo an empty run
			all := maxlen > 16
			for k := 0; all && k < 16; k++ {
				l++
				all = in[ref+l] == in[ip+l]
			}
			if all || maxlen <= 16 {
				for {
					l++
					if !(l < maxlen && in[ref+l] == in[ip+l]) {
						break
					}
				}
			}
			l -= 2 // the length minus one
			ip++
			if l < 7 {
				out[op] = byte(off>>8) + byte(l<<5)
				op++
			} else {
				out[op] = byte(off>>8) + 7<<5
				out[op+1] = byte(l - 7)
				op += 2
			}
			out[op] = byte(off)
			op++
			lit = 0
			op++ // start a run
			ip += l + 1
			if ip >= inLen-2 {
				break
			}
			ip -= 2
			hval = uint32(in[ip])<<8 | uint32(in[ip+1])
			hval = hval<<8 | uint32(in[ip+2])
			set(hval, ip)
			ip++
			hval = hval<<8 | uint32(in[ip+2])
			set(hval, ip)
			ip++
			continue
		}
		if op >= outLen {
			return nil
		}
		out[op] = in[ip]
		lit++
		op++
		ip++
		if lit == maxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	if op+3 > outLen {
		return nil
	}
	for ip < inLen {
		out[op] = in[ip]
		lit++
		op++
		ip++
		if lit == maxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	out[op-lit-1] = byte(lit - 1)
	if lit == 0 {
		op--
	}
	return out[:op]
}

// ---- reading ----

// rdbReader reads RDB encodings from b; every read is bounded by b.
type rdbReader struct {
	b        []byte
	off      int
	inflated int // bytes LZF strings decompressed to so far
}

func (r *rdbReader) left() int { return len(r.b) - r.off }

func (r *rdbReader) read(n int) ([]byte, error) {
	if n < 0 || n > r.left() {
		return nil, errBadData
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p, nil
}

func (r *rdbReader) byte() (byte, error) {
	p, err := r.read(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

// lenOrEnc is rdbLoadLen with its isencoded flag: for an encoded string
// the low six bits say which encoding.
func (r *rdbReader) lenOrEnc() (n uint64, enc bool, err error) {
	c, err := r.byte()
	if err != nil {
		return 0, false, err
	}
	switch c >> 6 {
	case rdb6BitLen:
		return uint64(c & 0x3F), false, nil
	case rdb14BitLen:
		d, err := r.byte()
		return uint64(c&0x3F)<<8 | uint64(d), false, err
	case rdbEncVal:
		return uint64(c & 0x3F), true, nil
	}
	switch c {
	case rdb32BitLen:
		p, err := r.read(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(p)), false, nil
	case rdb64BitLen:
		p, err := r.read(8)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(p), false, nil
	}
	return 0, false, errBadData
}

// len reads a plain length.
func (r *rdbReader) len() (uint64, error) {
	n, enc, err := r.lenOrEnc()
	if err == nil && enc {
		err = errBadData
	}
	return n, err
}

// count reads an element count. Every element takes at least one byte,
// so a count beyond what is left is refused before any loop or
// allocation sized by it.
func (r *rdbReader) count() (int, error) {
	n, err := r.len()
	if err != nil {
		return 0, err
	}
	if n > uint64(r.left()) {
		return 0, errBadData
	}
	return int(n), nil
}

// str is rdbGenericLoadStringObject: a length and bytes, an integer
// encoding, or LZF. The result may alias the payload.
func (r *rdbReader) str() ([]byte, error) {
	n, enc, err := r.lenOrEnc()
	if err != nil {
		return nil, err
	}
	if !enc {
		if n > uint64(r.left()) {
			return nil, errBadData
		}
		return r.read(int(n))
	}
	switch n {
	case rdbEncInt8:
		p, err := r.read(1)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(nil, int64(int8(p[0])), 10), nil
	case rdbEncInt16:
		p, err := r.read(2)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(nil, int64(int16(binary.LittleEndian.Uint16(p))), 10), nil
	case rdbEncInt32:
		p, err := r.read(4)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(nil, int64(int32(binary.LittleEndian.Uint32(p))), 10), nil
	case rdbEncLZF:
		clen, err := r.len()
		if err != nil {
			return nil, err
		}
		ulen, err := r.len()
		if err != nil {
			return nil, err
		}
		if clen > uint64(r.left()) || ulen > uint64(maxRestoreInflate-r.inflated) || ulen > clen*lzfMaxRatio+64 {
			return nil, errBadData
		}
		r.inflated += int(ulen)
		c, _ := r.read(int(clen))
		return lzfDecompress(c, int(ulen))
	}
	return nil, errBadData
}

func (r *rdbReader) binDouble() (float64, error) {
	p, err := r.read(8)
	if err != nil {
		return 0, err
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(p)), nil
}

// textDouble is rdbLoadDoubleValue (the old ZSET type): a length byte,
// 253 nan, 254 inf, 255 -inf, else that many characters.
func (r *rdbReader) textDouble() (float64, error) {
	n, err := r.byte()
	if err != nil {
		return 0, err
	}
	switch n {
	case 253:
		return math.NaN(), nil
	case 254:
		return math.Inf(1), nil
	case 255:
		return math.Inf(-1), nil
	}
	p, err := r.read(int(n))
	if err != nil {
		return 0, err
	}
	return strconv.ParseFloat(string(p), 64)
}

func (r *rdbReader) millis() (int64, error) {
	p, err := r.read(8)
	if err != nil {
		return 0, err
	}
	return int64(binary.LittleEndian.Uint64(p)), nil
}

func (r *rdbReader) rawStreamID() (StreamID, error) {
	p, err := r.read(16)
	if err != nil {
		return StreamID{}, err
	}
	return StreamID{binary.BigEndian.Uint64(p), binary.BigEndian.Uint64(p[8:])}, nil
}

// loadPayload decodes a verified payload's object (verifyDumpPayload's
// result) into a keyspace value: the string (a copy) or the container.
// lim is the server's encoding thresholds, which decide the loaded
// value's encoding as Redis's loader converts after loading.
func loadPayload(obj []byte, lim *Tuning) (kind, []byte, object, error) {
	r := &rdbReader{b: obj}
	typ, err := r.byte()
	if err != nil {
		return kindNone, nil, nil, err
	}
	switch typ {
	case rdbTypeString:
		s, err := r.str()
		if err != nil {
			return kindNone, nil, nil, err
		}
		return kindString, append([]byte(nil), s...), nil, nil
	case rdbTypeList, rdbTypeListZiplist, rdbTypeListQuicklist, rdbTypeListQuicklist2:
		l, err := loadList(r, typ)
		return kindList, nil, l, err
	case rdbTypeSet, rdbTypeSetIntset:
		s, err := loadSet(r, typ, lim)
		return kindSet, nil, s, err
	case rdbTypeZSet, rdbTypeZSet2, rdbTypeZSetZiplist, rdbTypeZSetListpack:
		z, err := loadZSet(r, typ, lim)
		return kindZSet, nil, z, err
	case rdbTypeHash, rdbTypeHashZiplist, rdbTypeHashListpack:
		h, err := loadHash(r, typ, lim)
		return kindHash, nil, h, err
	case rdbTypeStreamListpacks, rdbTypeStreamListpacks2:
		s, err := loadStream(r, typ)
		return kindStream, nil, s, err
	}
	return kindNone, nil, nil, errBadData
}

// packed reads a string holding a listpack (or, for the old types, a
// ziplist) and decodes it.
func (r *rdbReader) packed(ziplist bool) ([]lpElem, error) {
	b, err := r.str()
	if err != nil {
		return nil, err
	}
	if ziplist {
		return parseZiplist(b)
	}
	return parseListpack(b)
}

func loadList(r *rdbReader, typ byte) (*List, error) {
	l := &List{}
	push := func(elems []lpElem) {
		for _, e := range elems {
			l.PushBack(string(e.bytes()))
		}
	}
	switch typ {
	case rdbTypeList:
		n, err := r.count()
		if err != nil {
			return nil, err
		}
		for ; n > 0; n-- {
			s, err := r.str()
			if err != nil {
				return nil, err
			}
			l.PushBack(string(s))
		}
	case rdbTypeListZiplist:
		elems, err := r.packed(true)
		if err != nil {
			return nil, err
		}
		push(elems)
	default:
		nodes, err := r.count()
		if err != nil {
			return nil, err
		}
		for ; nodes > 0; nodes-- {
			container := uint64(quicklistNodePacked)
			if typ == rdbTypeListQuicklist2 {
				if container, err = r.len(); err != nil {
					return nil, err
				}
			}
			switch container {
			case quicklistNodePlain:
				s, err := r.str()
				if err != nil {
					return nil, err
				}
				l.PushBack(string(s))
			case quicklistNodePacked:
				elems, err := r.packed(typ == rdbTypeListQuicklist)
				if err != nil {
					return nil, err
				}
				push(elems) // an empty node is skipped, as Redis does
			default:
				return nil, errBadData
			}
		}
	}
	if l.Len() == 0 {
		return nil, errBadData
	}
	return l, nil
}

func loadSet(r *rdbReader, typ byte, lim *Tuning) (*Set, error) {
	s := &Set{lim: lim}
	if typ == rdbTypeSetIntset {
		b, err := r.str()
		if err != nil {
			return nil, err
		}
		vals, err := parseIntset(b)
		if err != nil {
			return nil, err
		}
		if int64(len(vals)) <= lim.SetMaxIntsetEntries {
			s.ints = vals
			return s, nil
		}
		for _, v := range vals {
			s.Add(strconv.FormatInt(v, 10))
		}
		return s, nil
	}
	n, err := r.count()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errBadData
	}
	for ; n > 0; n-- {
		m, err := r.str()
		if err != nil {
			return nil, err
		}
		if !s.AddBytes(m) {
			return nil, errBadData // duplicate member
		}
	}
	return s, nil
}

func loadZSet(r *rdbReader, typ byte, lim *Tuning) (*ZSet, error) {
	z := &ZSet{lim: lim}
	add := func(member []byte, score float64) error {
		if math.IsNaN(score) {
			return errBadData
		}
		if _, dup := z.ScoreBytes(member); dup {
			return errBadData
		}
		z.Set(string(member), score)
		return nil
	}
	switch typ {
	case rdbTypeZSet, rdbTypeZSet2:
		n, err := r.count()
		if err != nil {
			return nil, err
		}
		if int64(n) > lim.ZSetMaxListpackEntries {
			z.toBig()
		}
		for ; n > 0; n-- {
			m, err := r.str()
			if err != nil {
				return nil, err
			}
			var score float64
			if typ == rdbTypeZSet2 {
				score, err = r.binDouble()
			} else {
				score, err = r.textDouble()
			}
			if err != nil {
				return nil, err
			}
			if err := add(m, score); err != nil {
				return nil, err
			}
		}
	default:
		elems, err := r.packed(typ == rdbTypeZSetZiplist)
		if err != nil {
			return nil, err
		}
		if len(elems)%2 != 0 {
			return nil, errBadData
		}
		for i := 0; i < len(elems); i += 2 {
			var score float64
			if e := elems[i+1]; e.isInt {
				score = float64(e.v)
			} else if score, err = strconv.ParseFloat(string(e.s), 64); err != nil {
				return nil, errBadData
			}
			if err := add(elems[i].bytes(), score); err != nil {
				return nil, err
			}
		}
	}
	if z.Len() == 0 {
		return nil, errBadData
	}
	return z, nil
}

func loadHash(r *rdbReader, typ byte, lim *Tuning) (*Hash, error) {
	h := &Hash{lim: lim}
	if typ == rdbTypeHash {
		n, err := r.count()
		if err != nil {
			return nil, err
		}
		if int64(n) > lim.HashMaxListpackEntries {
			h.toMap()
		}
		for ; n > 0; n-- {
			f, err := r.str()
			if err != nil {
				return nil, err
			}
			v, err := r.str()
			if err != nil {
				return nil, err
			}
			if !h.SetBytes(f, v) {
				return nil, errBadData // duplicate field
			}
		}
	} else {
		elems, err := r.packed(typ == rdbTypeHashZiplist)
		if err != nil {
			return nil, err
		}
		if len(elems)%2 != 0 {
			return nil, errBadData
		}
		for i := 0; i < len(elems); i += 2 {
			if !h.SetBytes(elems[i].bytes(), elems[i+1].bytes()) {
				return nil, errBadData
			}
		}
	}
	if h.Len() == 0 {
		return nil, errBadData
	}
	return h, nil
}

// loadStream reads RDB_TYPE_STREAM_LISTPACKS(_2). The entries must come in
// ascending ID order and number what the stream's length says; each
// pending entry of a consumer must be one of its group's, owned by no
// other consumer, and each of the group's must have a consumer.
func loadStream(r *rdbReader, typ byte) (*Stream, error) {
	s := &Stream{}
	nodes, err := r.count()
	if err != nil {
		return nil, err
	}
	var fields [][]byte
	for ; nodes > 0; nodes-- {
		key, err := r.str()
		if err != nil {
			return nil, err
		}
		if len(key) != 16 {
			return nil, errBadData
		}
		master := StreamID{binary.BigEndian.Uint64(key), binary.BigEndian.Uint64(key[8:])}
		elems, err := r.packed(false)
		if err != nil {
			return nil, err
		}
		if err := loadStreamNode(s, master, elems, &fields); err != nil {
			return nil, err
		}
	}
	length, err := r.len()
	if err != nil {
		return nil, err
	}
	if length != uint64(s.length) {
		return nil, errBadData
	}
	var last StreamID
	if last.Ms, err = r.len(); err != nil {
		return nil, err
	}
	if last.Seq, err = r.len(); err != nil {
		return nil, err
	}
	if last.Less(s.lastID) {
		return nil, errBadData
	}
	s.lastID = last
	if typ >= rdbTypeStreamListpacks2 {
		var v [5]uint64
		for i := range v {
			if v[i], err = r.len(); err != nil {
				return nil, err
			}
		}
		s.maxDeleted = StreamID{v[2], v[3]}
		s.added = v[4]
	}
	groups, err := r.count()
	if err != nil {
		return nil, err
	}
	for ; groups > 0; groups-- {
		if err := loadStreamGroup(r, s, typ); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// loadStreamNode adds the live entries of one listpack node (t_stream.c's
// layout, see dumpStream).
func loadStreamNode(s *Stream, master StreamID, elems []lpElem, fields *[][]byte) error {
	p := 0
	next := func() (lpElem, bool) {
		if p >= len(elems) {
			return lpElem{}, false
		}
		p++
		return elems[p-1], true
	}
	nextInt := func() (int64, bool) {
		e, ok := next()
		if !ok {
			return 0, false
		}
		return e.int()
	}
	live, ok1 := nextInt()
	deleted, ok2 := nextInt()
	nmaster, ok3 := nextInt()
	if !ok1 || !ok2 || !ok3 || live < 0 || deleted < 0 || nmaster < 0 || nmaster > int64(len(elems)) {
		return errBadData
	}
	masterFields := elems[p : p+int(min(nmaster, int64(len(elems)-p)))]
	if int64(len(masterFields)) != nmaster {
		return errBadData
	}
	p += len(masterFields)
	if z, ok := nextInt(); !ok || z != 0 {
		return errBadData
	}
	var seen, alive int64
	for p < len(elems) {
		flags, ok1 := nextInt()
		dms, ok2 := nextInt()
		dseq, ok3 := nextInt()
		if !ok1 || !ok2 || !ok3 {
			return errBadData
		}
		id := StreamID{master.Ms + uint64(dms), master.Seq + uint64(dseq)}
		*fields = (*fields)[:0]
		var pairs int64
		if flags&streamItemFlagSameFields != 0 {
			pairs = nmaster
			for i := int64(0); i < pairs; i++ {
				v, ok := next()
				if !ok {
					return errBadData
				}
				*fields = append(*fields, masterFields[i].bytes(), v.bytes())
			}
		} else {
			n, ok := nextInt()
			if !ok || n < 0 || n > int64(len(elems)) {
				return errBadData
			}
			pairs = n
			for i := int64(0); i < pairs; i++ {
				f, ok1 := next()
				v, ok2 := next()
				if !ok1 || !ok2 {
					return errBadData
				}
				*fields = append(*fields, f.bytes(), v.bytes())
			}
		}
		if _, ok := nextInt(); !ok { // lp-count
			return errBadData
		}
		seen++
		if flags&streamItemFlagDeleted != 0 {
			continue
		}
		if s.length > 0 && !s.lastID.Less(id) {
			return errBadData
		}
		addEntry(s, id, *fields)
		alive++
	}
	if alive != live || seen != live+deleted || seen == 0 {
		return errBadData
	}
	return nil
}

func loadStreamGroup(r *rdbReader, s *Stream, typ byte) error {
	name, err := r.str()
	if err != nil {
		return err
	}
	var last StreamID
	if last.Ms, err = r.len(); err != nil {
		return err
	}
	if last.Seq, err = r.len(); err != nil {
		return err
	}
	entriesRead := int64(invalidEntriesRead)
	if typ >= rdbTypeStreamListpacks2 {
		v, err := r.len()
		if err != nil {
			return err
		}
		entriesRead = int64(v)
	} else {
		entriesRead = s.estimateEntriesRead(last)
	}
	if !s.createGroup(name, last, entriesRead) {
		return errBadData
	}
	g := s.group(name)
	npel, err := r.count()
	if err != nil {
		return err
	}
	for ; npel > 0; npel-- {
		id, err := r.rawStreamID()
		if err != nil {
			return err
		}
		t, err := r.millis()
		if err != nil {
			return err
		}
		n, err := r.len()
		if err != nil {
			return err
		}
		if _, dup := g.pending.find(id); dup {
			return errBadData
		}
		g.pending.insert(&pendingEntry{id: id, deliveryTime: t, deliveryCount: int64(n)})
	}
	ncons, err := r.count()
	if err != nil {
		return err
	}
	for ; ncons > 0; ncons-- {
		cname, err := r.str()
		if err != nil {
			return err
		}
		seen, err := r.millis()
		if err != nil {
			return err
		}
		if g.consumers[string(cname)] != nil {
			return errBadData
		}
		cons := &streamConsumer{name: string(cname), seenTime: seen}
		g.consumers[cons.name] = cons
		n, err := r.count()
		if err != nil {
			return err
		}
		for ; n > 0; n-- {
			id, err := r.rawStreamID()
			if err != nil {
				return err
			}
			i, found := g.pending.find(id)
			if !found || g.pending[i].consumer != nil {
				return errBadData
			}
			g.pending[i].consumer = cons
			cons.pending.insert(g.pending[i])
		}
	}
	for _, p := range g.pending {
		if p.consumer == nil {
			return errBadData
		}
	}
	return nil
}
