//go:build linux

package fam

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

// Poisoned media: crash images of an array (FAM and log-based) with the
// header page, a page in the middle or the last page of its area
// poisoned. A poisoned header is ErrMedia at Open; otherwise Open
// recovers everything it can read and counts what it cannot
// (Unreadable), the objects on the poisoned page are ErrMedia (Read
// zeroes the buffer), Check reports them, and every other object holds
// its last acknowledged value and updates — no process death.

const poisonN = 200

var poisonLog = &LogOptions{ObjectSize: 16, Count: poisonN, Lanes: 2, LaneBytes: 4096}

// poisonTarget is one kind of array under the poison test.
type poisonTarget struct {
	name   string
	foot   func() (int, error)
	create func(*persist.Region) (func(int, []byte) error, error)
	// open opens an image and says where object i lives and whether its
	// updates need a page that bad covers (a LogArray's lane).
	open func(r *persist.Region) (arr poisoned, err error)
}

// poisoned is an opened array as the poison check sees it.
type poisoned interface {
	Read(int, []byte) error
	Update(int, []byte) error
	Check() error
	Unreadable() int
	Poisoned() []persist.Range
	Close() error
	slot(i int) (off, n int)   // object i's bytes
	laneOf(i int) (off, n int) // what an update of i writes besides the object (none: 0, 0)
}

func (a *Array) slot(i int) (int, int)    { return a.first + i*a.stride, a.stride }
func (a *Array) laneOf(int) (int, int)    { return 0, 0 }
func (a *LogArray) slot(i int) (int, int) { return a.first + i*a.ostride, a.size }
func (a *LogArray) laneOf(i int) (int, int) {
	return a.laneOff(i % len(a.lanes)), a.laneBytes
}

func poisonTargets() []poisonTarget {
	return []poisonTarget{
		{
			name:   "fam",
			foot:   func() (int, error) { return Footprint(&Options{ObjectSize: 16, Count: poisonN}) },
			create: famCreate(16, poisonN),
			open:   func(r *persist.Region) (poisoned, error) { return Open(r, nil) },
		},
		{
			name:   "log",
			foot:   func() (int, error) { return LogFootprint(poisonLog) },
			create: logCreate(16, poisonN, poisonLog),
			open:   func(r *persist.Region) (poisoned, error) { return OpenLog(r, nil) },
		},
	}
}

func TestPoison(t *testing.T) {
	for _, tg := range poisonTargets() {
		foot, err := tg.foot()
		require.NoError(t, err)
		for _, site := range structtest.PoisonSites(0, foot) {
			t.Run(tg.name+"/"+site.Name, func(t *testing.T) {
				h := newHistory(16, poisonN)
				cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: 16 << 10}}, SampleFences: 4, MaxImages: 4, MaxAlone: 4,
					Pairs: -1, RecoveryCrashes: -1, Seed: 3, Tear: crash.TearOff} // FAM blocks are stored whole (crash_test.go)
				crash.Test(t, cfg, h.workload(24, tg.create), h.poisonCheck(tg, site.Off, foot))
			})
		}
		t.Run(tg.name+"/random", func(t *testing.T) {
			h := newHistory(16, poisonN)
			cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: 16 << 10}}, SampleFences: 6, MaxImages: 4, MaxAlone: 4,
				Pairs: -1, Poison: &crash.Poison{Size: foot}, Seed: 8, Tear: crash.TearOff}
			crash.Test(t, cfg, h.workload(24, tg.create), h.poisonCheck(tg, -1, foot))
		})
	}
}

// poisonCheck poisons the page at off (none for -1: Config.Poison did)
// of an array of foot bytes at offset 0
// and checks what the array makes of it.
func (h *history) poisonCheck(tg poisonTarget, off, foot int) func(*crash.Image) error {
	after := after[:h.size]
	return func(img *crash.Image) error {
		if off >= 0 {
			if err := img.Poison("r", off, 1); err != nil {
				return err
			}
		}
		bad := img.Poisoned("r")
		a, err := tg.open(img.Region("r"))
		if done, err := structtest.PoisonedOpen(err, bad, headerSize, h.created); done {
			return err
		}
		defer a.Close()
		if err := structtest.PoisonedAgrees(a.Poisoned(), bad, 0, foot); err != nil {
			return err // said up front
		}
		got := make([]byte, h.size)
		hurt, healthy := 0, -1
		for i := range h.n {
			so, sn := a.slot(i)
			lo, ln := a.laneOf(i)
			err := a.Read(i, got)
			if structtest.Overlaps(bad, so, sn) || ln > 0 && structtest.Overlaps(bad, lo, ln) {
				hurt++
				if err := structtest.PoisonedObject(a, i, err, got, bad); err != nil {
					return err
				}
				continue
			}
			switch {
			case err != nil:
				return fmt.Errorf("object %d, outside the poisoned pages: %w", i, err)
			case !h.created, img.InRecovery() && bytes.Equal(got, after): // the update below, crashed
			default:
				if err := h.verify(i, got); err != nil {
					return err
				}
			}
			if healthy < 0 {
				healthy = i
			}
		}
		if hurt > 0 {
			if a.Unreadable() == 0 && tg.name == "fam" {
				return fmt.Errorf("%d objects on poisoned pages, Unreadable says 0", hurt)
			}
			if err := structtest.MediaIn(a.Check(), bad); err != nil {
				return fmt.Errorf("Check: %w", err)
			}
		} else if err := a.Check(); err != nil {
			return err
		}
		if healthy >= 0 {
			if err := a.Update(healthy, after); err != nil {
				return fmt.Errorf("update of healthy object %d: %w", healthy, err)
			}
		}
		return nil
	}
}

// Create over a poisoned page is ErrMedia and leaves nothing claimed.
func TestCreateOnPoison(t *testing.T) {
	r := structtest.Region(t, 16<<10)
	require.NoError(t, r.Poison(8192, 1))
	_, err := Create(r, &Options{ObjectSize: 16, Count: poisonN})
	require.ErrorIs(t, err, persist.ErrMedia)
	_, err = CreateLog(r, poisonLog)
	require.ErrorIs(t, err, persist.ErrMedia)
	require.True(t, errors.Is(err, persist.ErrCorrupt))
	structtest.RequireFree(t, r, 0, r.Size())
}
