package rdma

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// MsgSize is the size of every control message: Valkey's ValkeyRdmaCmd
// union, sent with SEND into a 32-byte receive slot.
const MsgSize = 32

// Opcode is a control message's first field.
type Opcode uint16

// The opcodes Valkey defines (src/rdma.c, ValkeyRdmaOpcode).
const (
	// OpGetServerFeature asks the server which features it has; the server
	// answers with the same opcode, the same select, and its feature bits.
	OpGetServerFeature Opcode = 0
	// OpSetClientFeature tells the server which features the client uses.
	OpSetClientFeature Opcode = 1
	// OpKeepalive carries nothing; the server sends one every 3 s, and a
	// failed send is how it learns the client is gone (RDMA has no
	// transport-level keepalive).
	OpKeepalive Opcode = 2
	// OpRegisterXferMemory announces the sender's receive buffer: the peer
	// writes into it with RDMA WRITE WITH IMM from offset 0.
	OpRegisterXferMemory Opcode = 3
	// OpUCAck is ours, sent on UC connections only (Valkey speaks RC
	// only, so no Valkey peer ever sees it): the receiver's cumulative
	// count of writes it has taken in and re-posted a receive for, the
	// credit that keeps a UC sender from outrunning the posted receives
	// (RC has RNR retry for that; UC drops the write).
	OpUCAck Opcode = 0x8001
)

func (o Opcode) String() string {
	switch o {
	case OpGetServerFeature:
		return "GetServerFeature"
	case OpSetClientFeature:
		return "SetClientFeature"
	case OpKeepalive:
		return "Keepalive"
	case OpRegisterXferMemory:
		return "RegisterXferMemory"
	case OpUCAck:
		return "UCAck"
	}
	return fmt.Sprintf("opcode %d", uint16(o))
}

// Msg is one control message, decoded. Which fields mean something depends
// on Op: Select and Features for the two feature messages, Addr, Length and
// RKey for RegisterXferMemory, none for Keepalive.
type Msg struct {
	Op       Opcode
	Select   uint16
	Features uint64
	Addr     uint64
	Length   uint32
	RKey     uint32
	// Count is OpUCAck's cumulative write count.
	Count uint32
}

// Errors a malformed control message gives; ParseMsg wraps them with the
// detail.
var (
	// ErrMsgLength is a control message that is not exactly MsgSize bytes.
	// Valkey treats it as fatal ("recv corrupted cmd") and so do we.
	ErrMsgLength = errors.New("control message is not 32 bytes")
	// ErrUnknownOpcode is an opcode Valkey does not define; fatal in
	// Valkey ("unknown cmd") and here.
	ErrUnknownOpcode = errors.New("unknown control message opcode")
)

// Byte layout, all big-endian (offsets in bytes):
//
//	feature (0, 1):          0 opcode u16 | 2 select u16 | 4..23 reserved | 24 features u64
//	keepalive (2):           0 opcode u16 | 2..31 reserved
//	register memory (3):     0 opcode u16 | 2..15 reserved | 16 addr u64 | 24 length u32 | 28 rkey u32
//	UC ack (0x8001, ours):   0 opcode u16 | 2..27 reserved | 28 count u32
const (
	offCount    = 28
	offSelect   = 2
	offFeatures = 24
	offAddr     = 16
	offLength   = 24
	offRKey     = 28
)

// Put writes m into b, which must hold MsgSize bytes; reserved bytes are
// zeroed. Fields the opcode does not carry must be zero: a message built
// with, say, an address on a Keepalive is a bug in the caller, and
// sending it would lose the address silently.
func (m Msg) Put(b []byte) error {
	if len(b) < MsgSize {
		return fmt.Errorf("rdma: encoding %s: %w (buffer of %d)", m.Op, ErrMsgLength, len(b))
	}
	b = b[:MsgSize]
	clear(b)
	binary.BigEndian.PutUint16(b, uint16(m.Op))
	switch m.Op {
	case OpGetServerFeature, OpSetClientFeature:
		if m.Addr != 0 || m.Length != 0 || m.RKey != 0 || m.Count != 0 {
			return fmt.Errorf("rdma: encoding %s: it carries no address, length or rkey", m.Op)
		}
		binary.BigEndian.PutUint16(b[offSelect:], m.Select)
		binary.BigEndian.PutUint64(b[offFeatures:], m.Features)
	case OpKeepalive:
		if m != (Msg{Op: OpKeepalive}) {
			return fmt.Errorf("rdma: encoding %s: it carries no fields", m.Op)
		}
	case OpRegisterXferMemory:
		if m.Select != 0 || m.Features != 0 || m.Count != 0 {
			return fmt.Errorf("rdma: encoding %s: it carries no select, features or count", m.Op)
		}
		binary.BigEndian.PutUint64(b[offAddr:], m.Addr)
		binary.BigEndian.PutUint32(b[offLength:], m.Length)
		binary.BigEndian.PutUint32(b[offRKey:], m.RKey)
	case OpUCAck:
		if m != (Msg{Op: OpUCAck, Count: m.Count}) {
			return fmt.Errorf("rdma: encoding %s: it carries a count only", m.Op)
		}
		binary.BigEndian.PutUint32(b[offCount:], m.Count)
	default:
		return fmt.Errorf("rdma: encoding: %w %d", ErrUnknownOpcode, uint16(m.Op))
	}
	return nil
}

// ParseMsg decodes a received control message. b must be exactly MsgSize
// bytes (the completion's byte count, not the slot's size) and carry a
// known opcode. Reserved bytes are not checked, as Valkey does not check
// them: a later Valkey may give them a meaning, and a peer that sets them
// must still be understood for what we know.
func ParseMsg(b []byte) (Msg, error) {
	if len(b) != MsgSize {
		return Msg{}, fmt.Errorf("rdma: %w (got %d)", ErrMsgLength, len(b))
	}
	m := Msg{Op: Opcode(binary.BigEndian.Uint16(b))}
	switch m.Op {
	case OpGetServerFeature, OpSetClientFeature:
		m.Select = binary.BigEndian.Uint16(b[offSelect:])
		m.Features = binary.BigEndian.Uint64(b[offFeatures:])
	case OpKeepalive:
	case OpRegisterXferMemory:
		m.Addr = binary.BigEndian.Uint64(b[offAddr:])
		m.Length = binary.BigEndian.Uint32(b[offLength:])
		m.RKey = binary.BigEndian.Uint32(b[offRKey:])
	case OpUCAck:
		m.Count = binary.BigEndian.Uint32(b[offCount:])
	default:
		return Msg{}, fmt.Errorf("rdma: %w %d", ErrUnknownOpcode, uint16(m.Op))
	}
	return m, nil
}
