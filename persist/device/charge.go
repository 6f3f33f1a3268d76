package device

import "unsafe"

// What a region tells its device (persist.Device). persist calls these
// only for a region mapped with an emulating device; the persist README's
// "Emulated devices" says which region operations charge what.

// ChargeWrite charges a write-back or streaming store of [addr, addr+n).
func (d *Device) ChargeWrite(addr uintptr, n int) { d.chargeWrite(addr, n) }

// ChargeRead charges one read of [addr, addr+n): sequential, or one
// random read (its latency too) when random is set.
func (d *Device) ChargeRead(random bool, addr uintptr, n int) {
	class := seqRead
	if random {
		class = randRead
	}
	if n > 0 {
		d.chargeRead(class, d.readUnits(addr, n), 1)
	}
}

// ChargeReadN charges n random reads of size bytes each at offsets the
// caller does not give (a gather of records by pointer): each costs the
// units a read of size bytes at a random byte offset touches on average,
// (size-1)/Granularity + 1.
func (d *Device) ChargeReadN(n, size int) { d.readRandN(n, size) }

// ChargeStrided charges reads of size bytes at the start of every stride
// bytes of [addr, addr+n) (a key at the head of each record): when the
// gaps between them are shorter than a unit every unit is read,
// sequentially; otherwise each read is a random one of size bytes.
func (d *Device) ChargeStrided(addr uintptr, n, stride, size int) {
	if n == 0 || size <= 0 {
		return
	}
	if stride <= size || uint64(stride-size) < d.gran {
		d.chargeRead(seqRead, d.readUnits(addr, n), 1)
		return
	}
	d.readRandN((n+stride-1)/stride, size)
}

func (d *Device) readRange(class int, b []byte) {
	if len(b) > 0 {
		d.chargeRead(class, d.readUnits(uintptr(unsafe.Pointer(unsafe.SliceData(b))), len(b)), 1)
	}
}

func (d *Device) readRandN(n, size int) {
	if n > 0 && size > 0 {
		g := int64(d.gran)
		units := (int64(size)-1)/g + 1
		// The fraction of reads that straddle one more unit than that.
		frac := float64((int64(size)-1)%g) / float64(g)
		bytes := int64(n)*units*g + int64(frac*float64(n)*float64(g))
		d.chargeRead(randRead, bytes, int64(n))
	}
}

func (d *Device) readStrided(b []byte, stride, size int) {
	d.ChargeStrided(uintptr(unsafe.Pointer(unsafe.SliceData(b))), len(b), stride, size)
}
