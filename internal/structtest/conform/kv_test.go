package conform

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/kv"
	"github.com/braid-pm/braid/persist"
)

// kv is not a structure in a Region but a store over device directories,
// so it has an adapter of its own: the situations that apply to it, with
// the same sentinels as the other kinds. An empty device is not an error
// for kv (Open creates the store), and a read-only kv store does not
// exist yet.

func kvOptions(t *testing.T, dev, ck string) *kv.Options {
	t.Helper()
	return &kv.Options{Devices: []string{dev}, CheckpointDir: ck, SegmentSize: 64 << 10, DeviceSize: 1 << 20, WorkersPerDevice: 1, PMem: true, GCThreshold: -1}
}

func kvCreate(t *testing.T) (dev, ck string) {
	t.Helper()
	dev, ck = structtest.TempShm(t), structtest.TempShm(t)
	s, err := kv.Open(kvOptions(t, dev, ck))
	require.NoError(t, err)
	require.NoError(t, s.Put([]byte("k"), []byte("v")))
	require.NoError(t, s.Close())
	return dev, ck
}

func TestConformanceKV(t *testing.T) {
	t.Run("closed", func(t *testing.T) {
		dev, ck := kvCreate(t)
		s, err := kv.Open(kvOptions(t, dev, ck))
		require.NoError(t, err)
		require.NoError(t, s.Close())
		_, err = s.Get([]byte("k"))
		is(t, err, persist.ErrClosed, "a read after Close")
		is(t, s.Put([]byte("k"), []byte("w")), persist.ErrClosed, "a write after Close")
		is(t, s.Close(), persist.ErrClosed, "a second Close")
	})
	t.Run("corrupt-header", func(t *testing.T) {
		dev, ck := kvCreate(t)
		seg := filepath.Join(dev, "seg-00000.kv")
		b, err := os.ReadFile(seg)
		require.NoError(t, err)
		for i := 8; i < 64; i += 7 {
			b[i] ^= 0x10
			require.NoError(t, os.WriteFile(seg, b, 0o644))
			_, err := kv.Open(kvOptions(t, dev, ck))
			b[i] ^= 0x10
			is(t, err, persist.ErrCorrupt, fmt.Sprintf("Open with byte %d of the first segment's header flipped", i))
		}
	})
	t.Run("foreign", func(t *testing.T) {
		dev, ck := kvCreate(t)
		seg := filepath.Join(dev, "seg-00000.kv")
		st, err := os.Stat(seg)
		require.NoError(t, err)
		tried := 0
		for _, o := range kinds {
			r, err := persist.Map(seg, &persist.Options{Size: st.Size()})
			require.NoError(t, err)
			clear(r.Bytes())
			h, err := o.create(r)
			if errors.Is(err, persist.ErrTooSmall) {
				require.NoError(t, r.Close()) // a kind that needs more than a 64 KiB segment
				continue
			}
			require.NoError(t, err)
			require.NoError(t, h.Close())
			require.NoError(t, r.Close())
			_, err = kv.Open(kvOptions(t, dev, ck))
			is(t, err, persist.ErrBadFormat, "Open of a store whose first segment holds a "+o.name)
			tried++
		}
		require.GreaterOrEqual(t, tried, 4, "kinds that fit in a segment")
	})
	t.Run("mismatch", func(t *testing.T) {
		dev, ck := kvCreate(t)
		o := kvOptions(t, dev, ck)
		o.SegmentSize = 128 << 10
		_, err := kv.Open(o)
		is(t, err, persist.ErrInvalid, "Open with another SegmentSize")
	})
}
