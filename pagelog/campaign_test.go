package pagelog_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/pagelog"
	"github.com/braid-pm/braid/persist"
)

// The corruption campaign of pagelog: random media damage to closed
// stores, and what Open and Read make of it. Each trial builds a small
// store of a random configuration (the five of configs, 256 B or 1 KiB
// pages, 1 to 3 lanes) from a seed, writes its pages a few times, whole or
// a line or two through the micro log, closes it, and damages it once: it
// zeroes, fills with garbage or flips bits in an 8-byte word, a line, a
// 256-byte block, a 4 KiB page or a short run of bytes, placed in either
// copy of the superblock, the slot headers, the micro logs, the payloads,
// or anywhere. Then it opens the store, reads every page and sorts the
// outcome:
//
//	full         every page reads as its last version
//	repaired     the same, after Open repaired a superblock or micro-log
//	             header from its copy, or a page from its backup
//	page-refused Open succeeded; the pages the damage hit read as
//	             ErrCorrupt (listed in Recovery().Damaged), the others as
//	             their last version
//	refused      Open failed with an error wrapping persist.ErrCorrupt or
//	             persist.ErrBadFormat (never ErrNoStore) and wrote nothing
//	erased       ErrNoStore, and rightly: the damage zeroed every byte
//	unverified   a page read back damaged on a store without payload
//	             checksums (Packed or TwoWord without PayloadCRC): what
//	             the package documentation says such a store does
//	wrong        any other page that is not its last version: never
var pagelogTrials = flag.Int("campaign", 1000, "trials of the pagelog corruption campaign")

var campaignVerbose = flag.Bool("campaign-v", false, "list every wrong trial of the campaign")

var wrongs []string

type pageTrial struct {
	s     *pagelog.Store
	r     *persist.Region
	o     pagelog.Options
	acked [][]byte
}

func campaignStore(t *testing.T, rng *structtest.Rand) pageTrial {
	o := configs[rng.Intn(len(configs))]
	o.PageSize = []int{256, 1024}[rng.Intn(2)]
	o.Pages = 3 + rng.Intn(8)
	o.Slots = o.Pages + 1 + rng.Intn(3)
	o.MicroLogLines = 2
	if o.Layout != pagelog.Checksum {
		o.MicroLogBytes = 4096
	}
	n, err := pagelog.Footprint(&o)
	if err != nil {
		t.Fatal(err)
	}
	r := anon(t, n)
	s, err := pagelog.Create(r, &o)
	if err != nil {
		t.Fatal(err)
	}
	acked := make([][]byte, o.Pages)
	for p := range acked {
		acked[p] = make([]byte, o.PageSize)
	}
	for v := range 2 + rng.Intn(4) {
		for p := range uint64(o.Pages) {
			if rng.Intn(3) == 0 {
				page := bytes.Clone(acked[p])
				m := pagelog.NewLines(o.PageSize)
				for range 1 + rng.Intn(2) {
					ln := rng.Intn(o.PageSize / 64)
					m.Set(ln)
					fillPattern(page[ln*64:ln*64+64], p, 100+v)
				}
				if err := s.WriteLines(p, page, m); err != nil {
					t.Fatal(err)
				}
				acked[p] = page
				continue
			}
			acked[p] = pattern(p, v+1, o.PageSize)
			if err := s.Write(p, acked[p]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return pageTrial{s: s, r: r, o: o, acked: acked}
}

// damage is one media damage: where and what.
type damage = structtest.Damage

func (tr pageTrial) pickDamage(rng *structtest.Rand) damage {
	s, size := tr.s, tr.r.Size()
	units := []int{8, 64, 256, 4096, 1 + rng.Intn(24)}
	n := units[rng.Intn(len(units))]
	var off int
	switch rng.Intn(5) {
	case 0: // a copy of the superblock
		off = []int{0, pagelog.SuperCopyOffset}[rng.Intn(2)] + rng.Intn(64)
	case 1: // the slot headers
		lo, hi := pagelog.HeaderOffset(s, 0), pagelog.HeaderOffset(s, s.Slots())
		off = lo + rng.Intn(hi-lo)
	case 2: // the micro logs (the slot area of a Checksum store)
		if tr.o.Layout == pagelog.Checksum {
			off = pagelog.PayloadOffset(s, 0) + rng.Intn(size-pagelog.PayloadOffset(s, 0))
		} else {
			lo := pagelog.LogOffset(s, 0)
			off = lo + rng.Intn(s.Lanes()*pagelog.LogSize(s))
		}
	case 3: // the payloads
		lo := pagelog.PayloadOffset(s, 0)
		off = lo + rng.Intn(size-lo)
	default:
		off = rng.Intn(size)
	}
	if n >= 8 && n != 24 {
		off &^= n - 1
	}
	return damage{Off: off, N: min(n, size-off), How: structtest.DamageHows[rng.Intn(3)]}
}

func runPageCampaign(t *testing.T, seed uint64, trials int) (map[string]int, map[string]string) {
	counts, first := map[string]int{}, map[string]string{}
	add := func(k, what string) {
		counts[k]++
		if first[k] == "" {
			first[k] = what
		}
	}
	for i := range trials {
		rng := structtest.NewRand(seed<<32 | uint64(i))
		tr := campaignStore(t, rng)
		d := tr.pickDamage(rng)
		mem := tr.r.Bytes()
		d.Apply(rng, mem)
		what := fmt.Sprintf("seed %d trial %d: %s %s of %d bytes at %d", seed, i, cfgName(tr.o), d.How, d.N, d.Off)
		before := bytes.Clone(mem)
		s, err := pagelog.Open(tr.r, nil)
		if err != nil {
			switch {
			case errors.Is(err, pagelog.ErrNoStore) && len(bytes.Trim(mem, "\x00")) == 0:
				add("erased", what)
			case errors.Is(err, pagelog.ErrNoStore):
				add("no-store", what+": "+err.Error())
			case !bytes.Equal(before, mem):
				add("wrote", what+": "+err.Error())
			case errors.Is(err, persist.ErrCorrupt) || errors.Is(err, persist.ErrBadFormat):
				add("refused", what)
			default:
				add("other-error", what+": "+err.Error())
			}
			continue
		}
		kind := "full"
		if rec := s.Recovery(); rec.Restored > 0 || rec.Superblock != "" || len(rec.Logs) > 0 {
			kind = "repaired"
		}
		buf := make([]byte, s.PageSize())
		for p := range uint64(s.Pages()) {
			err := s.Read(p, buf)
			switch {
			case err != nil && errors.Is(err, persist.ErrCorrupt):
				kind = "page-refused"
			case err != nil:
				kind = "other-error"
				what += ": " + err.Error()
			case !bytes.Equal(buf, tr.acked[p]) && !s.Verified() && d.Off+d.N > pagelog.PayloadOffset(s, 0):
				kind = "unverified" // the damage hit the payloads
			case !bytes.Equal(buf, tr.acked[p]):
				kind = "wrong"
				what += fmt.Sprintf(": page %d (%v)", p, s.Recovery())
			}
			if kind == "wrong" || kind == "other-error" {
				break
			}
		}
		add(kind, what)
		if kind == "wrong" {
			wrongs = append(wrongs, what)
		}
		s.Close()
	}
	return counts, first
}

// TestCampaign runs the corruption campaign on closed stores: damage is
// repaired, refused (as a whole, or page by page), or — on stores without
// payload checksums, as documented — a damaged payload is returned; never
// is it read as "no store", nor a page of a verified store returned wrong.
func TestCampaign(t *testing.T) {
	counts, first := runPageCampaign(t, 1, *pagelogTrials)
	t.Logf("closed stores, %d trials: %v", *pagelogTrials, counts)
	for _, k := range []string{"unverified", "wrong", "no-store", "wrote", "other-error"} {
		if first[k] != "" {
			t.Logf("first %s: %s", k, first[k])
		}
	}
	if *campaignVerbose {
		for _, w := range wrongs {
			t.Log(w)
		}
	}
	for _, k := range []string{"wrong", "no-store", "wrote", "other-error"} {
		if counts[k] > 0 {
			t.Errorf("%d trials %s; first: %s", counts[k], k, first[k])
		}
	}
}
