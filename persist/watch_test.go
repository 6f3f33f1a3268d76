package persist_test

import (
	"sync"
	"testing"
	"unsafe"

	"github.com/braid-pm/braid/persist"
	"github.com/stretchr/testify/require"
)

// TestWatchStore64: a watcher sees every Store64 into its memory, with the
// offset and value, and nothing else (ordinary stores, other memory);
// after stop it sees nothing.
func TestWatchStore64(t *testing.T) {
	a, b := make([]uint64, 8), make([]uint64, 8)
	mem := func(x []uint64) []byte { return unsafeBytes(x) }
	var mu sync.Mutex
	var seen [][2]uint64
	stop := persist.WatchStore64(mem(a), func(off int, v uint64) {
		mu.Lock()
		seen = append(seen, [2]uint64{uint64(off), v})
		mu.Unlock()
	})
	persist.Store64(mem(a)[16:], 7)
	persist.Store64(mem(b)[16:], 8) // other memory
	a[3] = 9                        // an ordinary store
	persist.Store64(mem(a)[56:], 10)
	stop()
	persist.Store64(mem(a)[0:], 11)
	stop() // a second stop is harmless
	require.Equal(t, [][2]uint64{{16, 7}, {56, 10}}, seen)
	require.Equal(t, uint64(7), a[2])
	require.Equal(t, uint64(11), a[0])
	require.Equal(t, uint64(8), b[2])
}

func unsafeBytes(x []uint64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(x))), 8*len(x))
}
