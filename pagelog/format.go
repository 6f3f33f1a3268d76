package pagelog

import (
	"encoding/binary"
	"math/bits"

	"github.com/braid-pm/braid/persist"
)

// Sealed words. Every word of a copy-on-write slot header (and the page
// CRC word of a micro-log entry) is "sealed": 48 bits of data and a 16-bit
// CRC of them in one 8-byte word, written with one store,
//
//	word = data<<16 | crc16(data)
//
// so a word is still written failure-atomically, and a word that was
// damaged after it was written fails its check. The CRC is CRC-16/DNP's
// polynomial (x^16+x^13+x^12+x^11+x^10+x^8+x^6+x^5+x^2+1, 0x3d65),
// computed most significant bit first with initial value 0: the code is
// linear, 0 seals 0, and over these 64-bit words its Hamming distance is 6.
// A damaged word passes only if the damage is itself a codeword, so it
// fails for every error of up to 5 bits and for every burst of up to 16
// bits (any damage confined to one or two adjacent bytes);
// TestSealDetects enumerates all of these patterns. Other damage passes
// with probability 2^-16 per word.
//
// 0 seals 0, so a word zeroed by damage would pass its check: no header
// word of a valid store is ever zero. An unused slot holds unusedMark (its
// page-id word, or Packed's header word), a TwoWord version word always
// carries verMark, so a zeroed header word is corruption, not "unused"
// or "version 0" (which would let a page's previous version in its lane's
// spare take the place of the current one unseen).
const (
	sealData = 48
	dataMask = 1<<sealData - 1
	// usedBit marks a used slot in the data of a page-id word.
	usedBit = 1 << (sealData - 1)
	// unusedMark is the data of the page-id word of an unused slot.
	unusedMark = 1
	// verMark is set in the data of every TwoWord version word.
	verMark = 1 << (sealData - 1)
)

// crc16Masks[j] has bit i set when bit j of the CRC of data 1<<i is set:
// the CRC is linear, so bit j of crc16(d) is the parity of d&crc16Masks[j].
// Sixteen independent AND+POPCNT instead of a chain of six dependent table
// look-ups: the write path computes a sealed word on every page write, and
// a table whose lines were evicted by the page copies cost a chain of
// cache misses there.
var crc16Masks = func() (m [16]uint64) {
	for i := range sealData {
		c := crc16Bitwise(1 << i)
		for j := range m {
			m[j] |= uint64(c>>j&1) << i
		}
	}
	return m
}()

// crc16Bitwise is the definition: the 48 bits of d, most significant
// first, through the polynomial 0x3d65 from 0.
func crc16Bitwise(d uint64) uint16 {
	var c uint16
	for i := sealData - 1; i >= 0; i-- {
		top := c>>15 ^ uint16(d>>uint(i))&1
		c <<= 1
		if top != 0 {
			c ^= 0x3d65
		}
	}
	return c
}

// crc16 is the CRC of the 48-bit data d.
func crc16(d uint64) uint16 {
	var c uint16
	for j := range crc16Masks {
		c |= uint16(bits.OnesCount64(d&crc16Masks[j])&1) << j
	}
	return c
}

// seal makes the sealed word of data d (d < 2^48).
func seal(d uint64) uint64 { return d<<16 | uint64(crc16(d)) }

// unseal returns the data of a sealed word and whether its check holds.
func unseal(w uint64) (uint64, bool) {
	d := w >> 16
	return d, uint16(w) == crc16(d)
}

// Slot headers, one per slot in the header table, little-endian words.
//
// Packed (8 bytes; 16 with payload CRCs): word 0 is the commit word,
// sealed(used | pvn<<pidBits | pid), written with one 8-byte store. The
// pvn has 47-pidBits bits and counts modulo 2^(47-pidBits): a page has at
// most two slots naming it, whose versions differ by one (see
// recoverCoW), so the newer one is the one a step ahead. sealed(unusedMark)
// is an unused slot; 0 is corruption.
//
// TwoWord (16 bytes; 32 with payload CRCs; both words on one cache line):
// word 0 sealed(used | pid) (sealed(unusedMark) = unused), word 1
// sealed(verMark | pvn) with pvn < 2^47. The pid is stored before the pvn,
// so a used slot may show any pvn, including 0 (the slot was unused
// before); an unused slot with a pvn is not a state any crash leaves, nor
// is a zero word.
//
// Payload CRC (Packed word 1, TwoWord word 2): sealed(CRC32C(payload,
// pid)), written before the commit word's barrier; TwoWord word 3 is 0.
//
// Checksum (32 bytes): word 0 pid (noPID = empty backup), word 1 seq (the
// page's version), word 2 CRC32C of payload, pid and seq (high half
// zero), word 3 zero. Slot i < pages is the home of page i; slot pages+l
// is the backup of lane l.
const noPID = ^uint64(0)

// header is a decoded slot header.
type header struct {
	used bool
	pid  uint64
	ver  uint64 // pvn (copy-on-write) or seq (checksum)
	crc  uint32 // Checksum, and copy-on-write with payload CRCs
}

// decodeHeader decodes the header of slot i (h holds g.hdrSize bytes) and
// checks what can be checked without the payload.
func (g *geometry) decodeHeader(i int, h []byte) (header, error) {
	var hd header
	var err error
	switch g.layout {
	case Packed:
		hd, err = g.decodePacked(i, h)
	case TwoWord:
		hd, err = g.decodeTwoWord(i, h)
	default:
		return g.decodeChecksum(i, h)
	}
	if err != nil || !g.crc {
		return hd, err
	}
	w := binary.LittleEndian.Uint64(h[g.crcOff:])
	c, ok := unseal(w)
	if !ok || c>>32 != 0 {
		return hd, corrupt("slot %d: payload CRC word %#016x fails its check", i, w)
	}
	hd.crc = uint32(c)
	return hd, nil
}

// decodePacked decodes a Packed header (without its payload CRC word).
func (g *geometry) decodePacked(i int, h []byte) (header, error) {
	le := binary.LittleEndian
	var hd header
	w := le.Uint64(h)
	d, ok := unseal(w)
	if !ok {
		return hd, corrupt("slot %d: header %#016x fails its check", i, w)
	}
	switch {
	case d == 0:
		return hd, corrupt("slot %d: header is zero (zeroed: an unused slot has its own mark)", i)
	case d == unusedMark:
	case d&usedBit == 0:
		return hd, corrupt("slot %d: header %#016x is neither used nor unused", i, w)
	default:
		d &^= usedBit
		hd = header{used: true, pid: d & (1<<g.pidBits - 1), ver: d >> g.pidBits}
		if hd.pid >= uint64(g.pages) {
			return hd, corrupt("slot %d: header %#016x names page %d of %d", i, w, hd.pid, g.pages)
		}
	}
	return hd, nil
}

// decodeTwoWord decodes a TwoWord header (without its payload CRC word).
func (g *geometry) decodeTwoWord(i int, h []byte) (header, error) {
	le := binary.LittleEndian
	var hd header
	pw, vw := le.Uint64(h), le.Uint64(h[8:])
	p, ok := unseal(pw)
	if !ok {
		return hd, corrupt("slot %d: page-id word %#016x fails its check", i, pw)
	}
	v, ok := unseal(vw)
	if !ok {
		return hd, corrupt("slot %d: version word %#016x fails its check", i, vw)
	}
	if v&verMark == 0 {
		return hd, corrupt("slot %d: version word %#016x has no version mark (zeroed?)", i, vw)
	}
	hd.ver = v &^ verMark
	switch {
	case p == 0:
		return hd, corrupt("slot %d: page-id word is zero (zeroed: an unused slot has its own mark)", i)
	case p == unusedMark:
		if hd.ver != 0 {
			return hd, corrupt("slot %d: unused slot with version %d", i, hd.ver)
		}
	default:
		if p&usedBit == 0 {
			return hd, corrupt("slot %d: page-id word %#016x is neither used nor unused", i, pw)
		}
		hd.used, hd.pid = true, p&^usedBit
		if hd.pid >= uint64(g.pages) {
			return hd, corrupt("slot %d: header names page %d of %d", i, hd.pid, g.pages)
		}
	}
	if g.crc && le.Uint64(h[24:]) != 0 {
		return hd, corrupt("slot %d: reserved header word %#016x, want 0", i, le.Uint64(h[24:]))
	}
	return hd, nil
}

// decodeChecksum decodes a Checksum header.
func (g *geometry) decodeChecksum(i int, h []byte) (header, error) {
	le := binary.LittleEndian
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

// packedWord is the commit word of a Packed header.
func (g *geometry) packedWord(pid, pvn uint64) uint64 {
	return seal(usedBit | pvn<<g.pidBits | pid)
}

// verStep compares two Packed versions of one page: 1 when a is b's
// successor, -1 when b is a's, 0 otherwise (not a state any crash leaves).
func (g *geometry) verStep(a, b uint64) int {
	switch (a - b) & g.verMask {
	case 1:
		return 1
	case g.verMask:
		return -1
	}
	return 0
}

// pageCRC is the checksum of a page version of the Checksum layout:
// CRC32C of the payload, then of pid and seq, so the CRC of a zero page is
// computed once at Create.
func pageCRC(pid, seq uint64, page []byte) uint32 {
	return crcTail(persist.CRC32C(page), pid, seq)
}

// payloadCRC is the payload checksum of a copy-on-write page (payload CRC
// option): CRC32C of the payload, then of the page id, so a header naming
// the wrong slot fails the check even if its own check passed.
func payloadCRC(pid uint64, page []byte) uint32 {
	return crcWord(persist.CRC32C(page), pid)
}

// crcTail continues CRC c over pid and seq (little-endian).
func crcTail(c uint32, pid, seq uint64) uint32 {
	return crcWord(crcWord(c, pid), seq)
}

// crcWord continues CRC c over the 8 little-endian bytes of v, as
// persist.UpdateCRC32C would, byte by byte through crcBytes: a slice of a
// local array handed to persist.UpdateCRC32C escapes (its portable twin
// calls hash/crc32) and would allocate on every page write. TestCRCTail
// checks it against persist.UpdateCRC32C.
func crcWord(c uint32, v uint64) uint32 {
	c = ^c
	for range 8 {
		c = crcBytes[byte(c)^byte(v)] ^ c>>8
		v >>= 8
	}
	return ^c
}

// crcBytes[i] is the CRC-32C register step of byte i (reflected, no
// conditioning), taken from persist.UpdateCRC32C: ^UpdateCRC32C(^0, {i}).
var crcBytes = func() (t [256]uint32) {
	var b [1]byte
	for i := range t {
		b[0] = byte(i)
		t[i] = ^persist.UpdateCRC32C(^uint32(0), b[:])
	}
	return t
}()

// Micro-log entries. Each lane's micro log is a walog PopLog (one barrier
// per append, a CRC-32C per entry) in the lane's log area; an entry is the
// redo record of one WriteLines through the micro log, little-endian:
//
//	@0   pid   u64  the page
//	@8   slot  u64  the slot that held the page's current version
//	@16  ver   u64  that version's number (pvn)
//	@24  crcw  u64  payload CRC option: the page's new CRC word; else 0
//	@32  mask  maskWords x u64: bit i set = line i of the page is logged
//	@32+8*maskWords  the logged lines, one after the other, in line order
//
// so the k-th set bit of the mask names the page line that logged line k
// belongs to. Recovery replays an entry only into the version it was
// written against (the page's current slot and version are slot and ver):
// an entry the page has since left behind with a copy-on-write write is
// stale and skipped (see replayLogs for why it cannot come back).
const microFixed = 32

// microMax is the largest micro-log entry for pages of pageSize bytes.
func microMax(pageSize int) int {
	lines := pageSize / lineSize
	return microFixed + 8*((lines+63)/64) + pageSize
}

// microFootprint bounds the bytes a walog PopLog entry of n bytes takes:
// 16 bytes of header and a 4-byte CRC, padded to 8.
func microFootprint(n int) int { return n + 32 }

// micro is a decoded micro-log entry.
type micro struct {
	pid, slot, ver uint64
	crcw           uint64
	mask           []uint64 // aliases the entry
	lines          []byte   // aliases the entry
}

// decodeMicro checks and decodes an entry of lane l's micro log. The mask
// is decoded into m (g.maskWords words); lines aliases e.
func (g *geometry) decodeMicro(l int, e []byte, m []uint64) (micro, error) {
	le := binary.LittleEndian
	var d micro
	if len(e) < microFixed+8*g.maskWords {
		return d, corrupt("micro log of lane %d: an entry of %d bytes", l, len(e))
	}
	d.pid, d.slot, d.ver, d.crcw = le.Uint64(e), le.Uint64(e[8:]), le.Uint64(e[16:]), le.Uint64(e[24:])
	if d.pid >= uint64(g.pages) || int(d.pid%uint64(g.lanes)) != l {
		return d, corrupt("micro log of lane %d names page %d", l, int64(d.pid))
	}
	if d.slot >= uint64(g.slots) {
		return d, corrupt("micro log of lane %d: page %d in slot %d of %d", l, d.pid, int64(d.slot), g.slots)
	}
	n := 0
	for i := range m {
		m[i] = le.Uint64(e[microFixed+8*i:])
		n += bits.OnesCount64(m[i])
	}
	if extra := g.maskWords*64 - g.lines; extra > 0 && m[len(m)-1]>>(64-extra) != 0 {
		return d, corrupt("micro log of lane %d marks lines beyond the page's %d", l, g.lines)
	}
	if want := microFixed + 8*g.maskWords + n*lineSize; n == 0 || len(e) != want {
		return d, corrupt("micro log of lane %d: an entry of %d bytes for %d lines (want %d)", l, len(e), n, want)
	}
	if g.crc {
		if c, ok := unseal(d.crcw); !ok || c>>32 != 0 {
			return d, corrupt("micro log of lane %d: page CRC word %#016x fails its check", l, d.crcw)
		}
	} else if d.crcw != 0 {
		return d, corrupt("micro log of lane %d: page CRC word %#016x in a store without payload CRCs", l, d.crcw)
	}
	if g.layout == Packed && d.ver > g.verMask {
		return d, corrupt("micro log of lane %d: version %d of page %d exceeds the version bits", l, d.ver, d.pid)
	}
	d.mask, d.lines = m, e[microFixed+8*g.maskWords:]
	return d, nil
}

// encodeMicro lays out the entry of a micro-log write in e (at least
// microMax bytes) and returns its length: the header fields, the mask and
// the lines of page in runs (the mask's runs, appendRuns).
func (g *geometry) encodeMicro(e []byte, pid, slot, ver, crcw uint64, mask []uint64, runs []lineRun, page []byte) int {
	le := binary.LittleEndian
	le.PutUint64(e, pid)
	le.PutUint64(e[8:], slot)
	le.PutUint64(e[16:], ver)
	le.PutUint64(e[24:], crcw)
	for i, w := range mask {
		le.PutUint64(e[microFixed+8*i:], w)
	}
	k := microFixed + 8*len(mask)
	for _, r := range runs {
		k += copy(e[k:], page[r.lo*lineSize:r.hi*lineSize])
	}
	return k
}

// lineRun is a run [lo, hi) of marked lines.
type lineRun struct{ lo, hi int }

// appendRuns appends the runs of set bits of m to dst, in order: what
// nextRun yields, in one pass over the words (a micro-log write walks its
// runs twice).
func appendRuns(dst []lineRun, m []uint64) []lineRun {
	for i, w := range m {
		base := 64 * i
		for w != 0 {
			lo := bits.TrailingZeros64(w)
			n := min(bits.TrailingZeros64(^(w >> lo)), 64-lo)
			if k := len(dst); k > 0 && dst[k-1].hi == base+lo {
				dst[k-1].hi += n // the run goes on from the previous word
			} else {
				dst = append(dst, lineRun{base + lo, base + lo + n})
			}
			if lo+n == 64 {
				break
			}
			w &^= 1<<(lo+n) - 1
		}
	}
	return dst
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
