package pagelog_test

import (
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/pagelog"
	"github.com/stretchr/testify/require"
)

// TestGolden compares the bytes pagelog writes with the golden media files
// in testdata: the superblock and the slot header table of a small store
// of each layout, with and without payload CRCs, after a few whole-page
// writes (and, on the copy-on-write layouts, a micro-log write), and the
// encoding of a micro-log entry. A layout change fails here until the
// format version changes with it (then go test -run TestGolden
// -update-golden).
func TestGolden(t *testing.T) {
	for _, o := range configs {
		t.Run(cfgName(o), func(t *testing.T) {
			o.PageSize, o.Pages, o.Slots, o.MicroLogLines = 256, 3, 5, 2
			s, r := mustCreate(t, o)
			for v := 1; v <= 2; v++ {
				for p := range 3 {
					require.NoError(t, s.Write(uint64(p), pattern(uint64(p), v, 256)))
				}
			}
			page := pattern(1, 2, 256)
			page[70] ^= 0xff
			m := pagelog.NewLines(256)
			m.Mark(70, 1)
			require.NoError(t, s.WriteLines(1, page, m))
			hdrs := pagelog.HeaderOffset(s, 0)
			end := pagelog.HeaderOffset(s, s.Slots())
			require.NoError(t, s.Close())
			mem := r.Bytes()
			structtest.Golden(t, "super-"+cfgName(o), mem[:64])
			structtest.Golden(t, "slots-"+cfgName(o), mem[hdrs:end])
		})
	}
	t.Run("micro-entry", func(t *testing.T) {
		page := pattern(2, 7, 1024)
		m := pagelog.NewLines(1024)
		m.Set(1)
		m.Set(2)
		m.Set(15)
		crcw := pagelog.Seal(0x1234_5678)
		e := pagelog.EncodeMicro(true, 1024, 6, 9, 0, 2, 4, 7, crcw, m, page)
		structtest.Golden(t, "micro-entry", e)
	})
}
