package walog_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/walog"
)

// The corruption campaign: random media damage to closed (and to crashed)
// logs, and what Open makes of it. Each trial builds a checksummed log of
// random format, alignment and geometry from a seed, appends single
// entries and batches (a reset or a truncate now and then), closes it —
// or, for a crashed log, keeps the bytes it had before Close, as a crash
// right after the last append returned leaves them — and damages it once:
// it zeroes, fills with garbage or flips bits in an 8-byte word, a line, a
// 256-byte block or a 4 KiB page, or a short run of bytes, placed in the
// header, around the tail, or anywhere in the prepared part of the log.
// Then it opens the log and sorts the outcome:
//
//	full        Open returned every acknowledged entry, nothing else
//	repaired    the same, after a header repaired from its copy
//	refused     Open failed with an error wrapping persist.ErrCorrupt or
//	            persist.ErrBadFormat (never ErrNoLog) and wrote nothing
//	erased      Open said ErrNoLog, and rightly: the damage zeroed every
//	            byte the log held (a 4 KiB page over a small log)
//	lost-last   Open dropped the last append (one entry or one batch):
//	            what the package documentation says damage to a crashed
//	            log's last append can do
//	lost-end    Open dropped entries before the last append too, all of
//	            which the damage hit: it wiped out the end of a crashed
//	            log, which nothing on the media then tells from a log
//	            that ended there (a closed log records its tail)
//	lost-more   Open dropped more than that: silent loss
//	wrong       Open returned an entry that was not appended: never
func isZero(b []byte) bool { return len(bytes.Trim(b, "\x00")) == 0 }

// campaignTrials is the count in make test; go test -run Campaign
// -campaign 20000 runs a longer one.
var campaignTrials = flag.Int("campaign", 1500, "trials per kind of the walog corruption campaign")

type campaignResult struct {
	counts map[string]int
	first  map[string]string
}

func (c *campaignResult) add(kind, what string) {
	c.counts[kind]++
	if c.first[kind] == "" {
		c.first[kind] = what
	}
}

// damage is one media damage: where and what.
type damage = structtest.Damage

// pickDamage draws a damage of a log whose area is size bytes with the
// tail at tail and the prepared end at hi.
func pickDamage(rng *structtest.Rand, size, tail, hi int) damage {
	units := []int{8, 64, 256, 4096, 1 + rng.Intn(24)}
	n := units[rng.Intn(len(units))]
	var off int
	switch rng.Intn(3) {
	case 0: // the header and its copy
		off = rng.Intn(walog.HeaderSize)
	case 1: // around the tail
		lo := max(walog.HeaderSize, tail-768)
		off = lo + rng.Intn(min(size, tail+256)-lo)
	default: // anywhere the log has prepared
		off = rng.Intn(hi)
	}
	if n >= 8 && n != 24 {
		off &^= n - 1 // units are aligned: what media lose
	}
	n = min(n, size-off)
	how := structtest.DamageHows[rng.Intn(3)]
	return damage{Off: off, N: n, How: how}
}

// campaignLog builds the log of one trial and returns the region, the
// acknowledged entries, where each lies ([2]int{off, end}), the number of
// entries of the last append, the tail and the prepared end (about).
func campaignLog(t *testing.T, rng *structtest.Rand, crashed bool) (*persist.Region, []entry, [][2]int, int, int, int) {
	f := formats[rng.Intn(3)]
	align := []int{8, 8, 64, 256}[rng.Intn(4)]
	size := (8 + rng.Intn(24)) << 10
	o := &walog.Options{Format: f, Align: align, MaxEntry: 300, Chunk: 1024 << rng.Intn(3)}
	if rng.Intn(2) == 0 {
		o.MaxBatch = 2048
	}
	r := anon(t, size)
	l, err := walog.Create(r, o)
	if err != nil {
		t.Fatal(err)
	}
	var acked []entry
	var at [][2]int
	var group []int // the append each entry came from
	ops := 5 + rng.Intn(60)
	for i := range ops {
		switch k := rng.Intn(40); {
		case k == 0 && i > ops/2:
			if err := l.Reset(); err != nil {
				t.Fatal(err)
			}
			acked, at, group = nil, nil, nil
			continue
		case k == 1 && len(acked) > 2:
			cut := rng.Intn(len(acked))
			if err := l.Truncate(acked[cut].seq); err != nil {
				t.Fatal(err)
			}
			acked, at, group = acked[:cut], at[:cut], group[:cut]
			continue
		}
		n := 1
		if rng.Intn(4) == 0 {
			n = 2 + rng.Intn(8)
		}
		var ps [][]byte
		for range n {
			ps = append(ps, payload(rng, uint64(len(acked)), 1+rng.Intn(max(1, []int{16, 64, 300}[rng.Intn(3)]))))
		}
		off := walog.HeaderSize + l.Stats().Used
		var seq uint64
		if n == 1 {
			seq, err = l.Append(ps[0])
		} else {
			seq, err = l.AppendBatch(ps)
		}
		if errors.Is(err, walog.ErrFull) || errors.Is(err, walog.ErrTooLarge) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for j, p := range ps {
			acked = append(acked, entry{seq + uint64(j), p})
			end := off + walog.Footprint(f, len(p))
			at = append(at, [2]int{off, end})
			group = append(group, i)
			off = (end + align - 1) &^ (align - 1)
		}
	}
	lastN := 0 // entries of the last append still in the log
	for k := len(group) - 1; k >= 0 && group[k] == group[len(group)-1]; k-- {
		lastN++
	}
	st := l.Stats()
	tail := walog.HeaderSize + st.Used
	hi := min(size, (tail+o.Chunk+255)&^255)
	var snap []byte
	if crashed {
		snap = bytes.Clone(r.Bytes())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if crashed {
		copy(r.Bytes(), snap)
	}
	return r, acked, at, lastN, tail, hi
}

// wipedEnd reports whether the damage d hit every one of the entries at
// at: the lost entries before the last append, when the damage wiped out
// the end of the log.
func wipedEnd(at [][2]int, d damage) bool {
	for _, a := range at {
		if a[1] <= d.Off || a[0] >= d.Off+d.N {
			return false
		}
	}
	return true
}

func runCampaign(t *testing.T, seed uint64, trials int, crashed bool) campaignResult {
	res := campaignResult{counts: map[string]int{}, first: map[string]string{}}
	for i := range trials {
		rng := structtest.NewRand(seed<<32 | uint64(i))
		r, acked, at, lastN, tail, hi := campaignLog(t, rng, crashed)
		mem := r.Bytes()
		d := pickDamage(rng, len(mem), tail, hi)
		d.Apply(rng, mem)
		what := fmt.Sprintf("seed %d trial %d: %v (tail %d, %d entries, last append %d)", seed, i, d, tail, len(acked), lastN)
		before := bytes.Clone(mem)
		l, err := walog.Open(r, nil)
		if err != nil {
			switch {
			case errors.Is(err, walog.ErrNoLog) && isZero(mem):
				// The damage zeroed all the log held: nothing tells it
				// from an area where no log was ever created.
				res.add("erased", what)
			case errors.Is(err, walog.ErrNoLog):
				res.add("no-log", what+": "+err.Error())
			case !bytes.Equal(before, mem):
				res.add("wrote", what+": "+err.Error())
			case errors.Is(err, persist.ErrCorrupt) || errors.Is(err, persist.ErrBadFormat):
				res.add("refused", what)
			default:
				res.add("other-error", what+": "+err.Error())
			}
			continue
		}
		got, err := readAll(l)
		rep := l.Recovery()
		l.Close()
		if err != nil {
			res.add("wrong", what+": iterator: "+err.Error())
			continue
		}
		switch {
		case len(got) > len(acked) || !entriesEqual(got, acked[:len(got)]):
			res.add("wrong", fmt.Sprintf("%s: recovered %s, acknowledged %s", what, listEntries(got), listEntries(acked)))
		case len(got) == len(acked) && rep.Header != "":
			res.add("repaired", what)
		case len(got) == len(acked):
			res.add("full", what)
		case len(acked)-len(got) <= lastN:
			res.add("lost-last", fmt.Sprintf("%s: %d of %d entries (%v)", what, len(got), len(acked), rep))
		case wipedEnd(at[len(got):len(acked)-lastN], d):
			res.add("lost-end", fmt.Sprintf("%s: %d of %d entries (%v)", what, len(got), len(acked), rep))
		default:
			res.add("lost-more", fmt.Sprintf("%s: %d of %d entries (%v)", what, len(got), len(acked), rep))
		}
	}
	return res
}

// TestCampaign runs the corruption campaign on closed and on crashed
// logs: a closed log loses nothing silently (its clean-shutdown word
// records the tail), a crashed one at most its last append, and no damage
// is ever read as "no log" or returned as data.
func TestCampaign(t *testing.T) {
	for _, crashed := range []bool{false, true} {
		name := "closed"
		if crashed {
			name = "crashed"
		}
		t.Run(name, func(t *testing.T) {
			res := runCampaign(t, 1, *campaignTrials, crashed)
			t.Logf("%s logs, %d trials: %v", name, *campaignTrials, res.counts)
			for _, k := range []string{"lost-last", "lost-end", "lost-more", "wrong", "no-log", "wrote", "other-error"} {
				if res.first[k] != "" {
					t.Logf("first %s: %s", k, res.first[k])
				}
			}
			bad := []string{"lost-more", "wrong", "no-log", "wrote", "other-error"}
			if !crashed {
				bad = append(bad, "lost-last", "lost-end")
			}
			for _, k := range bad {
				if res.counts[k] > 0 {
					t.Errorf("%d trials %s; first: %s", res.counts[k], k, res.first[k])
				}
			}
		})
	}
}
