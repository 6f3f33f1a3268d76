package persist

import (
	"reflect"

	"github.com/braid-pm/braid/asm"
	"github.com/braid-pm/braid/persist/device"
)

// A Device is an emulated device that regions charge for the bytes they
// write back or stream and the reads they declare (Options.Device).
// persist/device's *Device implements it (the model, the shipped Optane
// and CXL profiles, BRAID_DEVICE); the methods are called only for a
// region mapped with a device that is Emulating.
type Device interface {
	Name() string
	// Emulating is false for a device that charges nothing (the dram
	// profile): a region given one runs as without a device.
	Emulating() bool
	ChargeWrite(addr uintptr, n int)
	ChargeRead(random bool, addr uintptr, n int)
	ChargeReadN(n, size int)
	ChargeStrided(addr uintptr, n, stride, size int)
}

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

// noDevice reports whether d is no device: nil, a nil pointer in the
// interface (a *device.Device variable left nil means "BRAID_DEVICE's", as
// a nil Options.Device does), or one that charges nothing.
func noDevice(d Device) bool {
	if d == nil {
		return true
	}
	if v := reflect.ValueOf(d); v.Kind() == reflect.Pointer && v.IsNil() {
		return true
	}
	return false
}

// envDevice is BRAID_DEVICE's device, or nil.
func envDevice() (Device, error) {
	d, err := device.FromEnv()
	if err != nil {
		return nil, err
	}
	if d == nil {
		return nil, nil
	}
	return d, nil
}

// emulate makes r charge d. It runs when r is made, after count, before any
// other goroutine can see r.
func (r *Region) emulate(d Device) {
	if noDevice(d) || !d.Emulating() {
		return
	}
	r.dev = d
	r.info.Device = d.Name()
	switch r.kind {
	case kCLWB, kCLFLUSHOPT, kCLFLUSH, kEADR:
		r.dom = &realDomain{r: r, kind: r.kind}
		r.kind, r.fastNT = kSim, false
	}
}

// Device returns the emulated device the region charges, or nil.
func (r *Region) Device() Device { return r.dev }

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
	r.dev.ChargeWrite(r.base+uintptr(off), n)
}

// ReadSeq declares a sequential read of b, a range of Bytes(), to the
// region's emulated device: it charges the units b touches at the
// sequential-read bandwidth, and the caller may sleep. Without a device it
// does nothing.
func (r *Region) ReadSeq(b []byte) {
	if r.dev != nil {
		r.dev.ChargeRead(false, uintptr(ptrOf(b)), len(b))
	}
}

// ReadRand declares one random read of b, a range of Bytes(): the units it
// touches at the random-read bandwidth, and the read latency. Without a
// device it does nothing.
func (r *Region) ReadRand(b []byte) {
	if r.dev != nil {
		r.dev.ChargeRead(true, uintptr(ptrOf(b)), len(b))
	}
}

// ReadRandN declares n random reads of size bytes each, at offsets the
// caller does not give (a gather of records by pointer): each costs the
// units a read of size bytes at a random byte offset touches on average,
// (size-1)/Granularity + 1. Without a device it does nothing.
func (r *Region) ReadRandN(n, size int) {
	if r.dev != nil {
		r.dev.ChargeReadN(n, size)
	}
}

// ReadStrided declares reads of size bytes at the start of every stride
// bytes of b (a key at the head of each record): when the gaps between them
// are shorter than a unit every unit of b is read, sequentially; otherwise
// each read is a random one of size bytes. Without a device it does
// nothing.
func (r *Region) ReadStrided(b []byte, stride, size int) {
	if r.dev != nil {
		r.dev.ChargeStrided(uintptr(ptrOf(b)), len(b), stride, size)
	}
}

// Load copies src, a range of Bytes(), to dst and declares the bytes copied
// as a sequential read (ReadSeq). It returns the number of bytes copied,
// min(len(dst), len(src)).
func (r *Region) Load(dst, src []byte) int {
	n := copy(dst, src)
	if r.dev != nil {
		r.dev.ChargeRead(false, uintptr(ptrOf(src)), n)
	}
	return n
}
