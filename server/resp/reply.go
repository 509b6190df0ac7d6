package resp

import (
	"errors"
	"fmt"
	"strconv"
)

// Type is a RESP type, named by its leading byte.
type Type byte

// RESP2 and RESP3 types.
const (
	SimpleString Type = '+'
	Error        Type = '-'
	Integer      Type = ':'
	BulkString   Type = '$'
	Array        Type = '*'
	Null         Type = '_'
	Double       Type = ','
	Boolean      Type = '#'
	BlobError    Type = '!'
	Verbatim     Type = '='
	BigNumber    Type = '('
	Map          Type = '%'
	Set          Type = '~'
	Attribute    Type = '|'
	Push         Type = '>'
)

// Value is one parsed reply. Str and Elems point into the parser's buffers:
// they are valid until the next read from the same Reader (copy what you
// keep).
type Value struct {
	Type Type
	// Null is set for RESP3 null and RESP2's $-1 / *-1.
	Null bool
	// Int holds an integer, a boolean (1/0), or an aggregate's element count.
	Int int64
	// Str holds a simple string, error, bulk string, double, big number or
	// verbatim string's text (verbatim strings keep their "txt:" prefix).
	Str []byte
	// Elems holds an aggregate's elements; a map's are key, value, key, ...
	Elems []Value
}

// IsError reports whether v is an error reply.
func (v Value) IsError() bool { return v.Type == Error || v.Type == BlobError }

// Err returns v as an error when it is an error reply, else nil.
func (v Value) Err() error {
	if v.IsError() {
		return ReplyError(v.Str)
	}
	return nil
}

// Float parses a double (or a bulk string holding one).
func (v Value) Float() (float64, error) {
	switch string(v.Str) {
	case "inf", "+inf":
		return posInf, nil
	case "-inf":
		return negInf, nil
	}
	return strconv.ParseFloat(string(v.Str), 64)
}

// String renders v for humans and tests, roughly as redis-cli does.
func (v Value) String() string {
	switch {
	case v.Null:
		return "(nil)"
	case v.Type == Integer:
		return "(integer) " + strconv.FormatInt(v.Int, 10)
	case v.Type == Boolean:
		if v.Int != 0 {
			return "(true)"
		}
		return "(false)"
	case v.IsError():
		return "(error) " + string(v.Str)
	case v.Type == Double:
		return "(double) " + string(v.Str)
	case v.Type == Array || v.Type == Set || v.Type == Map || v.Type == Push || v.Type == Attribute:
		s := fmt.Sprintf("%c[", v.Type)
		for i, e := range v.Elems {
			if i > 0 {
				s += " "
			}
			s += e.String()
		}
		return s + "]"
	default:
		return strconv.Quote(string(v.Str))
	}
}

// ReplyError is an error reply from the server, e.g. "ERR unknown command".
type ReplyError string

func (e ReplyError) Error() string { return string(e) }

var (
	posInf = float64FromBits(0x7FF0000000000000)
	negInf = float64FromBits(0xFFF0000000000000)
)

// ErrProtocol is returned for a malformed reply.
var ErrProtocol = errors.New("resp: protocol error in reply")

// maxReplyDepth bounds nesting so hostile input cannot exhaust the stack.
const maxReplyDepth = 64

// ParseReply parses one complete reply at the start of b and returns it with
// the number of bytes it took. It returns ErrIncomplete when b ends before
// the reply does. Elements are appended to slab (pass nil, or a slice kept
// for reuse, to avoid allocating per reply); the returned slab is the grown
// one.
func ParseReply(b []byte, slab []Value) (v Value, n int, newSlab []Value, err error) {
	slab = slab[:0]
	v, n, slab, err = parseValue(b, 0, slab, 0)
	return v, n, slab, err
}

func parseLine(b []byte, pos int) (line []byte, next int, err error) {
	for i := pos; i < len(b); i++ {
		if b[i] == '\n' {
			if i == pos || b[i-1] != '\r' {
				return nil, 0, ErrProtocol
			}
			return b[pos : i-1], i + 1, nil
		}
	}
	return nil, 0, ErrIncomplete
}

func parseValue(b []byte, pos int, slab []Value, depth int) (Value, int, []Value, error) {
	if depth > maxReplyDepth {
		return Value{}, 0, slab, ErrProtocol
	}
	if pos >= len(b) {
		return Value{}, 0, slab, ErrIncomplete
	}
	t := Type(b[pos])
	line, next, err := parseLine(b, pos+1)
	if err != nil {
		return Value{}, 0, slab, err
	}
	v := Value{Type: t}
	switch t {
	case SimpleString, Error, Double, BigNumber:
		v.Str = line
		return v, next, slab, nil
	case Integer:
		n, ok := ParseLength(line)
		if !ok {
			return Value{}, 0, slab, ErrProtocol
		}
		v.Int = n
		return v, next, slab, nil
	case Null:
		v.Null = true
		return v, next, slab, nil
	case Boolean:
		if len(line) != 1 || (line[0] != 't' && line[0] != 'f') {
			return Value{}, 0, slab, ErrProtocol
		}
		if line[0] == 't' {
			v.Int = 1
		}
		return v, next, slab, nil
	case BulkString, BlobError, Verbatim:
		n, ok := ParseLength(line)
		if !ok || n < -1 {
			return Value{}, 0, slab, ErrProtocol
		}
		if n == -1 {
			v.Null = true
			return v, next, slab, nil
		}
		if int64(len(b)-next) < n+2 {
			return Value{}, 0, slab, ErrIncomplete
		}
		end := next + int(n)
		if b[end] != '\r' || b[end+1] != '\n' {
			return Value{}, 0, slab, ErrProtocol
		}
		v.Str = b[next:end:end]
		return v, end + 2, slab, nil
	case Array, Set, Map, Push, Attribute:
		n, ok := ParseLength(line)
		if !ok || n < -1 {
			return Value{}, 0, slab, ErrProtocol
		}
		if n == -1 {
			v.Null = true
			return v, next, slab, nil
		}
		v.Int = n
		count := n
		if t == Map || t == Attribute {
			count = 2 * n
		}
		// Each element takes at least 3 bytes: refuse counts the buffer
		// cannot possibly hold before reserving room for them.
		if count > int64(len(b)-next)/3+1 {
			return Value{}, 0, slab, ErrIncomplete
		}
		start := len(slab)
		for i := int64(0); i < count; i++ {
			slab = append(slab, Value{})
		}
		pos = next
		for i := 0; i < int(count); i++ {
			var e Value
			e, pos, slab, err = parseValue(b, pos, slab, depth+1)
			if err != nil {
				return Value{}, 0, slab, err
			}
			slab[start+i] = e
		}
		v.Elems = slab[start : start+int(count) : start+int(count)]
		if t == Attribute {
			// Attributes annotate the reply that follows; return that reply.
			return parseValue(b, pos, slab, depth+1)
		}
		return v, pos, slab, nil
	default:
		return Value{}, 0, slab, fmt.Errorf("%w: unexpected type byte %q", ErrProtocol, byte(t))
	}
}
