//go:build linux

package fptree

import (
	"errors"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/crash"
)

// Poisoned media: crash images of a tree of 16-slot leaves (whose stride
// does not divide the page, so that some leaves straddle a page boundary:
// a poisoned page then holds some leaves' first lines — the chain is cut
// there — and another's keys only — that leaf's keys are lost, the chain
// goes on) with the header's page, a page in the middle, the last page or
// a seeded random page poisoned. The header's page is ErrMedia at Open;
// otherwise every key outside Lost() reads its acknowledged value (or the
// one in flight) through Get and Scan, every key inside is ErrMedia, Check
// reports the damage, and a Put below the damage works — no process
// death.

const poisonSize = 32 << 10

func poisonOptions() *Options { return &Options{LeafSlots: 16, Group: 4} }

func TestPoison(t *testing.T) {
	const ops, space = 1100, 900 // fills most of the area's 102 leaves
	for _, site := range structtest.PoisonSites(0, poisonSize) {
		t.Run(site.Name, func(t *testing.T) {
			h := &crashRun{}
			var seen poisonSeen
			// Crash points late in the workload, when the tree fills the area.
			cfg := crash.Config{Regions: []crash.Spec{{Name: "t", Size: poisonSize}}, Fences: []int{900, 1300, 1600, 1750}, MaxImages: 4, MaxAlone: 4,
				Pairs: -1, RecoveryCrashes: -1, Seed: 11}
			crash.Test(t, cfg, h.poisonWorkload(ops, space), h.poisonCheck(site.Off, space, &seen))
			t.Logf("%+v", seen)
			if site.Name == "middle" {
				require.Positive(t, seen.lost, "the middle page holds leaves in use")
				require.Positive(t, seen.served)
			}
		})
	}
	// The broken recovery, which takes a poisoned leaf for the chain's
	// end, is caught: keys outside what it reports lost are missing.
	t.Run("broken/poison-as-end", func(t *testing.T) {
		h := &crashRun{variant: poisonAsEnd}
		cfg := crash.Config{Regions: []crash.Spec{{Name: "t", Size: poisonSize}}, Fences: []int{900, 1300, 1600, 1750}, MaxImages: 4, MaxAlone: 4,
			Pairs: -1, RecoveryCrashes: -1, Seed: 11}
		rep, err := crash.Check(cfg, h.poisonWorkload(ops, space), h.poisonCheck(structtest.PoisonSites(0, poisonSize)[1].Off, space, new(poisonSeen)))
		require.NoError(t, err)
		require.True(t, rep.Failed(), "the broken recovery is caught: %v", rep)
		t.Logf("variant poison-as-end: caught (%v)", rep.Failures[0].Err)
	})
	t.Run("random", func(t *testing.T) {
		h := &crashRun{}
		var seen poisonSeen
		cfg := crash.Config{Regions: []crash.Spec{{Name: "t", Size: poisonSize}}, Fences: []int{1000, 1200, 1400, 1500, 1600, 1700, 1780},
			MaxImages: 4, MaxAlone: 4, Pairs: -1, Poison: &crash.Poison{}, RecoveryCrashes: -1, Seed: 12}
		crash.Test(t, cfg, h.poisonWorkload(ops, space), h.poisonCheck(-1, space, &seen))
		t.Logf("%+v", seen)
	})
}

// poisonSeen counts what the poison checks met: images whose Open failed
// on the header, that lost keys (to a cut chain, or a leaf kept in it),
// and keys served outside the lost ranges.
type poisonSeen struct{ header, lost, cut, leaf, served, logged int }

// logOnPoison reports whether a micro log of the tree in mem is set and
// names a leaf with a byte in bad.
func logOnPoison(mem []byte, bad []persist.Range) bool {
	stride := geometry(poisonOptions().LeafSlots).stride
	if structtest.Overlaps(bad, logOff, 64) {
		return false // the header's page: PoisonedOpen judges it
	}
	for w := range 2 {
		a, b, set := unpackLog(persist.Load64(mem[logOff+8*w:]))
		for _, l := range []uint32{a, b} {
			if set && structtest.Overlaps(bad, leavesOff+int(l)*stride, stride) {
				return true
			}
		}
	}
	return false
}

// poisonWorkload puts ops random keys of [0, space) (a few deleted) into
// a tree of poisonOptions.
func (h *crashRun) poisonWorkload(ops int, space uint64) func(*crash.Run) error {
	return func(w *crash.Run) error {
		h.created, h.acked, h.inflight = false, map[uint64]uint64{}, nil
		rnd := structtest.NewRand(uint64(ops))
		tr, err := Create(w.Region("t"), poisonOptions())
		if err != nil {
			return err
		}
		h.created = true
		w.Durable("create")
		for op := range ops {
			k := rnd.Uint64() % space
			if rnd.Intn(8) == 0 {
				h.inflight = append(h.inflight[:0], change{k: k, del: true})
				if _, err := tr.Delete(k); err != nil {
					return err
				}
				delete(h.acked, k)
			} else {
				h.inflight = append(h.inflight[:0], change{k: k, v: uint64(op) + 1})
				if err := tr.Put(k, uint64(op)+1); errors.Is(err, ErrFull) {
					h.inflight = h.inflight[:0]
					continue
				} else if err != nil {
					return err
				}
				h.acked[k] = uint64(op) + 1
			}
			h.inflight = h.inflight[:0]
			w.Durable("op")
		}
		return tr.Close()
	}
}

// poisonCheck poisons the page at off (none for -1: Config.Poison did) and
// checks what the tree makes of it.
func (h *crashRun) poisonCheck(off int, space uint64, seen *poisonSeen) func(*crash.Image) error {
	return func(img *crash.Image) error {
		if off >= 0 {
			if err := img.Poison("t", off, 1); err != nil {
				return err
			}
		}
		bad := img.Poisoned("t")
		tr, err := Open(img.Region("t"), nil)
		if h.variant != correct && err == nil {
			tr.Close()
			tr, err = open(img.Region("t"), nil, h.variant)
		}
		if err != nil && logOnPoison(img.Region("t").Bytes(), bad) {
			// A crash in a split or a free whose leaves are on the page:
			// recovery cannot finish it, Open is ErrMedia (doc.go).
			seen.logged++
			return structtest.MediaIn(err, bad)
		}
		if done, err := structtest.PoisonedOpen(err, bad, leavesOff+64, h.created); done {
			if err == nil && h.created {
				seen.header++
			}
			return err
		}
		defer tr.Close()
		if err := structtest.PoisonedAgrees(tr.Poisoned(), bad, 0, poisonSize); err != nil {
			return err
		}
		lost := tr.Lost()
		if len(lost) > 0 {
			seen.lost++
			if tr.cut {
				seen.cut++
			}
			if !tr.cut || len(lost) > 1 {
				seen.leaf++
			}
		}
		isLost := func(k uint64) bool {
			for _, g := range lost {
				if k >= g[0] && k <= g[1] {
					return true
				}
			}
			return false
		}
		if err := tr.Check(); len(lost) > 0 || err != nil && errors.Is(err, persist.ErrMedia) {
			if err := structtest.MediaIn(err, bad); err != nil {
				return fmt.Errorf("Check with %v lost: %w", lost, err)
			}
		} else if err != nil {
			return err
		}
		// Every key outside the lost ranges as acknowledged; inside, ErrMedia.
		got := map[uint64]uint64{}
		for k := range space {
			v, ok, err := tr.Get(k)
			switch {
			case isLost(k):
				if err := structtest.MediaIn(err, bad); err != nil {
					return fmt.Errorf("Get(%d), lost in %v: %w", k, lost, err)
				}
			case err != nil:
				return fmt.Errorf("Get(%d), outside the lost %v: %w", k, lost, err)
			case ok:
				got[k] = v
			}
		}
		want := &crashRun{acked: map[uint64]uint64{}}
		for k, v := range h.acked {
			if !isLost(k) {
				want.acked[k] = v
			}
		}
		for _, c := range h.inflight {
			if !isLost(c.k) {
				want.inflight = append(want.inflight, c)
			}
		}
		if err := want.compare(got); err != nil {
			return fmt.Errorf("outside the lost %v: %w", lost, err)
		}
		seen.served += len(got)
		// Scan: the keys below the first lost range, then ErrMedia.
		n := 0
		err = tr.Scan(0, math.MaxUint64, func(k, v uint64) bool {
			if got[k] != v || isLost(k) {
				err = fmt.Errorf("Scan returned %d=%d, Get said %d (lost %v)", k, v, got[k], isLost(k))
				return false
			}
			n++
			return true
		})
		switch {
		case len(lost) > 0:
			if err := structtest.MediaIn(err, bad); err != nil {
				return fmt.Errorf("Scan with %v lost: %w", lost, err)
			}
		case err != nil:
			return err
		case n != len(got):
			return fmt.Errorf("Scan found %d keys, Get %d", n, len(got))
		}
		// A change below the damage works (a split may be refused when
		// the chain was cut: the leaves after the cut are not known free).
		if err := tr.Put(0, 7); err != nil && !(isLost(0) || errors.Is(err, persist.ErrMedia) || errors.Is(err, ErrFull)) {
			return fmt.Errorf("put of key 0 with %v lost: %w", lost, err)
		}
		return nil
	}
}

// Poison that appears while the tree is open: the operations that touch
// the poisoned page are ErrMedia, the others work, the tree is not failed
// (a change elsewhere works), and a reopen over the page loses only the
// keys Open says (Lost).
func TestPoisonWhileOpen(t *testing.T) {
	ps := os.Getpagesize()
	r := structtest.Region(t, 64<<10)
	tr, err := Create(r, poisonOptions())
	require.NoError(t, err)
	const n = 1200
	for k := range uint64(n) {
		require.NoError(t, tr.Put(k, k+1))
	}
	require.NoError(t, r.Poison(8*ps, 1))
	bad := r.Poisoned()
	var media, served int
	for k := range uint64(n) {
		v, ok, err := tr.Get(k)
		if err != nil {
			require.NoError(t, structtest.MediaIn(err, bad), "Get(%d)", k)
			media++
			require.NoError(t, structtest.MediaIn(tr.Put(k, 1), bad), "Put(%d) into a poisoned leaf", k)
			_, err := tr.Delete(k)
			require.NoError(t, structtest.MediaIn(err, bad), "Delete(%d)", k)
			continue
		}
		require.True(t, ok)
		require.Equal(t, k+1, v)
		served++
	}
	require.Positive(t, media)
	require.Positive(t, served)
	vals, found := make([]uint64, n), make([]bool, n)
	keys := make([]uint64, n)
	for i := range keys {
		keys[i] = uint64(i)
	}
	require.NoError(t, structtest.MediaIn(tr.GetBatch(keys, vals, found), bad))
	got := 0
	for i := range keys {
		if found[i] {
			require.Equal(t, keys[i]+1, vals[i])
			got++
		}
	}
	require.Equal(t, served, got, "GetBatch finds every key Get finds")
	require.NoError(t, structtest.MediaIn(tr.Check(), bad))
	require.NoError(t, structtest.MediaIn(tr.Scan(0, math.MaxUint64, func(k, v uint64) bool { return true }), bad))
	require.NoError(t, tr.Put(0, 9), "a change outside the poisoned page")
	require.NoError(t, tr.Close())
}

// A full tree (keys put in a seeded random order, so that a leaf's slots
// in use are spread over it) reopened with each page of its leaves
// poisoned in turn: Open loses the key ranges it says (Lost) and no
// other — a leaf whose first line reads but whose keys do not is kept in
// the chain (its keys lost, the keys after it served), a leaf whose first
// line does not read cuts the chain — and both kinds are met.
func TestPoisonEveryPage(t *testing.T) {
	ps := os.Getpagesize()
	r := structtest.Region(t, 64<<10)
	tr, err := Create(r, poisonOptions())
	require.NoError(t, err)
	const n = 1200
	rnd := structtest.NewRand(5)
	order := make([]uint64, n)
	for i := range order {
		order[i] = uint64(i)
	}
	for i := n - 1; i > 0; i-- {
		j := rnd.Intn(i + 1)
		order[i], order[j] = order[j], order[i]
	}
	for _, k := range order {
		require.NoError(t, tr.Put(k, k+1))
	}
	used, _ := tr.Leaves()
	// Each leaf's key range, to tell which keys a page holds.
	type span struct{ lo, hi uint64 }
	ranges := map[uint32]span{}
	for l := range tr.hwm {
		if m := &tr.meta[l]; m.lo.Load() <= m.hi.Load() {
			ranges[l] = span{m.lo.Load(), m.hi.Load()}
		}
	}
	stride := tr.g.stride
	require.NoError(t, tr.Close())
	end := leavesOff + used*stride
	var leafKept, cuts, resumed, lostKeys int
	for page := 1; page*ps < end; page++ {
		require.NoError(t, r.Poison(page*ps, 1))
		bad := r.Poisoned()
		tr, err := Open(r, nil)
		require.NoError(t, err, "page %d", page)
		lost := tr.Lost()
		require.NotEmpty(t, lost, "page %d holds leaves in use", page)
		if tr.cut {
			cuts++
		}
		if !tr.cut || len(lost) > 1 {
			leafKept++
		}
		// The keys the page holds: those of the leaves with a byte on it.
		onPage := map[uint64]bool{}
		firstLines := 0 // leaves whose first line is on the page
		for l, sp := range ranges {
			off := leavesOff + int(l)*stride
			if off < (page+1)*ps && off+stride > page*ps {
				for k := sp.lo; k <= min(sp.hi, n-1); k++ {
					onPage[k] = true
				}
				if off >= page*ps {
					firstLines++
				}
			}
		}
		if !tr.cut && firstLines > 0 {
			resumed++ // the chain went on past unreadable first lines
		}
		for k := range uint64(n) {
			if tr.lostKey(k) != nil {
				lostKeys++
				if !tr.cut {
					// Not cut: only the keys of the page's leaves are lost.
					require.True(t, onPage[k], "page %d: key %d lost (%v), not on the page", page, k, lost)
				}
			} else {
				require.False(t, onPage[k] && !tr.cut, "page %d: key %d is on the page but not lost", page, k)
			}
		}
		for k := range uint64(n) {
			v, ok, err := tr.Get(k)
			if tr.lostKey(k) != nil {
				require.NoError(t, structtest.MediaIn(err, bad), "page %d, Get(%d), lost %v", page, k, lost)
				continue
			}
			require.NoError(t, err, "page %d, Get(%d), lost %v", page, k, lost)
			require.True(t, ok, "page %d, key %d", page, k)
			require.Equal(t, k+1, v)
		}
		require.NoError(t, structtest.MediaIn(tr.Check(), bad))
		require.NoError(t, tr.Close())
		require.NoError(t, r.Unpoison(page*ps, 1))
	}
	t.Logf("%d leaves; of the pages poisoned, %d cut the chain, %d lost a leaf kept in it, %d went on past unreadable first lines (back links); %d key losses in all",
		used, cuts, leafKept, resumed, lostKeys)
	require.Positive(t, leafKept)
	require.Positive(t, resumed)
}

// Create over a poisoned header page is ErrMedia and leaves nothing
// claimed.
func TestCreateOnPoison(t *testing.T) {
	r := structtest.Region(t, 16<<10)
	require.NoError(t, r.Poison(0, 1))
	_, err := Create(r, nil)
	require.ErrorIs(t, err, persist.ErrMedia)
	structtest.RequireFree(t, r, 0, r.Size())
}

// TestPoisonStaleCopy: a split that a crash interrupted before its log
// leaves a copy of the upper half of its leaf in a free leaf, naming that
// leaf as its prev but not linked (layout.go). Here the leaf is the
// chain's last, its keys change after the copy, and then its first line
// is poisoned: Open must not take the copy for where the chain goes on,
// which would serve the copy's stale values; the keys are lost instead.
// The broken variant that ignores the linked bit serves them, or fails
// the cross-check of the back links, and is caught.
func TestPoisonStaleCopy(t *testing.T) {
	ps := os.Getpagesize()
	if ps != 4096 {
		t.Skipf("the layout below is worked out for 4 KiB pages, not %d", ps)
	}
	for _, v := range []variant{correct, resumeUnlinked} {
		r := structtest.Region(t, 64<<10)
		tr, err := Create(r, &Options{LeafSlots: 64})
		require.NoError(t, err)
		// Ascending keys: leaves 0..7 in chain order, 32 keys each but the
		// last. Leaf 7's first line starts page 2 (128 + 7*1152 = 8192),
		// its predecessor's (leaf 6) is on page 1, and leaf 11's, a free
		// leaf, on page 3.
		const n = 7*32 + 40
		for k := range uint64(n) {
			require.NoError(t, tr.Put(k, k+1))
		}
		tail := tr.root.Load().leafOf(math.MaxUint64)
		require.Equal(t, uint32(7), tail)
		require.Equal(t, uint32(8), tr.hwm)
		// The copy an interrupted split of leaf 7 into leaf 11 leaves:
		// the upper half of its keys, lo the split key, next leaf 7's
		// (none), prev 7 without the linked bit.
		const copyLeaf = 11
		pl, pn := tr.leafBytes(tail), tr.leafBytes(copyLeaf)
		copy(pn, pl)
		sep := uint64(n - 20)
		var upper uint64
		for i := range tr.g.m {
			if at(tr.leaf(tail), offBitmap)&(1<<i) != 0 && tr.g.key(tr.leaf(tail), i) >= sep {
				upper |= 1 << i
			}
		}
		putU64(pn[offBitmap:], upper)
		putU64(pn[offLo:], sep)
		putU64(pn[offPrev:], uint64(tail))
		require.NoError(t, r.Persist(pn))
		// Leaf 11 was given out before (and freed): it is below the mark,
		// where Open looks (a copy past the mark it never reads).
		putU64(r.Bytes()[logOff+8*markWord:], markWordOf(copyLeaf))
		// Leaf 7's keys change after the copy.
		for k := uint64(7 * 32); k < n; k++ {
			require.NoError(t, tr.Put(k, k+1000))
		}
		require.NoError(t, tr.Close())
		require.NoError(t, r.Poison(2*ps, 1))
		tr, err = open(r, nil, v)
		if v != correct && err != nil {
			// The cross-check of the back links catches it first: the
			// copy does not name its predecessor linked.
			require.ErrorIs(t, err, ErrCorrupt)
			t.Logf("variant resume-unlinked: caught (%v)", err)
			continue
		}
		require.NoError(t, err)
		stale := 0
		for k := uint64(7 * 32); k < n; k++ {
			got, ok, err := tr.Get(k)
			switch {
			case err == nil && ok && got == k+1:
				stale++
			case v == correct:
				require.NoError(t, structtest.MediaIn(err, r.Poisoned()), "key %d", k)
			}
		}
		for k := range uint64(6 * 32) { // the leaves before the poisoned page
			got, ok, err := tr.Get(k)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, k+1, got)
		}
		if v == correct {
			require.Zero(t, stale, "Open served the stale copy's values")
			require.True(t, tr.cut, "the poisoned leaf was the last: the chain is cut there")
		} else {
			require.Positive(t, stale, "the variant that ignores the linked bit serves the stale copy")
			t.Logf("variant resume-unlinked: caught (%d stale values served)", stale)
		}
		require.NoError(t, tr.Close())
	}
}
