package persist

import "github.com/braid-pm/braid/asm"

// How a region charges its emulated device.
//
// Writes: a region mapped with an emulating device (Options.Device,
// BRAID_DEVICE) leaves the inline fast paths of Flush, Persist and Copy —
// a flush or eADR mapping takes the simulated regions' path through a
// Domain that runs the real instruction, as a counting region does — and
// its slow paths (flushSlow, writtenSlow) charge the device for every range
// they write back or stream. A region without a device never reaches that
// code: its fast paths are unchanged, and the slow paths gain one nil
// check that only msync and simulated regions run.
//
// Reads are not seen by the hardware path (they are loads from Bytes()),
// so a structure declares them: ReadSeq, ReadRand, ReadRandN, ReadStrided,
// or Load, which copies and declares. Each is one inlined nil check on a
// region without a device.

// emulate makes r charge d. It runs when r is made, after count, before any
// other goroutine can see r.
func (r *Region) emulate(d *Device) {
	if !d.Emulating() {
		return
	}
	r.dev = d
	r.info.Device = d.name
	switch r.kind {
	case kCLWB, kCLFLUSHOPT, kCLFLUSH, kEADR:
		r.dom = &realDomain{r: r, kind: r.kind}
		r.kind, r.fastNT = kSim, false
	}
}

// Device returns the emulated device the region charges, or nil.
func (r *Region) Device() *Device { return r.dev }

// realDomain is the Domain of a real mapping that emulates a device: it
// does what the mapping's inline path would have done (counter does the
// same for a counting region, which then needs no realDomain).
type realDomain struct {
	r    *Region
	kind kind
}

func (d *realDomain) Flush(off, n int)  { d.r.flushLinesOf(d.kind, off, n) }
func (d *realDomain) Stream(off, n int) { d.r.flushLinesOf(d.kind, off, n) }
func (d *realDomain) Fence()            { asm.SFence() }
func (d *realDomain) Close() error      { return nil }

// charged tells the device of r that [off, off+n) was written back or
// streamed.
func (r *Region) charged(off, n int) {
	r.dev.chargeWrite(r.base+uintptr(off), n)
}

// ReadSeq declares a sequential read of b, a range of Bytes(), to the
// region's emulated device: it charges the units b touches at the
// sequential-read bandwidth, and the caller may sleep. Without a device it
// does nothing.
func (r *Region) ReadSeq(b []byte) {
	if r.dev != nil {
		r.dev.readRange(seqRead, b)
	}
}

// ReadRand declares one random read of b, a range of Bytes(): the units it
// touches at the random-read bandwidth, and the read latency. Without a
// device it does nothing.
func (r *Region) ReadRand(b []byte) {
	if r.dev != nil {
		r.dev.readRange(randRead, b)
	}
}

// ReadRandN declares n random reads of size bytes each, at offsets the
// caller does not give (a gather of records by pointer): each costs the
// units a read of size bytes at a random byte offset touches on average,
// (size-1)/Granularity + 1. Without a device it does nothing.
func (r *Region) ReadRandN(n, size int) {
	if r.dev != nil {
		r.dev.readRandN(n, size)
	}
}

// ReadStrided declares reads of size bytes at the start of every stride
// bytes of b (a key at the head of each record): when the gaps between them
// are shorter than a unit every unit of b is read, sequentially; otherwise
// each read is a random one of size bytes. Without a device it does
// nothing.
func (r *Region) ReadStrided(b []byte, stride, size int) {
	if r.dev != nil {
		r.dev.readStrided(b, stride, size)
	}
}

// Load copies src, a range of Bytes(), to dst and declares the bytes copied
// as a sequential read (ReadSeq). It returns the number of bytes copied,
// min(len(dst), len(src)).
func (r *Region) Load(dst, src []byte) int {
	n := copy(dst, src)
	if r.dev != nil {
		r.dev.readRange(seqRead, src[:n])
	}
	return n
}

func (d *Device) readRange(class int, b []byte) {
	if len(b) > 0 {
		d.chargeRead(class, d.readUnits(uintptr(ptrOf(b)), len(b)), 1)
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
	if len(b) == 0 || size <= 0 {
		return
	}
	if stride <= size || uint64(stride-size) < d.gran {
		d.chargeRead(seqRead, d.readUnits(uintptr(ptrOf(b)), len(b)), 1)
		return
	}
	d.readRandN((len(b)+stride-1)/stride, size)
}
