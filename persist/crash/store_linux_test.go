//go:build linux

package crash

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

// TestStoresAgree runs seeded random workloads (stores, flushes, fences,
// streaming copies and fills over two regions, one garbage-filled) with
// copied images, with copy-on-write images, with copy-on-write images
// and kernel page tracking, and with every flush done line by line (not
// only the lines holding something): every crash point must see the same images,
// in the same order, and the reports must agree. Checks scribble into
// their images and fence, so crashes during recovery (overlays) are
// compared too.
func TestStoresAgree(t *testing.T) {
	defer func(f, b int) { forceStore, bigFlush = f, b }(forceStore, bigFlush)
	for _, c := range []struct {
		mode  persist.Mode
		line  bool
		seeds uint64
	}{{persist.ModeFlush, false, 2}, {persist.ModeFlush, true, 1}, {persist.ModeEADR, false, 1}, {persist.ModeMsync, false, 1}} {
		for seed := uint64(1); seed <= c.seeds; seed++ {
			name := fmt.Sprintf("%v/line=%v/seed%d", c.mode, c.line, seed)
			var logs [4][]string
			var reps [4]string
			for k, kind := range []int{storeCopy, storeCOW, storeCOWTracked, storeCopy} {
				forceStore = kind
				bigFlush = 64 << 10
				if k == 3 {
					bigFlush = math.MaxInt // every flush line by line
				}
				cfg := Config{
					Regions: []Spec{
						{Name: "a", Size: 128 << 10, Options: &persist.Options{MovntThreshold: 64}},
						{Name: "b", Size: 64 << 10, Garbage: true},
					},
					Mode: c.mode, LineAtomic: c.line, Seed: seed, MaxImages: 6, RecoveryCrashes: 1, Pairs: -1, Strength: -1, MaxAlone: 4,
					Points: AtFences | AtBoundaries | AtClose | AtEnd, KeepGoing: true,
				}
				log := &logs[k]
				rep, err := Check(cfg, randomWorkload(seed), func(img *Image) error {
					h := maphash.Hash{}
					h.SetSeed(agreeSeed)
					for _, n := range []string{"a", "b"} {
						h.Write(img.Region(n).Bytes())
					}
					*log = append(*log, fmt.Sprintf("%d/%v/%d/%d:%x", img.Point().Seq, img.InRecovery(), img.Point().Fence, img.Index(), h.Sum64()))
					r := img.Region("a")
					b := r.Bytes()
					off := 8 * int(h.Sum64()%uint64(len(b)/8))
					binary.LittleEndian.PutUint64(b[off:], h.Sum64())
					binary.LittleEndian.PutUint64(b[len(b)-8:], 1)
					return r.Persist(b[off : off+8])
				})
				require.NoError(t, err, name)
				s := fmt.Sprintf("%d %d %d %d %d", rep.Fences, rep.Points, rep.Images, rep.RecoveryPoints, rep.RecoveryImages)
				for _, f := range rep.Failures {
					s += "\n" + f.Summary()
				}
				for _, f := range rep.Findings {
					s += fmt.Sprintf("\n%s %s %d", f.Kind, f.Site, f.Count)
				}
				reps[k] = s
			}
			require.NotEmpty(t, logs[0], name)
			require.Equal(t, logs[0], logs[1], "%s: copy-on-write images differ from copies", name)
			require.Equal(t, logs[0], logs[2], "%s: page tracking changes the images", name)
			require.Equal(t, logs[0], logs[3], "%s: large flushes differ from line-by-line ones", name)
			require.Equal(t, reps[0], reps[1], name)
			require.Equal(t, reps[0], reps[2], name)
			require.Equal(t, reps[0], reps[3], name)
			t.Logf("%s: %d images agree; %s", name, len(logs[0]), reps[0][:min(len(reps[0]), 60)])
		}
	}
}

var agreeSeed = maphash.MakeSeed()

func randomWorkload(seed uint64) func(*Run) error {
	return func(w *Run) error {
		rng := rand.New(rand.NewPCG(seed, 7))
		regs := []*persist.Region{w.Region("a"), w.Region("b")}
		// Mostly a few hot pages, sometimes anywhere.
		offset := func(b []byte) int {
			if rng.IntN(4) == 0 {
				return 8 * rng.IntN(len(b)/8)
			}
			return 8 * rng.IntN(3*4096/8)
		}
		for op := 0; op < 60; op++ {
			r := regs[rng.IntN(2)]
			b := r.Bytes()
			switch rng.IntN(12) {
			case 0, 1, 2:
				binary.LittleEndian.PutUint64(b[offset(b):], rng.Uint64())
			case 3:
				o := offset(b)
				b[o+rng.IntN(8)] = byte(rng.Uint32()) // a partial word
			case 4:
				o := offset(b)
				if err := r.Flush(b[o : o+min(len(b)-o, 8+rng.IntN(200))]); err != nil {
					return err
				}
			case 5:
				if err := r.Drain(); err != nil {
					return err
				}
			case 6:
				o := offset(b)
				if err := r.Persist(b[o : o+min(len(b)-o, 8+rng.IntN(100))]); err != nil {
					return err
				}
			case 7:
				o := offset(b)
				src := make([]byte, min(len(b)-o, 1+rng.IntN(300)))
				for i := range src {
					src[i] = byte(rng.Uint32())
				}
				fl := persist.Flags(0)
				if rng.IntN(2) == 0 {
					fl = persist.NoDrain
				}
				if err := r.Copy(b[o:], src, fl); err != nil {
					return err
				}
			case 8:
				o := offset(b)
				if err := r.Set(b[o:o+min(len(b)-o, 64+rng.IntN(200))], byte(rng.Uint32()), persist.NoDrain); err != nil {
					return err
				}
			case 9:
				w.Boundary(fmt.Sprint(op))
			case 11:
				// A value flushed, then the old one stored back: in
				// flight, though live equals media again.
				o := offset(b)
				old := binary.LittleEndian.Uint64(b[o:])
				binary.LittleEndian.PutUint64(b[o:], rng.Uint64())
				if err := r.Flush(b[o : o+8]); err != nil {
					return err
				}
				binary.LittleEndian.PutUint64(b[o:], old)
			case 10:
				if rng.IntN(3) == 0 {
					if err := r.Sync(); err != nil { // a flush of the whole region
						return err
					}
				} else if err := r.Flush(b[4096:]); err != nil {
					return err
				}
			}
		}
		if err := regs[1].Close(); err != nil {
			return err
		}
		w.Reopen("b")
		return nil
	}
}
