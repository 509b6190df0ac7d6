package server

import (
	"bytes"
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The Lua libraries Redis 7.0 adds to the sandbox that gopher-lua lacks:
// cjson (over encoding/json) and bit (LuaBitOp). cmsgpack and struct are
// not provided.

// maxJSONDepth bounds nesting both ways, as cjson's
// encode_max_depth/decode_max_depth (1000).
const maxJSONDepth = 1000

func openCJSON(L *lua.LState, g *lua.LTable) {
	t := L.NewTable()
	null := L.NewUserData()
	t.RawSetString("null", null)
	t.RawSetString("encode", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() != 1 {
			L.ArgError(1, "expected 1 argument")
		}
		var b []byte
		b, err := cjsonEncode(b, L.Get(1), null, 0)
		if err != "" {
			L.RaiseError("Cannot serialise %s", err)
		}
		L.Push(lua.LString(b))
		return 1
	}))
	t.RawSetString("decode", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() != 1 {
			L.ArgError(1, "expected 1 argument")
		}
		dec := json.NewDecoder(strings.NewReader(L.CheckString(1)))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			L.RaiseError("Expected value but found invalid token")
		}
		if dec.More() {
			L.RaiseError("Expected the end but found invalid token")
		}
		lv, ok := cjsonToLua(L, v, null, 0)
		if !ok {
			L.RaiseError("Found too many nested data structures")
		}
		L.Push(lv)
		return 1
	}))
	for _, name := range []string{"encode_keep_buffer", "encode_max_depth", "decode_max_depth", "encode_number_precision", "encode_sparse_array", "encode_invalid_numbers", "decode_invalid_numbers"} {
		t.RawSetString(name, L.NewFunction(func(L *lua.LState) int { return 0 }))
	}
	g.RawSetString("cjson", t)
}

// cjsonEncode appends v's JSON as Lua cjson writes it; err names what
// cannot be encoded.
func cjsonEncode(b []byte, v lua.LValue, null *lua.LUserData, depth int) ([]byte, string) {
	if depth > maxJSONDepth {
		return b, "excessive nesting"
	}
	switch v := v.(type) {
	case *lua.LNilType:
		return append(b, "null"...), ""
	case lua.LBool:
		return strconv.AppendBool(b, bool(v)), ""
	case lua.LNumber:
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return b, "number"
		}
		return strconv.AppendFloat(b, f, 'g', 14, 64), ""
	case lua.LString:
		return cjsonString(b, string(v)), ""
	case *lua.LUserData:
		if v == null {
			return append(b, "null"...), ""
		}
		return b, "userdata"
	case *lua.LTable:
		// An array when every key is a positive integer, not too sparse
		// (cjson's default ratio 2 beyond 10 elements).
		n, maxKey, isArray := 0, 0, true
		v.ForEach(func(k, _ lua.LValue) {
			n++
			if num, ok := k.(lua.LNumber); ok && float64(num) == math.Floor(float64(num)) && num >= 1 {
				maxKey = max(maxKey, int(num))
			} else {
				isArray = false
			}
		})
		if n == 0 {
			return append(b, "{}"...), ""
		}
		if isArray && (maxKey <= 10 || maxKey <= 2*n) {
			b = append(b, '[')
			for i := 1; i <= maxKey; i++ {
				if i > 1 {
					b = append(b, ',')
				}
				var err string
				if b, err = cjsonEncode(b, v.RawGetInt(i), null, depth+1); err != "" {
					return b, err
				}
			}
			return append(b, ']'), ""
		}
		if isArray {
			return b, "table (excessively sparse array)"
		}
		b = append(b, '{')
		first, err := true, ""
		v.ForEach(func(k, val lua.LValue) {
			if err != "" {
				return
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			switch k := k.(type) {
			case lua.LString:
				b = cjsonString(b, string(k))
			case lua.LNumber:
				b = cjsonString(b, strconv.FormatFloat(float64(k), 'g', 14, 64))
			default:
				err = "table key must be a number or string"
				return
			}
			b = append(b, ':')
			b, err = cjsonEncode(b, val, null, depth+1)
		})
		if err != "" {
			return b, err
		}
		return append(b, '}'), ""
	}
	return b, v.Type().String()
}

// cjsonString appends s quoted as cjson does (it escapes '/').
func cjsonString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '/':
			b = append(b, '\\', '/')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			if c < 0x20 || c == 0x7f {
				b = append(b, `\u00`...)
				b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"')
}

// cjsonToLua converts a decoded JSON value; ok is false past maxJSONDepth.
func cjsonToLua(L *lua.LState, v any, null *lua.LUserData, depth int) (lua.LValue, bool) {
	if depth > maxJSONDepth {
		return lua.LNil, false
	}
	switch v := v.(type) {
	case nil:
		return null, true
	case bool:
		return lua.LBool(v), true
	case json.Number:
		f, _ := strconv.ParseFloat(string(v), 64)
		return lua.LNumber(f), true
	case string:
		return lua.LString(v), true
	case []any:
		t := L.CreateTable(len(v), 0)
		for i, el := range v {
			lv, ok := cjsonToLua(L, el, null, depth+1)
			if !ok {
				return lua.LNil, false
			}
			t.RawSetInt(i+1, lv)
		}
		return t, true
	case map[string]any:
		t := L.CreateTable(0, len(v))
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			lv, ok := cjsonToLua(L, v[k], null, depth+1)
			if !ok {
				return lua.LNil, false
			}
			t.RawSetString(k, lv)
		}
		return t, true
	}
	return lua.LNil, true
}

// openBit adds LuaBitOp's bit library (32-bit operations).
func openBit(L *lua.LState, g *lua.LTable) {
	t := L.NewTable()
	arg := func(L *lua.LState, i int) uint32 { return uint32(int64(L.CheckNumber(i))) }
	ret := func(L *lua.LState, v uint32) int { L.Push(lua.LNumber(int32(v))); return 1 }
	fold := func(op func(a, b uint32) uint32) lua.LGFunction {
		return func(L *lua.LState) int {
			v := arg(L, 1)
			for i := 2; i <= L.GetTop(); i++ {
				v = op(v, arg(L, i))
			}
			return ret(L, v)
		}
	}
	t.RawSetString("tobit", L.NewFunction(func(L *lua.LState) int { return ret(L, arg(L, 1)) }))
	t.RawSetString("bnot", L.NewFunction(func(L *lua.LState) int { return ret(L, ^arg(L, 1)) }))
	t.RawSetString("band", L.NewFunction(fold(func(a, b uint32) uint32 { return a & b })))
	t.RawSetString("bor", L.NewFunction(fold(func(a, b uint32) uint32 { return a | b })))
	t.RawSetString("bxor", L.NewFunction(fold(func(a, b uint32) uint32 { return a ^ b })))
	t.RawSetString("lshift", L.NewFunction(func(L *lua.LState) int { return ret(L, arg(L, 1)<<(arg(L, 2)&31)) }))
	t.RawSetString("rshift", L.NewFunction(func(L *lua.LState) int { return ret(L, arg(L, 1)>>(arg(L, 2)&31)) }))
	t.RawSetString("arshift", L.NewFunction(func(L *lua.LState) int { return ret(L, uint32(int32(arg(L, 1))>>(arg(L, 2)&31))) }))
	t.RawSetString("rol", L.NewFunction(func(L *lua.LState) int {
		v, n := arg(L, 1), arg(L, 2)&31
		return ret(L, v<<n|v>>(32-n))
	}))
	t.RawSetString("ror", L.NewFunction(func(L *lua.LState) int {
		v, n := arg(L, 1), arg(L, 2)&31
		return ret(L, v>>n|v<<(32-n))
	}))
	t.RawSetString("bswap", L.NewFunction(func(L *lua.LState) int {
		v := arg(L, 1)
		return ret(L, v>>24|v>>8&0xff00|v<<8&0xff0000|v<<24)
	}))
	t.RawSetString("tohex", L.NewFunction(func(L *lua.LState) int {
		v := arg(L, 1)
		n := 8
		if L.GetTop() >= 2 {
			n = int(int64(L.CheckNumber(2)))
		}
		digits := "0123456789abcdef"
		if n < 0 {
			n, digits = -n, "0123456789ABCDEF"
		}
		n = min(max(n, 1), 8)
		var buf bytes.Buffer
		for i := n - 1; i >= 0; i-- {
			buf.WriteByte(digits[v>>(4*uint(i))&15])
		}
		L.Push(lua.LString(buf.String()))
		return 1
	}))
	g.RawSetString("bit", t)
}
