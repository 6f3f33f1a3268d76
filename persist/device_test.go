package persist_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/braid-pm/braid/asm"
	"github.com/braid-pm/braid/persist"
	"github.com/braid-pm/braid/persist/device"
)

func newDevice(t *testing.T, name string) *device.Device {
	t.Helper()
	d, err := device.Open(name, &device.Options{Burst: time.Microsecond})
	require.NoError(t, err)
	return d
}

// TestDeviceChargesWrites: Copy, Set, Persist and Flush charge the device
// with the units they write back, on each kind of region; reads are
// charged only when declared.
func TestDeviceChargesWrites(t *testing.T) {
	type mk func(d *device.Device) (*persist.Region, error)
	kinds := map[string]mk{
		"simulated": func(d *device.Device) (*persist.Region, error) {
			return persist.NewSimulated(make([]byte, 1<<20), persist.ModeFlush, &recorder{}, &persist.Options{Device: d})
		},
		"simulated-eadr": func(d *device.Device) (*persist.Region, error) {
			return persist.NewSimulated(make([]byte, 1<<20), persist.ModeEADR, &recorder{}, &persist.Options{Device: d})
		},
		"anonymous-eadr": func(d *device.Device) (*persist.Region, error) {
			return persist.Anonymous(1<<20, &persist.Options{Device: d, FenceOnly: true})
		},
		"anonymous-counted": func(d *device.Device) (*persist.Region, error) {
			return persist.Anonymous(1<<20, &persist.Options{Device: d, Counters: true})
		},
	}
	if asm.CanFlush() {
		kinds["anonymous"] = func(d *device.Device) (*persist.Region, error) {
			return persist.Anonymous(1<<20, &persist.Options{Device: d})
		}
	}
	for name, mkRegion := range kinds {
		t.Run(name, func(t *testing.T) {
			d := newDevice(t, "optane-1dimm")
			r, err := mkRegion(d)
			require.NoError(t, err)
			defer r.Close()
			require.Same(t, d, r.Device())
			mem := r.Bytes()
			writes := func(f func() error) int64 {
				before := d.Stats().WriteBytes
				require.NoError(t, f())
				return d.Stats().WriteBytes - before
			}
			require.EqualValues(t, 64<<10, writes(func() error { return r.Copy(mem[0:64<<10], mem[512<<10:576<<10], 0) }))
			require.EqualValues(t, 4096, writes(func() error { return r.Copy(mem[64<<10:68<<10], mem[512<<10:516<<10], persist.Temporal) }))
			require.EqualValues(t, 8192, writes(func() error { return r.Set(mem[128<<10:136<<10], 7, 0) }))
			require.EqualValues(t, 256, writes(func() error { return r.Persist(mem[200<<10 : 200<<10+8]) }))
			require.EqualValues(t, 8, writes(func() error { return r.Persist(mem[200<<10+64 : 200<<10+72]) }), "the unit is in the write buffer")
			require.EqualValues(t, 0, writes(func() error { return r.Copy(mem[300<<10:301<<10], mem[512<<10:513<<10], persist.NoFlush) }))
			require.EqualValues(t, 1024, writes(func() error { return r.Flush(mem[300<<10 : 301<<10]) }), "charged when written back")
			require.NoError(t, r.Drain())
			if c, ok := r.Traffic(); ok {
				require.Positive(t, c.Fences, "counters still count next to a device")
			}

			before := d.Stats()
			r.ReadSeq(mem[0 : 64<<10])
			r.ReadRand(mem[1000:1010])
			r.ReadRandN(100, 100)
			r.ReadStrided(mem[0:100<<10], 100, 10)
			buf := make([]byte, 4096)
			require.Equal(t, 4096, r.Load(buf, mem[64<<10:]))
			require.Equal(t, mem[64<<10:68<<10], buf)
			after := d.Stats()
			require.EqualValues(t, 6, after.Reads-before.Reads, "five calls, the strided one in two pieces of at most 64 KiB")
			require.EqualValues(t, 64<<10+256+100*(256+99)+400*256+4096, after.ReadBytes-before.ReadBytes)
			require.Equal(t, before.WriteBytes, after.WriteBytes, "reads charge no writes")
		})
	}
}

// TestDeviceNone: the read helpers of a region without a device do
// nothing but Load's copy, and Info names no device.
func TestDeviceNone(t *testing.T) {
	r, err := persist.NewSimulated(make([]byte, 1<<16), persist.ModeFlush, &recorder{}, nil)
	require.NoError(t, err)
	require.Nil(t, r.Device(), "no device")
	mem := r.Bytes()
	copy(mem, "braid")
	r.ReadSeq(mem)
	r.ReadRand(mem[:10])
	r.ReadRandN(10, 10)
	r.ReadStrided(mem, 100, 10)
	buf := make([]byte, 3)
	require.Equal(t, 3, r.Load(buf, mem))
	require.Equal(t, "bra", string(buf))
	require.Empty(t, r.Info().Device)
}

// TestDeviceSleeps: a goroutine that charges more device time than the
// burst takes at least the device time, less the burst and less the debt
// under MinSleep it may still owe at the end (never slept), in wall time
// (a lower bound holds however loaded the machine is; nothing here counts
// on the machine being fast enough to sleep).
func TestDeviceSleeps(t *testing.T) {
	p, err := device.Shipped("optane-1dimm")
	require.NoError(t, err)
	p.Model.Write = []device.Level{{Threads: 1, GBs: 0.1}} // 100 MB/s: 2 MiB cost 21 ms
	d, err := device.New(p, &device.Options{Burst: time.Millisecond})
	require.NoError(t, err)
	r, err := persist.NewSimulated(make([]byte, 2<<20), persist.ModeFlush, &recorder{}, &persist.Options{Device: d})
	require.NoError(t, err)
	src := make([]byte, 64<<10)
	start := time.Now()
	for off := 0; off < 2<<20; off += len(src) {
		require.NoError(t, r.Copy(r.Bytes()[off:], src, 0))
	}
	wall := time.Since(start)
	st := d.Stats()
	require.EqualValues(t, 2<<20, st.WriteBytes)
	require.InDelta(t, float64(2<<20)/0.1, float64(st.WriteTime), 1e3)
	require.GreaterOrEqual(t, wall, st.WriteTime-time.Millisecond-device.DefaultMinSleep, "the writer slept for its device time")
	// How many sleeps that took depends on how fast the copies ran (on a
	// loaded machine they take their device time and none sleeps): the
	// count is TestDeviceSleepAccounting's, in simulated time.
	require.LessOrEqual(t, st.Slept, st.WriteTime, "slept more than the device time charged")
}

// TestDeviceEnv: BRAID_DEVICE names one device for every region of the
// process that does not set Options.Device; a bad name is an error.
func TestDeviceEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("BRAID_DEVICE", "optane-1dimm")
	var devs []*device.Device
	for _, name := range []string{"a", "b"} {
		r, err := persist.Map(filepath.Join(dir, name), &persist.Options{Size: 1 << 16, Create: true, ForcePMem: true})
		require.NoError(t, err)
		require.Equal(t, "optane-1dimm", r.Info().Device)
		devs = append(devs, r.Device().(*device.Device))
		require.NoError(t, r.Close())
	}
	require.Same(t, devs[0], devs[1])
	own := newDevice(t, "optane-6dimm")
	r, err := persist.Map(filepath.Join(dir, "c"), &persist.Options{Size: 1 << 16, Create: true, ForcePMem: true, Device: own})
	require.NoError(t, err)
	require.Same(t, own, r.Device(), "Options.Device wins")
	require.NoError(t, r.Close())
	for _, off := range []string{"", "dram"} {
		t.Setenv("BRAID_DEVICE", off)
		r, err := persist.Map(filepath.Join(dir, "a"), nil)
		require.NoError(t, err)
		require.Nil(t, r.Device(), "no device")
		require.NoError(t, r.Close())
	}
	t.Setenv("BRAID_DEVICE", "optane-7dimm")
	_, err = persist.Map(filepath.Join(dir, "a"), nil)
	require.ErrorIs(t, err, persist.ErrInvalid)
	require.ErrorContains(t, err, "BRAID_DEVICE=optane-7dimm")
	require.ErrorContains(t, err, "optane-1dimm")
}

// TestDeviceProfiles: the shipped profiles validate, state a source, and
// survive a save and load; bad models are refused with what was wrong.
func TestDeviceProfiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range device.Names() {
		p, err := device.Shipped(name)
		require.NoError(t, err)
		require.NoError(t, p.Validate())
		require.NotEmpty(t, p.Source, name)
		path := filepath.Join(dir, name+".json")
		require.NoError(t, p.Save(path))
		q, err := device.LoadProfile(path)
		require.NoError(t, err)
		require.Equal(t, p, q)
		if name == "dram" {
			require.Nil(t, p.Model)
			_, err := device.Open(path, nil)
			require.ErrorIs(t, err, persist.ErrInvalid, "a profile file without a model")
			continue
		}
		d, err := device.Open(path, nil)
		require.NoError(t, err)
		require.True(t, d.Emulating())
	}
	p1, _ := device.Shipped("optane-1dimm")
	require.Equal(t, 4, p1.SeqWrite.Threads, "writes peak at 4 threads")
	require.Equal(t, 3, p1.SeqWrite.Knee)
	require.Equal(t, 6, p1.SeqRead.Threads, "reads peak at 6")
	require.InDelta(t, 6.6, p1.SeqRead.GBs, 1e-9)
	require.InDelta(t, 2.3, p1.SeqWrite.GBs, 1e-9)

	old := device.Profile{Format: 1}
	require.NoError(t, old.Validate(), "format 1 is still read")
	future := device.Profile{Format: device.ProfileFormat + 1}
	require.ErrorIs(t, future.Validate(), persist.ErrInvalid)
	bad := []func(p *device.Profile){
		func(p *device.Profile) { p.Model.Write = nil },
		func(p *device.Profile) { p.Model.SeqRead[1].Threads = 1 },
		func(p *device.Profile) { p.Model.RandRead[0].GBs = 0 },
		func(p *device.Profile) { p.Model.Granularity = 0 },
		func(p *device.Profile) { p.Model.ReadNs = -1 },
		func(p *device.Profile) { p.Format = 1 },
	}
	for i, f := range bad {
		p, _ := device.Shipped("optane-1dimm")
		f(p)
		require.ErrorIs(t, p.Validate(), persist.ErrInvalid, "case %d", i)
		_, err := device.New(p, nil)
		require.ErrorIs(t, err, persist.ErrInvalid, "case %d", i)
	}
	slow, err := device.Open("optane-1dimm:10", nil)
	require.NoError(t, err)
	require.Equal(t, "optane-1dimm:10", slow.Name())
	sp := slow.Profile()
	require.InDelta(t, 0.23, sp.SeqWrite.GBs, 1e-9)
	require.InDelta(t, 0.66, device.At(sp.Model.SeqRead, 6), 1e-9)
	require.InDelta(t, 3050, sp.Model.ReadNs, 1e-9)
	require.InDelta(t, 6.6, device.At(p1.Model.SeqRead, 6), 1e-9, "the original is unchanged")
	for _, bad := range []string{"optane-1dimm:0.5", "optane-1dimm:x", "nvme:10"} {
		_, err := device.Open(bad, nil)
		require.ErrorIs(t, err, persist.ErrInvalid, bad)
	}
	_, err = device.Shipped("nvme")
	require.ErrorIs(t, err, persist.ErrInvalid)
	_, err = device.Open(filepath.Join(dir, "missing.json"), nil)
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = device.New(p1, &device.Options{Burst: -1})
	require.ErrorIs(t, err, persist.ErrInvalid)
}
