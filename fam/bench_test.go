package fam_test

import (
	"fmt"
	"math/bits"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/braid-pm/braid/cow"
	"github.com/braid-pm/braid/fam"
	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
)

// The in-place update benchmark of the paper's section 3.4.4: CoW (two
// versions, two barriers; cowcrc: the same with a CRC-32C per copy,
// cow.Options.Checksum), log (redo record + in-place write, two
// barriers) and FAM (one barrier), for 16, 32 and 64-byte objects, in
// sequential and random object order, one goroutine. Each sub-benchmark
// creates its array over benchObjects objects (BRAID_INPLACE_OBJECTS,
// default 1<<20) at the start of a forced-PMem region on /dev/shm, so
// random order touches 64 MiB (16-byte FAM or CoW) to 192 MiB (64-byte),
// more than the last-level cache.
//
//	go test -run '^$' -bench InPlace -count 6 ./fam/

const defaultBenchObjects = 1 << 20

var (
	benchOnce sync.Once
	benchErr  error
	benchN    int
	benchSize int
)

type updater interface {
	Update(i int, val []byte) error
	Read(i int, dst []byte) error
	Close() error
}

var benchVariants = []struct {
	name   string
	create func(r *persist.Region, size, count int) (updater, error)
	space  func(size, count int) (int, error)
}{
	{"cow",
		func(r *persist.Region, size, count int) (updater, error) {
			return cow.Create(r, &cow.Options{ObjectSize: size, Count: count})
		},
		cowSpace},
	{"cowcrc",
		func(r *persist.Region, size, count int) (updater, error) {
			return cow.Create(r, &cow.Options{ObjectSize: size, Count: count, Checksum: true})
		},
		cowSpace},
	{"log",
		func(r *persist.Region, size, count int) (updater, error) {
			return fam.CreateLog(r, &fam.LogOptions{ObjectSize: size, Count: count})
		},
		func(size, count int) (int, error) {
			return fam.LogFootprint(&fam.LogOptions{ObjectSize: size, Count: count})
		}},
	{"fam",
		func(r *persist.Region, size, count int) (updater, error) {
			return fam.Create(r, &fam.Options{ObjectSize: size, Count: count})
		},
		func(size, count int) (int, error) { return fam.Footprint(&fam.Options{ObjectSize: size, Count: count}) }},
}

func cowSpace(size, count int) (int, error) {
	return cow.Footprint(&cow.Options{ObjectSize: size, Count: count})
}

var benchSizes = []int{16, 32, 64}

// benchMap maps one forced-PMem region on /dev/shm large enough for every
// variant, shared by all benchmarks of the run (structtest.Shared).
func benchMap(b *testing.B) (*persist.Region, int) {
	benchOnce.Do(func() {
		benchN = defaultBenchObjects
		if s := os.Getenv("BRAID_INPLACE_OBJECTS"); s != "" {
			if benchN, benchErr = strconv.Atoi(s); benchErr != nil || benchN < 1 {
				benchErr = fmt.Errorf("BRAID_INPLACE_OBJECTS=%q: want a count >= 1", s)
				return
			}
		}
		for _, v := range benchVariants {
			for _, s := range benchSizes {
				n, err := v.space(s, benchN)
				if err != nil {
					benchErr = err
					return
				}
				benchSize = max(benchSize, n)
			}
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return structtest.Shared(b, "inplace", (benchSize+4095)&^4095), benchN
}

// order yields object indexes: sequential, wrapping, or uniformly random
// (xorshift, scaled without a division).
type order struct {
	rand bool
	n    uint64
	x    uint64
}

func (o *order) next() int {
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

func benchInPlace(b *testing.B, read bool) {
	r, n := benchMap(b)
	b.Logf("%v; %d objects", r, n)
	for _, v := range benchVariants {
		for _, size := range benchSizes {
			for _, pattern := range []string{"seq", "rand"} {
				b.Run(fmt.Sprintf("%s/%d/%s", v.name, size, pattern), func(b *testing.B) {
					a, err := v.create(r, size, n)
					if err != nil {
						b.Fatal(err)
					}
					defer a.Close() // the next variant is created on the same bytes
					o := order{rand: pattern == "rand", n: uint64(n)}
					if o.rand {
						o.x = 88172645463325252
					}
					val := make([]byte, size)
					b.SetBytes(int64(size))
					ops := 0
					for b.Loop() {
						i := o.next()
						if read {
							err = a.Read(i, val)
						} else {
							val[0], val[5], val[size-1] = byte(ops), byte(ops>>8), byte(ops>>16)
							err = a.Update(i, val)
						}
						if err != nil {
							b.Fatal(err)
						}
						ops++
					}
					unit := "updates/s"
					if read {
						unit = "reads/s"
					}
					b.ReportMetric(float64(ops)/b.Elapsed().Seconds(), unit)
				})
			}
		}
	}
}

// BenchmarkInPlace measures durable updates: each Update returns with the
// new value persistent.
func BenchmarkInPlace(b *testing.B) { benchInPlace(b, false) }

// BenchmarkInPlaceRead measures reads of the current value (FAM decodes
// its blocks; CoW reads the selector, then the active copy).
func BenchmarkInPlaceRead(b *testing.B) { benchInPlace(b, true) }
