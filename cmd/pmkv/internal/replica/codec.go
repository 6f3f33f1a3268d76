package replica

import (
	"encoding/binary"
	"fmt"

	"github.com/braid-pm/braid/cmd/pmkv/internal/server"
)

// A raft log entry's data is one of these kinds, then its body.
const (
	// kindOps: uvarint count, then per op a flags byte (1: delete), the
	// uvarint key length and key and, for a put, the uvarint value
	// length, value and varint deadline (absolute Unix ms, 0: none).
	kindOps = 1
	// kindHello: a leader's raft ID and client address, each a uvarint
	// length and its bytes. A new leader applies one before serving.
	kindHello = 2
)

// opSize is an upper bound of op's encoded size.
func opSize(o server.Op) int {
	return 1 + 3*binary.MaxVarintLen64 + len(o.Key) + len(o.Value)
}

// encodeOps encodes ops as one kindOps entry.
func encodeOps(ops []server.Op) []byte {
	n := 1 + binary.MaxVarintLen64
	for _, o := range ops {
		n += opSize(o)
	}
	b := make([]byte, 0, n)
	b = append(b, kindOps)
	b = binary.AppendUvarint(b, uint64(len(ops)))
	for _, o := range ops {
		if o.Del {
			b = append(b, 1)
			b = binary.AppendUvarint(b, uint64(len(o.Key)))
			b = append(b, o.Key...)
			continue
		}
		b = append(b, 0)
		b = binary.AppendUvarint(b, uint64(len(o.Key)))
		b = append(b, o.Key...)
		b = binary.AppendUvarint(b, uint64(len(o.Value)))
		b = append(b, o.Value...)
		b = binary.AppendVarint(b, o.Deadline)
	}
	return b
}

// decoder reads an entry's fields; the first failure sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrCorrupt, what)
	}
	d.b = nil
}

func (d *decoder) uvarint(what string) uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint(what string) int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(what string) []byte {
	n := d.uvarint(what + " length")
	if n > uint64(len(d.b)) {
		d.fail(fmt.Sprintf("%s of %d bytes past the end (%d left)", what, n, len(d.b)))
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte(what string) byte {
	if len(d.b) == 0 {
		d.fail(what)
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

// decodeOps decodes a kindOps body (after the kind byte).
func decodeOps(b []byte) ([]server.Op, error) {
	d := decoder{b: b}
	n := d.uvarint("op count")
	if d.err != nil {
		return nil, d.err
	}
	if n > uint64(len(b)) {
		return nil, fmt.Errorf("%w: %d ops in %d bytes", ErrCorrupt, n, len(b))
	}
	ops := make([]server.Op, 0, n)
	for range n {
		var o server.Op
		switch d.byte("op flags") {
		case 0:
			o.Key = d.bytes("key")
			o.Value = d.bytes("value")
			o.Deadline = d.varint("deadline")
		case 1:
			o.Del = true
			o.Key = d.bytes("key")
		default:
			d.fail("op flags not 0 or 1")
		}
		if d.err != nil {
			return nil, d.err
		}
		ops = append(ops, o)
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the last op", ErrCorrupt, len(d.b))
	}
	return ops, nil
}

func encodeHello(id, addr string) []byte {
	b := []byte{kindHello}
	b = binary.AppendUvarint(b, uint64(len(id)))
	b = append(b, id...)
	b = binary.AppendUvarint(b, uint64(len(addr)))
	return append(b, addr...)
}

func decodeHello(b []byte) (id, addr string, err error) {
	d := decoder{b: b}
	id = string(d.bytes("hello id"))
	addr = string(d.bytes("hello address"))
	if d.err == nil && len(d.b) != 0 {
		d.fail("bytes after a hello")
	}
	return id, addr, d.err
}
