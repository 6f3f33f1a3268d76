package attack

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/braid-pm/braid/fptree"
	"github.com/braid-pm/braid/persist"
)

func try(t *testing.T, name string, f func() error) {
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("%s: PANIC %v", name, p)
		}
	}()
	t.Logf("%s: %v", name, f())
}

func TestLimits(t *testing.T) {
	r, _ := persist.Anonymous(1<<20, nil)
	for _, o := range []fptree.Options{
		{Offset: math.MaxInt &^ 63}, {Offset: 1 << 20}, {Offset: (1 << 20) - 64}, {Offset: (1 << 20) - 128},
		{Size: math.MaxInt}, {Size: 1<<20 + 1}, {Leaves: int(min(uint64(fptree.MaxLeaves), math.MaxInt))}, {Leaves: math.MaxInt},
		{Leaves: 2, LeafSlots: 4, Offset: (1 << 20) - 384}, {Leaves: 2, LeafSlots: 4, Offset: (1 << 20) - 320},
		{LeafSlots: 64, Group: 64}, {Size: 256 + 128, LeafSlots: 4}, {Size: 100},
	} {
		o := o
		try(t, "create", func() error {
			tr, err := fptree.Create(r, &o)
			if err == nil {
				defer tr.Close()
				for k := uint64(0); k < 100000; k++ {
					if err := tr.Put(k*7919, k); err != nil {
						return err
					}
				}
				return tr.Check()
			}
			return err
		})
		try(t, "open", func() error {
			tr, err := fptree.Open(r, &o)
			if err == nil {
				err = tr.Close() // free the area for the next options
			}
			return err
		})
	}
}

func TestTruncated(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.pm")
	r, err := persist.Map(p, &persist.Options{Size: 4 << 20, Create: true, ForcePMem: true})
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := fptree.Create(r, &fptree.Options{LeafSlots: 8})
	for k := uint64(0); k < 2000; k++ { // a few hundred leaves of 8
		if err := tr.Put(k*31, k); err != nil {
			t.Fatal(err)
		}
	}
	tr.Close()
	r.Close()
	for _, n := range []int64{3 << 20, 1 << 20, 4096, 100, 0} {
		os.Truncate(p, n)
		try(t, "truncated", func() error {
			r, err := persist.Map(p, &persist.Options{ForcePMem: true})
			if err != nil {
				return err
			}
			defer r.Close()
			if _, err = fptree.Open(r, nil); err == nil {
				t.Errorf("truncated to %d bytes: Open succeeded", n)
			}
			return err
		})
	}
}

func TestTwice(t *testing.T) {
	r, _ := persist.Anonymous(1<<20, nil)
	tr, err := fptree.Create(r, &fptree.Options{Size: 1 << 19})
	if err != nil {
		t.Fatal(err)
	}
	try(t, "twice", func() error {
		_, err := fptree.Open(r, nil)
		if !errors.Is(err, persist.ErrBusy) {
			t.Errorf("second Open of an open tree: %v, want persist.ErrBusy", err)
		}
		return err
	})
	try(t, "overlap", func() error {
		_, err := fptree.Create(r, &fptree.Options{Offset: 1 << 18})
		if !errors.Is(err, persist.ErrBusy) {
			t.Errorf("Create over half of an open tree: %v, want persist.ErrBusy", err)
		}
		return err
	})
	try(t, "after", func() error {
		t2, err := fptree.Create(r, &fptree.Options{Offset: 1 << 19})
		if err != nil {
			t.Errorf("Create just after an open tree: %v, want nil", err)
			return err
		}
		return t2.Close()
	})
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
}
