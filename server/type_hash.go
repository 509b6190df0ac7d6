package server

// Thresholds under which a hash keeps its fields in insertion order in a
// slice, like Redis's listpack encoding (hash-max-listpack-entries and
// hash-max-listpack-value). Matching them makes HGETALL, HKEYS and HVALS
// return small hashes in the same order as Redis, and small hashes cost a
// slice instead of a map.
const (
	hashMaxSmallEntries = 128
	hashMaxSmallValue   = 64
)

type hashEntry struct{ field, value string }

// Hash is the value of a Redis hash key: an insertion-ordered slice while
// small, a map once it outgrows hashMaxSmallEntries or holds a long string
// (and never back, as in Redis).
type Hash struct {
	small []hashEntry
	m     map[string]string
	bytes int // sum of field and value lengths, for memUsage
}

// memUsage approximates the bytes the hash holds: data plus per-field
// overhead (two string headers in the slice; map slot and bucket share
// once converted).
func (h *Hash) memUsage() int {
	if h.m != nil {
		return h.bytes + 64*len(h.m) + 48
	}
	return h.bytes + 32*cap(h.small) + 48
}

// Len returns the number of fields.
func (h *Hash) Len() int {
	if h.m != nil {
		return len(h.m)
	}
	return len(h.small)
}

func (h *Hash) find(field string) int { return hashFind(h, field) }

// hashFind scans the small encoding; comparing string(b) with a string
// does not allocate, so []byte arguments are looked up as they are.
func hashFind[T ~string | ~[]byte](h *Hash, field T) int {
	for i := range h.small {
		if h.small[i].field == string(field) {
			return i
		}
	}
	return -1
}

// GetBytes is Get for an argument slice, without allocating.
func (h *Hash) GetBytes(field []byte) (string, bool) {
	if h.m != nil {
		v, ok := h.m[string(field)]
		return v, ok
	}
	if i := hashFind(h, field); i >= 0 {
		return h.small[i].value, true
	}
	return "", false
}

// SetBytes is Set for argument slices: it allocates only what it stores,
// and nothing when the field already holds value (HSET of the same pair
// over and over, as redis-benchmark does).
func (h *Hash) SetBytes(field, value []byte) bool {
	if h.m == nil {
		if i := hashFind(h, field); i >= 0 {
			if h.small[i].value != string(value) {
				h.bytes += len(value) - len(h.small[i].value)
				h.small[i].value = string(value)
				h.maybeConvert(h.small[i].field, h.small[i].value)
			}
			return false
		}
	} else if old, ok := h.m[string(field)]; ok && old == string(value) {
		return false
	}
	return h.Set(string(field), string(value))
}

// Get returns the value of field.
func (h *Hash) Get(field string) (string, bool) {
	if h.m != nil {
		v, ok := h.m[field]
		return v, ok
	}
	if i := h.find(field); i >= 0 {
		return h.small[i].value, true
	}
	return "", false
}

// Set sets field to value and reports whether the field is new.
func (h *Hash) Set(field, value string) bool {
	if h.m == nil {
		if i := h.find(field); i >= 0 {
			h.bytes += len(value) - len(h.small[i].value)
			h.small[i].value = value
			h.maybeConvert(field, value)
			return false
		}
		h.small = append(h.small, hashEntry{field, value})
		h.bytes += len(field) + len(value)
		h.maybeConvert(field, value)
		return true
	}
	old, exists := h.m[field]
	if exists {
		h.bytes += len(value) - len(old)
	} else {
		h.bytes += len(field) + len(value)
	}
	h.m[field] = value
	return !exists
}

func (h *Hash) maybeConvert(field, value string) {
	if len(h.small) <= hashMaxSmallEntries && len(field) <= hashMaxSmallValue && len(value) <= hashMaxSmallValue {
		return
	}
	h.m = make(map[string]string, len(h.small))
	for _, e := range h.small {
		h.m[e.field] = e.value
	}
	h.small = nil
}

// Delete removes field and reports whether it existed.
func (h *Hash) Delete(field string) bool {
	if h.m != nil {
		old, ok := h.m[field]
		if !ok {
			return false
		}
		h.bytes -= len(field) + len(old)
		delete(h.m, field)
		return true
	}
	i := h.find(field)
	if i < 0 {
		return false
	}
	h.bytes -= len(field) + len(h.small[i].value)
	copy(h.small[i:], h.small[i+1:])
	h.small[len(h.small)-1] = hashEntry{}
	h.small = h.small[:len(h.small)-1]
	return true
}

// Each calls fn for every field in the hash's order until fn returns false.
func (h *Hash) Each(fn func(field, value string) bool) {
	if h.m != nil {
		for f, v := range h.m {
			if !fn(f, v) {
				return
			}
		}
		return
	}
	for _, e := range h.small {
		if !fn(e.field, e.value) {
			return
		}
	}
}
