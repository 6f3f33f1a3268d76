package replica

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/hashicorp/raft"

	"github.com/braid-pm/braid/cmd/pmkv/internal/server"
	"github.com/braid-pm/braid/kv"
	"github.com/braid-pm/braid/persist"
)

// A snapshot is the store's live keys, streamed:
//
//	magic "PMKVSNAP" | u32 LE version 1
//	uvarint members | per member: uvarint len, raft ID, uvarint len, client address
//	per key:  byte 1 | uvarint len, key | uvarint len, value | varint deadline
//	end:      byte 0 | uvarint keys | u32 LE CRC-32C of every byte before it
//
// It is taken while the log goes on being applied (the keys are read one
// chunk at a time, not frozen at the snapshot's index), so each key holds
// its value at the index or at a later one. Applying the log after the
// index on it gives exactly the state a node that applied the whole log
// has: every entry is a set of blind puts and deletes, so a key written
// after the index ends as its last write, and any other key kept its value
// from the index on.
const snapMagic = "PMKVSNAP"

const snapVersion = 1

// scanChunk is how many keys a snapshot lists before reading their values.
const scanChunk = 512

type snapshot struct {
	f       *fsm
	members map[string]string
}

// Persist implements raft.FSMSnapshot.
func (sn *snapshot) Persist(sink raft.SnapshotSink) error {
	if err := sn.write(sink); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

// Release implements raft.FSMSnapshot.
func (sn *snapshot) Release() {}

type crcWriter struct {
	w   *bufio.Writer
	crc uint32
	n   int64
}

func (c *crcWriter) Write(p []byte) (int, error) {
	c.crc = persist.UpdateCRC32C(c.crc, p)
	c.n += int64(len(p))
	return c.w.Write(p)
}

func (c *crcWriter) uvarint(v uint64) {
	var b [binary.MaxVarintLen64]byte
	c.Write(binary.AppendUvarint(b[:0], v))
}

func (c *crcWriter) bytes(p []byte) {
	c.uvarint(uint64(len(p)))
	c.Write(p)
}

func (sn *snapshot) write(sink io.Writer) error {
	w := &crcWriter{w: bufio.NewWriterSize(sink, 1<<20)}
	w.Write([]byte(snapMagic))
	w.Write(binary.LittleEndian.AppendUint32(nil, snapVersion))
	w.uvarint(uint64(len(sn.members)))
	for id, addr := range sn.members {
		w.bytes([]byte(id))
		w.bytes([]byte(addr))
	}
	var keys uint64
	err := eachEntry(sn.f.s, func(k []byte, e server.Entry) error {
		w.Write([]byte{1})
		w.bytes(k)
		w.bytes(e.Value)
		var b [binary.MaxVarintLen64]byte
		w.Write(binary.AppendVarint(b[:0], e.Deadline))
		keys++
		return nil
	})
	if err != nil {
		return fmt.Errorf("replica: snapshot: %w", err)
	}
	w.Write([]byte{0})
	w.uvarint(keys)
	w.w.Write(binary.LittleEndian.AppendUint32(nil, w.crc))
	return w.w.Flush()
}

// eachEntry calls fn for every live key of s with its value and deadline,
// listing keys a chunk at a time (fn is not called inside Scan).
func eachEntry(s server.KVStore, fn func(k []byte, e server.Entry) error) error {
	var from []byte
	for {
		var keys [][]byte
		err := s.Scan(from, nil, func(k, _ []byte) bool {
			keys = append(keys, append([]byte(nil), k...))
			return len(keys) < scanChunk
		})
		if err != nil {
			return err
		}
		for _, k := range keys {
			v, dl, err := s.GetAt(k)
			if errors.Is(err, kv.ErrNotFound) {
				continue // deleted or expired since the scan
			}
			if err != nil {
				return fmt.Errorf("key %q: %w", k, err)
			}
			if err := fn(k, server.Entry{Value: v, Deadline: dl}); err != nil {
				return err
			}
		}
		if len(keys) < scanChunk {
			return nil
		}
		from = append(keys[len(keys)-1], 0)
	}
}

type crcReader struct {
	r   *bufio.Reader
	crc uint32
}

func (c *crcReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.crc = persist.UpdateCRC32C(c.crc, []byte{b})
	}
	return b, err
}

func (c *crcReader) full(p []byte) error {
	if _, err := io.ReadFull(c.r, p); err != nil {
		return err
	}
	c.crc = persist.UpdateCRC32C(c.crc, p)
	return nil
}

// maxSnapField bounds a length read from a snapshot before allocating.
const maxSnapField = 1 << 30

func (c *crcReader) bytes(what string) ([]byte, error) {
	n, err := binary.ReadUvarint(c)
	if err != nil {
		return nil, fmt.Errorf("%w: %s length: %v", ErrCorrupt, what, err)
	}
	if n > maxSnapField {
		return nil, fmt.Errorf("%w: %s of %d bytes (at most %d)", ErrCorrupt, what, n, maxSnapField)
	}
	// Grown as the bytes arrive: a damaged length allocates no more than
	// the stream holds.
	p := make([]byte, 0, min(n, 64<<10))
	for uint64(len(p)) < n {
		m := min(n-uint64(len(p)), 1<<20)
		chunk := make([]byte, m)
		if err := c.full(chunk); err != nil {
			return nil, fmt.Errorf("%w: %s cut after %d of %d bytes: %v", ErrCorrupt, what, len(p), n, err)
		}
		p = append(p, chunk...)
	}
	return p, nil
}

// snapReader decodes a snapshot stream.
type snapReader struct {
	c       crcReader
	members map[string]string
	keys    uint64
}

func newSnapReader(r io.Reader) (*snapReader, error) {
	sr := &snapReader{c: crcReader{r: bufio.NewReaderSize(r, 1<<20)}, members: map[string]string{}}
	head := make([]byte, len(snapMagic)+4)
	if err := sr.c.full(head); err != nil {
		return nil, fmt.Errorf("%w: snapshot header: %v", ErrCorrupt, err)
	}
	if string(head[:len(snapMagic)]) != snapMagic {
		return nil, fmt.Errorf("%w: not a pmkv snapshot (magic %q)", ErrCorrupt, head[:len(snapMagic)])
	}
	if v := binary.LittleEndian.Uint32(head[len(snapMagic):]); v != snapVersion {
		return nil, fmt.Errorf("%w: snapshot version %d (this build reads %d)", ErrCorrupt, v, snapVersion)
	}
	n, err := binary.ReadUvarint(&sr.c)
	if err != nil || n > 1<<16 {
		return nil, fmt.Errorf("%w: snapshot member count (%d, %v)", ErrCorrupt, n, err)
	}
	for range n {
		id, err := sr.c.bytes("member id")
		if err != nil {
			return nil, err
		}
		addr, err := sr.c.bytes("member address")
		if err != nil {
			return nil, err
		}
		sr.members[string(id)] = string(addr)
	}
	return sr, nil
}

// next returns the next key and entry; ok is false at the end, once the
// key count and checksum have been checked.
func (sr *snapReader) next() (key []byte, e server.Entry, ok bool, err error) {
	tag, err := sr.c.ReadByte()
	if err != nil {
		return nil, e, false, fmt.Errorf("%w: snapshot cut after %d keys: %v", ErrCorrupt, sr.keys, err)
	}
	switch tag {
	case 1:
		if key, err = sr.c.bytes("key"); err != nil {
			return nil, e, false, err
		}
		if e.Value, err = sr.c.bytes("value"); err != nil {
			return nil, e, false, err
		}
		if e.Deadline, err = binary.ReadVarint(&sr.c); err != nil {
			return nil, e, false, fmt.Errorf("%w: deadline: %v", ErrCorrupt, err)
		}
		sr.keys++
		return key, e, true, nil
	case 0:
		return nil, e, false, sr.end()
	}
	return nil, e, false, fmt.Errorf("%w: snapshot record tag %d (want 0 or 1) after %d keys", ErrCorrupt, tag, sr.keys)
}

func (sr *snapReader) end() error {
	n, err := binary.ReadUvarint(&sr.c)
	if err != nil {
		return fmt.Errorf("%w: snapshot trailer: %v", ErrCorrupt, err)
	}
	want := sr.c.crc
	var crc [4]byte
	if _, err := io.ReadFull(sr.c.r, crc[:]); err != nil {
		return fmt.Errorf("%w: snapshot checksum: %v", ErrCorrupt, err)
	}
	if got := binary.LittleEndian.Uint32(crc[:]); got != want {
		return fmt.Errorf("%w: snapshot checksum %08x, computed %08x", ErrCorrupt, got, want)
	}
	if n != sr.keys {
		return fmt.Errorf("%w: snapshot says %d keys, holds %d", ErrCorrupt, n, sr.keys)
	}
	return nil
}
