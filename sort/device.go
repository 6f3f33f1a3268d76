package sort

import (
	"github.com/braid-pm/braid/persist/device"
)

// declareKeys declares the key reads of one partition of a source that
// lies in a mapped file: fixed-size records at their stride; KLV records
// (each key followed by its length) at their mean stride over the part.
func (s *source) declareKeys(pt klvPart, k int) {
	if s.in == nil || pt.n == 0 {
		return
	}
	if s.parts == nil {
		rs := int64(s.rs)
		s.in.ReadStrided(s.src[pt.off*rs:(pt.off+pt.n)*rs], s.rs, k)
		return
	}
	// A KLV part's end is where the next part starts, or the source's end.
	end := int64(len(s.src))
	for _, q := range s.parts {
		if q.off > pt.off && q.off < end {
			end = q.off
		}
	}
	s.in.ReadStrided(s.src[pt.off:end], int((end-pt.off)/pt.n), k+klvHeader)
}

// declareGather declares the value reads of n records gathered by pointer
// from the emitter's source, of size bytes each (the values of fixed-size
// records, or whole KLV records), when that source is the mapped input.
func (e *emitter) declareGather(n int64, size int) {
	if e.inDRAM || len(e.src) == 0 || len(e.j.src) == 0 || &e.src[0] != &e.j.src[0] {
		return
	}
	e.j.in.ReadRandN(n, size)
}

// device is the emulated device of the sort's files: Options.Device, or
// nil for BRAID_DEVICE's (persist reads it when a file is mapped).
func (s *Sorter) device() *device.Device { return s.o.Device }
