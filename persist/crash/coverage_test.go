package crash_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/crash"
	"github.com/stretchr/testify/require"
)

// The coverage the package doc states, each shown on a structure that has
// exactly the bug the guarantee is for, caught with the default settings,
// and its correct twin never flagged.

// checksummedRecord: n data words and a commit word holding the CRC-32C of
// the words it covers and the generation, all made durable with one
// barrier (the CRC is the commit, as in RAWL). Recovery accepts the record
// when its CRC matches. The broken form's CRC skips the last skip words.
func checksummedRecord(n, skip int) func(*crash.Run) error {
	return func(w *crash.Run) error {
		r := w.Region("r")
		b := r.Bytes()
		for i := 0; i < n; i++ {
			put(b, 8+8*i, uint64(1000+i))
		}
		crc := persist.CRC32C(b[8 : 8+8*(n-skip)])
		persist.Store64(b[0:], 1<<32|uint64(crc))
		return r.Persist(b[0 : 8+8*n])
	}
}

func checkRecord(n, skip int) func(*crash.Image) error {
	return func(img *crash.Image) error {
		b := img.Region("r").Bytes()
		c := u64(b, 0)
		if c>>32 == 0 || uint32(c) != persist.CRC32C(b[8:8+8*(n-skip)]) {
			return nil // not committed: the record was in flight, never acknowledged
		}
		for i := 0; i < n; i++ {
			if got := u64(b, 8+8*i); got != uint64(1000+i) {
				return fmt.Errorf("record accepted with word %d = %d, written %d", i, got, 1000+i)
			}
		}
		return nil
	}
}

// TestEveryWordAlone: beyond the exhaustive bound every dirty unit is lost
// alone once (all others survived) and survives alone once, whatever
// MaxImages says: a checksum that skips the last 40 of 1000 words is
// caught (before, the default budget gave units 0-46 their images).
func TestEveryWordAlone(t *testing.T) {
	const n, skip = 1000, 40
	cfg := crash.Config{Regions: region("r", 16<<10)}
	rep, err := crash.Check(cfg, checksummedRecord(n, skip), checkRecord(n, skip))
	require.NoError(t, err)
	require.True(t, rep.Failed(), "a checksum skipping the last %d words: NOT caught: %s", skip, rep)
	f := rep.Failures[0]
	// Shrunk: the commit word and the words the CRC covers survived (the
	// record is taken), every word it skips is lost.
	require.Len(t, f.Survived, 1+n-skip, f.Summary())
	require.Len(t, f.Lost, skip, f.Summary())
	require.Equal(t, 8+8*(n-skip), f.Lost[0].Off, "the words lost are the ones the CRC skips")
	require.Less(t, len(f.ReplayKey), 40, "a short replay key (runs of units): %s", f.ReplayKey)
	require.Contains(t, f.Error(), fmt.Sprintf("lost (did not reach media): %d words", skip))
	t.Logf("caught: %s (replay %s)", f.Summary(), f.ReplayKey)

	rep, err = crash.Check(cfg, checksummedRecord(n, 0), checkRecord(n, 0))
	require.NoError(t, err)
	require.False(t, rep.Failed(), "%v", rep.Failures)
	require.GreaterOrEqual(t, rep.Coverage.Images[crash.ClassAlone], 2*(n+1), "every unit alone lost and alone survived")
	t.Log(rep)
}

// mirroredLength: a record of m payload words with its length stored
// twice, at both ends, and a commit word holding a CRC and the generation,
// made durable with one barrier. Recovery takes the record when the CRC
// matches and the two length copies agree. The broken CRC leaves the two
// length copies out ("they check each other"): both lost together, they
// agree again on the old length and the record is taken, empty — a state
// that needs exactly those two words lost while every other survived.
func mirroredLength(m int, broken bool) (func(*crash.Run) error, func(*crash.Image) error) {
	lenA, lenB, crcOff := 8, 16+8*m, 24+8*m
	covered := func(b []byte) uint32 {
		if broken {
			return persist.CRC32C(b[16 : 16+8*m])
		}
		return persist.CRC32C(b[8 : 24+8*m])
	}
	wl := func(w *crash.Run) error {
		r := w.Region("r")
		b := r.Bytes()
		put(b, lenA, uint64(m))
		for i := 0; i < m; i++ {
			put(b, 16+8*i, uint64(7*i+1))
		}
		put(b, lenB, uint64(m))
		persist.Store64(b[crcOff:], 1<<32|uint64(covered(b)))
		return r.Persist(b[0 : crcOff+8])
	}
	ck := func(img *crash.Image) error {
		b := img.Region("r").Bytes()
		c := u64(b, crcOff)
		if c>>32 == 0 || uint32(c) != covered(b) || u64(b, lenA) != u64(b, lenB) {
			return nil // in flight, not committed
		}
		if n := u64(b, lenA); n != uint64(m) {
			return fmt.Errorf("record of %d words taken as committed, written with %d", n, m)
		}
		return nil
	}
	return wl, ck
}

// TestEveryPairLost: every pair of units is lost together while all the
// others survived, at the first crash point of every path with up to
// Pairs (200) units: a bug needing two specific words lost together is
// caught at 40 to 200 dirty words (seeded random images and the covering
// array cannot: the state needs all the other units to survive).
func TestEveryPairLost(t *testing.T) {
	for _, m := range []int{37, 197} { // 40 and 200 units
		t.Run(fmt.Sprint(m+3), func(t *testing.T) {
			t.Parallel()
			cfg := crash.Config{Regions: region("r", 4096)}
			wl, ck := mirroredLength(m, true)
			rep, err := crash.Check(cfg, wl, ck)
			require.NoError(t, err)
			require.True(t, rep.Failed(), "NOT caught: %s", rep)
			f := rep.Failures[0]
			require.Equal(t, crash.ClassPairs, f.Class, f.Error())
			require.Len(t, f.Lost, 2, f.Error())
			require.Contains(t, f.ReplayKey, fmt.Sprintf(" drop=0,%d", m+1), "the complement form: all units but these two survived")
			t.Logf("caught: %s", f.Summary())

			// Without the pairs no other class finds it, even with
			// 2000 images.
			cfg.Pairs, cfg.MaxImages = -1, 2000
			wl, ck = mirroredLength(m, true)
			rep, err = crash.Check(cfg, wl, ck)
			require.NoError(t, err)
			require.False(t, rep.Failed(), "found without the pairs: %v", rep.Failures)

			cfg = crash.Config{Regions: region("r", 4096)}
			wl, ck = mirroredLength(m, false)
			rep, err = crash.Check(cfg, wl, ck)
			require.NoError(t, err)
			require.False(t, rep.Failed(), "%v", rep.Failures)
			require.Equal(t, (m+3)*(m+2)/2, rep.Coverage.Images[crash.ClassPairs])
			t.Log(rep)
		})
	}
}

// TestPairwiseAndTripleCoverage: beyond the exhaustive bound, the images of
// a crash point hold, for every two units (and with Strength 3 every
// three), every combination of them surviving and lost; the covering
// array does it in a few images.
func TestPairwiseAndTripleCoverage(t *testing.T) {
	for _, c := range []struct{ words, strength, rows int }{{60, 2, 10}, {60, 3, 34}} {
		imgs := sampledImages(t, crash.Config{Pairs: -1, Strength: c.strength, MaxImages: 2}, c.words)
		// nothing, everything, alone, the rows of the covering array
		// not checked already (its all-lost and all-survived rows are
		// nothing and everything again).
		require.LessOrEqual(t, len(imgs), 2+2*c.words+c.rows, c)
		require.Greater(t, len(imgs), 2*c.words+c.rows-2, c)
		cover := append([]uint64{imgs[0], imgs[1]}, imgs[2+2*c.words:]...)
		bit := func(m uint64, i int) int { return int(m >> i & 1) }
		for i := 0; i < c.words; i++ {
			for j := i + 1; j < c.words; j++ {
				var seen [4]bool
				for _, m := range cover {
					seen[bit(m, i)<<1|bit(m, j)] = true
				}
				require.Equal(t, [4]bool{true, true, true, true}, seen, "pair %d,%d in the covering array alone", i, j)
				if c.strength < 3 {
					continue
				}
				for k := j + 1; k < c.words; k++ {
					var seen [8]bool
					for _, m := range cover {
						seen[bit(m, i)<<2|bit(m, j)<<1|bit(m, k)] = true
					}
					require.NotContains(t, seen[:], false, "triple %d,%d,%d", i, j, k)
				}
			}
		}
	}
}

// slots: a value of four words in one of two slots and a commit word
// naming the generation (high half) and the CRC of its slot (low half).
// Broken: the commit word written as two 4-byte stores, then persisted.
func slots(store func(b []byte, v uint64), extra int) (func(*crash.Run) error, func(*crash.Image) error) {
	var acked uint64
	wl := func(w *crash.Run) error {
		acked = 0
		r := w.Region("r")
		b := r.Bytes()
		for g := uint64(1); g <= 3; g++ {
			slot := 64 + 64*int(g%2)
			for k := 0; k < 4; k++ {
				put(b, slot+8*k, g*100+uint64(k))
			}
			must(r.Persist(b[slot : slot+32]))
			for k := 0; k < extra; k++ {
				put(b, 256+8*k, g<<32|uint64(k)) // unrelated words, never flushed
			}
			store(b[0:], g<<32|uint64(persist.CRC32C(b[slot:slot+32])))
			must(r.Persist(b[0:8]))
			acked = g
		}
		return nil
	}
	ck := func(img *crash.Image) error {
		b := img.Region("r").Bytes()
		c := u64(b, 0)
		g := c >> 32
		if g == 0 {
			return nil
		}
		slot := 64 + 64*int(g%2)
		if uint32(c) != persist.CRC32C(b[slot:slot+32]) {
			return fmt.Errorf("commit word %#x does not match its slot: corrupt after a crash", c)
		}
		if g < acked || g > acked+1 {
			return fmt.Errorf("generation %d recovered, %d acknowledged", g, acked)
		}
		return nil
	}
	return wl, ck
}

func twoHalves(b []byte, v uint64) {
	binary.LittleEndian.PutUint32(b[0:], uint32(v))
	binary.LittleEndian.PutUint32(b[4:], uint32(v>>32))
}

func byteLoop(b []byte, v uint64) {
	for i := 0; i < 8; i++ {
		b[i] = byte(v >> (8 * i))
	}
}

// TestTornCommit: a word not written with persist.Store64 may be found
// with only some of its bytes new. A commit word written as two 4-byte
// stores (or byte by byte) is caught, exhaustively and beyond the bound
// (among 300 other dirty words); the same commit with Store64 passes.
// With TearOff (every aligned word whole) the torn commit goes unseen.
func TestTornCommit(t *testing.T) {
	for _, extra := range []int{0, 300} {
		for _, c := range []struct {
			name  string
			store func([]byte, uint64)
			tear  crash.Tear
			fails bool
		}{
			{"two 4-byte stores", twoHalves, 0, true},
			{"byte by byte", byteLoop, 0, true},
			{"byte by byte, Tear1", byteLoop, crash.Tear1, true},
			{"Store64", persist.Store64, 0, false},
			{"Store64, Tear1", persist.Store64, crash.Tear1, false},
			{"two 4-byte stores, TearOff", twoHalves, crash.TearOff, false},
		} {
			name := fmt.Sprintf("%s/extra=%d", c.name, extra)
			wl, ck := slots(c.store, extra)
			rep, err := crash.Check(crash.Config{Regions: region("r", 8192), Tear: c.tear}, wl, ck)
			require.NoError(t, err, name)
			require.Equal(t, c.fails, rep.Failed(), "%s: %s %v", name, rep, rep.Failures)
			if c.fails {
				f := rep.Failures[0]
				require.Len(t, f.Survived, 1, "%s: %s", name, f.Error())
				require.True(t, f.Survived[0].Torn, name)
				require.Contains(t, f.Error(), "(torn: only some of its bytes reached media)")
				t.Logf("%s: caught (%s)", name, f.Summary())
			}
		}
	}
}

// createOnOpen: a header {size, magic} that the workload creates with one
// barrier, and an epoch that only recovery writes. Recovery of a region
// where the header is absent (size and magic both zero) creates the
// structure: epoch, then size and magic; a partly written header is
// repaired (written again whole). The broken create bumps the epoch
// relative to itself instead of setting it, right when it runs once but
// not when it crashes after the epoch and runs again: the header is still
// absent, so it bumps again. Only the image where nothing survived takes
// that path.
func createOnOpen(broken bool) (func(*crash.Run) error, func(*crash.Image) error) {
	const size, magic = 4096, 0x6f70656e
	wl := func(w *crash.Run) error {
		r := w.Region("r")
		b := r.Bytes()
		persist.Store64(b[0:], size)
		persist.Store64(b[8:], magic)
		return r.Persist(b[0:16])
	}
	ck := func(img *crash.Image) error {
		r := img.Region("r")
		b := r.Bytes()
		switch sz, m := u64(b, 0), u64(b, 8); {
		case sz == 0 && m == 0: // absent: create
			epoch := uint64(1)
			if broken {
				epoch = u64(b, 16) + 1
			}
			persist.Store64(b[16:], epoch)
			must(r.Persist(b[16:24]))
			fallthrough
		case sz != size || m != magic: // partly written: repair
			persist.Store64(b[0:], size)
			persist.Store64(b[8:], magic)
			must(r.Persist(b[0:16]))
		}
		if e := u64(b, 16); e > 1 {
			return fmt.Errorf("epoch %d after recovery: created more than once", e)
		}
		return nil
	}
	return wl, ck
}

// TestRecoveryCrashEveryClass: recoveries are crashed in the images of
// every class, the nothing-survived one at every crash point: a recovery
// that is not idempotent only when nothing survived is caught (before,
// the two images per point chosen for it never included that one).
func TestRecoveryCrashEveryClass(t *testing.T) {
	cfg := crash.Config{Regions: region("r", 4096)}
	wl, ck := createOnOpen(true)
	rep, err := crash.Check(cfg, wl, ck)
	require.NoError(t, err)
	require.True(t, rep.Failed(), "NOT caught: %s", rep)
	f := rep.Failures[0]
	require.NotNil(t, f.Recovery, f.Error())
	require.Empty(t, f.Survived, "the image where nothing survived")
	t.Logf("caught: %s", f.Summary())

	wl, ck = createOnOpen(false)
	rep, err = crash.Check(cfg, wl, ck)
	require.NoError(t, err)
	require.False(t, rep.Failed(), "%v", rep.Failures)

	// Over a sampled workload every class gets its recoveries crashed.
	cfg = crash.Config{Regions: region("r", 8192)}
	wl, ck = slots(persist.Store64, 100)
	rep, err = crash.Check(cfg, wl, func(img *crash.Image) error {
		if err := ck(img); err != nil {
			return err
		}
		r := img.Region("r")
		return r.Persist(r.Bytes()[0:8]) // a fence: a crash point inside recovery
	})
	require.NoError(t, err)
	require.False(t, rep.Failed(), "%v", rep.Failures)
	for _, c := range []int{crash.ClassNothing, crash.ClassEverything, crash.ClassAlone, crash.ClassCover, crash.ClassPairs} {
		require.NotZero(t, rep.Coverage.Recovery[c], "class %s: %s", crash.ClassNames[c], rep)
	}
	t.Log(rep)
}

// ring: a ring of one-word slots (sequence, value) after a header word
// (entries appended). An append writes the slot, persists it, then the
// header. Slot 0 shares the header's cache line, and the broken writer
// persists the two together there: header and slot in flight at once.
// Recovery takes slots whose sequence is not zero — right on the first
// lap, where a slot never written is zero, wrong after the wrap, where a
// lost slot 0 still holds the previous lap's entry. The bug shows at one
// fence of about a thousand, on the common call stack: only the shape of
// its dirty set (it overwrites old data) tells it apart.
func ring(slots, appends int, broken bool) (func(*crash.Run) error, func(*crash.Image) error) {
	var acked, inflight uint64
	slotOff := func(i uint64) int { return 8 + 8*int(i) }
	wl := func(w *crash.Run) error {
		acked, inflight = 0, 0
		r := w.Region("r")
		b := r.Bytes()
		for seq := uint64(1); seq <= uint64(appends); seq++ {
			inflight = seq
			i := (seq - 1) % uint64(slots)
			o := slotOff(i)
			persist.Store64(b[o:], seq<<32|seq*3)
			if !broken || i != 0 {
				must(r.Persist(b[o : o+8]))
			} else {
				must(r.Flush(b[o : o+8]))
			}
			persist.Store64(b[0:], seq) // the header: entries appended
			must(r.Persist(b[0:8]))
			acked, inflight = seq, 0
		}
		return nil
	}
	ck := func(img *crash.Image) error {
		b := img.Region("r").Bytes()
		n := u64(b, 0)
		if n == 0 {
			return nil
		}
		i := (n - 1) % uint64(slots)
		seq, v := u64(b, slotOff(i))>>32, u64(b, slotOff(i))&0xffffffff
		if seq == 0 {
			return nil // torn on the first lap: the entry is dropped (broken and right alike)
		}
		if seq != n || v != n*3 {
			return fmt.Errorf("last entry %d recovered as (%d, %d); %d acknowledged, %d in flight", n, seq, v, acked, inflight)
		}
		return nil
	}
	return wl, ck
}

// TestRarePathSampling: with SampleFences a path taken once in a long
// workload is checked: fences whose call stack or dirty-set shape was not
// seen before come first. A ring bug only on the wrap after 500 appends
// (one fence in a thousand) is caught with SampleFences 100 by every seed
// (10 here; 40 of 40 when measured), and with PerStack; the correct ring
// is never flagged.
func TestRarePathSampling(t *testing.T) {
	const slots, appends = 500, 505
	for seed := uint64(0); seed < 10; seed++ {
		cfg := crash.Config{Regions: region("r", 16<<10), SampleFences: 100, Seed: seed}
		wl, ck := ring(slots, appends, true)
		rep, err := crash.Check(cfg, wl, ck)
		require.NoError(t, err)
		require.True(t, rep.Failed(), "seed %d: the wrap was not sampled: %s", seed, rep)
		require.Equal(t, 2*slots, rep.Failures[0].Point.Fence, "seed %d: the fence of the append that wraps: %s", seed, rep.Failures[0].Error())
		if seed < 3 {
			wl, ck = ring(slots, appends, false)
			rep, err = crash.Check(cfg, wl, ck)
			require.NoError(t, err)
			require.False(t, rep.Failed(), "seed %d: %v", seed, rep.Failures)
			require.Equal(t, 101, rep.Points, "100 fences and the end")
		}
	}
	cfg := crash.Config{Regions: region("r", 16<<10), PerStack: true}
	wl, ck := ring(slots, appends, true)
	rep, err := crash.Check(cfg, wl, ck)
	require.NoError(t, err)
	require.True(t, rep.Failed(), "PerStack: %s", rep)
	t.Logf("PerStack: %d crash points; caught (%s)", rep.Points, rep.Failures[0].Summary())
	wl, ck = ring(slots, appends, false)
	rep, err = crash.Check(cfg, wl, ck)
	require.NoError(t, err)
	require.False(t, rep.Failed(), "%v", rep.Failures)
}

// TestEndOfWorkloadNamesLastOperation: a failure at the end of the
// workload names the workload's last fence and operation, not the line
// that called Check, and replays from its key.
func TestEndOfWorkloadNamesLastOperation(t *testing.T) {
	wl := func(w *crash.Run) error {
		r := w.Region("r")
		b := r.Bytes()
		persist.Store64(b[64:], 1)
		must(r.Persist(b[64:72]))
		w.Boundary("set data")
		persist.Store64(b[0:], 1) // the flag, never persisted
		return nil
	}
	ck := func(img *crash.Image) error {
		b := img.Region("r").Bytes()
		if u64(b, 0) == 1 {
			return errors.New("flag without its persist")
		}
		return nil
	}
	cfg := crash.Config{Regions: region("r", 4096), Points: crash.AtEnd}
	rep, err := crash.Check(cfg, wl, ck)
	require.NoError(t, err)
	require.True(t, rep.Failed())
	f := rep.Failures[0]
	s := f.Point.String()
	require.Contains(t, s, "end of workload, after fence 1 at crash/coverage_test.go:")
	require.Contains(t, s, "TestEndOfWorkloadNamesLastOperation")
	require.Contains(t, s, `last operation "set data"`)
	require.NotContains(t, s, "crash.Check")
	t.Log(s)

	t.Setenv(crash.ReplayEnv, f.ReplayKey)
	again, err := crash.Check(cfg, wl, ck)
	require.NoError(t, err)
	require.Equal(t, f.Summary(), again.Failures[0].Summary())
}

// TestReplayErrors: a replay key that does not fit the run says so, as a
// replay error, not as the workload's.
func TestReplayErrors(t *testing.T) {
	v := suite()[0]
	for _, key := range []string{"seq=9999 image=0", "seq=2 image=0 keep=99", "seq=2 image=0 drop=99"} {
		t.Setenv(crash.ReplayEnv, key)
		wl, ck := v.build(true)
		_, err := crash.Check(v.cfg, wl, ck)
		require.ErrorIs(t, err, crash.ErrConfig, key)
		require.Contains(t, err.Error(), crash.ReplayEnv, key)
		require.NotContains(t, err.Error(), "workload:", key)
		t.Log(err)
	}
}

// TestDurableReplay: data not durable at a durability point gets a replay
// key like every other failure, and replaying it reports it again.
func TestDurableReplay(t *testing.T) {
	for _, v := range suite() {
		if v.name != "last store of an operation never made durable" {
			continue
		}
		wl, ck := v.build(true)
		rep, err := crash.Check(v.cfg, wl, ck)
		require.NoError(t, err)
		f := rep.Failures[0]
		require.NotNil(t, f.NotDurable)
		require.True(t, strings.HasSuffix(f.ReplayKey, " durable"), f.ReplayKey)
		t.Setenv(crash.ReplayEnv, f.ReplayKey)
		wl, ck = v.build(true)
		calls := 0
		again, err := crash.Check(v.cfg, wl, func(img *crash.Image) error { calls++; return ck(img) })
		require.NoError(t, err)
		require.Zero(t, calls, "a durability failure replays without images")
		require.Len(t, again.Failures, 1)
		require.Equal(t, f.Summary(), again.Failures[0].Summary())
	}
}

// TestShrinkCounted: images re-checked while shrinking are counted apart
// from the images planned.
func TestShrinkCounted(t *testing.T) {
	v := suite()[0]
	wl, ck := v.build(true)
	rep, err := crash.Check(v.cfg, wl, ck)
	require.NoError(t, err)
	require.True(t, rep.Failed())
	require.NotZero(t, rep.ShrinkImages)
	cfg := v.cfg
	cfg.NoShrink = true
	wl, ck = v.build(true)
	rep2, err := crash.Check(cfg, wl, ck)
	require.NoError(t, err)
	require.Zero(t, rep2.ShrinkImages)
	require.Equal(t, rep.Images, rep2.Images, "shrinking does not change the images planned")
	require.Contains(t, rep.String(), fmt.Sprintf("(+%d re-checked while shrinking)", rep.ShrinkImages))
}

// TestMaxAlone: a test may bound the units that get alone images; the
// units covered are a run that moves with the crash point, and the report
// counts the units left out.
func TestMaxAlone(t *testing.T) {
	cfg := crash.Config{Regions: region("r", 4096), MaxAlone: 10, Pairs: -1, Strength: -1, RecoveryCrashes: -1}
	covered := map[int]bool{}
	rep, err := crash.Check(cfg, func(w *crash.Run) error {
		r := w.Region("r")
		b := r.Bytes()
		for k := 0; k < 6; k++ {
			for i := 0; i < 40; i++ {
				persist.Store64(b[8*i:], uint64(k*100+i+1))
			}
			must(r.Persist(b[0:320]))
		}
		return nil
	}, func(img *crash.Image) error {
		b := img.Region("r").Bytes()
		lost := -1
		for i := 0; i < 40; i++ {
			if u64(b, 8*i) == 0 || u64(b, 8*i)%100 != uint64(i+1) {
				if lost >= 0 {
					return nil // not an alone-lost image
				}
				lost = i
			}
		}
		if lost >= 0 && img.Point().Fence == 1 {
			covered[lost] = true
		}
		return nil
	})
	require.NoError(t, err)
	require.False(t, rep.Failed())
	require.Len(t, covered, 10, "at the first fence, ten units lost alone")
	require.Equal(t, 6, rep.Coverage.AloneSkipped, "six crash points beyond the bound")
	require.Equal(t, 6*30, rep.Coverage.AloneSkippedUnits)
	require.Contains(t, rep.String(), "180 units at 6 crash points had no alone images")
}

// TestReplayForms: the short forms of a replay key (runs of units, and
// the complement, drop=) replay exactly the image reported, once.
func TestReplayForms(t *testing.T) {
	cfg := crash.Config{Regions: region("r", 16<<10)}
	for _, c := range []struct {
		form  string
		build func() (func(*crash.Run) error, func(*crash.Image) error)
	}{
		{"keep=0-", func() (func(*crash.Run) error, func(*crash.Image) error) {
			return checksummedRecord(1000, 40), checkRecord(1000, 40)
		}},
		{"drop=0,", func() (func(*crash.Run) error, func(*crash.Image) error) { return mirroredLength(37, true) }},
	} {
		t.Setenv(crash.ReplayEnv, "")
		wl, ck := c.build()
		rep, err := crash.Check(cfg, wl, ck)
		require.NoError(t, err)
		require.True(t, rep.Failed())
		f := rep.Failures[0]
		require.Contains(t, f.ReplayKey, c.form)
		t.Setenv(crash.ReplayEnv, f.ReplayKey)
		wl, ck = c.build()
		calls := 0
		again, err := crash.Check(cfg, wl, func(img *crash.Image) error { calls++; return ck(img) })
		require.NoError(t, err)
		require.Equal(t, 1, calls, f.ReplayKey)
		require.Equal(t, f.Summary(), again.Failures[0].Summary())
		require.Equal(t, f.Survived, again.Failures[0].Survived)
	}
}
