package pagelog_test

import (
	"bytes"
	"errors"
	"math/bits"
	"testing"

	"github.com/braid-pm/braid/pagelog"
	"github.com/braid-pm/braid/persist"
)

// FuzzDecodeHeader feeds arbitrary bytes and geometries to the slot-header
// decoder: it must never panic; a header it accepts names a page that
// exists, and a copy-on-write header it accepts has every word sealed
// (changing any one byte of it makes the decoder refuse it).
func FuzzDecodeHeader(f *testing.F) {
	f.Add(uint8(0), false, uint16(5), uint16(7), uint8(3), uint16(0), le64s(pagelog.Seal(used|1<<3|2)))
	f.Add(uint8(1), false, uint16(5), uint16(7), uint8(0), uint16(6), le64s(pagelog.Seal(used|4), pagelog.Seal(9)))
	f.Add(uint8(1), true, uint16(5), uint16(7), uint8(0), uint16(6), le64s(pagelog.Seal(used|4), pagelog.Seal(9), pagelog.Seal(0xdeadbeef), 0))
	f.Add(uint8(2), false, uint16(5), uint16(7), uint8(0), uint16(5), make([]byte, 32))
	f.Fuzz(func(t *testing.T, layout uint8, crc bool, pages, slots uint16, pidBits uint8, i uint16, h []byte) {
		l := pagelog.Layout(layout%3 + 1)
		used, pid, _, err := pagelog.DecodeHeader(l, crc, int(pages), int(slots), int(pidBits%64), int(i), h)
		if err != nil {
			if !errors.Is(err, persist.ErrCorrupt) && !errors.Is(err, pagelog.ErrInvalid) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if used && pid >= uint64(pages) {
			t.Fatalf("accepted a header naming page %d of %d", pid, pages)
		}
		if l == pagelog.Checksum {
			return
		}
		n := 16
		if l == pagelog.Packed {
			n = 8
		}
		if crc {
			n *= 2
		}
		for b := 0; b < n; b++ {
			for _, x := range []byte{0x01, 0x80, 0xff} {
				g := append([]byte(nil), h[:n]...)
				g[b] ^= x
				if _, _, _, err := pagelog.DecodeHeader(l, crc, int(pages), int(slots), int(pidBits%64), int(i), g); err == nil {
					t.Fatalf("header %x accepted with byte %d flipped by %#x", h[:n], b, x)
				}
			}
		}
	})
}

// FuzzDecodeMicro: the micro-log entry decoder never panics and rejects
// with an error wrapping ErrCorrupt; an entry it accepts names a page of
// its lane and a slot that exist, marks only lines of the page, is exactly
// as long as its mask says, carries a CRC word only with payload CRCs, and
// encodes back to the same bytes. (walog's CRC-32C guards an entry's bytes
// before the decoder sees them.)
func FuzzDecodeMicro(f *testing.F) {
	const ps = 256
	page := bytes.Repeat([]byte{7}, ps)
	f.Add(false, uint8(1), pagelog.EncodeMicro(false, ps, 5, 7, 0, 3, 6, 9, 0, []uint64{0b1010}, page))
	f.Add(true, uint8(0), pagelog.EncodeMicro(true, ps, 5, 7, 0, 2, 1, 1, pagelog.Seal(0xdeadbeef), []uint64{0b1}, page))
	f.Add(false, uint8(0), make([]byte, 40))
	f.Fuzz(func(t *testing.T, crc bool, lane uint8, e []byte) {
		l := int(lane % 2)
		pid, slot, ver, mask, lines, err := pagelog.DecodeMicro(crc, ps, 5, 7, 0, l, e)
		if err != nil {
			if !errors.Is(err, persist.ErrCorrupt) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if pid >= 5 || int(pid%2) != l || slot >= 7 {
			t.Fatalf("accepted an entry of page %d in slot %d on lane %d", pid, slot, l)
		}
		if len(mask) != 1 || mask[0] == 0 || mask[0]>>(ps/64) != 0 || len(lines) != 64*bits.OnesCount64(mask[0]) {
			t.Fatalf("accepted mask %x with %d bytes of lines", mask, len(lines))
		}
		crcw := le64(e[24:])
		if !crc && crcw != 0 {
			t.Fatalf("accepted a CRC word %#x without payload CRCs", crcw)
		}
		img := make([]byte, ps)
		k := 0
		for i := range ps / 64 {
			if mask[0]&(1<<i) != 0 {
				k += copy(img[64*i:64*i+64], lines[k:])
			}
		}
		if back := pagelog.EncodeMicro(crc, ps, 5, 7, 0, pid, slot, ver, crcw, mask, img); !bytes.Equal(back, e) {
			t.Fatalf("entry %x decodes to one that encodes as %x", e, back)
		}
	})
}

func le64s(ws ...uint64) []byte {
	b := make([]byte, 8*len(ws))
	for i, w := range ws {
		for k := range 8 {
			b[8*i+k] = byte(w >> (8 * k))
		}
	}
	return b
}

// FuzzDecodeSuper: the superblock decoder never panics.
func FuzzDecodeSuper(f *testing.F) {
	s, r := mustCreate(f, pagelog.Options{Pages: 5, PageSize: 256})
	s.Close()
	f.Add(append([]byte(nil), r.Bytes()[:64]...), byte(0))
	f.Add(append([]byte(nil), r.Bytes()[pagelog.SuperCopyOffset:pagelog.SuperCopyOffset+64]...), byte(1))
	f.Add(make([]byte, 10), byte(0))
	f.Fuzz(func(t *testing.T, b []byte, role byte) {
		err := pagelog.DecodeSuper(b, role&1)
		if err != nil && !errors.Is(err, pagelog.ErrBadFormat) && !errors.Is(err, persist.ErrCorrupt) && !errors.Is(err, persist.ErrTooSmall) {
			t.Fatalf("unexpected error kind: %v", err)
		}
	})
}

// FuzzOpen patches arbitrary bytes into the metadata of a valid store (the
// superblock, the slot headers, the micro logs) and opens it:
// recovery must return a store whose pages read back as written (or as an
// error wrapping ErrCorrupt), or an error wrapping ErrCorrupt, ErrBadFormat
// or ErrTooSmall — never panic or hang, never return a wrong page.
func FuzzOpen(f *testing.F) {
	type image struct {
		r         *persist.Region
		snap      []byte
		metaEnd   int
		hdrOffset int
	}
	var imgs []image
	for _, o := range []pagelog.Options{
		{Layout: pagelog.Packed}, {Layout: pagelog.TwoWord}, {Layout: pagelog.Checksum},
		{Layout: pagelog.Packed, PayloadCRC: true}, {Layout: pagelog.TwoWord, PayloadCRC: true},
	} {
		o.Pages, o.Slots, o.PageSize = 5, 7, 256
		if o.Layout != pagelog.Checksum {
			o.MicroLogLines, o.MicroLogBytes = 2, 4096
		}
		s, r := mustCreate(f, o)
		for v := 1; v <= 3; v++ {
			for p := range uint64(5) {
				if err := s.Write(p, pattern(p, v, 256)); err != nil {
					f.Fatal(err)
				}
			}
		}
		if o.Layout != pagelog.Checksum {
			// Micro-log entries for the current versions (their lines
			// are in place already: the pages still read as version 3).
			for p := range uint64(5) {
				if err := s.WriteLines(p, pattern(p, 3, 256), lineMask(256, int(p%4))); err != nil {
					f.Fatal(err)
				}
			}
		}
		imgs = append(imgs, image{r: r, snap: append([]byte(nil), r.Bytes()...), metaEnd: pagelog.PayloadOffset(s, 0), hdrOffset: pagelog.HeaderOffset(s, 0)})
		s.Close()
	}
	f.Add(uint8(0), uint16(0), []byte{0})
	f.Add(uint8(1), uint16(70), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add(uint8(2), uint16(200), []byte{255, 255, 255, 255})
	f.Add(uint8(3), uint16(80), []byte{0x5a})
	f.Fuzz(func(t *testing.T, which uint8, off uint16, patch []byte) {
		img := imgs[int(which)%len(imgs)]
		mem := img.r.Bytes()
		copy(mem, img.snap)
		// Offsets 0..63 hit the superblock, the rest the header table and
		// the micro logs.
		span := 64 + img.metaEnd - img.hdrOffset
		o := int(off) % span
		if o >= 64 {
			o += img.hdrOffset - 64
		}
		copy(mem[o:img.metaEnd], patch)
		s, err := pagelog.Open(img.r, nil)
		if err != nil {
			if !errors.Is(err, persist.ErrCorrupt) && !errors.Is(err, pagelog.ErrBadFormat) && !errors.Is(err, pagelog.ErrTooSmall) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		buf := make([]byte, s.PageSize())
		for p := range uint64(s.Pages()) {
			err := s.Read(p, buf)
			if err != nil && !errors.Is(err, persist.ErrCorrupt) {
				t.Fatalf("Read(%d): %v", p, err)
			}
			if err == nil && !bytes.Equal(buf, pattern(p, 3, 256)) {
				t.Fatalf("Read(%d) returned a wrong page (first word %#x)", p, le64(buf))
			}
		}
		_ = s.Check()
		s.Close()
	})
}
