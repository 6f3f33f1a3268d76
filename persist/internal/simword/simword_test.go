package simword_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/internal/simword"
)

// owner records what persist routes to it, and makes the stores.
type owner struct{ stores, loads [][2]uint64 }

func (o *owner) Store64(off int, p *uint64, v uint64) {
	o.stores = append(o.stores, [2]uint64{uint64(off), v})
	*p = v
}

func (o *owner) Load64(off int, p *uint64) uint64 {
	o.loads = append(o.loads, [2]uint64{uint64(off), *p})
	return *p
}

func bytesOf(x []uint64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(x))), 8*len(x))
}

// TestRoutes: the owner makes every Store64 and StoreWord into its memory
// and sees every Load64, with offsets and values, and nothing else
// (ordinary stores, other memory); after stop nothing, and Active is off.
func TestRoutes(t *testing.T) {
	require.False(t, simword.Active())
	a, b := make([]uint64, 8), make([]uint64, 8)
	o := &owner{}
	stop := simword.Register(bytesOf(a), o)
	require.True(t, simword.Active())
	persist.Store64(bytesOf(a)[16:], 7)
	persist.Store64(bytesOf(b)[16:], 8) // other memory
	a[3] = 9                            // an ordinary store
	persist.StoreWord(&a[7], 10)
	require.Equal(t, uint64(7), persist.Load64(bytesOf(a)[16:]))
	require.Equal(t, uint64(8), persist.Load64(bytesOf(b)[16:]))
	stop()
	persist.Store64(bytesOf(a)[0:], 11)
	stop() // a second stop is harmless
	require.False(t, simword.Active())
	require.Equal(t, [][2]uint64{{16, 7}, {56, 10}}, o.stores)
	require.Equal(t, [][2]uint64{{16, 7}}, o.loads)
	require.Equal(t, []uint64{11, 0, 7, 9, 0, 0, 0, 10}, a)
	require.Equal(t, uint64(8), b[2])
}
