package pagelog_test

import (
	"fmt"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/pagelog"
)

// TestModel runs random operation sequences against a plain Go map of page
// contents: Write, WriteLines (micro log and CoW fallback), Read, reopen
// (recovery after a clean close), Check, on every layout with and without
// payload CRCs. Reproduce a failure with its seed.
func TestModel(t *testing.T) {
	for _, c := range configs {
		for seed := uint64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", cfgName(c), seed), func(t *testing.T) {
				runModel(t, c, seed, 1500)
			})
		}
	}
}

func runModel(t *testing.T, c pagelog.Options, seed uint64, ops int) {
	rng := structtest.NewRand(seed<<32 | 0x5eed)
	ps := []int{256, 512, 1024, 4096}[rng.Intn(4)]
	pages := 1 + rng.Intn(12)
	spares := 1 + rng.Intn(4)
	o := c
	o.PageSize, o.Pages, o.Slots, o.MicroLogLines = ps, pages, pages+spares, 1+rng.Intn(ps/64)
	if o.Layout == pagelog.Packed && rng.Intn(2) == 0 {
		o.PIDBits = 45 // 2 version bits: versions wrap every 4 writes of a page
	}
	t.Logf("seed %d: %+v", seed, o)
	s, r := mustCreate(t, o)
	model := make(map[uint64][]byte)
	get := func(p uint64) []byte {
		if b, ok := model[p]; ok {
			return b
		}
		return make([]byte, ps)
	}
	buf := make([]byte, ps)
	for i := range ops {
		p := uint64(rng.Intn(pages))
		switch k := rng.Intn(20); {
		case k < 8:
			page := pattern(p, i+1, ps)
			require.NoError(t, s.Write(p, page), "op %d: Write(%d)", i, p)
			model[p] = page
		case k < 15:
			page := append([]byte(nil), get(p)...)
			mask := pagelog.NewLines(ps)
			for range 1 + rng.Intn(ps/64) {
				ln := rng.Intn(ps / 64)
				mask.Set(ln)
				fillPattern(page[ln*64:ln*64+64], p, i+1)
			}
			require.NoError(t, s.WriteLines(p, page, mask), "op %d: WriteLines(%d)", i, p)
			model[p] = page
		case k < 18:
			require.NoError(t, s.Read(p, buf))
			require.Equal(t, get(p), buf, "op %d: Read(%d)", i, p)
		case k < 19:
			s = reopen(t, s, r, &o)
		default:
			require.NoError(t, s.Check(), "op %d", i)
		}
	}
	s = reopen(t, s, r, nil)
	for p := range uint64(pages) {
		require.NoError(t, s.Read(p, buf))
		require.Equal(t, get(p), buf, "final Read(%d)", p)
	}
}
