package raftstore

import (
	"errors"
	"testing"

	"github.com/braid-pm/braid/persist"
	"github.com/hashicorp/raft"
)

// FuzzDecode: any bytes decode to an entry or fail with ErrCorrupt, never
// panic; what decodes encodes back to a record that decodes the same.
func FuzzDecode(f *testing.F) {
	f.Add(encode(nil, entry(3, 2)))
	f.Add(encode(nil, entry(10, 1)))
	f.Add(make([]byte, recOverhead))
	f.Fuzz(func(t *testing.T, b []byte) {
		var l raft.Log
		if err := decode(b, &l); err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decode: %v, not ErrCorrupt", err)
			}
			return
		}
		var m raft.Log
		if err := decode(encode(nil, &l), &m); err != nil || m.Index != l.Index || m.Term != l.Term || string(m.Data) != string(l.Data) || string(m.Extensions) != string(l.Extensions) || !m.AppendedAt.Equal(l.AppendedAt) {
			t.Fatalf("re-encoded entry decodes as %+v (%v), want %+v", m, err, l)
		}
	})
}

// FuzzOpen: a store image with bytes flipped where the fuzzer says opens
// or fails with an error, and an opened one answers every read with an
// entry or an error: no panic, no hang.
func FuzzOpen(f *testing.F) {
	img := fuzzImage(f)
	f.Add(uint32(0), byte(0))
	f.Add(uint32(100), byte(1))
	f.Add(uint32(metaArea+600), byte(0x80))
	f.Add(uint32(metaArea+2*crashGeometry.StableSize+700), byte(0x10))
	f.Fuzz(func(t *testing.T, at uint32, x byte) {
		r, err := persist.Anonymous(len(img), nil)
		if err != nil {
			t.Skip(err)
		}
		defer r.Close()
		copy(r.Bytes(), img)
		r.Bytes()[int(at)%len(img)] ^= x
		s, err := OpenRegion(r, nil)
		if err != nil {
			return
		}
		defer s.Close()
		first, _ := s.FirstIndex()
		last, _ := s.LastIndex()
		for i := first; i <= last && i < first+1000; i++ {
			_ = s.GetLog(i, new(raft.Log))
		}
		_, _ = s.Get([]byte("CurrentTerm"))
	})
}

func fuzzImage(f *testing.F) []byte {
	o := crashGeometry
	n, err := Footprint(&o)
	if err != nil {
		f.Fatal(err)
	}
	r, err := persist.Anonymous(n, nil)
	if err != nil {
		f.Skip(err)
	}
	defer r.Close()
	s, err := Create(r, &o)
	if err != nil {
		f.Fatal(err)
	}
	for i := uint64(1); i <= 40; i += 4 {
		if err := s.StoreLogs(entries(i, i+3, 1)); err != nil {
			f.Fatal(err)
		}
	}
	if err := s.DeleteRange(1, 10); err != nil {
		f.Fatal(err)
	}
	if err := s.SetUint64([]byte("CurrentTerm"), 4); err != nil {
		f.Fatal(err)
	}
	if err := s.Close(); err != nil {
		f.Fatal(err)
	}
	return append([]byte(nil), r.Bytes()...)
}
