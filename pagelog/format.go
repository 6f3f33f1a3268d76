package pagelog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/bits"
)

// The superblock: the first 64 bytes of the region, little-endian.
//
//	@0  magic     u64  "braidPGL"
//	@8  version   u32  formatVersion
//	@12 layout    u32  Packed, TwoWord or Checksum
//	@16 pageSize  u32
//	@20 pidBits   u32  (Packed; 0 otherwise)
//	@24 pages     u64
//	@32 slots     u64
//	@40 reserved  16 bytes, zero
//	@56 crc       u32  CRC32C of bytes [0, 56)
//	@60 reserved  u32, zero
const (
	magic         = 0x4c4750646961_7262 // "braidPGL" little-endian
	formatVersion = 1
	superUsed     = 64
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// super is the decoded superblock.
type super struct {
	layout   Layout
	pageSize int
	pidBits  int
	pages    int
	slots    int
}

func encodeSuper(b []byte, s super) {
	clear(b[:superUsed])
	le := binary.LittleEndian
	le.PutUint64(b[0:], magic)
	le.PutUint32(b[8:], formatVersion)
	le.PutUint32(b[12:], uint32(s.layout))
	le.PutUint32(b[16:], uint32(s.pageSize))
	le.PutUint32(b[20:], uint32(s.pidBits))
	le.PutUint64(b[24:], uint64(s.pages))
	le.PutUint64(b[32:], uint64(s.slots))
	le.PutUint32(b[56:], crc32.Checksum(b[:56], castagnoli))
}

// decodeSuper checks and decodes a superblock (at least superUsed bytes).
func decodeSuper(b []byte) (super, error) {
	var s super
	le := binary.LittleEndian
	if m := le.Uint64(b[0:]); m != magic {
		return s, fmt.Errorf("%w: magic %#016x, want %#016x", ErrBadFormat, m, uint64(magic))
	}
	if c, want := le.Uint32(b[56:]), crc32.Checksum(b[:56], castagnoli); c != want {
		return s, corrupt("superblock checksum %#08x, computed %#08x", c, want)
	}
	if v := le.Uint32(b[8:]); v != formatVersion {
		return s, fmt.Errorf("%w: format version %d, this build reads %d", ErrBadFormat, v, formatVersion)
	}
	l, ps, pb := le.Uint32(b[12:]), le.Uint32(b[16:]), le.Uint32(b[20:])
	pages, slots := le.Uint64(b[24:]), le.Uint64(b[32:])
	switch {
	case l < uint32(Packed) || l > uint32(Checksum):
		return s, corrupt("superblock layout %d", l)
	case ps < MinPageSize || ps > MaxPageSize || ps%MinPageSize != 0:
		return s, corrupt("superblock page size %d", ps)
	case slots == 0 || slots > MaxSlots || pages == 0 || pages >= slots || slots-pages > MaxSpares:
		return s, corrupt("superblock says %d pages in %d slots", pages, slots)
	}
	s = super{layout: Layout(l), pageSize: int(ps), pidBits: int(pb), pages: int(pages), slots: int(slots)}
	if s.layout == Packed {
		if pb < uint32(pidBitsFor(s.pages)) || pb > maxPIDBits {
			return s, corrupt("superblock pid bits %d for %d pages", pb, pages)
		}
	} else if pb != 0 {
		return s, corrupt("superblock pid bits %d for layout %v", pb, s.layout)
	}
	return s, nil
}

// Slot headers, one per slot in the header table, little-endian words.
//
// Packed (8 bytes): pvn<<pidBits | pid, written with one 8-byte store.
// 0 is an unused slot; a used one has pvn >= 1.
//
// TwoWord (16 bytes, so both words share a cache line): word 0 pid
// (noPID = unused), word 1 pvn. The pid is stored before the pvn, so a
// used slot may show any pvn, including 0 (the slot was unused before).
//
// Checksum (32 bytes): word 0 pid (noPID = empty backup), word 1 seq (the
// page's version), word 2 CRC32C of pid, seq and payload (high half zero),
// word 3 zero. Slot i < pages is the home of page i; slot pages+l is the
// backup of lane l.
const noPID = ^uint64(0)

// header is a decoded slot header.
type header struct {
	used bool
	pid  uint64
	ver  uint64 // pvn (copy-on-write) or seq (checksum)
	crc  uint32 // Checksum only
}

// decodeHeader decodes the header of slot i (h holds g.hdrSize bytes) and
// checks what can be checked without the payload.
func (g *geometry) decodeHeader(i int, h []byte) (header, error) {
	le := binary.LittleEndian
	switch g.layout {
	case Packed:
		w := le.Uint64(h)
		if w == 0 {
			return header{}, nil
		}
		hd := header{used: true, pid: w & (1<<g.pidBits - 1), ver: w >> g.pidBits}
		if hd.ver == 0 {
			return hd, corrupt("slot %d: header %#016x has page id %d but version 0", i, w, hd.pid)
		}
		if hd.pid >= uint64(g.pages) {
			return hd, corrupt("slot %d: header %#016x names page %d of %d", i, w, hd.pid, g.pages)
		}
		return hd, nil
	case TwoWord:
		hd := header{pid: le.Uint64(h), ver: le.Uint64(h[8:])}
		if hd.pid == noPID {
			if hd.ver != 0 {
				return hd, corrupt("slot %d: unused slot with version %d", i, hd.ver)
			}
			return hd, nil
		}
		if hd.pid >= uint64(g.pages) {
			return hd, corrupt("slot %d: header names page %d of %d", i, hd.pid, g.pages)
		}
		hd.used = true
		return hd, nil
	default:
		hd := header{pid: le.Uint64(h), ver: le.Uint64(h[8:])}
		c, w3 := le.Uint64(h[16:]), le.Uint64(h[24:])
		hd.crc = uint32(c)
		if c>>32 != 0 || w3 != 0 {
			return hd, corrupt("slot %d: checksum header has reserved bits set", i)
		}
		if i < g.pages {
			if hd.pid != uint64(i) {
				return hd, corrupt("slot %d: home of page %d says page %d", i, i, int64(hd.pid))
			}
			hd.used = true
			return hd, nil
		}
		if hd.pid == noPID {
			return hd, nil
		}
		lane := i - g.pages
		if hd.pid >= uint64(g.pages) || int(hd.pid%uint64(g.lanes)) != lane {
			return hd, corrupt("slot %d: backup of lane %d names page %d", i, lane, int64(hd.pid))
		}
		hd.used = true
		return hd, nil
	}
}

// pageCRC is the checksum of a page version: CRC32C of the payload, then of
// pid and seq, so the CRC of a zero page is computed once at Create.
func pageCRC(pid, seq uint64, page []byte) uint32 {
	return crcTail(crc32.Update(0, castagnoli, page), pid, seq)
}

// crcTail continues CRC c over pid and seq (little-endian) byte by byte with
// the table, as crc32.Update does for short inputs: a slice of a local
// array handed to crc32.Update would escape and allocate on every write.
func crcTail(c uint32, pid, seq uint64) uint32 {
	c = ^c
	for _, v := range [2]uint64{pid, seq} {
		for range 8 {
			c = castagnoli[byte(c)^byte(v)] ^ c>>8
			v >>= 8
		}
	}
	return ^c
}

// Micro-log header of each lane (g.logHdr bytes, a multiple of 256):
//
//	@0  commit  u64  0 = empty, else pid+1: the log is valid
//	@8  count   u64  number of dirty lines (the mask's popcount)
//	@16 mask    maskWords x u64: bit i set = line i of the page is logged
//
// The log's data area (one page) holds the logged lines one after the
// other, in line order: the k-th set bit of the mask names the page line
// that log line k belongs to, so no mapping table is needed.

// decodeLog checks the header of lane l's micro log; ok is false for an
// empty log. The mask is returned in m (g.maskWords words).
func (g *geometry) decodeLog(l int, h []byte, m []uint64) (pid uint64, ok bool, err error) {
	le := binary.LittleEndian
	c := le.Uint64(h)
	if c == 0 {
		return 0, false, nil
	}
	pid = c - 1
	if pid >= uint64(g.pages) || int(pid%uint64(g.lanes)) != l {
		return pid, false, corrupt("micro log of lane %d names page %d", l, int64(pid))
	}
	n := 0
	for i := range m {
		m[i] = le.Uint64(h[16+8*i:])
		n += bits.OnesCount64(m[i])
	}
	if extra := g.maskWords*64 - g.lines; extra > 0 && m[len(m)-1]>>(64-extra) != 0 {
		return pid, false, corrupt("micro log of lane %d marks lines beyond the page's %d", l, g.lines)
	}
	if cnt := le.Uint64(h[8:]); n == 0 || cnt != uint64(n) {
		return pid, false, corrupt("micro log of lane %d: count %d, mask has %d lines", l, cnt, n)
	}
	return pid, true, nil
}

// nextRun returns the first run [lo, hi) of set bits in m at or after bit
// from, or lo = -1 when there is none.
func nextRun(m []uint64, from int) (lo, hi int) {
	n := len(m) * 64
	lo = -1
	for i := from; i < n; {
		w := m[i/64] >> (i % 64)
		if lo < 0 {
			if w == 0 {
				i = (i/64 + 1) * 64
				continue
			}
			i += bits.TrailingZeros64(w)
			lo = i
			continue
		}
		// Inside a run: count the ones from i.
		k := bits.TrailingZeros64(^w)
		if k > 64-i%64 {
			k = 64 - i%64
		}
		i += k
		if i%64 != 0 || k == 0 {
			return lo, i
		}
	}
	if lo < 0 {
		return -1, -1
	}
	return lo, n
}
