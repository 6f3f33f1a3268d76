package sortio

// Reads of mapped files declared to an emulated device (sort.Options.Device,
// BRAID_DEVICE; persist's "Emulated devices"). Writes need nothing here:
// every write goes through Region.Copy (Mapped.Put), which charges the
// device. Each declaration is made by the goroutine that reads, so that the
// device sees as many readers as the pool has. Without a device these are
// a nil check.

// ReadSeq declares a sequential read of b, a range of m.
func (m *Mapped) ReadSeq(b []byte) {
	if m != nil && m.R != nil {
		m.R.ReadSeq(b)
	}
}

// ReadRandN declares n random reads of size bytes of m (a gather of
// records or values by pointer).
func (m *Mapped) ReadRandN(n int64, size int) {
	if m != nil && m.R != nil && n > 0 {
		m.R.ReadRandN(int(n), size)
	}
}

// ReadStrided declares reads of size bytes every stride bytes of b (the
// keys of fixed-size records).
func (m *Mapped) ReadStrided(b []byte, stride, size int) {
	if m != nil && m.R != nil {
		m.R.ReadStrided(b, stride, size)
	}
}
