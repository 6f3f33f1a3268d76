package fam_test

import (
	"testing"

	"github.com/braid-pm/braid/fam"
	"github.com/braid-pm/braid/internal/structtest"
	"github.com/stretchr/testify/require"
)

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
