package fam_test

import (
	"math/rand/v2"
	"testing"

	"github.com/braid-pm/braid/fam"
	"github.com/braid-pm/braid/internal/structtest"
	structkinds "github.com/braid-pm/braid/internal/structtest/kinds"
	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

// TestForeignIsBadFormat: Open and OpenLog on a structure of another kind
// (a walog log, a pagelog store, a cow.Array, the other fam kind) and on
// bytes that are no header at all return ErrBadFormat, not ErrCorrupt: a
// wrong offset or kind is not media damage. Zeros are ErrNoArray.
func TestForeignIsBadFormat(t *testing.T) {
	own := map[string]string{"fam": "fam", "log": "fam-log"} // kind -> its builder
	for _, k := range kinds {
		for _, f := range structkinds.Builders {
			if f.Name == own[k.name] {
				continue
			}
			t.Run(k.name+"/"+f.Name, func(t *testing.T) {
				r := structtest.Region(t, 1<<20)
				closeIt, err := f.Build(r)
				require.NoError(t, err)
				for _, open := range []bool{true, false} { // the structure open, then closed
					_, err = k.open(r, 0)
					require.ErrorIs(t, err, fam.ErrBadFormat, "open %v", open)
					require.NotErrorIs(t, err, persist.ErrCorrupt)
					require.NotErrorIs(t, err, persist.ErrBusy, "the header is read before the claim")
					if open {
						require.NoError(t, closeIt())
					}
				}
				t.Log(err)
			})
		}
		t.Run(k.name+"/zeros", func(t *testing.T) {
			r := structtest.Region(t, 1<<16)
			_, err := k.open(r, 0)
			require.ErrorIs(t, err, fam.ErrNoArray)
			require.NotErrorIs(t, err, fam.ErrBadFormat)
			require.NotErrorIs(t, err, persist.ErrCorrupt)
		})
		t.Run(k.name+"/garbage", func(t *testing.T) {
			r := structtest.Region(t, 1<<16)
			rng := rand.New(rand.NewPCG(1, 2))
			for range 100 {
				for i := range 64 {
					r.Bytes()[i] = byte(rng.Uint32())
				}
				_, err := k.open(r, 0)
				require.ErrorIs(t, err, fam.ErrBadFormat, "%x", r.Bytes()[:64])
				require.NotErrorIs(t, err, persist.ErrCorrupt)
			}
		})
	}
}

// TestOwnHeaderDamageIsCorrupt: any one byte of an array's own header
// changed (magic, fields, checksum, reserved) is ErrCorrupt, never
// ErrBadFormat or ErrNoArray.
func TestOwnHeaderDamageIsCorrupt(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			r := structtest.Region(t, 1<<20)
			a, err := k.create(r, 0, 16, 10)
			require.NoError(t, err)
			require.NoError(t, a.Close())
			mem := r.Bytes()
			for at := range 64 {
				for _, x := range []byte{0x01, 0x80, 0xff} {
					mem[at] ^= x
					_, err := k.open(r, 0)
					mem[at] ^= x
					require.ErrorIs(t, err, fam.ErrCorrupt, "byte %d ^ %#02x", at, x)
					require.NotErrorIs(t, err, fam.ErrBadFormat)
				}
			}
			a, err = k.open(r, 0)
			require.NoError(t, err)
			require.NoError(t, a.Close())
		})
	}
}
