package server

import (
	"encoding/binary"
	"maps"
	"slices"
	"unsafe"
)

// A hash keeps its fields in insertion order in one packed byte slice,
// like Redis's listpack encoding, while within hash-max-listpack-entries
// and hash-max-listpack-value (Tuning; Redis 7.0's built-in defaults are
// 512 and 64, though the redis.conf it ships sets 128 entries). Matching
// them makes HGETALL, HKEYS and HVALS return small hashes in the same
// order as Redis, and a small hash costs one allocation instead of a
// slice of string headers plus one allocation per field and value.

// Hash is the value of a Redis hash key. While small it is lp, fields and
// values in insertion order, each encoded as a uvarint length and the
// bytes, scanned linearly as Redis scans its listpack. It becomes a map
// once it outgrows HashMaxListpackEntries or holds a longer string (and never
// goes back, as in Redis).
type Hash struct {
	lp    []byte
	n     int // fields in lp
	m     map[string]string
	bytes int // sum of field and value lengths, for memUsage
	// lim is the server's thresholds (nil: Redis's defaults), read when
	// a field is added, so CONFIG SET applies to later conversions.
	lim *Tuning
}

func (h *Hash) limits() *Tuning {
	if h.lim == nil {
		return &defaultTuning
	}
	return h.lim
}

// memUsage approximates the bytes the hash holds: the packed slice, or
// data plus per-field map overhead once converted.
func (h *Hash) memUsage() int {
	if h.m != nil {
		return h.bytes + 64*len(h.m) + 48
	}
	return cap(h.lp) + 48
}

// Len returns the number of fields.
func (h *Hash) Len() int {
	if h.m != nil {
		return len(h.m)
	}
	return h.n
}

// lpString decodes the string at off in lp and returns it with the offset
// after it.
func lpString(lp []byte, off int) ([]byte, int) {
	l, k := binary.Uvarint(lp[off:])
	start := off + k
	return lp[start : start+int(l)], start + int(l)
}

func lpAppend[T ~string | ~[]byte](lp []byte, s T) []byte {
	lp = binary.AppendUvarint(lp, uint64(len(s)))
	return append(lp, s...)
}

// hashFind locates field in the packed encoding: the entry's start, its
// value's start and the entry's end. Comparing string(b) with a string
// does not allocate, so []byte arguments are looked up as they are.
func hashFind[T ~string | ~[]byte](h *Hash, field T) (start, val, end int, ok bool) {
	for off := 0; off < len(h.lp); {
		f, v := lpString(h.lp, off)
		_, e := lpString(h.lp, v)
		if string(f) == string(field) {
			return off, v, e, true
		}
		off = e
	}
	return 0, 0, 0, false
}

// stringView returns s's bytes without copying, for handing a stored
// string to the reply writer, which only reads it. Never write to it.
func stringView(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// Get returns the value of field.
func (h *Hash) Get(field string) (string, bool) {
	v, ok := hashGet(h, field)
	return string(v), ok
}

// GetBytes is Get without allocating; the slice aliases the hash (or a
// copy of the map's string) and is valid until the hash is modified.
func (h *Hash) GetBytes(field []byte) ([]byte, bool) { return hashGet(h, field) }

func hashGet[T ~string | ~[]byte](h *Hash, field T) ([]byte, bool) {
	if h.m != nil {
		v, ok := h.m[string(field)]
		return stringView(v), ok
	}
	_, vo, _, ok := hashFind(h, field)
	if !ok {
		return nil, false
	}
	v, _ := lpString(h.lp, vo)
	return v, true
}

// Set sets field to value and reports whether the field is new.
func (h *Hash) Set(field, value string) bool { return hashSet(h, field, value) }

// SetBytes is Set for argument slices: it copies them into the hash, and
// costs nothing when the field already holds value (HSET of the same pair
// over and over, as redis-benchmark does).
func (h *Hash) SetBytes(field, value []byte) bool { return hashSet(h, field, value) }

func hashSet[T ~string | ~[]byte](h *Hash, field, value T) bool {
	if h.m != nil {
		old, exists := h.m[string(field)]
		if exists && old == string(value) {
			return false
		}
		if exists {
			h.bytes += len(value) - len(old)
		} else {
			h.bytes += len(field) + len(value)
		}
		h.m[string(field)] = string(value)
		return !exists
	}
	lim := h.limits()
	if int64(len(field)) > lim.HashMaxListpackValue || int64(len(value)) > lim.HashMaxListpackValue {
		h.toMap()
		return hashSet(h, field, value)
	}
	if _, vo, end, ok := hashFind(h, field); ok {
		old, _ := lpString(h.lp, vo)
		if string(old) == string(value) {
			return false
		}
		h.bytes += len(value) - len(old)
		// Replace the value in place: the field keeps its position.
		enc := lpAppend(make([]byte, 0, len(value)+2), value)
		h.lp = slices.Replace(h.lp, vo, end, enc...)
		return false
	}
	if int64(h.n+1) > lim.HashMaxListpackEntries {
		h.toMap()
		return hashSet(h, field, value)
	}
	h.lp = lpAppend(lpAppend(h.lp, field), value)
	h.n++
	h.bytes += len(field) + len(value)
	return true
}

// toMap converts the packed encoding to the map.
func (h *Hash) toMap() {
	h.m = make(map[string]string, h.n+1)
	for off := 0; off < len(h.lp); {
		f, v := lpString(h.lp, off)
		val, e := lpString(h.lp, v)
		h.m[string(f)] = string(val)
		off = e
	}
	h.lp, h.n = nil, 0
}

// Delete removes field and reports whether it existed.
func (h *Hash) Delete(field string) bool { return hashDelete(h, field) }

// DeleteBytes is Delete for an argument slice, without allocating.
func (h *Hash) DeleteBytes(field []byte) bool { return hashDelete(h, field) }

func hashDelete[T ~string | ~[]byte](h *Hash, field T) bool {
	if h.m != nil {
		old, ok := h.m[string(field)]
		if !ok {
			return false
		}
		h.bytes -= len(field) + len(old)
		delete(h.m, string(field))
		return true
	}
	start, vo, end, ok := hashFind(h, field)
	if !ok {
		return false
	}
	v, _ := lpString(h.lp, vo)
	h.bytes -= len(field) + len(v)
	h.lp = slices.Delete(h.lp, start, end)
	h.n--
	return true
}

// EachBytes calls fn for every field in the hash's order until fn returns
// false. The slices are valid during the call only.
func (h *Hash) EachBytes(fn func(field, value []byte) bool) {
	if h.m != nil {
		for f, v := range h.m {
			if !fn(stringView(f), stringView(v)) {
				return
			}
		}
		return
	}
	for off := 0; off < len(h.lp); {
		f, vo := lpString(h.lp, off)
		v, e := lpString(h.lp, vo)
		if !fn(f, v) {
			return
		}
		off = e
	}
}

// Each is EachBytes with strings (it allocates; for tests and conversions).
func (h *Hash) Each(fn func(field, value string) bool) {
	h.EachBytes(func(f, v []byte) bool { return fn(string(f), string(v)) })
}

// clone returns an independent copy (COPY).
func (h *Hash) clone() *Hash {
	c := &Hash{lp: slices.Clone(h.lp), n: h.n, bytes: h.bytes, lim: h.lim}
	if h.m != nil {
		c.m = maps.Clone(h.m)
	}
	return c
}
