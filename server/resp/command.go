// Package resp reads and writes the Redis serialization protocol (RESP2 and
// RESP3).
//
// The server side parses commands straight out of a connection's read buffer
// (ParseCommand): arguments are sub-slices of that buffer, so a pipelined
// batch is parsed without copying or allocating. Replies are built with the
// append-style writers (AppendBulk, AppendInt, ...) into one output buffer.
//
// The client side (used by the load generator's lean path) builds commands
// with AppendCommand and reads replies of any RESP2/RESP3 type with Reader or
// ParseReply.
package resp

import (
	"errors"
	"math"
)

// Limits bound what ParseCommand accepts; zero fields take Redis's defaults.
type Limits struct {
	// MaxBulkLen is the largest bulk argument (Redis: proto-max-bulk-len,
	// default 512 MB).
	MaxBulkLen int64
	// MaxMultibulkLen is the largest number of arguments. Redis 7.0 takes
	// up to INT_MAX; the default here is Redis 6's 1024*1024, because a
	// partial command is parsed again from its start on every read, which
	// with millions of arguments would stall the server.
	MaxMultibulkLen int64
	// MaxInlineLen is the longest inline command line (Redis: 64 KB).
	MaxInlineLen int
	// Unauthenticated applies Redis's limits for a client that must still
	// AUTH: at most UnauthMaxMultibulkLen arguments of at most
	// UnauthMaxBulkLen bytes each, so that a client without the password
	// cannot make the server buffer more than a small command.
	Unauthenticated bool
}

// Redis's defaults for Limits, and its limits before AUTH.
const (
	DefaultMaxBulkLen      = 512 << 20
	DefaultMaxMultibulkLen = 1024 * 1024
	DefaultMaxInlineLen    = 64 << 10
	UnauthMaxMultibulkLen  = 10
	UnauthMaxBulkLen       = 16384
)

// ProtocolError is a malformed request. Its message is the one Redis sends
// (after "ERR ") before closing the connection.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return e.Msg }

func protoErr(msg string) error { return &ProtocolError{Msg: msg} }

var (
	errInvalidMultibulk = protoErr("Protocol error: invalid multibulk length")
	errInvalidBulk      = protoErr("Protocol error: invalid bulk length")
	errBigInline        = protoErr("Protocol error: too big inline request")
	errBigMbulkCount    = protoErr("Protocol error: too big mbulk count string")
	errBigBulkCount     = protoErr("Protocol error: too big bulk count string")
	errUnbalancedQuotes = protoErr("Protocol error: unbalanced quotes in request")
	errUnauthMultibulk  = protoErr("Protocol error: unauthenticated multibulk length")
	errUnauthBulk       = protoErr("Protocol error: unauthenticated bulk length")
)

// ErrIncomplete is never returned by ParseCommand (it reports n == 0
// instead); ParseReply returns it when the buffer ends mid-reply.
var ErrIncomplete = errors.New("resp: incomplete reply")

// ParseCommand parses the first complete command in buf. It appends the
// arguments to args[:0] (sub-slices of buf, valid while buf is) and returns
// them with the number of bytes consumed. n == 0 with a nil error means buf
// holds no complete command yet: read more and call again. An empty inline
// line is consumed with no arguments (len(out) == 0, n > 0): skip it.
//
// ParseCommand never allocates more than the args slice needs: an announced
// bulk length is checked against the limits but nothing is reserved for it,
// so a client announcing 500 MB and sending nothing costs nothing.
func ParseCommand(buf []byte, args [][]byte, lim Limits) (out [][]byte, n int, err error) {
	out, n, _, err = parseCommand(buf, args, lim)
	return out, n, err
}

// Needed tells how long the first command in buf is, as far as buf shows:
// when buf ends inside a bulk argument whose length line has arrived, the
// number of bytes from buf's start to the end of that argument (its CRLF
// included). It returns 0 when buf does not tell (the command is complete,
// inline, malformed, or buf ends inside a length line). A reader uses it to
// grow its buffer toward what the command needs without reserving what a
// header announced before the bytes arrive.
func Needed(buf []byte, lim Limits) int {
	var tmp [8][]byte
	_, n, need, err := parseCommand(buf, tmp[:0], lim)
	if err != nil || n > 0 {
		return 0
	}
	return need
}

// parseCommand is ParseCommand that also reports, when n == 0, the bytes
// the command needs at least (0 when unknown).
func parseCommand(buf []byte, args [][]byte, lim Limits) (out [][]byte, n, need int, err error) {
	if len(buf) == 0 {
		return args[:0], 0, 0, nil
	}
	if buf[0] != '*' {
		out, n, err = parseInline(buf, args, lim)
		return out, n, 0, err
	}
	maxBulk := lim.MaxBulkLen
	if maxBulk <= 0 {
		maxBulk = DefaultMaxBulkLen
	}
	maxMulti := lim.MaxMultibulkLen
	if maxMulti <= 0 {
		maxMulti = DefaultMaxMultibulkLen
	}
	args = args[:0]
	// Multibulk count line. Redis checks its general limit (INT_MAX)
	// first, then the one before AUTH, and replies with the first that
	// fails; a lower MaxMultibulkLen comes last, so that a client before
	// AUTH gets Redis's reply whatever it is.
	count, pos, ok, err := parseLen(buf, 1, errBigMbulkCount, errInvalidMultibulk)
	if err != nil || !ok {
		return args, 0, 0, err
	}
	if count > 1<<31-1 {
		return args, 0, 0, errInvalidMultibulk
	}
	if lim.Unauthenticated && count > UnauthMaxMultibulkLen {
		return args, 0, 0, errUnauthMultibulk
	}
	if count > maxMulti {
		return args, 0, 0, errInvalidMultibulk
	}
	if count <= 0 {
		// *0 and *-1 are empty commands: consumed, nothing to run.
		return args, pos, 0, nil
	}
	for i := int64(0); i < count; i++ {
		if pos >= len(buf) {
			return args[:0], 0, 0, nil
		}
		if buf[pos] != '$' {
			return args[:0], 0, 0, protoErr("Protocol error: expected '$', got '" + string(printable(buf[pos])) + "'")
		}
		var l int64
		l, pos, ok, err = parseLen(buf, pos+1, errBigBulkCount, errInvalidBulk)
		if err != nil || !ok {
			return args[:0], 0, 0, err
		}
		if l < 0 || l > maxBulk {
			return args[:0], 0, 0, errInvalidBulk
		}
		if lim.Unauthenticated && l > UnauthMaxBulkLen {
			return args[:0], 0, 0, errUnauthBulk
		}
		end := pos + int(l)
		if end+2 > len(buf) {
			return args[:0], 0, end + 2, nil
		}
		// Redis does not check the trailing CRLF of a bulk; it just skips two
		// bytes. Do the same so that byte-for-byte odd clients still work.
		args = append(args, buf[pos:end:end])
		pos = end + 2
	}
	return args, pos, 0, nil
}

func printable(c byte) byte {
	if c < 32 || c > 126 {
		return '?'
	}
	return c
}

// parseLen parses the decimal number after a '*' or '$' up to CRLF, starting
// at buf[i]. ok is false when the line is incomplete.
func parseLen(buf []byte, i int, errBig, errInvalid error) (n int64, pos int, ok bool, err error) {
	start := i
	for j := i; j < len(buf); j++ {
		if buf[j] == '\r' {
			if j+1 >= len(buf) {
				return 0, 0, false, nil
			}
			if buf[j+1] != '\n' {
				return 0, 0, false, errInvalid
			}
			v, good := ParseLength(buf[start:j])
			if !good {
				return 0, 0, false, errInvalid
			}
			return v, j + 2, true, nil
		}
		if j-start > 20 {
			return 0, 0, false, errInvalid
		}
	}
	if len(buf)-start > 64<<10 {
		return 0, 0, false, errBig
	}
	return 0, 0, false, nil
}

// ParseInt parses b as a decimal int64 by Redis's string2ll rules, the
// ones Redis applies to integer arguments: an optional '-', then digits
// with no leading zero ("0" itself aside), nothing else (no '+', no
// spaces), within int64. It takes strings and byte slices alike without
// allocating. It is the package's one integer parser; ParseLength is its
// lenient form.
func ParseInt[T ~string | ~[]byte](b T) (int64, bool) { return parseDecimal(b, false) }

// ParseLength is ParseInt that also accepts leading zeros ("007", "-0"):
// how this package reads the lengths of a request's multibulk and bulk
// headers and of replies. (Redis 7.0 itself refuses a leading zero in a
// request's lengths, "*01" being an invalid multibulk length; ours have
// always been read leniently, and stay so.)
func ParseLength[T ~string | ~[]byte](b T) (int64, bool) { return parseDecimal(b, true) }

func parseDecimal[T ~string | ~[]byte](b T, leadingZeros bool) (int64, bool) {
	n := len(b)
	if n == 0 || n > 20 {
		return 0, false
	}
	i, neg := 0, false
	if b[0] == '-' {
		neg, i = true, 1
		if n == 1 {
			return 0, false
		}
	}
	if !leadingZeros && b[i] == '0' {
		// "0" is the only number string2ll lets start with a zero.
		return 0, n == 1
	}
	var v uint64
	for ; i < n; i++ {
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

// parseInline parses a telnet-style command line: arguments separated by
// blanks, with Redis's quoting rules ("..." with escapes, '...').
func parseInline(buf []byte, args [][]byte, lim Limits) ([][]byte, int, error) {
	maxLine := lim.MaxInlineLen
	if maxLine <= 0 {
		maxLine = DefaultMaxInlineLen
	}
	args = args[:0]
	nl := -1
	for i, c := range buf {
		if c == '\n' {
			nl = i
			break
		}
	}
	if nl < 0 {
		if len(buf) > maxLine {
			return args, 0, errBigInline
		}
		return args, 0, nil
	}
	line := buf[:nl]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	out, ok := SplitArgs(line, args)
	if !ok {
		return args[:0], 0, errUnbalancedQuotes
	}
	return out, nl + 1, nil
}

// SplitArgs splits line like Redis's sdssplitargs: blanks separate
// arguments; "double quotes" support \n \r \t \b \a \\ \" and \xHH escapes;
// 'single quotes' support \'. A closing quote must be followed by a blank or
// the end. Unquoted arguments are sub-slices of line; quoted ones with
// escapes are rewritten in place, so line is modified. ok is false on
// unbalanced quotes.
func SplitArgs(line []byte, args [][]byte) (out [][]byte, ok bool) {
	i := 0
	for {
		for i < len(line) && isBlank(line[i]) {
			i++
		}
		if i >= len(line) {
			return args, true
		}
		start := i
		w := i // write position for in-place unescaping
		inDq, inSq := false, false
		for {
			if inDq {
				if i >= len(line) {
					return args, false
				}
				c := line[i]
				if c == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]) {
					line[w] = hexVal(line[i+2])<<4 | hexVal(line[i+3])
					w++
					i += 4
					continue
				}
				if c == '\\' && i+1 < len(line) {
					i++
					switch line[i] {
					case 'n':
						c = '\n'
					case 'r':
						c = '\r'
					case 't':
						c = '\t'
					case 'b':
						c = '\b'
					case 'a':
						c = '\a'
					default:
						c = line[i]
					}
					line[w] = c
					w++
					i++
					continue
				}
				if c == '"' {
					if i+1 < len(line) && !isBlank(line[i+1]) {
						return args, false
					}
					i++
					break
				}
				line[w] = c
				w++
				i++
				continue
			}
			if inSq {
				if i >= len(line) {
					return args, false
				}
				c := line[i]
				if c == '\\' && i+1 < len(line) && line[i+1] == '\'' {
					line[w] = '\''
					w++
					i += 2
					continue
				}
				if c == '\'' {
					if i+1 < len(line) && !isBlank(line[i+1]) {
						return args, false
					}
					i++
					break
				}
				line[w] = c
				w++
				i++
				continue
			}
			if i >= len(line) || isBlank(line[i]) {
				break
			}
			switch line[i] {
			case '"':
				inDq = true
			case '\'':
				inSq = true
			default:
				line[w] = line[i]
				w++
			}
			i++
		}
		args = append(args, line[start:w:w])
	}
}

func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
