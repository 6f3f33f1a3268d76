package sort

import "github.com/braid-pm/braid/persist"

// Reads of mapped files declared to an emulated device (Options.Device,
// BRAID_DEVICE; persist's "Emulated devices"). Writes need nothing here:
// every write goes through Region.Copy (mapped.put), which charges the
// device. Each declaration is made by the goroutine that reads, so that the
// device sees as many readers as the pool has. Without a device these are
// a nil check.

// readSeq declares a sequential read of b, a range of m.
func (m *mapped) readSeq(b []byte) {
	if m != nil && m.r != nil {
		m.r.ReadSeq(b)
	}
}

// readRandN declares n random reads of size bytes of m (a gather of
// records or values by pointer).
func (m *mapped) readRandN(n int64, size int) {
	if m != nil && m.r != nil && n > 0 {
		m.r.ReadRandN(int(n), size)
	}
}

// readStrided declares reads of size bytes every stride bytes of b (the
// keys of fixed-size records).
func (m *mapped) readStrided(b []byte, stride, size int) {
	if m != nil && m.r != nil {
		m.r.ReadStrided(b, stride, size)
	}
}

// declareKeys declares the key reads of one partition of a source that
// lies in a mapped file: fixed-size records at their stride; KLV records
// (each key followed by its length) at their mean stride over the part.
func (s *source) declareKeys(pt klvPart, k int) {
	if s.in == nil || pt.n == 0 {
		return
	}
	if s.parts == nil {
		rs := int64(s.rs)
		s.in.readStrided(s.src[pt.off*rs:(pt.off+pt.n)*rs], s.rs, k)
		return
	}
	// A KLV part's end is where the next part starts, or the source's end.
	end := int64(len(s.src))
	for _, q := range s.parts {
		if q.off > pt.off && q.off < end {
			end = q.off
		}
	}
	s.in.readStrided(s.src[pt.off:end], int((end-pt.off)/pt.n), k+klvHeader)
}

// declareGather declares the value reads of n records gathered by pointer
// from the emitter's source, of size bytes each (the values of fixed-size
// records, or whole KLV records), when that source is the mapped input.
func (e *emitter) declareGather(n int64, size int) {
	if e.inDRAM || len(e.src) == 0 || len(e.j.src) == 0 || &e.src[0] != &e.j.src[0] {
		return
	}
	e.j.in.readRandN(n, size)
}

// device is the emulated device of the sort's files: Options.Device, or
// nil for BRAID_DEVICE's (persist reads it when a file is mapped).
func (s *Sorter) device() *persist.Device { return s.o.Device }
