package fptree

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
)

// The corruption campaign (issue 24): random media damage to closed trees
// and what Open makes of it. Each trial builds a tree of random leaf size
// from a seed with random inserts, updates, deletes and PutBatch groups
// against a model map, closes it, and damages it once: it zeroes, fills
// with garbage or flips bits in an 8-byte word, a line, a 256-byte block
// or a 4 KiB page, or a short run of bytes, aimed at the header line, the
// log line, one field of a leaf of the chain (bitmap, next, lo, prev,
// fingerprints, a key, a value) or anywhere in the area; or it truncates
// the area. Then it opens the tree and sorts the outcome:
//
//	full         Open succeeded and the tree holds exactly the model's
//	             keys and values, Check nil
//	refused      Open failed with an error wrapping persist.ErrCorrupt,
//	             persist.ErrBadFormat or (a truncated area)
//	             persist.ErrTooSmall
//	no-tree      Open said ErrNoTree: the damage zeroed the header's magic
//	             word, what a crash inside Create leaves (doc.go: not
//	             detected)
//	reported     Open succeeded and Check, Get or Scan reports ErrCorrupt
//	undetected   the tree differs from the model and every changed byte is
//	             in a bitmap, a key or a value of a leaf of the chain:
//	             the damage doc.go names as not detected
//	lost-silently the tree differs from the model otherwise: never
//	other-error  any other error: never

// campaignTrials is the count in make test; go test -run TestCampaign
// -campaign 20000 ./fptree/ runs a longer one.
var campaignTrials = flag.Int("campaign", 800, "trials of the fptree corruption campaign")

type campaign struct {
	counts map[string]int
	first  map[string]string
}

func (c *campaign) add(kind, what string) {
	c.counts[kind]++
	if c.first[kind] == "" {
		c.first[kind] = what
	}
}

// campaignTree builds the tree of one trial in a region of its own and
// returns the region, the model, and the chain's leaves (to aim damage).
func campaignTree(t *testing.T, rng *structtest.Rand) (*persist.Region, geom, map[uint64]uint64, []uint32, []uint64) {
	t.Helper()
	slots := []int{4, 8, 16, 64}[rng.Intn(4)]
	r := structtest.Region(t, 64<<10)
	tr, err := Create(r, &Options{LeafSlots: slots, Group: 4})
	if err != nil {
		t.Fatal(err)
	}
	model := map[uint64]uint64{}
	space := uint64(50 + rng.Intn(600))
	for op := range 20 + rng.Intn(250) {
		k := rng.Uint64() % space
		if rng.Intn(8) == 0 {
			k = math.MaxUint64 - k // keys at both ends
		}
		v := rng.Uint64()
		switch x := rng.Intn(10); {
		case x < 6:
			if err = tr.Put(k, v); err == nil {
				model[k] = v
			}
		case x < 8:
			_, err = tr.Delete(k)
			if err == nil {
				delete(model, k)
			}
		default:
			keys := []uint64{k, (k + 1) % space, (k + 7) % space}
			vals := []uint64{v, v + 1, uint64(op)}
			err = tr.PutBatch(keys, vals)
			for i := range keys { // after ErrFull some were put: the tree says which
				if gv, ok, gerr := tr.Get(keys[i]); gerr == nil && ok && gv == vals[i] {
					model[keys[i]] = vals[i]
				}
			}
		}
		if errors.Is(err, ErrFull) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if diff, _, _, err := campaignRead(tr, model); len(diff) > 0 || err != nil {
		t.Fatalf("the undamaged tree: %v %v", diff, err)
	}
	var chain []uint32
	var los []uint64
	for l := uint32(0); ; {
		chain = append(chain, l)
		los = append(los, at(tr.leaf(l), offLo))
		if l = uint32(at(tr.leaf(l), offNext)); l == 0 {
			break
		}
	}
	g := tr.g
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	return r, g, model, chain, los
}

// leafField returns the byte range of field f of leaf l.
func leafField(g geom, l uint32, f int) (off, n int) {
	base := leavesOff + int(l)*g.stride
	switch f {
	case 0:
		return base + offBitmap, 8
	case 1:
		return base + offNext, 8
	case 2:
		return base + offLo, 8
	case 3:
		return base + offPrev, 8
	case 4:
		return base + offFps, g.m
	case 5:
		return base + g.kv, 16 * g.m // the slots
	default:
		return base, g.stride
	}
}

// campaignDamage draws one damage of the tree.
func campaignDamage(rng *structtest.Rand, g geom, chain []uint32, size int) structtest.Damage {
	units := []int{8, 64, 256, 4096, 1 + rng.Intn(24)}
	n := units[rng.Intn(len(units))]
	var off int
	switch w := rng.Intn(8); {
	case w == 0:
		off = rng.Intn(64) // the header line
	case w == 1:
		off = logOff + rng.Intn(64)
	case w < 6: // a field of a leaf of the chain
		fo, fn := leafField(g, chain[rng.Intn(len(chain))], rng.Intn(6))
		off = fo + rng.Intn(fn)
		if rng.Intn(2) == 0 {
			n = min(n, fn) // the field alone
			off = fo
		}
	default:
		off = rng.Intn(leavesOff + (int(slicesMax(chain))+1)*g.stride)
	}
	if n >= 8 && n != 24 && n != 16*g.m && n != g.m {
		off &^= n - 1
	}
	n = min(n, size-off)
	return structtest.Damage{Off: off, N: n, How: structtest.DamageHows[rng.Intn(3)]}
}

func slicesMax(s []uint32) uint32 {
	var m uint32
	for _, x := range s {
		m = max(m, x)
	}
	return m
}

// unprotected reports whether every key of diff lies in a leaf of the
// chain (by the leaves' lower bounds los) whose bitmap or slots (key,
// value) differ between before and after: damage doc.go names as not
// detected explains it.
func unprotected(g geom, chain []uint32, los []uint64, before, after []byte, diff []uint64) bool {
	for _, k := range diff {
		j := len(los) - 1
		for j > 0 && los[j] > k {
			j--
		}
		bo, _ := leafField(g, chain[j], 0)
		so, sn := leafField(g, chain[j], 5)
		if bytes.Equal(before[bo:bo+8], after[bo:bo+8]) && bytes.Equal(before[so:so+sn], after[so:so+sn]) {
			return false
		}
	}
	return true
}

// campaignOpen opens the damaged tree and compares it with the model:
// the keys whose presence or value differ; reported when a read or Check
// said ErrCorrupt.
func campaignOpen(r *persist.Region, model map[uint64]uint64) (diff []uint64, reported, opened bool, err error) {
	tr, err := Open(r, nil)
	if err != nil {
		return nil, false, false, err
	}
	defer tr.Close()
	return campaignRead(tr, model)
}

// campaignRead compares the open tree with the model (campaignOpen).
func campaignRead(tr *Tree, model map[uint64]uint64) (diff []uint64, reported, opened bool, err error) {
	if err := tr.Check(); err != nil {
		return nil, true, true, err
	}
	got := map[uint64]uint64{}
	if err := tr.Scan(0, math.MaxUint64, func(k, v uint64) bool { got[k] = v; return true }); err != nil {
		return nil, errors.Is(err, persist.ErrCorrupt), true, err
	}
	for k, v := range model {
		gv, ok, err := tr.Get(k)
		if err != nil {
			return nil, errors.Is(err, persist.ErrCorrupt), true, err
		}
		if !ok || gv != v || got[k] != v {
			diff = append(diff, k)
		}
	}
	for k := range got {
		if _, ok := model[k]; !ok {
			diff = append(diff, k)
		}
	}
	if len(diff) == 0 && tr.Len() != len(model) {
		return nil, false, true, fmt.Errorf("Len %d, the model has %d keys", tr.Len(), len(model))
	}
	return diff, false, true, nil
}

func runCampaign(t *testing.T, seed uint64, trials int) campaign {
	res := campaign{counts: map[string]int{}, first: map[string]string{}}
	for i := range trials {
		rng := structtest.NewRand(seed<<32 | uint64(i))
		r, g, model, chain, los := campaignTree(t, rng)
		what := fmt.Sprintf("seed %d trial %d (%d keys, %d leaves of %d slots)", seed, i, len(model), len(chain), g.m)
		before := bytes.Clone(r.Bytes())
		if rng.Intn(16) == 0 {
			// Truncation: the area's first bytes in a smaller region.
			cut := (1 + rng.Intn(len(before)/4096-1)) * 4096
			r = structtest.Region(t, cut)
			copy(r.Bytes(), before)
			before = before[:cut]
			what += fmt.Sprintf(": truncated to %d bytes", cut)
		} else {
			d := campaignDamage(rng, g, chain, len(before))
			d.Apply(rng, r.Bytes())
			what += ": " + d.String()
		}
		after := bytes.Clone(r.Bytes())
		diff, reported, opened, err := campaignOpen(r, model)
		switch {
		case !opened && errors.Is(err, ErrNoTree) && persist.Load64(after) == 0:
			res.add("no-tree", what)
		case !opened && (errors.Is(err, persist.ErrCorrupt) || errors.Is(err, persist.ErrBadFormat) || errors.Is(err, persist.ErrTooSmall)):
			res.add("refused", what)
		case reported:
			res.add("reported", what+": "+err.Error())
		case err != nil:
			res.add("other-error", what+": "+err.Error())
		case len(diff) == 0:
			res.add("full", what)
		case unprotected(g, chain, los, before, after[:len(before)], diff):
			res.add("undetected", fmt.Sprintf("%s: keys %v", what, diff))
		default:
			res.add("lost-silently", fmt.Sprintf("%s: keys %v", what, diff))
		}
	}
	return res
}

// TestCampaign runs the corruption campaign: no damage is lost silently,
// none read as another error, and the damage that goes undetected is the
// kind doc.go names (bitmaps, keys and values of the leaves).
func TestCampaign(t *testing.T) {
	trials := *campaignTrials
	if raceEnabled {
		trials /= 3
	}
	res := runCampaign(t, 1, trials)
	t.Logf("%d trials: %v", trials, res.counts)
	for _, k := range []string{"undetected", "no-tree", "reported"} {
		if res.first[k] != "" {
			t.Logf("first %s: %s", k, res.first[k])
		}
	}
	for _, k := range []string{"lost-silently", "other-error"} {
		if res.counts[k] > 0 {
			t.Errorf("%d trials %s; first: %s", res.counts[k], k, res.first[k])
		}
	}
	if res.counts["refused"] == 0 || res.counts["full"] == 0 {
		t.Errorf("the campaign drew no damage that was refused or harmless: %v", res.counts)
	}
}
