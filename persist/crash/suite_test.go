package crash_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/crash"
	"github.com/stretchr/testify/require"
)

// The suite: small persistent structures, each in a correct form that the
// simulator must pass and a deliberately broken form it must catch.

type variant struct {
	name string
	cfg  crash.Config
	// build returns the workload and the check, correct or broken.
	build func(broken bool) (func(*crash.Run) error, func(*crash.Image) error)
}

var le = binary.LittleEndian

func u64(b []byte, off int) uint64 { return le.Uint64(b[off:]) }

func put(b []byte, off int, v uint64) { le.PutUint64(b[off:], v) }

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func region(name string, size int) []crash.Spec {
	return []crash.Spec{{Name: name, Size: size}}
}

// flagged is the common shape: a value (several words at dataOff) guarded
// by a commit flag at offset 0. write performs one update; the check
// demands that a set flag means the data is complete.
func flagged(name string, write func(r *persist.Region, i uint64, broken bool)) variant {
	const n = 4
	return variant{
		name: name,
		cfg:  crash.Config{Regions: region("r", 4096)},
		build: func(broken bool) (func(*crash.Run) error, func(*crash.Image) error) {
			wl := func(w *crash.Run) error {
				r := w.Region("r")
				for i := uint64(1); i <= n; i++ {
					write(r, i, broken)
				}
				return nil
			}
			ck := func(img *crash.Image) error {
				b := img.Region("r").Bytes()
				f := u64(b, 0)
				if f == 0 {
					return nil
				}
				for k := 0; k < 4; k++ {
					if got := u64(b, 128+8*k); got != f*100+uint64(k) {
						return fmt.Errorf("flag says update %d, data word %d is %d", f, k, got)
					}
				}
				return nil
			}
			return wl, ck
		},
	}
}

// streaming makes Copy and Set of 32 bytes or more use streaming stores.
func streaming(v variant) variant {
	for i := range v.cfg.Regions {
		v.cfg.Regions[i].Options = &persist.Options{MovntThreshold: 32}
	}
	return v
}

// slot i of the flagged structure: data words at 128.., flag at 0. Each
// update writes fresh data into the same slot only after the previous flag
// is cleared, so the check can rely on flag == data generation.
func writeData(b []byte, i uint64) {
	for k := 0; k < 4; k++ {
		put(b, 128+8*k, i*100+uint64(k))
	}
}

func clearFlag(r *persist.Region) {
	b := r.Bytes()
	persist.Store64(b[0:], 0)
	must(r.Persist(b[0:8]))
}

func suite() []variant {
	return []variant{
		flagged("missing flush before commit flag", func(r *persist.Region, i uint64, broken bool) {
			b := r.Bytes()
			clearFlag(r)
			writeData(b, i)
			if !broken {
				must(r.Persist(b[128:160]))
			}
			persist.Store64(b[0:], i)
			must(r.Persist(b[0:8]))
		}),
		flagged("missing fence between data and commit flag", func(r *persist.Region, i uint64, broken bool) {
			b := r.Bytes()
			clearFlag(r)
			writeData(b, i)
			must(r.Flush(b[128:160]))
			if !broken {
				must(r.Drain())
			}
			persist.Store64(b[0:], i)
			must(r.Persist(b[0:8]))
		}),
		flagged("commit flag written before data", func(r *persist.Region, i uint64, broken bool) {
			b := r.Bytes()
			clearFlag(r)
			if broken {
				persist.Store64(b[0:], i)
				must(r.Persist(b[0:8]))
				writeData(b, i)
				must(r.Persist(b[128:160]))
				return
			}
			writeData(b, i)
			must(r.Persist(b[128:160]))
			persist.Store64(b[0:], i)
			must(r.Persist(b[0:8]))
		}),
		flagged("store after the flush and before the fence", func(r *persist.Region, i uint64, broken bool) {
			b := r.Bytes()
			clearFlag(r)
			if broken {
				for k := 0; k < 3; k++ {
					put(b, 128+8*k, i*100+uint64(k))
				}
				must(r.Flush(b[128:160]))
				put(b, 128+24, i*100+3) // not covered by the flush above
				must(r.Drain())
			} else {
				writeData(b, i)
				must(r.Persist(b[128:160]))
			}
			persist.Store64(b[0:], i)
			must(r.Persist(b[0:8]))
		}),
		streaming(flagged("non-temporal copy with no fence", func(r *persist.Region, i uint64, broken bool) {
			b := r.Bytes()
			clearFlag(r)
			var src [32]byte
			for k := 0; k < 4; k++ {
				le.PutUint64(src[8*k:], i*100+uint64(k))
			}
			// 32 bytes reach the region's MovntThreshold: streaming
			// stores in every build (NonTemporal would fall back to
			// ordinary stores where the build has none).
			var fl persist.Flags
			if broken {
				fl |= persist.NoDrain
			}
			must(r.Copy(b[128:160], src[:], fl))
			persist.Store64(b[0:], i)
			if broken {
				// The flag's own flush and fence come later; without a
				// fence first, flag and data are in flight together.
				must(r.Flush(b[0:8]))
				must(r.Drain())
				return
			}
			must(r.Persist(b[0:8]))
		})),
		flagged("flush of the wrong range", func(r *persist.Region, i uint64, broken bool) {
			b := r.Bytes()
			clearFlag(r)
			writeData(b, i)
			if broken {
				must(r.Persist(b[64:128])) // the line before the data
			} else {
				must(r.Persist(b[128:160]))
			}
			persist.Store64(b[0:], i)
			must(r.Persist(b[0:8]))
		}),
		twoWordValue(),
		validBit(),
		lengthWithoutChecksum(),
		recoveryCrash(),
		neverWritten(),
		lastStoreNotDurable(),
		twoFiles(),
	}
}

// twoWordValue: a 16-byte value. Broken: two 8-byte stores persisted
// together, assumed atomic. Correct: written into the inactive of two
// slots, persisted, then an 8-byte selector flipped and persisted.
func twoWordValue() variant {
	const n = 5
	return variant{
		name: "16-byte value written with two stores assumed atomic",
		cfg:  crash.Config{Regions: region("r", 4096)},
		build: func(broken bool) (func(*crash.Run) error, func(*crash.Image) error) {
			wl := func(w *crash.Run) error {
				r := w.Region("r")
				b := r.Bytes()
				for i := uint64(1); i <= n; i++ {
					if broken {
						put(b, 64, i)
						put(b, 72, i*1000)
						must(r.Persist(b[64:80]))
						continue
					}
					sel := u64(b, 0)
					slot := 64 + 64*int(1-sel)
					put(b, slot, i)
					put(b, slot+8, i*1000)
					must(r.Persist(b[slot : slot+16]))
					persist.Store64(b[0:], 1-sel)
					must(r.Persist(b[0:8]))
				}
				return nil
			}
			ck := func(img *crash.Image) error {
				b := img.Region("r").Bytes()
				slot := 64
				if !broken {
					slot = 64 + 64*int(u64(b, 0))
				}
				a, c := u64(b, slot), u64(b, slot+8)
				if a*1000 != c {
					return fmt.Errorf("torn value (%d, %d)", a, c)
				}
				return nil
			}
			return wl, ck
		},
	}
}

// validBit: log entries with a validity bit. Broken: the valid flag lives
// in a word of its own, next to the payload word, one barrier for both.
// Correct: the flag is bit 63 of the payload word itself (RAWL).
func validBit() variant {
	const n = 6
	return variant{
		name: "valid bit in a word that does not cover its payload",
		cfg:  crash.Config{Regions: region("r", 4096)},
		build: func(broken bool) (func(*crash.Run) error, func(*crash.Image) error) {
			wl := func(w *crash.Run) error {
				r := w.Region("r")
				b := r.Bytes()
				for i := 0; i < n; i++ {
					off := 16 * i
					if broken {
						put(b, off, uint64(i)+7)
						put(b, off+8, 1)
					} else {
						// One atomic store: the valid bit cannot reach
						// media without the payload beside it.
						persist.Store64(b[off:], uint64(i)+7|1<<63)
					}
					must(r.Persist(b[off : off+16]))
				}
				return nil
			}
			ck := func(img *crash.Image) error {
				b := img.Region("r").Bytes()
				for i := 0; i < n; i++ {
					off := 16 * i
					var valid bool
					var v uint64
					if broken {
						valid, v = u64(b, off+8) == 1, u64(b, off)
					} else {
						w := u64(b, off)
						valid, v = w>>63 == 1, w&^(1<<63)
					}
					if !valid {
						break
					}
					if v != uint64(i)+7 {
						return fmt.Errorf("entry %d valid but holds %d", i, v)
					}
				}
				return nil
			}
			return wl, ck
		},
	}
}

// lengthWithoutChecksum: records [len][payload...][crc], one barrier each.
// Broken recovery trusts the length; correct recovery checks the CRC.
func lengthWithoutChecksum() variant {
	payloads := [][]byte{[]byte("first record"), []byte("a somewhat longer second record"), []byte("3rd")}
	return variant{
		name: "log recovery trusting a length field without a checksum",
		cfg:  crash.Config{Regions: region("log", 4096)},
		build: func(broken bool) (func(*crash.Run) error, func(*crash.Image) error) {
			acked := 0
			wl := func(w *crash.Run) error {
				acked = 0
				r := w.Region("log")
				b := r.Bytes()
				off := 0
				for _, p := range payloads {
					padded := (len(p) + 7) &^ 7
					put(b, off, uint64(len(p)))
					copy(b[off+8:], p)
					crc := crc32.Checksum(b[off:off+8+padded], crc32.MakeTable(crc32.Castagnoli))
					put(b, off+8+padded, uint64(crc)|1<<32)
					must(r.Persist(b[off : off+16+padded]))
					off += 16 + padded
					acked++
				}
				return nil
			}
			ck := func(img *crash.Image) error {
				b := img.Region("log").Bytes()
				off, got := 0, 0
				for got < len(payloads) {
					n := int(u64(b, off))
					if n == 0 || n > 1024 {
						break
					}
					padded := (n + 7) &^ 7
					if !broken {
						crc := crc32.Checksum(b[off:off+8+padded], crc32.MakeTable(crc32.Castagnoli))
						if u64(b, off+8+padded) != uint64(crc)|1<<32 {
							break
						}
					}
					if string(b[off+8:off+8+n]) != string(payloads[got]) {
						return fmt.Errorf("record %d recovered as %q", got, b[off+8:off+8+n])
					}
					got++
					off += 16 + padded
				}
				if got < acked {
					return fmt.Errorf("%d records acknowledged, %d recovered", acked, got)
				}
				return nil
			}
			return wl, ck
		},
	}
}

// recoveryCrash: a counter updated through a redo log. Broken recovery
// re-applies a delta (not idempotent); correct recovery writes the target.
func recoveryCrash() variant {
	return variant{
		name: "recovery that breaks if it crashes itself",
		cfg:  crash.Config{Regions: region("r", 4096)},
		build: func(broken bool) (func(*crash.Run) error, func(*crash.Image) error) {
			// layout: counter @0; log {valid @64, target @72, delta @80}
			var old, nu uint64
			wl := func(w *crash.Run) error {
				r := w.Region("r")
				b := r.Bytes()
				old, nu = 0, 0
				for i := uint64(1); i <= 3; i++ {
					cur := u64(b, 0)
					old, nu = cur, cur+5
					put(b, 72, nu)
					put(b, 80, 5)
					must(r.Persist(b[72:88]))
					persist.Store64(b[64:], 1)
					must(r.Persist(b[64:72]))
					persist.Store64(b[0:], nu)
					must(r.Persist(b[0:8]))
					persist.Store64(b[64:], 0)
					must(r.Persist(b[64:72]))
					old = nu
				}
				return nil
			}
			ck := func(img *crash.Image) error {
				r := img.Region("r")
				b := r.Bytes()
				if u64(b, 64) == 1 {
					if broken {
						persist.Store64(b[0:], u64(b, 0)+u64(b, 80))
					} else {
						persist.Store64(b[0:], u64(b, 72))
					}
					must(r.Persist(b[0:8]))
					persist.Store64(b[64:], 0)
					must(r.Persist(b[64:72]))
				}
				if c := u64(b, 0); c != old && c != nu {
					return fmt.Errorf("counter %d after recovery, want %d or %d", c, old, nu)
				}
				return nil
			}
			return wl, ck
		},
	}
}

const magic = 0x6272616964_6c6f67

// neverWritten: on a recycled (garbage-filled) region, a log formatted with
// a persisted count. Broken recovery scans until a zero word, trusting
// never-written memory to be zero; correct recovery reads count entries.
func neverWritten() variant {
	return variant{
		name: "recovery trusting never-written memory",
		cfg:  crash.Config{Regions: []crash.Spec{{Name: "r", Size: 4096, Garbage: true}}},
		build: func(broken bool) (func(*crash.Run) error, func(*crash.Image) error) {
			acked := 0
			wl := func(w *crash.Run) error {
				acked = 0
				r := w.Region("r")
				b := r.Bytes()
				// Format: count, then the magic that says the count is
				// meaningful.
				persist.Store64(b[0:], 0)
				must(r.Persist(b[0:8]))
				persist.Store64(b[8:], magic)
				must(r.Persist(b[8:16]))
				for i := 1; i <= 4; i++ {
					put(b, 64+8*i-8, uint64(i))
					must(r.Persist(b[64+8*i-8 : 64+8*i]))
					persist.Store64(b[0:], uint64(i))
					must(r.Persist(b[0:8]))
					acked = i
				}
				return nil
			}
			ck := func(img *crash.Image) error {
				b := img.Region("r").Bytes()
				var got []uint64
				if broken {
					for off := 64; off < 4096 && u64(b, off) != 0; off += 8 {
						got = append(got, u64(b, off))
					}
				} else if u64(b, 8) == magic {
					n := u64(b, 0)
					if n > 4 {
						return fmt.Errorf("count %d", n)
					}
					for i := 0; i < int(n); i++ {
						got = append(got, u64(b, 64+8*i))
					}
				}
				if len(got) < acked || len(got) > acked+1 {
					return fmt.Errorf("%d entries recovered, %d acknowledged", len(got), acked)
				}
				for i, v := range got {
					if v != uint64(i+1) {
						return fmt.Errorf("entry %d is %#x", i, v)
					}
				}
				return nil
			}
			return wl, ck
		},
	}
}

// lastStoreNotDurable: an operation whose final commit store is never
// persisted before it returns, caught at the durability point.
func lastStoreNotDurable() variant {
	return variant{
		name: "last store of an operation never made durable",
		cfg:  crash.Config{Regions: region("r", 4096)},
		build: func(broken bool) (func(*crash.Run) error, func(*crash.Image) error) {
			wl := func(w *crash.Run) error {
				r := w.Region("r")
				b := r.Bytes()
				for i := uint64(1); i <= 3; i++ {
					put(b, 64, i)
					must(r.Persist(b[64:72]))
					persist.Store64(b[0:], i)
					if !broken {
						must(r.Persist(b[0:8]))
					}
					w.Durable("op returned")
				}
				return nil
			}
			ck := func(img *crash.Image) error {
				b := img.Region("r").Bytes()
				if f := u64(b, 0); f != 0 && u64(b, 64) < f {
					return fmt.Errorf("flag %d ahead of data %d", f, u64(b, 64))
				}
				return nil
			}
			return wl, ck
		},
	}
}

// twoFiles: a value in a data region and its metadata (offset, length,
// serial) in a metadata region. Correct: data durable before metadata.
// Broken: metadata first.
func twoFiles() variant {
	return variant{
		name: "two files persisted in the wrong order",
		cfg:  crash.Config{Regions: []crash.Spec{{Name: "data", Size: 4096}, {Name: "meta", Size: 4096}}},
		build: func(broken bool) (func(*crash.Run) error, func(*crash.Image) error) {
			acked := 0
			wl := func(w *crash.Run) error {
				acked = 0
				dr, mr := w.Region("data"), w.Region("meta")
				d, m := dr.Bytes(), mr.Bytes()
				for i := 1; i <= 4; i++ {
					off := 64 * i
					writeMeta := func() {
						// One word: offset and serial together, so the
						// metadata itself cannot tear.
						persist.Store64(m[16*i:], uint64(off)<<32|uint64(i))
						must(mr.Persist(m[16*i : 16*i+8]))
					}
					if broken {
						writeMeta()
					}
					for k := 0; k < 8; k++ {
						put(d, off+8*k, uint64(i*10+k))
					}
					must(dr.Persist(d[off : off+64]))
					if !broken {
						writeMeta()
					}
					acked = i
				}
				return nil
			}
			ck := func(img *crash.Image) error {
				d, m := img.Region("data").Bytes(), img.Region("meta").Bytes()
				for i := 1; i <= 4; i++ {
					e := u64(m, 16*i)
					if e&0xffffffff != uint64(i) {
						if i <= acked {
							return fmt.Errorf("acknowledged value %d lost", i)
						}
						continue
					}
					off := int(e >> 32)
					for k := 0; k < 8; k++ {
						if u64(d, off+8*k) != uint64(i*10+k) {
							return fmt.Errorf("metadata of value %d durable, its data word %d is %d", i, k, u64(d, off+8*k))
						}
					}
				}
				return nil
			}
			return wl, ck
		},
	}
}

func TestSuite(t *testing.T) {
	for _, v := range suite() {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			wl, ck := v.build(false)
			rep, err := crash.Check(v.cfg, wl, ck)
			require.NoError(t, err)
			for _, f := range rep.Failures {
				t.Error(f.Error())
			}
			require.NotZero(t, rep.Images, "the correct form was never checked")
			t.Logf("correct form passes: %s", rep)

			wl, ck = v.build(true)
			rep, err = crash.Check(v.cfg, wl, ck)
			require.NoError(t, err)
			require.True(t, rep.Failed(), "variant %s: NOT caught: %s", v.name, rep)
			t.Logf("variant %s: caught (%s)", v.name, rep.Failures[0].Summary())
		})
	}
}

// The harness must not report the same failure differently from run to
// run: everything is seeded.
func TestSuiteDeterministic(t *testing.T) {
	for _, v := range suite() {
		wl, ck := v.build(true)
		a, err := crash.Check(v.cfg, wl, ck)
		require.NoError(t, err)
		wl, ck = v.build(true)
		b, err := crash.Check(v.cfg, wl, ck)
		require.NoError(t, err)
		require.Equal(t, a.Failures[0].Summary(), b.Failures[0].Summary(), v.name)
	}
}

var errBoom = errors.New("boom")

func TestWorkloadErrorAndBadConfig(t *testing.T) {
	_, err := crash.Check(crash.Config{}, func(*crash.Run) error { return nil }, func(*crash.Image) error { return nil })
	require.ErrorIs(t, err, crash.ErrConfig)
	_, err = crash.Check(crash.Config{Regions: []crash.Spec{{Name: "a", Size: crash.MaxRegionSize + 8}}}, func(*crash.Run) error { return nil }, func(*crash.Image) error { return nil })
	require.ErrorIs(t, err, crash.ErrConfig)
	_, err = crash.Check(crash.Config{Regions: []crash.Spec{{Name: "a", Size: 12}}}, func(*crash.Run) error { return nil }, func(*crash.Image) error { return nil })
	require.ErrorIs(t, err, crash.ErrConfig)
	_, err = crash.Check(crash.Config{Regions: region("r", 64)}, func(*crash.Run) error { return errBoom }, func(*crash.Image) error { return nil })
	require.ErrorIs(t, err, errBoom)
	_, err = crash.Check(crash.Config{Regions: region("r", 64)}, func(*crash.Run) error { panic("oops") }, func(*crash.Image) error { return nil })
	require.ErrorContains(t, err, "oops")
}

// TestUnknownRegion: a region name the Config does not have is one line
// naming it and the regions there are, wrapping ErrConfig, not a panic
// with its stack: Check's error when the workload asks (Region, Reopen),
// the failure's error when the check does (a check that panics fails).
func TestUnknownRegion(t *testing.T) {
	cfg := crash.Config{Regions: []crash.Spec{{Name: "a", Size: 64}, {Name: "b", Size: 64}}}
	const want = `no region "log" (the Config's regions are "a", "b")`
	oneLine := func(err error, name string) {
		require.ErrorIs(t, err, crash.ErrConfig, name)
		require.ErrorContains(t, err, want, name)
		require.NotContains(t, err.Error(), "\n", "%s: one line, no stack: %q", name, err)
		t.Logf("%s: %v", name, err)
	}
	for name, workload := range map[string]func(*crash.Run) error{
		"Run.Region": func(w *crash.Run) error { w.Region("log"); return nil },
		"Run.Reopen": func(w *crash.Run) error { w.Reopen("log"); return nil },
	} {
		_, err := crash.Check(cfg, workload, func(*crash.Image) error { return nil })
		oneLine(err, name)
	}
	rep, err := crash.Check(cfg, func(w *crash.Run) error {
		a := w.Region("a")
		persist.Store64(a.Bytes(), 1)
		return a.Persist(a.Bytes()[:8])
	}, func(img *crash.Image) error { img.Region("log"); return nil })
	require.NoError(t, err)
	require.NotEmpty(t, rep.Failures)
	oneLine(rep.Failures[0].Err, "Image.Region")
}
