package raftstore

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// A raft.Log is one walog entry (walog adds its length, sequence number,
// popcount and CRC-32C):
//
//	0   index       u64
//	8   term        u64
//	16  appendedAt  i64 Unix nanoseconds (flags bit 0 set), else 0
//	24  type        u8  raft.LogType
//	25  flags       u8  bit 0: appendedAt is set
//	26  data len    u32
//	30  data
//	    ext len     u32
//	    extensions
const (
	recHeader   = 30
	recOverhead = recHeader + 4
	flagTime    = 1
)

func recordSize(l *raft.Log) int { return recOverhead + len(l.Data) + len(l.Extensions) }

// encode appends the record of l to dst.
func encode(dst []byte, l *raft.Log) []byte {
	var h [recHeader]byte
	binary.LittleEndian.PutUint64(h[0:], l.Index)
	binary.LittleEndian.PutUint64(h[8:], l.Term)
	if !l.AppendedAt.IsZero() {
		binary.LittleEndian.PutUint64(h[16:], uint64(l.AppendedAt.UnixNano()))
		h[25] = flagTime
	}
	h[24] = byte(l.Type)
	binary.LittleEndian.PutUint32(h[26:], uint32(len(l.Data)))
	dst = append(dst, h[:]...)
	dst = append(dst, l.Data...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(l.Extensions)))
	return append(dst, l.Extensions...)
}

// recordIndex returns the raft index of a record, checking only that it
// has a header.
func recordIndex(b []byte) (uint64, error) {
	if len(b) < recOverhead {
		return 0, fmt.Errorf("%w: a log record of %d bytes (at least %d)", ErrCorrupt, len(b), recOverhead)
	}
	return binary.LittleEndian.Uint64(b), nil
}

// decode fills out from the record b. Data and Extensions are fresh
// slices (raft keeps them); b is not retained.
func decode(b []byte, out *raft.Log) error {
	if len(b) < recOverhead {
		return fmt.Errorf("%w: a log record of %d bytes (at least %d)", ErrCorrupt, len(b), recOverhead)
	}
	flags := b[25]
	n := int(binary.LittleEndian.Uint32(b[26:]))
	if flags&^flagTime != 0 || n > len(b)-recOverhead {
		return fmt.Errorf("%w: log record of index %d: flags %#x, data length %d in a record of %d bytes", ErrCorrupt, binary.LittleEndian.Uint64(b), flags, n, len(b))
	}
	m := int(binary.LittleEndian.Uint32(b[recHeader+n:]))
	if m != len(b)-recOverhead-n {
		return fmt.Errorf("%w: log record of index %d: extensions length %d, %d bytes left", ErrCorrupt, binary.LittleEndian.Uint64(b), m, len(b)-recOverhead-n)
	}
	out.Index = binary.LittleEndian.Uint64(b)
	out.Term = binary.LittleEndian.Uint64(b[8:])
	out.Type = raft.LogType(b[24])
	out.AppendedAt = time.Time{}
	if flags&flagTime != 0 {
		out.AppendedAt = time.Unix(0, int64(binary.LittleEndian.Uint64(b[16:])))
	}
	out.Data, out.Extensions = nil, nil
	if n+m > 0 {
		buf := make([]byte, n+m)
		copy(buf, b[recHeader:recHeader+n])
		copy(buf[n:], b[recOverhead+n:])
		if n > 0 {
			out.Data = buf[:n:n]
		}
		if m > 0 {
			out.Extensions = buf[n:]
		}
	}
	return nil
}
