package pmheader_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/braid-pm/braid/internal/pmheader"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/crash"
	"github.com/stretchr/testify/require"
)

// Crash tests of the Create protocol: a workload creates an "array" (the
// header at offset 0 and a body line at 64 whose eight words all hold the
// header's count) three times over at the same place. After any crash the
// header is either empty (a Create was running, or none had finished) or
// the complete header of an acknowledged or running Create, over the body
// that Create wrote.

type headerHistory struct {
	acked    uint64 // count of the last finished Create, 0 for none
	inflight uint64 // count of the Create running, 0 for none
}

type creator func(r *persist.Region, hb, body []byte, f *pmheader.Fields) error

func create(r *persist.Region, hb, body []byte, f *pmheader.Fields) error {
	if err := kind.Invalidate(r, hb); err != nil {
		return err
	}
	for i := 0; i < 64; i += 8 {
		persist.Store64(body[i:], f.Count)
	}
	if err := r.Persist(body); err != nil {
		return err
	}
	return kind.Commit(r, hb, f)
}

// oneBarrier is broken: the magic is stored with the fields and all of
// them are persisted at once, so the magic may reach the media without
// (part of) the fields.
func oneBarrier(r *persist.Region, hb, body []byte, f *pmheader.Fields) error {
	if err := kind.Invalidate(r, hb); err != nil {
		return err
	}
	for i := 0; i < 64; i += 8 {
		persist.Store64(body[i:], f.Count)
	}
	if err := r.Persist(body); err != nil {
		return err
	}
	pmheader.Encode(hb, f)
	persist.Store64(hb, kind.Magic)
	return r.Persist(hb)
}

// noInvalidate is broken: the body is rewritten under the old, valid
// header.
func noInvalidate(r *persist.Region, hb, body []byte, f *pmheader.Fields) error {
	for i := 0; i < 64; i += 8 {
		persist.Store64(body[i:], f.Count)
	}
	if err := r.Persist(body); err != nil {
		return err
	}
	return kind.Commit(r, hb, f)
}

func (h *headerHistory) workload(c creator) func(*crash.Run) error {
	return func(w *crash.Run) error {
		*h = headerHistory{}
		r := w.Region("r")
		hb, err := kind.Place(r, 0)
		if err != nil {
			return err
		}
		body := r.Bytes()[64:128]
		for n := uint64(1); n <= 3; n++ {
			h.inflight = n
			f := pmheader.Fields{Size: 8, Stride: 8, Count: n, Aux: n << 40}
			if err := c(r, hb, body, &f); err != nil {
				return err
			}
			h.acked, h.inflight = n, 0
			w.Durable("create")
		}
		return nil
	}
}

func (h *headerHistory) check(img *crash.Image) error {
	r := img.Region("r")
	hb, err := kind.Place(r, 0)
	if err != nil {
		return err
	}
	f, err := kind.Decode(hb)
	switch {
	case err != nil && h.acked == 0:
		return nil // nothing promised yet: garbage may still be there
	case errors.Is(err, errNoArray):
		if h.inflight == 0 && h.acked != 0 {
			return fmt.Errorf("no header after Create %d returned", h.acked)
		}
		return nil
	case err != nil:
		return err
	}
	if f.Count != h.acked && f.Count != h.inflight {
		return fmt.Errorf("header of Create %d; acknowledged %d, running %d", f.Count, h.acked, h.inflight)
	}
	if f.Aux != f.Count<<40 || f.Size != 8 || f.Stride != 8 {
		return fmt.Errorf("header fields %+v", f)
	}
	body := r.Bytes()[64:128]
	for i := 0; i < 64; i += 8 {
		if v := binary.LittleEndian.Uint64(body[i:]); v != f.Count {
			return fmt.Errorf("header of Create %d over body word %d = %d", f.Count, i/8, v)
		}
	}
	return nil
}

func TestCrash(t *testing.T) {
	for _, garbage := range []bool{false, true} {
		t.Run(fmt.Sprint("garbage=", garbage), func(t *testing.T) {
			h := &headerHistory{}
			cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: 4096, Garbage: garbage}}, Seed: 5}
			rep := crash.Test(t, cfg, h.workload(create), h.check)
			require.GreaterOrEqual(t, rep.Points, 11, "Invalidate (not the first time), body, fields, magic")
		})
	}
}

func TestCrashCatchesBroken(t *testing.T) {
	for _, c := range []struct {
		name string
		c    creator
	}{{"header-one-barrier", oneBarrier}, {"header-no-invalidate", noInvalidate}} {
		t.Run(c.name, func(t *testing.T) {
			h := &headerHistory{}
			cfg := crash.Config{Regions: []crash.Spec{{Name: "r", Size: 4096}}, Seed: 1}
			rep, err := crash.Check(cfg, h.workload(c.c), h.check)
			require.NoError(t, err)
			require.True(t, rep.Failed(), "the simulator must catch %s", c.name)
			t.Logf("variant %s: caught (%s)", c.name, rep.Failures[0].Summary())
		})
	}
}
