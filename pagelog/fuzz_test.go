package pagelog_test

import (
	"bytes"
	"errors"
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

// FuzzDecodeLog: the micro-log header decoder never panics; a log it
// accepts names a page of its lane and passes its CRC, and flipping any
// byte of its header or of its logged lines makes it refuse the log.
func FuzzDecodeLog(f *testing.F) {
	const ps = 256
	mk := func(crc bool, pid uint64, mask uint64, fill byte) ([]byte, []byte) {
		s, r := mustCreate(f, pagelog.Options{Pages: 5, Slots: 7, PageSize: ps, MicroLogLines: 4, PayloadCRC: crc})
		page := bytes.Repeat([]byte{fill}, ps)
		pagelog.SetBroken(s, "microlog-no-invalidate") // leaves the log committed
		if err := s.WriteLines(pid, page, []uint64{mask}); err != nil {
			f.Fatal(err)
		}
		l := int(pid % 2)
		h := r.Bytes()[pagelog.LogOffset(s, l):]
		return append([]byte(nil), h[:pagelog.LogHeaderSize(s)]...), append([]byte(nil), h[pagelog.LogHeaderSize(s):pagelog.LogHeaderSize(s)+ps]...)
	}
	h, d := mk(false, 3, 0b1010, 7)
	f.Add(false, uint8(1), h, d)
	h, d = mk(true, 2, 0b1, 9)
	f.Add(true, uint8(0), h, d)
	f.Fuzz(func(t *testing.T, crc bool, lane uint8, h, data []byte) {
		if len(h) < 256 || len(data) < ps {
			return
		}
		l := int(lane % 2)
		pid, n, ok, err := pagelog.DecodeLog(crc, ps, 5, 7, l, h, data)
		if err != nil {
			if !errors.Is(err, persist.ErrCorrupt) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if !ok {
			return
		}
		if pid >= 5 || int(pid%2) != l || n < 1 || n > ps/64 {
			t.Fatalf("accepted a log of page %d, %d lines, on lane %d", pid, n, l)
		}
		for b := 0; b < 40+n*64; b++ {
			g, e := append([]byte(nil), h...), append([]byte(nil), data...)
			if b < 40 {
				g[b] ^= 0x41
			} else {
				e[b-40] ^= 0x41
			}
			if _, _, ok, err := pagelog.DecodeLog(crc, ps, 5, 7, l, g, e); ok && err == nil {
				t.Fatalf("log accepted with byte %d flipped", b)
			}
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
	f.Add(append([]byte(nil), r.Bytes()[:64]...))
	f.Add(make([]byte, 10))
	f.Fuzz(func(t *testing.T, b []byte) {
		err := pagelog.DecodeSuper(b)
		if err != nil && !errors.Is(err, pagelog.ErrBadFormat) && !errors.Is(err, persist.ErrCorrupt) {
			t.Fatalf("unexpected error kind: %v", err)
		}
	})
}

// FuzzOpen patches arbitrary bytes into the metadata of a valid store (the
// superblock, the slot headers, the micro-log headers) and opens it:
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
		s, r := mustCreate(f, o)
		for v := 1; v <= 3; v++ {
			for p := range uint64(5) {
				if err := s.Write(p, pattern(p, v, 256)); err != nil {
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
		// the micro-log headers.
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
