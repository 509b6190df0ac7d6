package resp

import (
	"math"
	"strconv"
)

// The Append functions add one RESP element to b and return the extended
// slice, like strconv.AppendInt: callers keep one output buffer per
// connection and flush it once per batch, so replying never allocates once
// the buffer has grown to its working size.

// AppendSimple appends a simple string (+s).
func AppendSimple(b []byte, s string) []byte {
	b = append(b, '+')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// AppendOK appends +OK.
func AppendOK(b []byte) []byte { return append(b, "+OK\r\n"...) }

// AppendError appends an error (-msg). msg must start with its code ("ERR
// ...", "WRONGTYPE ..."); CR and LF in it are replaced by spaces because an
// error is a single protocol line.
func AppendError(b []byte, msg string) []byte {
	b = append(b, '-')
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return append(b, '\r', '\n')
}

// AppendInt appends an integer (:n).
func AppendInt(b []byte, n int64) []byte {
	b = append(b, ':')
	b = strconv.AppendInt(b, n, 10)
	return append(b, '\r', '\n')
}

func appendHeader(b []byte, c byte, n int64) []byte {
	b = append(b, c)
	if n >= 0 && n < 10 {
		b = append(b, byte('0'+n))
	} else {
		b = strconv.AppendInt(b, n, 10)
	}
	return append(b, '\r', '\n')
}

// AppendBulk appends a bulk string ($len\r\ndata\r\n).
func AppendBulk(b []byte, p []byte) []byte {
	b = appendHeader(b, '$', int64(len(p)))
	b = append(b, p...)
	return append(b, '\r', '\n')
}

// AppendBulkString appends a bulk string from a Go string.
func AppendBulkString(b []byte, s string) []byte {
	b = appendHeader(b, '$', int64(len(s)))
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// AppendBulkInt appends n formatted in decimal as a bulk string.
func AppendBulkInt(b []byte, n int64) []byte {
	var tmp [24]byte
	return AppendBulk(b, strconv.AppendInt(tmp[:0], n, 10))
}

// AppendArray appends an array header (*n); the n elements follow.
func AppendArray(b []byte, n int) []byte { return appendHeader(b, '*', int64(n)) }

// AppendMap appends a RESP3 map header (%n); n key/value pairs follow.
func AppendMap(b []byte, n int) []byte { return appendHeader(b, '%', int64(n)) }

// AppendSet appends a RESP3 set header (~n).
func AppendSet(b []byte, n int) []byte { return appendHeader(b, '~', int64(n)) }

// AppendPush appends a RESP3 push header (>n).
func AppendPush(b []byte, n int) []byte { return appendHeader(b, '>', int64(n)) }

// AppendNullBulk appends RESP2's null bulk string ($-1).
func AppendNullBulk(b []byte) []byte { return append(b, "$-1\r\n"...) }

// AppendNullArray appends RESP2's null array (*-1).
func AppendNullArray(b []byte) []byte { return append(b, "*-1\r\n"...) }

// AppendNull appends RESP3's null (_).
func AppendNull(b []byte) []byte { return append(b, "_\r\n"...) }

// AppendBool appends a RESP3 boolean (#t / #f).
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "#t\r\n"...)
	}
	return append(b, "#f\r\n"...)
}

// AppendDouble appends a RESP3 double (,f) formatted as FormatDouble does.
func AppendDouble(b []byte, f float64) []byte {
	b = append(b, ',')
	b = AppendFloat(b, f)
	return append(b, '\r', '\n')
}

// AppendFloat appends f as Redis 7.0 formats doubles in replies (printf
// "%.17g", "inf", "-inf", "nan"), without framing. Use it for the RESP2
// form of a double (a bulk string) so RESP2 and RESP3 agree.
func AppendFloat(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	case math.IsNaN(f):
		return append(b, "nan"...)
	}
	return strconv.AppendFloat(b, f, 'g', 17, 64)
}

// AppendCommand appends a command as a RESP array of bulk strings, the form
// clients send.
func AppendCommand(b []byte, args ...string) []byte {
	b = AppendArray(b, len(args))
	for _, a := range args {
		b = AppendBulkString(b, a)
	}
	return b
}

// AppendCommandBytes is AppendCommand for byte-slice arguments.
func AppendCommandBytes(b []byte, args ...[]byte) []byte {
	b = AppendArray(b, len(args))
	for _, a := range args {
		b = AppendBulk(b, a)
	}
	return b
}
