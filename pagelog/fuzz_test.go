package pagelog_test

import (
	"errors"
	"testing"

	"github.com/braid-pm/braid/pagelog"
	"github.com/braid-pm/braid/persist"
)

// FuzzDecodeHeader feeds arbitrary bytes and geometries to the slot-header
// decoder: it must never panic, and a header it accepts names a page that
// exists.
func FuzzDecodeHeader(f *testing.F) {
	f.Add(uint8(1), uint16(5), uint16(7), uint8(3), uint16(0), []byte{1 << 3, 0, 0, 0, 0, 0, 0, 0})
	f.Add(uint8(2), uint16(5), uint16(7), uint8(0), uint16(6), []byte{255, 255, 255, 255, 255, 255, 255, 255, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add(uint8(3), uint16(5), uint16(7), uint8(0), uint16(5), make([]byte, 32))
	f.Fuzz(func(t *testing.T, layout uint8, pages, slots uint16, pidBits uint8, i uint16, h []byte) {
		used, pid, _, err := pagelog.DecodeHeader(pagelog.Layout(layout%3+1), int(pages), int(slots), int(pidBits%64), int(i), h)
		if err != nil {
			return
		}
		if used && pid >= uint64(pages) {
			t.Fatalf("accepted a header naming page %d of %d", pid, pages)
		}
	})
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
// recovery must return a store that passes Read without panicking, or an
// error wrapping ErrCorrupt, ErrBadFormat or ErrTooSmall — never panic or
// hang.
func FuzzOpen(f *testing.F) {
	type image struct {
		r         *persist.Region
		snap      []byte
		metaEnd   int
		pageSize  int
		hdrOffset int
	}
	var imgs []image
	for _, l := range layouts {
		o := pagelog.Options{Layout: l, Pages: 5, Slots: 7, PageSize: 256}
		s, r := mustCreate(f, o)
		for v := 1; v <= 3; v++ {
			for p := range uint64(5) {
				if err := s.Write(p, pattern(p, v, 256)); err != nil {
					f.Fatal(err)
				}
			}
		}
		imgs = append(imgs, image{r: r, snap: append([]byte(nil), r.Bytes()...), metaEnd: pagelog.PayloadOffset(s, 0), pageSize: 256, hdrOffset: pagelog.HeaderOffset(s, 0)})
		s.Close()
	}
	f.Add(uint8(0), uint16(0), []byte{0})
	f.Add(uint8(1), uint16(70), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add(uint8(2), uint16(200), []byte{255, 255, 255, 255})
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
			if err := s.Read(p, buf); err != nil && !errors.Is(err, persist.ErrCorrupt) {
				t.Fatalf("Read(%d): %v", p, err)
			}
		}
		_ = s.Check()
		s.Close()
	})
}
