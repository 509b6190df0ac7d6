package rdma

import (
	"bytes"
	"errors"
	"testing"
)

// hexBytes reads the test's hand-written layouts: two hex digits a byte,
// spaces ignored.
func hexBytes(t *testing.T, s string) []byte {
	t.Helper()
	var out []byte
	var hi byte
	half := false
	for _, r := range s {
		var v byte
		switch {
		case r == ' ' || r == '\n' || r == '\t' || r == '|':
			continue
		case r >= '0' && r <= '9':
			v = byte(r - '0')
		case r >= 'a' && r <= 'f':
			v = byte(r-'a') + 10
		default:
			t.Fatalf("bad hex %q", r)
		}
		if half {
			out = append(out, hi<<4|v)
		} else {
			hi = v
		}
		half = !half
	}
	return out
}

// TestControlLayouts holds encode and decode to byte layouts written out
// by hand from Valkey's structs (src/rdma.c: ValkeyRdmaFeature,
// ValkeyRdmaKeepalive, ValkeyRdmaMemory), big-endian.
func TestControlLayouts(t *testing.T) {
	cases := []struct {
		name  string
		msg   Msg
		bytes string
	}{
		{"GetServerFeature", Msg{Op: OpGetServerFeature, Select: 0x0102, Features: 0x0a0b0c0d0e0f1011},
			"0000 | 0102 | 0000000000000000000000000000000000000000 | 0a0b0c0d0e0f1011"},
		{"SetClientFeature none", Msg{Op: OpSetClientFeature},
			"0001 | 0000 | 0000000000000000000000000000000000000000 | 0000000000000000"},
		{"Keepalive", Msg{Op: OpKeepalive},
			"0002 | 000000000000000000000000000000000000000000000000000000000000"},
		{"RegisterXferMemory", Msg{Op: OpRegisterXferMemory, Addr: 0x00007f1234567000, Length: 1 << 20, RKey: 0xdeadbeef},
			"0003 | 0000000000000000000000000000 | 00007f1234567000 | 00100000 | deadbeef"},
		{"UCAck (ours)", Msg{Op: OpUCAck, Count: 0x01020304},
			"8001 | 0000000000000000000000000000000000000000000000000000 | 01020304"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := hexBytes(t, tc.bytes)
			if len(want) != MsgSize {
				t.Fatalf("layout in the test is %d bytes", len(want))
			}
			got := bytes.Repeat([]byte{0xff}, MsgSize) // Put must clear reserved bytes
			if err := tc.msg.Put(got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("encoded\n%x\nwant\n%x", got, want)
			}
			m, err := ParseMsg(want)
			if err != nil {
				t.Fatal(err)
			}
			if m != tc.msg {
				t.Errorf("decoded %+v, want %+v", m, tc.msg)
			}
		})
	}
}

// TestControlMalformed: wrong lengths and unknown opcodes are errors, as
// in Valkey ("recv corrupted cmd", "unknown cmd"); reserved bytes are not
// checked, as Valkey does not check them.
func TestControlMalformed(t *testing.T) {
	for _, n := range []int{0, 1, 31, 33, 64} {
		if _, err := ParseMsg(make([]byte, n)); !errors.Is(err, ErrMsgLength) {
			t.Errorf("%d bytes: err %v, want ErrMsgLength", n, err)
		}
	}
	for _, op := range []string{"0004", "00ff", "ffff", "0100"} {
		b := hexBytes(t, op+"000000000000000000000000000000000000000000000000000000000000")
		if _, err := ParseMsg(b); !errors.Is(err, ErrUnknownOpcode) {
			t.Errorf("opcode %s: err %v, want ErrUnknownOpcode", op, err)
		}
	}
	// Keepalive with every reserved byte set: still a keepalive.
	b := hexBytes(t, "0002 ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff")
	if m, err := ParseMsg(b); err != nil || m != (Msg{Op: OpKeepalive}) {
		t.Errorf("keepalive with reserved bytes set: %+v, %v", m, err)
	}
	// RegisterXferMemory with reserved bytes set keeps its fields.
	b = hexBytes(t, "0003 ffffffffffffffffffffffffffff 0000000000001000 00010000 00000007")
	if m, err := ParseMsg(b); err != nil || m != (Msg{Op: OpRegisterXferMemory, Addr: 0x1000, Length: 0x10000, RKey: 7}) {
		t.Errorf("register with reserved bytes set: %+v, %v", m, err)
	}
}

// TestControlPutRefuses: fields an opcode does not carry are a caller's
// bug, refused rather than silently lost.
func TestControlPutRefuses(t *testing.T) {
	b := make([]byte, MsgSize)
	for _, m := range []Msg{
		{Op: OpKeepalive, Addr: 1},
		{Op: OpGetServerFeature, RKey: 1},
		{Op: OpRegisterXferMemory, Features: 1},
		{Op: 9},
	} {
		if err := m.Put(b); err == nil {
			t.Errorf("Put(%+v) succeeded", m)
		}
	}
	if err := (Msg{Op: OpKeepalive}).Put(make([]byte, 31)); !errors.Is(err, ErrMsgLength) {
		t.Errorf("short buffer: %v", err)
	}
}

// FuzzParseMsg: any bytes decode or fail, never panic, and what decodes
// re-encodes to the same fields.
func FuzzParseMsg(f *testing.F) {
	f.Add(make([]byte, 32))
	f.Add([]byte{0, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseMsg(b)
		if err != nil {
			return
		}
		out := make([]byte, MsgSize)
		if err := m.Put(out); err != nil {
			t.Fatalf("decoded %+v does not encode: %v", m, err)
		}
		m2, err := ParseMsg(out)
		if err != nil || m2 != m {
			t.Fatalf("round trip %+v -> %+v, %v", m, m2, err)
		}
	})
}
