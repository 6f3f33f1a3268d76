package pagelog_test

import (
	"testing"

	"github.com/braid-pm/braid/internal/invariants"
	"github.com/braid-pm/braid/pagelog"
	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

// verified are the configurations whose pages carry a checksum.
var verified = []pagelog.Options{
	{Layout: pagelog.Packed, PayloadCRC: true}, {Layout: pagelog.TwoWord, PayloadCRC: true}, {Layout: pagelog.Checksum},
}

// requireDamaged checks a store of which only page p is damaged: Open
// lists it, Read of it is ErrCorrupt and names the WriteLines
// precondition, every other page reads as want, and a Write of p repairs
// it for good.
func requireDamaged(t *testing.T, r *persist.Region, p uint64, want [][]byte) {
	t.Helper()
	s, err := pagelog.Open(r, nil)
	require.NoError(t, err, "one damaged page does not refuse the store")
	require.Equal(t, []uint64{p}, s.Recovery().Damaged)
	require.Contains(t, s.Recovery().String(), "1 damaged pages")
	buf := make([]byte, s.PageSize())
	err = s.Read(p, buf)
	require.ErrorIs(t, err, pagelog.ErrCorrupt)
	require.ErrorContains(t, err, "WriteLines changed a line it did not mark dirty")
	require.ErrorIs(t, s.Check(), pagelog.ErrCorrupt)
	for q := range uint64(s.Pages()) {
		if q != p {
			require.NoError(t, s.Read(q, buf))
			require.Equal(t, want[q], buf, "page %d", q)
		}
	}
	fresh := pattern(p, 99, s.PageSize())
	require.NoError(t, s.Write(p, fresh), "a Write of the damaged page repairs it")
	require.NoError(t, s.Read(p, buf))
	require.Equal(t, fresh, buf)
	require.NoError(t, s.Check())
	s = reopen(t, s, r, nil)
	require.Empty(t, s.Recovery().Damaged)
	require.NoError(t, s.Close())
}

// TestDamagedPage: a page whose payload was damaged (a flipped byte, a
// CRC word that no longer matches) is one bad page, not a bad store.
func TestDamagedPage(t *testing.T) {
	for _, c := range verified {
		t.Run(cfgName(c), func(t *testing.T) {
			o := c
			o.Pages, o.Slots, o.PageSize = 5, 7, 256
			s, r := mustCreate(t, o)
			want := make([][]byte, 5)
			for p := range uint64(5) {
				want[p] = pattern(p, 1, 256)
				require.NoError(t, s.Write(p, want[p]))
			}
			// Page 0: its lane's backup (Checksum) holds page 4, the
			// lane's last write, so nothing can restore it.
			sl := pagelog.CurrentSlot(s, 0)
			require.NoError(t, s.Close())
			r.Bytes()[pagelog.PayloadOffset(s, sl)+200] ^= 0x04
			requireDamaged(t, r, 0, want)
		})
	}
}

// TestWriteLinesUnmarked: a WriteLines through the micro log (or in place,
// Checksum) whose page has a changed line that its mask leaves unmarked
// breaks WriteLines' precondition. Under the invariants build tag it
// panics naming the line. Otherwise the stored page is not the page its
// checksum was computed over: the page reads as ErrCorrupt, naming the
// precondition, the rest of the store works, Open lists the page as
// damaged, and a Write repairs it — the store is not refused as a whole.
func TestWriteLinesUnmarked(t *testing.T) {
	for _, c := range verified {
		t.Run(cfgName(c), func(t *testing.T) {
			o := c
			o.Pages, o.Slots, o.PageSize, o.MicroLogLines = 5, 7, 256, 2
			s, r := mustCreate(t, o)
			want := make([][]byte, 5)
			for p := range uint64(5) {
				want[p] = pattern(p, 1, 256)
				require.NoError(t, s.Write(p, want[p]))
			}
			page := pattern(2, 1, 256)
			page[10] ^= 0xff  // line 0, marked
			page[200] ^= 0xff // line 3, changed but not marked
			m := pagelog.NewLines(256)
			m.Set(0)
			if invariants.Enabled {
				require.PanicsWithValue(t, "pagelog: WriteLines of page 2: line 3 (bytes 192..256) changed but is not marked dirty; the unmarked lines must equal the stored ones", func() {
					_ = s.WriteLines(2, page, m)
				})
				return
			}
			require.NoError(t, s.WriteLines(2, page, m))
			buf := make([]byte, 256)
			err := s.Read(2, buf)
			require.ErrorIs(t, err, pagelog.ErrCorrupt)
			require.ErrorContains(t, err, "WriteLines")
			for _, q := range []uint64{0, 1, 3, 4} {
				require.NoError(t, s.Read(q, buf))
			}
			require.NoError(t, s.Close())
			if o.Layout == pagelog.Checksum {
				// The lane's backup holds the whole new page (the backup is
				// written first, whole): Open restores the page from it.
				s, err := pagelog.Open(r, nil)
				require.NoError(t, err)
				require.Equal(t, 1, s.Recovery().Restored)
				require.NoError(t, s.Read(2, buf))
				require.Equal(t, page, buf)
				require.NoError(t, s.Close())
				return
			}
			requireDamaged(t, r, 2, want)
		})
	}
}

// TestRecoveryString: Store.Recovery() says what Open did.
func TestRecoveryString(t *testing.T) {
	require.Equal(t, "recovery: nothing to repair", pagelog.Recovery{}.String())
	r := pagelog.Recovery{Replayed: 2, Restored: 1, Damaged: []uint64{3, 9}, Superblock: "the superblock has a zero magic"}
	require.Equal(t, "recovery: replayed the micro-log lines of 2 pages, restored 1 torn pages from their backups, repaired the superblock (the superblock has a zero magic), 2 damaged pages [3 9] (their Read is ErrCorrupt; a Write repairs one)", r.String())
	many := pagelog.Recovery{Damaged: []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}
	require.Contains(t, many.String(), "10 damaged pages [1 2 3 4 5 6 7 8 ...]")
}
