package kv

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	pmdevice "github.com/braid-pm/braid/persist/device"
)

// slowOptane is optane-1dimm slowed 50x (its curves' shape kept), so that a
// small store's device time is well above the scheduler's noise.
func slowOptane(t *testing.T) *pmdevice.Profile {
	p, err := pmdevice.Shipped("optane-1dimm")
	require.NoError(t, err)
	for _, c := range [][]pmdevice.Level{p.Model.SeqRead, p.Model.RandRead, p.Model.Write} {
		for i := range c {
			c[i].GBs /= 50
		}
	}
	return p
}

// TestEmulateCharges: every device of an emulating store is a device of
// its own, charged with its share of the puts' writes and of the gets'
// reads; the store takes at least the device time (a lower bound that
// holds under any load); the emulated profile sizes the workers; a reopen
// after a kill charges the replay's reads.
func TestEmulateCharges(t *testing.T) {
	o := testOptions(t, 2)
	o.WorkersPerDevice = 0
	o.DeviceSize = 8 << 20
	o.Emulate = slowOptane(t)
	s := mustOpen(t, o)
	devs := s.Emulated()
	require.Len(t, devs, 2)
	require.NotSame(t, devs[0], devs[1], "one emulated device per directory")
	require.Equal(t, 3, s.c.workers, "the write knee of the emulated profile")

	const n, clients = 2000, 4
	val := bytes.Repeat([]byte("v"), 1000)
	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := c; i < n; i += clients {
				if err := s.Put(fmt.Appendf(nil, "key%05d", i), val); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for i := range n {
		v, err := s.Get(fmt.Appendf(nil, "key%05d", i))
		require.NoError(t, err)
		require.Equal(t, val, v)
	}
	wall := time.Since(start)
	var busy time.Duration
	var written, read int64
	for i, d := range devs {
		st := d.Stats()
		t.Logf("device %d: %+v", i, st)
		require.Greater(t, st.WriteBytes, int64(n/4*len(val)), "device %d took a share of the puts", i)
		require.Greater(t, st.ReadBytes, int64(n/4*len(val)), "device %d took a share of the gets", i)
		written += st.WriteBytes
		read += st.ReadBytes
		busy = max(busy, st.WriteTime+st.ReadTime)
	}
	require.GreaterOrEqual(t, written, int64(n*len(val)))
	require.GreaterOrEqual(t, read, int64(n*len(val)))
	require.GreaterOrEqual(t, wall, busy*8/10, "the store slept for its busiest device's time")
	s.abandon() // no checkpoint: the reopen replays the logs

	s = mustOpen(t, o)
	var replay int64
	for _, d := range s.Emulated() {
		replay += d.Stats().ReadBytes
	}
	require.GreaterOrEqual(t, replay, int64(n*len(val)), "recovery's replay reads every record")
	require.NoError(t, s.Close())
}

// TestEmulateOptions: BRAID_DEVICE is taken per directory; dram and unset
// mean none; a bad name or model is ErrInvalid.
func TestEmulateOptions(t *testing.T) {
	t.Setenv("BRAID_DEVICE", "optane-6dimm")
	o := testOptions(t, 2)
	s := mustOpen(t, o)
	devs := s.Emulated()
	require.Equal(t, "optane-6dimm", devs[0].Name())
	require.NotSame(t, devs[0], devs[1])
	require.NoError(t, s.Close())

	t.Setenv("BRAID_DEVICE", "dram")
	s = mustOpen(t, o)
	require.Equal(t, []*pmdevice.Device{nil, nil}, s.Emulated())
	require.NoError(t, s.Close())

	t.Setenv("BRAID_DEVICE", "optane-9dimm")
	_, err := Open(o)
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, "BRAID_DEVICE=optane-9dimm")
	t.Setenv("BRAID_DEVICE", "")
	bad := slowOptane(t)
	bad.Model.Granularity = 0
	o.Emulate = bad
	require.ErrorIs(t, o.Validate(), ErrInvalid)
}
