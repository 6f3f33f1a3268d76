package main

import (
	"fmt"
	"math/bits"
	"runtime"
	"time"

	"github.com/braid-pm/braid/cow"
	"github.com/braid-pm/braid/fam"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/device"
)

func init() {
	register(mode{
		name: "inplace",
		summary: "failure-atomic in-place updates of 16, 32 and 64-byte objects: " +
			"CoW (2 barriers), redo log (2) and FAM (1); updates/s and reads/s",
		run: runInPlace,
	})
}

// The in-place update comparison of van Renen et al., "Building blocks
// for persistent memory", §3.4.4 (the same arrays as the
// fam package's BenchmarkInPlace), one thread. The three variants run
// interleaved in batches of inplaceBatch operations, and each variant's
// rate is the median over its batches: preemption and noisy neighbours
// become outliers, and slow drifts hit every variant alike, so the ratios
// hold on a busy machine.
const (
	inplaceBatch   = 64
	inplaceObjects = 1 << 20 // per array, fewer when the file is small
)

var inplaceSizes = []int{16, 32, 64}

type inplaceArray interface {
	Update(i int, val []byte) error
	Read(i int, dst []byte) error
	Close() error
}

// inplaceOrder yields object indexes: sequential, wrapping, or uniformly
// random (xorshift, scaled without a division).
type inplaceOrder struct {
	rand bool
	n, x uint64
}

func (o *inplaceOrder) next() int {
	if o.rand {
		o.x ^= o.x << 13
		o.x ^= o.x >> 7
		o.x ^= o.x << 17
		hi, _ := bits.Mul64(o.x, o.n)
		return int(hi)
	}
	i := o.x
	if o.x++; o.x == o.n {
		o.x = 0
	}
	return int(i)
}

// inplaceCount is the number of objects per array such that the three
// arrays of the largest size fit in the file.
func inplaceCount(fileSize int) (int, error) {
	size := inplaceSizes[len(inplaceSizes)-1]
	one := func(n int) (int, error) {
		total := 0
		for _, f := range []func() (int, error){
			func() (int, error) { return cow.Footprint(&cow.Options{ObjectSize: size, Count: n}) },
			func() (int, error) { return fam.LogFootprint(&fam.LogOptions{ObjectSize: size, Count: n}) },
			func() (int, error) { return fam.Footprint(&fam.Options{ObjectSize: size, Count: n}) },
		} {
			b, err := f()
			if err != nil {
				return 0, err
			}
			total += (b + 4095) &^ 4095
		}
		return total, nil
	}
	n := inplaceObjects
	for n > 1 {
		t, err := one(n)
		if err != nil {
			return 0, err
		}
		if t <= fileSize {
			return n, nil
		}
		n /= 2
	}
	return 0, fmt.Errorf("the file (%s) is too small for the in-place arrays", byteString(int64(fileSize)))
}

func runInPlace(b *bench) error {
	n, err := inplaceCount(len(b.mem))
	if err != nil {
		return err
	}
	b.addSteps(len(inplaceSizes) * 2)
	names := []string{"cow", "log", "fam"}
	title := func(what string) string {
		return fmt.Sprintf("in-place %s, 1 thread, %d objects per array (%s/s, median of batches of %d, variants interleaved)",
			what, n, what, inplaceBatch)
	}
	upd := &table{title: title("updates"), header: []string{"size", "order", "cow", "log", "fam", "fam/cow", "fam/log", "ns cow", "ns log", "ns fam"}, left: 2}
	rd := &table{title: title("reads"), header: []string{"size", "order", "cow", "log", "fam", "ns cow", "ns log", "ns fam"}, left: 2}
	upd.notes = append(upd.notes,
		"each update is durable on return: CoW = copy + persist, selector + persist; log = redo record + fence, in place + fence; FAM = one store per 8-byte block, one persist",
		b.r.Info().String())

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, size := range inplaceSizes {
		arrays, err := inplaceArrays(b.r, size, n)
		if err != nil {
			return err
		}
		for _, pat := range []pattern{seq, rand} {
			b.prog.step(fmt.Sprintf("inplace %s %s", byteString(int64(size)), pat))
			u, err := inplaceMeasure(b, arrays, size, n, pat, false)
			if err != nil {
				return err
			}
			r, err := inplaceMeasure(b, arrays, size, n, pat, true)
			if err != nil {
				return err
			}
			for k, name := range names {
				b.add(
					result{Point: device.Point{Op: "inplace-update-" + name, Pattern: pat.String(), Size: size, Threads: 1, GBs: float64(size) / u[k], NsPerOp: u[k]}},
					result{Point: device.Point{Op: "inplace-read-" + name, Pattern: pat.String(), Size: size, Threads: 1, GBs: float64(size) / r[k], NsPerOp: r[k]}})
			}
			upd.row(byteString(int64(size)), pat.String(), rate(u[0]), rate(u[1]), rate(u[2]),
				fmt.Sprintf("%.2f", u[0]/u[2]), fmt.Sprintf("%.2f", u[1]/u[2]), nanos(u[0]), nanos(u[1]), nanos(u[2]))
			rd.row(byteString(int64(size)), pat.String(), rate(r[0]), rate(r[1]), rate(r[2]), nanos(r[0]), nanos(r[1]), nanos(r[2]))
		}
		// The next size creates its arrays on the same bytes.
		for _, a := range arrays {
			if err := a.Close(); err != nil {
				return err
			}
		}
	}
	b.section(upd)
	b.section(rd)
	return nil
}

// inplaceArrays creates the CoW, log and FAM arrays of size-byte objects
// side by side at the start of the file.
func inplaceArrays(r *persist.Region, size, n int) (arrays []inplaceArray, err error) {
	defer func() {
		if err != nil {
			for _, a := range arrays {
				a.Close()
			}
			arrays = nil
		}
	}()
	off := 0
	next := func(fp int, err error) (int, error) {
		o := off
		off += (fp + 4095) &^ 4095
		return o, err
	}
	o, err := next(cow.Footprint(&cow.Options{ObjectSize: size, Count: n}))
	if err != nil {
		return arrays, err
	}
	c, err := cow.Create(r, &cow.Options{Offset: o, ObjectSize: size, Count: n})
	if err != nil {
		return arrays, err
	}
	arrays = append(arrays, c)
	if o, err = next(fam.LogFootprint(&fam.LogOptions{ObjectSize: size, Count: n})); err != nil {
		return arrays, err
	}
	l, err := fam.CreateLog(r, &fam.LogOptions{Offset: o, ObjectSize: size, Count: n})
	if err != nil {
		return arrays, err
	}
	arrays = append(arrays, l)
	if o, err = next(fam.Footprint(&fam.Options{ObjectSize: size, Count: n})); err != nil {
		return arrays, err
	}
	f, err := fam.Create(r, &fam.Options{Offset: o, ObjectSize: size, Count: n})
	if err != nil {
		return arrays, err
	}
	return append(arrays, f), nil
}

// inplaceMeasure runs the arrays' updates (or reads) interleaved in
// batches for -duration and returns each one's median ns per operation.
func inplaceMeasure(b *bench, arrays []inplaceArray, size, n int, pat pattern, read bool) ([]float64, error) {
	orders := make([]inplaceOrder, len(arrays))
	for k := range orders {
		orders[k] = inplaceOrder{rand: pat == rand, n: uint64(n)}
		if pat == rand {
			orders[k].x = 88172645463325252
		}
	}
	val := make([]byte, size)
	ns := make([][]float64, len(arrays))
	ops := 0
	for t0 := time.Now(); time.Since(t0) < b.cfg.duration || len(ns[0]) < 3; {
		if err := b.ctx.Err(); err != nil {
			return nil, err
		}
		for k, a := range arrays {
			o := &orders[k]
			s := time.Now()
			for range inplaceBatch {
				var err error
				if read {
					err = a.Read(o.next(), val)
				} else {
					val[0], val[size-1] = byte(ops), byte(ops>>8)
					ops++
					err = a.Update(o.next(), val)
				}
				if err != nil {
					return nil, err
				}
			}
			ns[k] = append(ns[k], float64(time.Since(s).Nanoseconds())/inplaceBatch)
		}
	}
	med := make([]float64, len(arrays))
	for k := range ns {
		med[k] = median(ns[k])
	}
	return med, nil
}

// rate formats an operation rate from ns per operation.
func rate(ns float64) string {
	if ns <= 0 {
		return "-"
	}
	r := 1e9 / ns
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.2fM", r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%.0fk", r/1e3)
	}
	return fmt.Sprintf("%.0f", r)
}
