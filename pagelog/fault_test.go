package pagelog_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/pagelog"
	"github.com/braid-pm/braid/persist"
)

// A failed sync (msync EIO) is final: the write that met it and every
// later one return persist.ErrSyncFailed, nothing is acknowledged after
// it, every acknowledged page still reads, and the store opened again
// from its file (without the faults) holds every acknowledged page (the
// page of the write that failed: its old version or the new one).
func TestSyncFailure(t *testing.T) {
	for _, o := range []pagelog.Options{
		{PageSize: 1024, Pages: 12, Slots: 15},
		{PageSize: 1024, Pages: 12, Slots: 15, PayloadCRC: true},
		{PageSize: 1024, Pages: 12, Slots: 15, Layout: pagelog.TwoWord},
		{PageSize: 1024, Pages: 12, Slots: 15, Layout: pagelog.Checksum},
	} {
		for _, after := range []int{1, 2, 3, 5, 8, 13, 30} {
			t.Run(fmt.Sprintf("%s-crc=%v/after-%d", o.Layout, o.PayloadCRC, after), func(t *testing.T) {
				size, err := pagelog.Footprint(&o)
				require.NoError(t, err)
				r, faults := structtest.MapFaulty(t, size)
				require.Equal(t, persist.ModeMsync, r.Info().Mode)
				s, err := pagelog.Create(r, &o)
				require.NoError(t, err)
				faults.Fail(r, after)
				acked := make([][]byte, o.Pages)
				inflight, next := -1, []byte(nil)
				var failed error
				for op := range 60 {
					p := (op * 7) % o.Pages
					page := make([]byte, o.PageSize)
					if acked[p] != nil {
						copy(page, acked[p])
					}
					var err error
					if op%3 == 2 {
						m := pagelog.NewLines(o.PageSize)
						m.Set(op % (o.PageSize / 64))
						fillPattern(page[op%(o.PageSize/64)*64:][:64], uint64(p), op+1)
						err = s.WriteLines(uint64(p), page, m)
					} else {
						fillPattern(page, uint64(p), op+1)
						err = s.Write(uint64(p), page)
					}
					switch {
					case err == nil && failed != nil:
						t.Fatalf("op %d on page %d acknowledged after a failed sync (%v)", op, p, failed)
					case err == nil:
						acked[p] = page
					case !errors.Is(err, persist.ErrSyncFailed):
						t.Fatalf("op %d on page %d: %v, want persist.ErrSyncFailed", op, p, err)
					case failed == nil:
						failed, inflight, next = err, p, page
					}
				}
				require.Error(t, failed, "no write failed in %d syncs", faults.Syncs())
				require.ErrorIs(t, r.Failed(), persist.ErrSyncFailed)
				verify := func(s *pagelog.Store, when string) {
					buf := make([]byte, o.PageSize)
					for p, want := range acked {
						if want == nil {
							want = make([]byte, o.PageSize)
						}
						err := s.Read(uint64(p), buf)
						if err == nil && p == inflight && bytes.Equal(buf, next) {
							continue
						}
						require.NoError(t, err, "%s: page %d", when, p)
						require.True(t, bytes.Equal(buf, want), "%s: page %d is not its acknowledged version", when, p)
					}
				}
				verify(s, "after the failed sync")
				// The region stays failed: Close cannot record the micro
				// logs' tails (the next Open recovers as after a crash).
				if err := s.Close(); err != nil {
					require.ErrorIs(t, err, persist.ErrSyncFailed)
				}
				r2 := structtest.Remap(t, r) // without the faults
				s2, err := pagelog.Open(r2, nil)
				require.NoError(t, err)
				defer s2.Close()
				verify(s2, "reopened")
				require.NoError(t, s2.Check())
			})
		}
	}
}

// A store on a tiny file (the region cannot grow; the store never asks
// it to): Create on a file too small for one page is ErrTooSmall, naming
// the sizes; the smallest store takes writes, reads them, and opens again
// with them.
func TestFullTinyFile(t *testing.T) {
	r, _ := structtest.MapFile(t, 8192)
	_, err := pagelog.Create(r, &pagelog.Options{PageSize: 4096})
	require.ErrorIs(t, err, pagelog.ErrTooSmall)
	require.ErrorIs(t, err, persist.ErrTooSmall)
	structtest.RequireFree(t, r, 0, r.Size())

	o := pagelog.Options{PageSize: 256, Pages: 2, Slots: 3}
	size, err := pagelog.Footprint(&o)
	require.NoError(t, err)
	r, _ = structtest.MapFile(t, size)
	s, err := pagelog.Create(r, &o)
	require.NoError(t, err)
	pages := [][]byte{bytes.Repeat([]byte{1}, 256), bytes.Repeat([]byte{2}, 256)}
	for i := range 10 {
		p := i % 2
		fillPattern(pages[p], uint64(p), i+1)
		require.NoError(t, s.Write(uint64(p), pages[p]))
	}
	require.NoError(t, s.Close())
	r2 := structtest.Remap(t, r)
	s2, err := pagelog.Open(r2, nil)
	require.NoError(t, err)
	defer s2.Close()
	buf := make([]byte, 256)
	for p, want := range pages {
		require.NoError(t, s2.Read(uint64(p), buf))
		require.Equal(t, want, buf)
	}
}
