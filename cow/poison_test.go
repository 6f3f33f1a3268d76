//go:build linux

package cow

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/crash"
	"github.com/stretchr/testify/require"
)

// Poisoned media: crash images of an array with its header page, a page
// in the middle or its last page poisoned. The header is ErrMedia at Open;
// otherwise the objects on the poisoned page are ErrMedia (Read zeroes the
// buffer), Check reports it, and every other object reads its last
// acknowledged value and updates — no process death.
const poisonCount = 200 // 16-byte objects in 64-byte slots: 4 pages, the last one partly

func TestPoison(t *testing.T) {
	foot, err := Footprint(&Options{ObjectSize: 16, Count: poisonCount})
	require.NoError(t, err)
	for _, site := range structtest.PoisonSites(0, foot) {
		for _, sum := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/checksum=%v", site.Name, sum), func(t *testing.T) {
				h := &history{size: 16, n: poisonCount, sum: sum}
				cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: 16 << 10}}, SampleFences: 4, MaxImages: 4, MaxAlone: 4, Pairs: -1, RecoveryCrashes: -1, Seed: 5}
				rep := crash.Test(t, cfg, h.workload(12, update), h.poisonCheck(site.Off, foot))
				require.Positive(t, rep.Images)
			})
		}
	}
}

// The same on a seeded random page of the area in every image
// (Config.Poison).
func TestPoisonRandom(t *testing.T) {
	foot, err := Footprint(&Options{ObjectSize: 16, Count: poisonCount})
	require.NoError(t, err)
	h := &history{size: 16, n: poisonCount}
	cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: 16 << 10}}, SampleFences: 6, MaxImages: 4, MaxAlone: 4, Pairs: -1,
		Poison: &crash.Poison{Size: foot}, Seed: 9}
	crash.Test(t, cfg, h.workload(12, update), h.poisonCheck(-1, foot))
}

// poisonCheck poisons the page at off (none for -1: Config.Poison did)
// of an array of foot bytes at offset 0
// and checks what the array makes of it.
func (h *history) poisonCheck(off, foot int) func(*crash.Image) error {
	return func(img *crash.Image) error {
		if off >= 0 {
			if err := img.Poison("r", off, 1); err != nil {
				return err
			}
		}
		bad := img.Poisoned("r")
		a, err := Open(img.Region("r"), nil)
		if done, err := structtest.PoisonedOpen(err, bad, headerSize, h.created); done {
			return err
		}
		defer a.Close()
		if err := structtest.PoisonedAgrees(a.Poisoned(), bad, 0, foot); err != nil {
			return err // said up front
		}
		got := make([]byte, h.size)
		hurt := 0
		for i := range h.n {
			o := a.first + i*a.stride
			err := a.Read(i, got)
			if structtest.Overlaps(bad, o, a.stride) {
				hurt++
				if err := structtest.PoisonedObject(a, i, err, got, bad); err != nil {
					return err
				}
				continue
			}
			want := h.acked[i]
			if want == nil {
				want = make([]byte, h.size)
			}
			switch {
			case err != nil:
				return fmt.Errorf("object %d, outside the poisoned pages: %w", i, err)
			case !h.created || bytes.Equal(got, want) || h.inflight == i && bytes.Equal(got, h.next):
			case img.InRecovery() && bytes.Equal(got, after[:h.size]): // the update below, crashed
			default:
				return fmt.Errorf("object %d is %x, want %x", i, got, want)
			}
		}
		if hurt > 0 {
			if err := structtest.MediaIn(a.Check(), bad); err != nil {
				return fmt.Errorf("Check: %w", err)
			}
		} else if err := a.Check(); err != nil {
			return err
		}
		// A healthy object still updates.
		for i := range h.n {
			if !structtest.Overlaps(bad, a.first+i*a.stride, a.stride) {
				return a.Update(i, after[:h.size])
			}
		}
		return nil
	}
}

// Create over a poisoned page is ErrMedia and leaves nothing claimed.
func TestCreateOnPoison(t *testing.T) {
	r := structtest.Region(t, 16<<10)
	require.NoError(t, r.Poison(8192, 1))
	_, err := Create(r, &Options{ObjectSize: 16, Count: poisonCount})
	require.ErrorIs(t, err, persist.ErrMedia)
	require.True(t, errors.Is(err, persist.ErrCorrupt))
	structtest.RequireFree(t, r, 0, r.Size())
	require.NoError(t, r.Unpoison(0, r.Size()))
	a, err := Create(r, &Options{ObjectSize: 16, Count: poisonCount})
	require.NoError(t, err)
	require.NoError(t, a.Close())
}
